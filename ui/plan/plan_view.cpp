// The Plan page: `tokamak plan` for the setup, as it changes (see plan_view.h).
#include "ui/plan/plan_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QProcess>
#include <QLabel>
#include <QPushButton>
#include <QShowEvent>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>
#include <map>
#include <memory>

#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"
#include "engine/base/plan/machine_device.h"
#include "engine/base/plan/plan_rates.h"
#include "engine/base/util/error.h"
#include "ui/common/programs.h"
#include "ui/plan/plan_chart.h"

namespace tokamak::ui {
namespace {

QString timeText(double hours) {
  if (hours <= 0) return "-";
  if (hours >= 72) return QObject::tr("%1 days").arg(hours / 24, 0, 'f', 0);
  return QString::fromStdString(format_duration(hours * 3600));
}

// This machine from the limits every run's start measured and cached; where none is cached yet, measured once by
// `tokamak-engine plan --device this` (the studio loads no LibTorch to measure them itself), then read back.
CatalogDevice thisMachine(int64_t threads, Precision* precision) {
  if (const std::optional<CatalogDevice> cached = cached_this_machine_device(threads, precision)) return *cached;
  const QString engine = enginePath();
  if (engine.isEmpty()) throw Error(engineMissingText().toStdString());
  QProcess measure;
  measure.start(engine, {"plan", "--device", "this", "--json", "--set", QString("threads=%1").arg(threads)});
  measure.waitForFinished(120000);
  if (const std::optional<CatalogDevice> cached = cached_this_machine_device(threads, precision)) return *cached;
  const QStringList said = QString::fromUtf8(measure.readAllStandardError()).trimmed().split('\n');
  throw Error("this machine's limits could not be measured: " + said.last().toStdString(),
              "run `tokamak plan --device this` to see why");
}

QTableWidgetItem* cell(const QString& text, const QString& tip = {}) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(item->flags() & ~Qt::ItemIsEditable);
  if (!tip.isEmpty()) item->setToolTip(tip);
  return item;
}

// The catalog device a host's "cuda:0 NVIDIA H100 80GB HBM3" line names, if any.
const CatalogDevice* hostDevice(const DeviceCatalog& catalog, const QStringList& devices) {
  for (const QString& d : devices)
    if (const CatalogDevice* c = device_for_gpu_name(catalog, d.toStdString())) return c;
  return nullptr;
}

}  // namespace

PlanView::PlanView(PlanViewSources sources, QWidget* parent) : QWidget(parent), sources_(std::move(sources)) {
  message_ = new QLabel;
  message_->setObjectName("planMessage");
  message_->setWordWrap(true);
  gpus_ = new QSpinBox;
  gpus_->setObjectName("planGpus");
  gpus_->setRange(1, 1024);
  gpus_->setPrefix(tr("GPUs of each: "));
  gpus_->setToolTip(tr("Data-parallel GPUs of each device: the all-reduce over its interconnect is added"));
  sort_ = new QComboBox;
  sort_->setObjectName("planSort");
  sort_->addItem(tr("by time"), "time");
  sort_->addItem(tr("by cost"), "cost");
  auto* controls = new QHBoxLayout;
  controls->addWidget(message_, 1);
  controls->addWidget(gpus_);
  controls->addWidget(sort_);

  table_ = new QTableWidget(0, 9);
  table_->setObjectName("planTable");
  table_->setHorizontalHeaderLabels(
      {tr("Device"), tr("Fits"), tr("Batch × accum"), tr("tok/s"), tr("MFU"), tr("Time"), tr("Cost"), tr(""), tr("Basis")});
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setWordWrap(false);
  // Every column as wide as it needs but the basis, which takes what is left and is whole in its tooltip: the table
  // fits the page beside the setup on a 1366-pixel screen.
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(8, QHeaderView::Stretch);
  table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

  chart_ = new PlanChart;
  trust_ = new QTableWidget(0, 4);
  trust_->setObjectName("planTrust");
  trust_->setHorizontalHeaderLabels({tr("Run"), tr("Planned"), tr("Measured"), tr("Off by")});
  trust_->verticalHeader()->hide();
  trust_->horizontalHeader()->setStretchLastSection(true);
  trust_->setToolTip(tr("The last runs' own plans (plan_tok_s, in their first report) against their last tok/s"));
  auto* trustBox = new QWidget;
  auto* trustLayout = new QVBoxLayout(trustBox);
  trustLayout->setContentsMargins(0, 0, 0, 0);
  trustLayout->addWidget(new QLabel(tr("How far to trust it: the last runs' plans against what they measured")));
  trustLayout->addWidget(trust_);
  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(chart_);
  bottom->addWidget(trustBox);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);
  chart_->setMinimumWidth(240);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(table_);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(controls);
  layout->addWidget(split, 1);

  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  timer_->setInterval(250);
  connect(timer_, &QTimer::timeout, this, &PlanView::refresh);
  connect(gpus_, &QSpinBox::valueChanged, this, &PlanView::scheduleRefresh);
  connect(sort_, &QComboBox::currentIndexChanged, this, &PlanView::scheduleRefresh);
}

