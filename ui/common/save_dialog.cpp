// See save_dialog.h.
#include "ui/common/save_dialog.h"

#include <QFileDialog>
#include <QFileInfo>

namespace tokamak::ui {

SavePath askSavePath(QWidget* parent, const QString& title, const QString& name, const QString& filter,
                     const QString& suffix) {
  SavePath s;
  s.path = QFileDialog::getSaveFileName(parent, title, name, filter);
  if (s.path.isEmpty()) return s;
  // QFileDialog confirms an overwrite of the path it returns: a file there now was asked about.
  s.replace = QFileInfo::exists(s.path);
  if (QFileInfo(s.path).suffix().isEmpty()) {
    s.path += QLatin1Char('.') + suffix;
    s.replace = false;
  }
  return s;
}

}  // namespace tokamak::ui
