// Export and import of runs for the studio: thin wrappers over engine/base/store/run_export.h that write the same
// bytes as `tokamak runs export --out FILE` (atomically: a failed export leaves no half file) and turn the
// engine's errors into messages for the panel instead of exceptions.
#pragma once

#include <QList>
#include <QString>

namespace tokamak {
class RunStore;
}

namespace tokamak::ui {

// format: "csv" | "json" | "md"; grouping as the compare view's ("none", "seed", "tag", "name:REGEX"): md and json
// then carry the groups and their verdicts. Returns "" on success, else the reason (with the engine's hint).
// REPLACE: the save dialog asked about an existing file (the rule for outputs still keeps the store, a link or
// anything not a plain file from being replaced: engine/base/util/output_path.h).
QString exportRunsToFile(tokamak::RunStore& store, const QList<qint64>& ids, const QString& format,
                         const QString& path, const QString& grouping = {}, bool replace = false);

struct ImportOutcome {
  QString error;  // "" on success
  int imported = 0, skipped = 0;
};
// Runs already in the store (same uid) are skipped, so importing the same file twice is harmless.
ImportOutcome importRunsFromFile(tokamak::RunStore& store, const QString& path);

// "message (hint: ...)" from a tokamak::Error or any std::exception.
QString describeError(const std::exception& e);

}  // namespace tokamak::ui
