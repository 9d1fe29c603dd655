// Export/import for the studio (see runs_io.h). The write mirrors the CLI's `runs export --out` step by step
// so the studio and the CLI produce byte-identical files.
#include "ui/history/runs_io.h"

#include <fstream>
#include <vector>

#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::ui {

QString describeError(const std::exception& e) { return QString::fromUtf8(e.what()); }

QString exportRunsToFile(tokamak::RunStore& store, const QList<qint64>& ids, const QString& format,
                         const QString& path, const QString& grouping, bool replace) {
  try {
    const tokamak::ExportFormat f = tokamak::parse_export_format(format.toStdString());
    tokamak::GroupSpec group;
    if (f != tokamak::ExportFormat::csv && !grouping.isEmpty() && grouping != QLatin1String("none"))
      group = tokamak::parse_group_spec(grouping.toStdString());
    // An empty id list means "every run" to the engine; from the studio it means nothing was selected.
    if (ids.isEmpty()) throw tokamak::Error("no runs selected to export", "select one or more runs in the list");
    const std::vector<int64_t> v(ids.begin(), ids.end());
    tokamak::export_runs_to_file(store, v, f, path.toStdString(), group, replace);
  } catch (const std::exception& e) {
    return describeError(e);
  }
  return {};
}

ImportOutcome importRunsFromFile(tokamak::RunStore& store, const QString& path) {
  ImportOutcome o;
  try {
    tokamak::ImportResult r = tokamak::import_runs(store, path.toStdString(), /*skip_existing=*/true);
    o.imported = int(r.imported.size());
    o.skipped = int(r.skipped.size());
  } catch (const std::exception& e) {
    o.error = describeError(e);
  }
  return o;
}

}  // namespace tokamak::ui
