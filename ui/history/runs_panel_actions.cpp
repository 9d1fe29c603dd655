// The runs panel's actions (see runs_panel.h): export, import, delete, re-run and resume, and the file
// dialogs in front of them. Each reports failure in the panel and returns false; none throws.
#include <QFileDialog>
#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QInputDialog>
#include <QJsonDocument>
#include <QLineEdit>
#include <QMessageBox>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <set>

#include "engine/base/config/config.h"
#include "engine/base/store/run_groups.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "ui/common/child_process.h"
#include "ui/common/save_dialog.h"
#include "ui/history/compare_view.h"
#include "ui/history/plot_export.h"
#include "ui/history/runs_io.h"
#include "ui/history/runs_model.h"
#include "ui/history/runs_panel.h"

namespace tokamak::ui {

// An evaluation's result (the engine's JSON line, here or on a host): every number it reported, in its order
// (acc, acc_norm, n, ... or ppl, ...), the runs reloaded so its eval/... keys appear.
void RunsPanel::showEvaluation(qint64 id, const QJsonObject& r, const QString& task, const QString& host) {
  QStringList results;
  for (auto it = r.begin(); it != r.end(); ++it)
    if (it.value().isDouble() && it.key() != QLatin1String("step") && !it.key().endsWith(QLatin1String("_low")) &&
        !it.key().endsWith(QLatin1String("_high")))
      results << QStringLiteral("%1 %2").arg(it.key()).arg(it.value().toDouble(), 0, 'g', 4);
  reloadAll();
  if (compare_->runIds().contains(id)) compareRuns(compare_->runIds());
  showNotice(tr("Run #%1, step %2, %3%4: %5%6")
                 .arg(id)
                 .arg(r.value(QStringLiteral("step")).toInteger())
                 .arg(task.section(QLatin1Char(':'), 0, 0), host.isEmpty() ? QString() : tr(" (on %1)").arg(host),
                      results.join(QStringLiteral(", ")))
                 .arg(r.value(QStringLiteral("recorded")).toBool() ? tr(" (kept as eval/... metrics of the run)")
                                                                   : QString()));
}

bool RunsPanel::exportRuns(const QList<qint64>& ids, const QString& format, const QString& path, bool replace) {
  if (!ensureStore()) return false;
  QString error = exportRunsToFile(*store_, ids, format, path, compare_->grouping(), replace);
  if (!error.isEmpty()) {
    showError(tr("Export failed: %1").arg(error));
    return false;
  }
  showNotice(tr("Exported %n run(s) to %1", nullptr, int(ids.size())).arg(path));
  return true;
}

bool RunsPanel::exportPlot(const QString& path, bool replace) {
  if (compare_->runIds().isEmpty()) {
    showError(tr("Compare some runs first: the plot export saves the compare plot."));
    return false;
  }
  QString error = savePlot(compare_->plot(), path, replace);
  if (!error.isEmpty()) {
    showError(tr("Plot export failed: %1").arg(error));
    return false;
  }
  showNotice(tr("Saved the plot to %1").arg(path));
  return true;
}

bool RunsPanel::importRuns(const QString& path) {
  if (!ensureStore()) return false;
  ImportOutcome o = importRunsFromFile(*store_, path);
  if (!o.error.isEmpty()) {
    showError(tr("Import failed: %1").arg(o.error));
    return false;
  }
  reloadAll();
  showNotice(tr("Imported %n run(s)", nullptr, o.imported) +
             (o.skipped ? tr(", skipped %n already here", nullptr, o.skipped) : QString()));
  return true;
}

bool RunsPanel::deleteRuns(const QList<qint64>& ids) {
  if (!ensureStore() || ids.isEmpty()) return false;
  QStringList names;
  for (qint64 id : ids)
    if (const RunRow* r = model_->runById(id)) names << QStringLiteral("#%1 %2").arg(id).arg(r->name);
  for (qint64 id : ids)  // as `tokamak runs delete` does: a live run keeps its history
    if (const RunRow* r = model_->runById(id); r && r->status == QLatin1String("running")) {
      showError(tr("Run #%1 is still running: stop it first (or wait until it ends).").arg(id));
      return false;
    }
  if (!confirm_(tr("Delete %n run(s) and their history? This cannot be undone.\n\n", nullptr, int(ids.size())) +
                names.join(QLatin1Char('\n'))))
    return false;
  try {
    store_->transaction([&] {
      for (qint64 id : ids) store_->delete_run(id);
    });
  } catch (const std::exception& e) {
    showError(tr("Delete failed: %1").arg(describeError(e)));
    return false;
  }
  if (std::any_of(ids.begin(), ids.end(), [&](qint64 id) { return compare_->runIds().contains(id); }))
    compare_->clear();
  reloadAll();
  showNotice(tr("Deleted %n run(s)", nullptr, int(ids.size())));
  return true;
}

bool RunsPanel::rerunWithChanges(qint64 id) {
  if (!ensureStore()) return false;
  try {
    Q_EMIT rerunRequested(QString::fromStdString(store_->run(id).config_json));
  } catch (const std::exception& e) {
    showError(describeError(e));
    return false;
  }
  return true;
}

bool RunsPanel::repeatWithSeeds(qint64 id, int count) {
  if (!ensureStore() || count < 1) return false;
  QStringList configs;
  try {
    const tokamak::RunInfo run = store_->run(id);
    const tokamak::Config config = tokamak::config_from_json(run.config_json);
    // Seeds this experiment has used, in any run of the store: the new ones come after the largest. Configs
    // are compared in full (defaults filled in), so one written sparsely still matches; one this version
    // cannot read is another experiment.
    std::vector<std::string> jsons = {tokamak::config_to_json(config, -1)};
    std::vector<int64_t> seeds = {config.train.seed};
    for (const tokamak::RunListing& l : store_->list_runs()) {
      if (l.run.id == id) continue;
      try {
        const tokamak::Config other = tokamak::config_from_json(store_->run(l.run.id).config_json);
        jsons.push_back(tokamak::config_to_json(other, -1));
        seeds.push_back(other.train.seed);
      } catch (const tokamak::Error&) {}
    }
    const std::vector<int> group = tokamak::group_by_config(jsons);
    int64_t next = config.train.seed;
    for (size_t i = 0; i < jsons.size(); ++i)
      if (group[i] == group[0]) next = std::max(next, seeds[i]);
    QString base = QString::fromStdString(run.name);
    base.remove(QRegularExpression(QStringLiteral("-s[0-9]+$")));
    for (int k = 1; k <= count; ++k) {
      tokamak::Config c = config;
      c.train.seed = next + k;
      c.checkpoint.resume.clear();  // a new run from the start, not a continuation
      c.name = QStringLiteral("%1-s%2").arg(base).arg(c.train.seed).toStdString();
      configs << QString::fromStdString(tokamak::config_to_json(c, -1));
    }
  } catch (const std::exception& e) {
    showError(describeError(e));
    return false;
  }
  showNotice(
      tr("Queued %n run(s) of #%1 with new seeds: they run one after another from the queue.", nullptr, count).arg(id));
  Q_EMIT repeatRequested(configs);
  return true;
}

void RunsPanel::repeatWithDialog() {
  const qint64 id = selectedRunIds().value(0);
  if (id <= 0) return showError(tr("Select the run to repeat first."));
  bool ok = false;
  const int n = QInputDialog::getInt(this, tr("Repeat run #%1").arg(id),
                                     tr("Runs with new seeds (the same config otherwise):"), 2, 1, 100, 1, &ok);
  if (ok) repeatWithSeeds(id, n);
}

QString RunsPanel::lastCheckpoint(qint64 id) {
  if (!ensureStore()) return {};
  try {
    const auto checkpoints = store_->checkpoints(id);
    if (checkpoints.empty()) {
      showError(tr("Run #%1 has no checkpoint.").arg(id));
      return {};
    }
    const QString path = QString::fromStdString(checkpoints.back().path);
    if (!QFileInfo::exists(path)) {
      showError(tr("The last checkpoint of run #%1 is gone: %2").arg(id).arg(path));
      return {};
    }
    return path;
  } catch (const std::exception& e) {
    showError(describeError(e));
    return {};
  }
}

bool RunsPanel::resumeRun(qint64 id) {
  if (!ensureStore()) return false;
  try {
    const tokamak::RunInfo run = store_->run(id);
    if (run.status == "running") {
      showError(tr("Run #%1 is still running: stop it first, then resume it.").arg(id));
      return false;
    }
    const QString path = lastCheckpoint(id);
    if (path.isEmpty()) return false;
    Q_EMIT resumeRequested(path, QString::fromStdString(run.config_json));
  } catch (const std::exception& e) {
    showError(describeError(e));
    return false;
  }
  return true;
}

bool RunsPanel::isExporting() const { return exportJob_->isRunning(); }

bool RunsPanel::exportForHuggingFace(qint64 id, const QString& folder, bool replace) {
  if (exportJob_->isRunning()) {
    showError(tr("An export is still being written: wait for it to finish."));
    return false;
  }
  if (folder.isEmpty()) return false;
  if (QString host, uid; hostOf(id, &host, &uid) && !host.isEmpty()) return exportOnHost(id, folder);
  const QString checkpoint = lastCheckpoint(id);  // a live run's newest checkpoint is complete: files appear whole
  if (checkpoint.isEmpty()) return false;
  disconnect(exportJob_, nullptr, this, nullptr);
  connect(exportJob_, &ChildProcess::finished, this, [this, id, folder](const QString& error) {
    if (!error.isEmpty()) return showError(tr("Export of run #%1 failed: %2").arg(id).arg(error));
    showNotice(
        tr("Exported run #%1 for Hugging Face to %2 (GPT2LMHeadModel.from_pretrained loads it)").arg(id).arg(folder));
  });
  showNotice(tr("Exporting run #%1 to %2…").arg(id).arg(folder));
  QStringList args{"export", "--format", "hf", "--checkpoint", checkpoint, "--out", folder};
  if (replace) args << QStringLiteral("--force");
  return exportJob_->startEngine(args);
}

void RunsPanel::exportWithDialog(const QString& format) {
  static const QHash<QString, QString> filters = {
      {QStringLiteral("csv"), tr("CSV (*.csv)")},    {QStringLiteral("json"), tr("JSON (*.json)")},
      {QStringLiteral("md"), tr("Markdown (*.md)")}, {QStringLiteral("png"), tr("PNG image (*.png)")},
      {QStringLiteral("pdf"), tr("PDF (*.pdf)")},    {QStringLiteral("svg"), tr("SVG image (*.svg)")}};
  const SavePath to = askSavePath(this, tr("Export"), QStringLiteral("runs.") + format, filters.value(format), format);
  if (to.path.isEmpty()) return;
  const bool plot = format == QLatin1String("png") || format == QLatin1String("pdf") || format == QLatin1String("svg");
  if (plot) exportPlot(to.path, to.replace);
  else exportRuns(selectedRunIds().isEmpty() ? compare_->runIds() : selectedRunIds(), format, to.path, to.replace);
}

bool RunsPanel::isEvaluating() const { return evalJob_->isRunning(); }

bool RunsPanel::evaluateRun(qint64 id, const QString& task) {
  if (evalJob_->isRunning()) {
    showError(tr("An evaluation is still running: wait for it to finish."));
    return false;
  }
  if (QString host, uid; hostOf(id, &host, &uid) && !host.isEmpty()) return evaluateOnHost(id, task);
  const QString checkpoint = lastCheckpoint(id);
  if (checkpoint.isEmpty()) return false;
  disconnect(evalJob_, nullptr, this, nullptr);
  connect(evalJob_, &ChildProcess::finished, this, [this, id, task](const QString& error) {
    if (!error.isEmpty()) return showError(tr("Evaluation of run #%1 failed: %2").arg(id).arg(error));
    showEvaluation(id, evalJob_->result(), task, {});  // its last line: the results
  });
  showNotice(tr("Evaluating run #%1 on %2…").arg(id).arg(task));
  return evalJob_->startEngine(
      {"eval", "--json", "--checkpoint", checkpoint, "--task", task, "--db", QString::fromStdString(store_->path())});
}

void RunsPanel::evaluateWithDialog() {
  const qint64 id = selectedRunIds().value(0);
  if (id <= 0) return showError(tr("Select the run to evaluate first."));
  const QStringList kinds = {tr("HellaSwag accuracy (a JSON-lines file of items)"),
                             tr("Perplexity (a text file, folder, .jsonl or token shards)")};
  bool ok = false;
  const QString kind = QInputDialog::getItem(this, tr("Evaluate run #%1").arg(id), tr("Task"), kinds, 0, false, &ok);
  if (!ok) return;
  const bool hellaswag = kind == kinds.front();
  QString host, uid;
  if (!hostOf(id, &host, &uid)) return;
  // A host's run is evaluated there, on the host's file: its path is typed (a file dialog shows this computer).
  const QString path = host.isEmpty()
                           ? QFileDialog::getOpenFileName(this, tr("Evaluate on"), QString(),
                                                          hellaswag ? tr("HellaSwag (*.jsonl)") : tr("Any file (*)"))
                           : QInputDialog::getText(this, tr("Evaluate run #%1 on %2").arg(id).arg(host),
                                                   tr("The file or dataset on %1:").arg(host));
  if (!path.isEmpty()) evaluateRun(id, (hellaswag ? QStringLiteral("hellaswag:") : QStringLiteral("ppl:")) + path);
}

void RunsPanel::exportHfWithDialog() {
  const qint64 id = selectedRunIds().value(0);
  if (id <= 0) return showError(tr("Select the run to export first."));
  QString host, uid;
  if (!hostOf(id, &host, &uid)) return;
  if (!host.isEmpty()) {  // written on the host, then (if a folder is chosen) copied here
    const QString there = QInputDialog::getText(this, tr("Export run #%1 on %2").arg(id).arg(host),
                                                tr("The folder to write on %1:").arg(host), QLineEdit::Normal,
                                                QStringLiteral("hf-") + uid.left(8));
    if (there.isEmpty()) return;
    exportOnHost(id, there,
                 QFileDialog::getExistingDirectory(this, tr("Copy the export here too (Cancel: leave it there)")));
    return;
  }
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Export for Hugging Face: choose a folder"));
  if (folder.isEmpty()) return;
  // A folder that holds an earlier export is replaced only when the person says so; one with other files is
  // refused by the engine whatever the answer.
  bool replace = false;
  if (QFileInfo::exists(QDir(folder).filePath(QStringLiteral("config.json")))) {
    if (QMessageBox::question(this, tr("Export for Hugging Face"),
                              tr("%1 already holds an export. Replace it?").arg(folder)) != QMessageBox::Yes)
      return;
    replace = true;
  }
  exportForHuggingFace(id, folder, replace);
}

bool RunsPanel::exportGguf(qint64 id, const QString& file, const QString& type, bool replace) {
  if (exportJob_->isRunning()) {
    showError(tr("An export is still being written: wait for it to finish."));
    return false;
  }
  if (file.isEmpty()) return false;
  if (QString host, uid; hostOf(id, &host, &uid) && !host.isEmpty()) {
    showError(
        tr("Run #%1 trained on %2: its file is written there (Export… asks where, there and here)").arg(id).arg(host));
    return false;
  }
  const QString checkpoint = lastCheckpoint(id);
  if (checkpoint.isEmpty()) return false;
  disconnect(exportJob_, nullptr, this, nullptr);
  connect(exportJob_, &ChildProcess::finished, this, [this, id, file](const QString& error) {
    if (!error.isEmpty()) return showError(tr("Export of run #%1 failed: %2").arg(id).arg(error));
    showNotice(tr("Exported run #%1 to %2 (llama.cpp: llama-cli -m FILE; Ollama: a Modelfile with FROM FILE)")
                   .arg(id)
                   .arg(file));
  });
  showNotice(tr("Exporting run #%1 to %2…").arg(id).arg(file));
  QStringList args{"export", "--format", "gguf", "--type", type, "--checkpoint", checkpoint, "--out", file};
  if (replace) args << QStringLiteral("--force");
  return exportJob_->startEngine(args);
}

void RunsPanel::exportGgufWithDialog() {
  const qint64 id = selectedRunIds().value(0);
  if (id <= 0) return showError(tr("Select the run to export first."));
  bool ok = false;
  const QString type = QInputDialog::getItem(
      this, tr("Export run #%1 as GGUF").arg(id),
      tr("Weights (norms and biases stay f32): f16 as llama.cpp's converter, q8_0 half the size, f32 exact"),
      {QStringLiteral("f16"), QStringLiteral("q8_0"), QStringLiteral("bf16"), QStringLiteral("f32")}, 0, false, &ok);
  if (!ok) return;
  QString host, uid;
  if (!hostOf(id, &host, &uid)) return;
  if (!host.isEmpty()) {  // written on the host, then (if a folder is chosen) copied here
    const QString there = QInputDialog::getText(this, tr("Export run #%1 on %2").arg(id).arg(host),
                                                tr("The GGUF file to write on %1:").arg(host), QLineEdit::Normal,
                                                QStringLiteral("run-%1-%2.gguf").arg(uid.left(8), type));
    if (there.isEmpty()) return;
    exportOnHost(id, there,
                 QFileDialog::getExistingDirectory(this, tr("Copy the file here too (Cancel: leave it there)")),
                 QStringLiteral("gguf"), type);
    return;
  }
  const SavePath to = askSavePath(this, tr("Export for llama.cpp and Ollama"),
                                  QStringLiteral("run-%1-%2.gguf").arg(id).arg(type), tr("GGUF (*.gguf)"),
                                  QStringLiteral("gguf"));
  if (!to.path.isEmpty()) exportGguf(id, to.path, type, to.replace);
}

void RunsPanel::importWithDialog() {
  QString path = QFileDialog::getOpenFileName(this, tr("Import runs"), QString(), tr("Tokamak export (*.json)"));
  if (!path.isEmpty()) importRuns(path);
}

}  // namespace tokamak::ui
