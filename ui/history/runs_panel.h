// RunsPanel: the studio's "Compare and export" page. A browser over the run store (sort, filter, tags,
// notes, delete, live refresh), a compare view (overlaid curves, scoreboard, config diff) and export/import.
// The main window embeds it and reacts to rerunRequested / resumeRequested. Every button and dialog ends in
// a public method below, so tests drive the same code without dialogs.
#pragma once

#include <QList>
#include <QString>
#include <QJsonObject>
#include <QWidget>
#include <functional>
#include <memory>

namespace tokamak {
class RunStore;
}
class QAction;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTimer;
class QToolButton;

namespace tokamak::ui {

class CompareView;
class ChildProcess;
class RunsTableModel;

class RunsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit RunsPanel(QWidget* parent = nullptr);
  ~RunsPanel() override;
  void setDatabase(const QString& path);  // "" = the default database
  QString databasePath() const;

  // --- what the buttons do; also for the main window and tests. Failures show in the panel (message()). ---
  QList<qint64> selectedRunIds() const;
  void selectRuns(const QList<qint64>& ids);
  bool compareRuns(const QList<qint64>& ids);
  // REPLACE: an existing file there may be replaced (the save dialog asked).
  bool exportRuns(const QList<qint64>& ids, const QString& format, const QString& path,
                  bool replace = false);                      // csv | json | md
  bool exportPlot(const QString& path, bool replace = false);  // the compare plot; format from the suffix: .png | .pdf | .svg
  // The runs as TensorBoard event files, a folder per run under DIR (`runs export --format tensorboard`).
  bool exportTensorboard(const QList<qint64>& ids, const QString& dir, bool replace = false);
  // The runs logged to an MLflow tracking server (`runs export --to mlflow`), on a pool thread with its own reading
  // of the store; the outcome shows in the panel's message when it is done (isExportingToMlflow() turns false).
  bool exportMlflow(const QList<qint64>& ids, const QString& url, const QString& experiment, bool force = false);
  bool isExportingToMlflow() const { return mlflowBusy_; }
  bool importRuns(const QString& path);       // a JSON export; runs already here are skipped
  bool deleteRuns(const QList<qint64>& ids);  // asks first
  bool rerunWithChanges(qint64 id);           // emits rerunRequested
  bool resumeRun(qint64 id);                  // emits resumeRequested with the run's last checkpoint
  // "Repeat with N seeds": emits repeatRequested with `count` copies of the run's config, each with a seed
  // no run of the same experiment has used yet (the next ones after the largest) and the name "NAME-sSEED",
  // so the compare view's "Same config but seed" (or the name pattern "(.*)-s[0-9]+") groups them.
  bool repeatWithSeeds(qint64 id, int count);
  // Writes the run's last checkpoint as a Hugging Face GPT-2 folder (`tokamak export --format hf`) in a child
  // process; false when it cannot start. The outcome shows in the panel's message when the child ends.
  bool exportForHuggingFace(qint64 id, const QString& folder, bool replace = false);
  // The run's last checkpoint as one GGUF file for llama.cpp and Ollama (`tokamak export --format gguf`), TYPE
  // f32 | f16 | bf16 | q8_0. A host's run goes through exportOnHost (Export… asks where, there and here).
  bool exportGguf(qint64 id, const QString& file, const QString& type, bool replace = false);
  bool isExporting() const;
  // Evaluates the run's last checkpoint on `task` ("hellaswag:FILE.jsonl" or "ppl:PATH": `tokamak eval`) in a
  // child process that records the results as eval/... metrics of the run; false when it cannot start. The
  // results show in the panel's message, the runs' metrics and the compare view when the child ends.
  bool evaluateRun(qint64 id, const QString& task);
  bool isEvaluating() const;
  // A run that trained on an SSH host (its row's remote): copies its checkpoint STEP (0 = the newest) into
  // FOLDER with `tokamak remote download` in a child (progress bar, sha256 check, a broken copy resumed);
  // false when it cannot start. A run of this computer has its checkpoints here already: an error says where.
  bool downloadCheckpoint(qint64 id, const QString& folder, qint64 step = 0);
  // The same for any file or folder on run ID's host (an export written there).
  bool downloadHostPath(qint64 id, const QString& remotePath, const QString& folder);
  bool isDownloading() const;  // any job on a host: download, evaluation or export
  // A host's run: its newest checkpoint written as a Hugging Face folder (or, FORMAT "gguf", a GGUF file of TYPE) on
  // the host at HOST_PATH (`tokamak remote export`), then, when DOWNLOAD_TO is given, copied here. exportForHuggingFace
  // and evaluateRun take this path (and `tokamak remote eval`) by themselves for a host's run.
  bool exportOnHost(qint64 id, const QString& hostPath, const QString& downloadTo = {},
                    const QString& format = QStringLiteral("hf"), const QString& type = {});
  // Replaces the delete confirmation (default: a QMessageBox); tests answer it.
  void setConfirmation(std::function<bool(const QString& question)> confirm);
  void setPollInterval(int ms);  // how often the store is checked for changes while visible (default 1 s)

