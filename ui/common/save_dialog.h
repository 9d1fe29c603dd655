// The studio's save dialogs, with the rule every output follows (engine/base/util/output_path.h): the dialog asks
// before an existing file is replaced, and that answer is the only thing that lets the writer replace one. A name
// typed without the extension gets it, and a file of that new name was never asked about, so it is not replaced.
// A writer that makes more files than the one named (a sweep's plot and each key's beside it) asks about those
// that exist before it writes any, and replaces only those the person said yes to.
#pragma once
#include <QString>

class QWidget;

namespace tokamak::ui {

struct SavePath {
  QString path;          // "" when cancelled
  bool replace = false;  // the dialog asked about this very path, and the person said yes
};

SavePath askSavePath(QWidget* parent, const QString& title, const QString& name, const QString& filter,
                     const QString& suffix);

}  // namespace tokamak::ui
