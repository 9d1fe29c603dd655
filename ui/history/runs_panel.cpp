// The runs panel (see runs_panel.h): layout, opening the store, polling it for changes, selection.
// The actions are in runs_panel_actions.cpp, the table in runs_model.cpp, the compare view in compare_view.cpp.
#include "ui/history/runs_panel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "ui/history/compare_view.h"
#include "ui/history/flow_row.h"
#include "ui/common/child_process.h"
#include "ui/history/runs_io.h"
#include "ui/history/runs_model.h"

namespace tokamak::ui {

constexpr int kMinimumRunsShown = 4;  // rows of the runs table always in sight

RunsPanel::RunsPanel(QWidget* parent) : QWidget(parent) {
  model_ = new RunsTableModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(RunsTableModel::SortRole);
  proxy_->setFilterKeyColumn(-1);  // the filter box matches any column: name, switches, tags, status...
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setDynamicSortFilter(true);
  connect(model_, &RunsTableModel::errorOccurred, this, &RunsPanel::showError);

  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter runs (name, switches, tags, status...)"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);

  buildButtons();

  // Wraps onto a second line where one is too wide: the page beside a two-column setup at 1366 px.
  auto* bar = new FlowRow;
  bar->addWidget(filter_);
  for (QWidget* w : std::initializer_list<QWidget*>{compareButton_, exportButton_, importButton_, rerunButton_,
                                                    resumeButton_, repeatButton_, evaluateButton_, deleteButton_})
    bar->addWidget(w);

  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("runsMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();

  buildTable();

  compare_ = new CompareView(this);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(compare_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  split->setSizes({250, 650});

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(message_);
  layout->addWidget(downloadProgress_);
  layout->addWidget(split, 1);

  poll_ = new QTimer(this);
  poll_->setInterval(1000);
  connect(poll_, &QTimer::timeout, this, &RunsPanel::poll);
  confirm_ = [this](const QString& question) {
    return QMessageBox::question(this, tr("Delete runs"), question) == QMessageBox::Yes;
  };
  updateActions();
}

void RunsPanel::buildButtons() {
  compareButton_ = new QPushButton(tr("Compare"), this);
  exportJob_ = new ChildProcess(this);
  evalJob_ = new ChildProcess(this);
  buildExportButton();
  importButton_ = new QPushButton(tr("Import..."), this);
  rerunButton_ = new QPushButton(tr("Re-run with changes"), this);
  resumeButton_ = new QPushButton(tr("Resume"), this);
  evaluateButton_ = new QPushButton(tr("Evaluate..."), this);
  evaluateButton_->setToolTip(
      tr("HellaSwag accuracy or perplexity of the run's last checkpoint, kept as "
         "eval/... metrics of the run (`tokamak eval`)"));
  connect(evaluateButton_, &QPushButton::clicked, this, &RunsPanel::evaluateWithDialog);
  repeatButton_ = new QPushButton(tr("Repeat with seeds..."), this);
  repeatButton_->setObjectName(QStringLiteral("repeatSeeds"));
  repeatButton_->setToolTip(
      tr("Run the same config again with N new seeds, one after another; compare them "
         "grouped by \"Same config but seed\" to see the noise between seeds"));
  connect(repeatButton_, &QPushButton::clicked, this, &RunsPanel::repeatWithDialog);
  deleteButton_ = new QPushButton(tr("Delete"), this);
  hostJob_ = new ChildProcess(this);
  hostJob_->setObjectName("hostJob");
  downloadProgress_ = new QProgressBar(this);
  downloadProgress_->setObjectName(QStringLiteral("downloadProgress"));
  downloadProgress_->hide();
  connect(compareButton_, &QPushButton::clicked, this, [this] { compareRuns(selectedRunIds()); });
  connect(importButton_, &QPushButton::clicked, this, &RunsPanel::importWithDialog);
  connect(rerunButton_, &QPushButton::clicked, this, [this] { rerunWithChanges(selectedRunIds().value(0)); });
  connect(resumeButton_, &QPushButton::clicked, this, [this] { resumeRun(selectedRunIds().value(0)); });
  connect(deleteButton_, &QPushButton::clicked, this, [this] { deleteRuns(selectedRunIds()); });
}

void RunsPanel::buildExportButton() {
  exportButton_ = new QToolButton(this);
  exportButton_->setText(tr("Export"));
  exportButton_->setPopupMode(QToolButton::InstantPopup);
  auto* exportMenu = new QMenu(exportButton_);
  exportMenu->addAction(tr("Runs as CSV..."), this, [this] { exportWithDialog(QStringLiteral("csv")); });
  exportMenu->addAction(tr("Runs as JSON..."), this, [this] { exportWithDialog(QStringLiteral("json")); });
  exportMenu->addAction(tr("Runs as Markdown..."), this, [this] { exportWithDialog(QStringLiteral("md")); });
  exportMenu->addAction(tr("Runs for TensorBoard..."), this, &RunsPanel::exportTensorboardWithDialog);
  exportMenu->addAction(tr("Runs to an MLflow server..."), this, &RunsPanel::exportMlflowWithDialog);
  exportMenu->addSeparator();
  exportMenu->addAction(tr("Plot as PNG..."), this, [this] { exportWithDialog(QStringLiteral("png")); });
  exportMenu->addAction(tr("Plot as PDF..."), this, [this] { exportWithDialog(QStringLiteral("pdf")); });
  exportMenu->addAction(tr("Plot as SVG..."), this, [this] { exportWithDialog(QStringLiteral("svg")); });
  exportMenu->addSeparator();
  exportHf_ = exportMenu->addAction(tr("Model for Hugging Face..."), this, &RunsPanel::exportHfWithDialog);
  exportHf_->setToolTip(tr("The selected run's last checkpoint as a GPT-2 folder that transformers loads"));
  exportMenu->addAction(tr("Model for llama.cpp and Ollama (GGUF)..."), this, &RunsPanel::exportGgufWithDialog)
      ->setToolTip(tr("The selected run's last checkpoint as one GGUF file, the tokenizer inside"));
  // In the menu, not the button bar: the bar's width is part of the window's minimum (test_studio_layout).
  downloadAction_ = exportMenu->addAction(tr("Checkpoint from its SSH host..."), this, &RunsPanel::downloadWithDialog);
  downloadAction_->setObjectName(QStringLiteral("downloadCheckpoint"));
  downloadAction_->setToolTip(
      tr("Download the newest checkpoint of a run that trained on an SSH host "
         "(checked by sha256; a broken copy continues where it stopped)"));
  exportButton_->setMenu(exportMenu);
}

void RunsPanel::buildTable() {
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(RunsTableModel::Date, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  // One line a run, and room for a few of them: at 1366×768 wrapped dates and datasets made each row two lines
  // tall and the compare view below left the table one row to show.
  table_->setWordWrap(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 4);
  table_->setMinimumHeight(table_->horizontalHeader()->sizeHint().height() +
                           kMinimumRunsShown * table_->verticalHeader()->defaultSectionSize() +
                           table_->horizontalScrollBar()->sizeHint().height() + 2 * table_->frameWidth());
  connect(table_, &QWidget::customContextMenuRequested, this, &RunsPanel::showContextMenu);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsPanel::updateActions);
}

RunsPanel::~RunsPanel() = default;

void RunsPanel::setDatabase(const QString& path) {
  path_ = path;
  opened_ = true;
  store_.reset();
  model_->setStore(nullptr);
  model_->clear();
  compare_->clear();
  dataVersion_ = -1;
  try {
    store_ = std::make_unique<tokamak::RunStore>(path.toStdString());
  } catch (const std::exception& e) {
    showError(tr("Cannot open the run database: %1").arg(describeError(e)));
    updateActions();
    return;
  }
  model_->setStore(store_.get());
  hasError_ = false;
  message_->clear();
  message_->hide();
  // A store this build leaves as it is (a newer schema, an older worker on its queue): readable, and said why a
  // change to it will be refused.
  if (!store_->read_only_note().empty())
    showNotice(tr("Read-only: %1").arg(QString::fromStdString(store_->read_only_note())));
  reloadAll();
}

QString RunsPanel::databasePath() const {
  if (store_) return QString::fromStdString(store_->path());
  return path_.isEmpty() ? QString::fromStdString(tokamak::default_db_path()) : path_;
}

// The default database is opened on first use, not in the constructor, so a main window that points the
// panel elsewhere right away never creates ~/.local/share/tokamak/runs.db for nothing.
bool RunsPanel::ensureStore() {
  if (!opened_) setDatabase(QString());
  return store_ != nullptr;
}

void RunsPanel::refresh() {
  if (ensureStore()) reloadAll();
}

void RunsPanel::poll() {
  if (!store_) return;
  // data_version changes only when another connection commits: an idle store costs one pragma per tick.
  // A run whose process died without ending it (killed, crashed) is marked crashed here, not only on open.
  qint64 version = 0;
  int crashed = 0;
  try {
    version = store_->db().query_int("PRAGMA data_version");
    crashed = store_->mark_crashed();
  } catch (const std::exception& e) {
    showError(describeError(e));
    return;
  }
  if (crashed > 0 || version != dataVersion_) reloadAll();
}

void RunsPanel::reloadAll() {
  if (!store_) return;
  try {
    dataVersion_ = store_->db().query_int("PRAGMA data_version");
    model_->reload(*store_);
    // A compared run that is still writing: redraw its curves with the new rows.
    for (qint64 id : compare_->runIds()) {
      const RunRow* row = model_->runById(id);
      if (!row) {
        compare_->clear();  // deleted elsewhere
        break;
      }
      if (row->status == QLatin1String("running")) {
        compare_->reload(*store_);
        break;
      }
    }
  } catch (const std::exception& e) {
    showError(tr("Cannot read the run database: %1").arg(describeError(e)));
  }
  updateActions();
}

QList<qint64> RunsPanel::selectedRunIds() const {
  QList<qint64> ids;
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  for (const QModelIndex& i : rows) ids << i.data(RunsTableModel::IdRole).toLongLong();
  std::sort(ids.begin(), ids.end());  // oldest first: the order exports and the scoreboard list them in
  return ids;
}

void RunsPanel::selectRuns(const QList<qint64>& ids) {
  QItemSelection selection;
  for (qint64 id : ids) {
    int row = model_->rowOfId(id);
    if (row < 0) continue;
    QModelIndex i = proxy_->mapFromSource(model_->index(row, 0));
    if (i.isValid()) selection.select(i, i);
  }
  table_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

bool RunsPanel::compareRuns(const QList<qint64>& ids) {
  if (!ensureStore()) return false;
  if (ids.isEmpty()) {
    showError(tr("Select the runs to compare first."));
    return false;
  }
  try {
    compare_->setRuns(*store_, ids);
  } catch (const std::exception& e) {
    showError(tr("Cannot compare: %1").arg(describeError(e)));
    return false;
  }
  updateActions();
  return true;
}

void RunsPanel::setConfirmation(std::function<bool(const QString&)> confirm) { confirm_ = std::move(confirm); }
void RunsPanel::setPollInterval(int ms) { poll_->setInterval(ms); }
QString RunsPanel::message() const { return message_->text(); }

void RunsPanel::showError(const QString& text) {
  hasError_ = true;
  message_->setText(text);
  message_->setStyleSheet(QStringLiteral("color: #c62828;"));
  message_->show();
}

void RunsPanel::showNotice(const QString& text) {
  hasError_ = false;
  message_->setText(text);
  message_->setStyleSheet(QString());
  message_->show();
}

void RunsPanel::updateActions() {
  const int n = int(table_->selectionModel()->selectedRows().size());
  const bool ok = store_ != nullptr;
  compareButton_->setEnabled(ok && n >= 1);
  exportButton_->setEnabled(ok && (n >= 1 || !compare_->runIds().isEmpty()));
  importButton_->setEnabled(ok);
  rerunButton_->setEnabled(ok && n == 1);
  resumeButton_->setEnabled(ok && n == 1);
  exportHf_->setEnabled(ok && n == 1);
  evaluateButton_->setEnabled(ok && n == 1);
  downloadAction_->setEnabled(ok && n == 1);
  repeatButton_->setEnabled(ok && n == 1);
  deleteButton_->setEnabled(ok && n >= 1);
}

void RunsPanel::showContextMenu(const QPoint& pos) {
  QMenu menu(this);
  const QList<qint64> ids = selectedRunIds();
  menu.addAction(tr("Compare"), this, [this, ids] { compareRuns(ids); })->setEnabled(!ids.isEmpty());
  menu.addMenu(exportButton_->menu())->setText(tr("Export"));
  menu.addAction(tr("Import..."), this, &RunsPanel::importWithDialog);
  menu.addSeparator();
  menu.addAction(tr("Re-run with changes"), this, [this, ids] { rerunWithChanges(ids.value(0)); })
      ->setEnabled(ids.size() == 1);
  menu.addAction(tr("Resume"), this, [this, ids] { resumeRun(ids.value(0)); })->setEnabled(ids.size() == 1);
  menu.addAction(tr("Repeat with seeds..."), this, &RunsPanel::repeatWithDialog)->setEnabled(ids.size() == 1);
  menu.addAction(tr("Evaluate..."), this, &RunsPanel::evaluateWithDialog)->setEnabled(ids.size() == 1);
  menu.addAction(tr("Download checkpoint..."), this, &RunsPanel::downloadWithDialog)->setEnabled(ids.size() == 1);
  menu.addSeparator();
  menu.addAction(tr("Delete..."), this, [this, ids] { deleteRuns(ids); })->setEnabled(!ids.isEmpty());
  menu.exec(table_->viewport()->mapToGlobal(pos));
}

void RunsPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refresh();
  poll_->start();
}

void RunsPanel::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  poll_->stop();  // a hidden panel costs nothing; showing it again refreshes at once
}

}  // namespace tokamak::ui