void PlanView::setDatabase(const QString& path) {
  db_ = path;
  scheduleRefresh();
}

QString PlanView::message() const { return message_->text(); }

void PlanView::scheduleRefresh() {
  dirty_ = true;
  if (isVisible()) timer_->start();
}

void PlanView::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (dirty_) timer_->start(0);
}

void PlanView::refresh() {
  dirty_ = false;
  rows_.clear(), labels_.clear();
  DeviceCatalog catalog;
  try {
    catalog = load_device_catalog();
    if (!haveMachine_) {  // its limits are what every run's start measured and cached
      machine_ = thisMachine(sources_.setup().threads, &machinePrecision_);
      haveMachine_ = true;
    }
  } catch (const std::exception& e) {
    message_->setText(tr("No plan: %1").arg(QString::fromStdString(e.what())));
    fillTable(), fillTrust();
    return;
  }
  const Config c = sources_.setup();
  std::unique_ptr<RunStore> store;
  const std::string db = db_.isEmpty() ? default_db_path() : db_.toStdString();
  try {
    if (path_exists(db)) store = std::make_unique<RunStore>(db);
  } catch (const std::exception&) {
    // an unreadable store leaves the default fractions, as the basis says
  }
  PlanRequest r;
  r.gpus = gpus_->value();
  std::vector<const CatalogDevice*> devices{&machine_};
  const QString host = sources_.host();
  const CatalogDevice* onHost = host.isEmpty() ? nullptr : hostDevice(catalog, sources_.devices());
  if (onHost) devices.push_back(onHost);
  for (const CatalogDevice& d : catalog.devices)
    if (&d != onHost) devices.push_back(&d);
  std::map<std::string, PlanRates> rates;  // one reading of the store per architecture, not per device
  for (const CatalogDevice* d : devices) {
    try {
      const std::string arch = d->this_machine ? std::string("this machine") : d->architecture;
      if (!rates.count(arch)) rates[arch] = plan_rates(*d, catalog, store.get(), c.speed.fused_glue);
      rows_.push_back(plan_for(c, *d, r, rates[arch], machinePrecision_));
    } catch (const std::exception& e) {
      message_->setText(tr("No plan: %1").arg(QString::fromStdString(e.what())));
      rows_.clear();
      fillTable(), fillTrust();
      return;
    }
  }
  // This machine and the host's device stay on top; the catalog below sorts.
  const size_t pinned = onHost ? 2 : 1;
  std::vector<PlanRow> rest(rows_.begin() + long(pinned), rows_.end());
  sort_plan(rest, sort_->currentData().toString().toStdString());
  rows_.resize(pinned);
  rows_.insert(rows_.end(), rest.begin(), rest.end());
  for (const PlanRow& row : rows_)
    labels_.push_back(onHost && row.device == onHost->name && &row == &rows_[1]
                          ? tr("%1: %2").arg(host, QString::fromStdString(row.device))
                          : row.this_machine ? tr("this machine") : QString::fromStdString(row.device));
  message_->setText(tr("For the setup on the left: %1 tokens (train.steps × tokens a step)%2. Prices as of %3, "
                       "yours to change in %4.")
                        .arg(QString::fromStdString(format_count(rows_.front().tokens)))
                        .arg(host.isEmpty() || onHost ? QString()
                                                      : tr("; %1's GPU: Test connection in the toolbar to place it")
                                                            .arg(host))
                        .arg(QString::fromStdString(catalog.prices_as_of),
                             QString::fromStdString(user_devices_path())));
  fillTable();
  chart_->setRows(rows_, labels_);
  fillTrust();
}