  QString message() const;  // the error or notice the panel shows, "" when none
  bool hasError() const { return hasError_; }
  RunsTableModel* runsModel() const { return model_; }
  QSortFilterProxyModel* proxyModel() const { return proxy_; }
  QTableView* tableView() const { return table_; }
  QLineEdit* filterEdit() const { return filter_; }
  CompareView* compareView() const { return compare_; }

 public Q_SLOTS:
  void refresh();
 Q_SIGNALS:
  void rerunRequested(const QString& configJson);  // "re-run with changes": the main window loads this config
  void resumeRequested(const QString& checkpointPath, const QString& configJson);
  void repeatRequested(const QStringList& configJsons);  // the main window puts them on the queue (ui/queue)

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 private:
  void buildButtons();
  void buildExportButton();
  void buildTable();
  bool ensureStore();
  void poll();
  void reloadAll();
  void showError(const QString& text);
  void showNotice(const QString& text);
  void showEvaluation(qint64 id, const QJsonObject& result, const QString& task, const QString& host);
  void updateActions();
  void showContextMenu(const QPoint& pos);
  void exportWithDialog(const QString& format);
  void importWithDialog();
  void exportHfWithDialog();
  void exportGgufWithDialog();
  void exportTensorboardWithDialog();
  void exportMlflowWithDialog();
  QList<qint64> exportSelection() const;  // the selected runs, else the compared ones
  void evaluateWithDialog();
  void repeatWithDialog();
  QString lastCheckpoint(qint64 id);  // "" (and the reason shown) when the run has none usable
  void downloadWithDialog();
  // The SSH host ("" for this computer) and uid of run ID; false (reason shown) when the store cannot say.
  bool hostOf(qint64 id, QString* host, QString* uid);
  bool startHostJob(qint64 id, const QString& command, const QStringList& args, const QString& doing);
  bool evaluateOnHost(qint64 id, const QString& task);

  std::unique_ptr<tokamak::RunStore> store_;
  bool mlflowBusy_ = false;
  QString path_;         // as given to setDatabase ("" = default)
  bool opened_ = false;  // setDatabase or the default was tried
  qint64 dataVersion_ = -1;
  bool hasError_ = false;
  std::function<bool(const QString&)> confirm_;

  RunsTableModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QLabel* message_ = nullptr;
  CompareView* compare_ = nullptr;
  QTimer* poll_ = nullptr;
  QPushButton* compareButton_ = nullptr;
  QToolButton* exportButton_ = nullptr;
  QAction* exportHf_ = nullptr;
  QPushButton* importButton_ = nullptr;
  QPushButton* rerunButton_ = nullptr;
  QPushButton* resumeButton_ = nullptr;
  QPushButton* deleteButton_ = nullptr;
  ChildProcess* exportJob_ = nullptr;  // tokamak-engine export
  ChildProcess* evalJob_ = nullptr;    // tokamak-engine eval
  QPushButton* evaluateButton_ = nullptr;
  QPushButton* repeatButton_ = nullptr;
  QAction* downloadAction_ = nullptr;
  QProgressBar* downloadProgress_ = nullptr;
  ChildProcess* hostJob_ = nullptr;  // `tokamak remote download|eval|export` for a host's run
};

}  // namespace tokamak::ui