void PlanView::fillTable() {
  table_->setRowCount(int(rows_.size()));
  for (int i = 0; i < int(rows_.size()); ++i) {
    const PlanRow& p = rows_[size_t(i)];
    const QString fit = QString::fromStdString(p.fit);
    const bool tight = p.fit.rfind("tight", 0) == 0;
    QTableWidgetItem* name = cell(labels_[size_t(i)], QString::fromStdString(p.device) + " · " +
                                                          QString::fromStdString(p.precision));
    table_->setItem(i, 0, name);
    table_->setItem(i, 1, cell(p.fits ? (tight ? tr("tight") : tr("yes")) : tr("no"), fit));
    table_->setItem(i, 2, cell(QStringLiteral("%1 × %2%3").arg(p.batch_size).arg(p.grad_accum)
                                   .arg(p.checkpointing ? tr(" ckpt") : QString()),
                               fit));
    table_->setItem(i, 3, cell(p.fits ? QString::fromStdString(format_count(p.tok_s)) : "-",
                               tr("%1 ms a step").arg(p.step_ms, 0, 'f', 1)));
    table_->setItem(i, 4, cell(p.fits ? QStringLiteral("%1%").arg(100 * p.mfu, 0, 'f', 0) : "-"));
    table_->setItem(i, 5, cell(p.fits ? timeText(p.hours) : "-"));
    table_->setItem(i, 6, cell(p.fits && !p.this_machine ? QStringLiteral("$%1").arg(p.cost, 0, 'f', p.cost < 10 ? 2 : 0)
                                                         : "-"));
    table_->removeCellWidget(i, 7);
    table_->setItem(i, 7, cell(QString()));
    if (!p.fix.empty()) {
      auto* apply = new QPushButton(tr("Apply"));
      apply->setObjectName(QStringLiteral("planApply%1").arg(i));
      apply->setToolTip(tr("Set %1 in the setup: %2").arg(QString::fromStdString(p.fix), fit));
      const QStringList sets = QString::fromStdString(p.fix).split(' ', Qt::SkipEmptyParts);
      connect(apply, &QPushButton::clicked, this, [this, sets] { Q_EMIT applyRequested(sets); });
      table_->setCellWidget(i, 7, apply);
    }
    table_->setItem(i, 8, cell(QString::fromStdString(p.basis), QString::fromStdString(p.basis)));
  }
}

void PlanView::fillTrust() {
  trust_->setRowCount(0);
  const std::string db = db_.isEmpty() ? default_db_path() : db_.toStdString();
  if (!path_exists(db)) return;
  try {
    RunStore store(db);
    int shown = 0;
    for (const RunListing& l : store.list_runs(50)) {  // newest first
      double planned = NAN;
      for (const MetricSummary& m : store.summary(l.run.id))
        if (m.metric == "plan_tok_s") planned = m.last;
      if (std::isnan(planned) || !(l.tok_s > 0)) continue;
      const int row = trust_->rowCount();
      trust_->insertRow(row);
      trust_->setItem(row, 0, cell(QString::fromStdString(l.run.name), QString::fromStdString(l.run.device)));
      trust_->setItem(row, 1, cell(QString::fromStdString(format_count(planned))));
      trust_->setItem(row, 2, cell(QString::fromStdString(format_count(l.tok_s))));
      trust_->setItem(row, 3, cell(QStringLiteral("%1%2%").arg(planned >= l.tok_s ? "+" : "").arg(
                                       100 * (planned / l.tok_s - 1), 0, 'f', 0)));
      if (++shown == 5) break;
    }
    trust_->resizeColumnsToContents();
  } catch (const std::exception&) {
    // the runs page says what is wrong with the store
  }
}

}  // namespace tokamak::ui
