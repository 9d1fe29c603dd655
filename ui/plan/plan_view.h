// PlanView: the studio's "Plan" page — `tokamak plan` (engine/torch/plan) for the setup on the left, following it as it
// changes: this machine first, then the SSH host chosen in the toolbar (by the devices its last "Test connection"
// listed), then every device of the catalog, each with whether it fits, the batch × accumulation, tok/s, MFU, time,
// cost and what the numbers rest on. A row that needs a change to fit has an Apply button that sets those keys in
// the setup. Below: time against cost per device (PlanChart), and how far the last runs' own plans were from what
// they measured (plan_tok_s against tok_s, from the run store).
#pragma once
#include <QStringList>
#include <QWidget>
#include <functional>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/base/plan/device_catalog.h"
#include "engine/base/plan/plan.h"

class QLabel;
class QSpinBox;
class QComboBox;
class QTableWidget;
class QTimer;

namespace tokamak::ui {

class PlanChart;

struct PlanViewSources {
  std::function<Config()> setup;        // what Start would run now
  std::function<QString()> host;        // the toolbar's host ("" for this computer)
  std::function<QStringList()> devices;  // that host's devices at its last test
};

class PlanView : public QWidget {
  Q_OBJECT
 public:
  explicit PlanView(PlanViewSources sources, QWidget* parent = nullptr);

  void setDatabase(const QString& path);  // the store whose profiled runs and plans it reads ("" = the default)
  // The rows shown, in their order (this machine, the host's device, then the catalog by time or cost).
  const std::vector<PlanRow>& rows() const { return rows_; }
  QTableWidget* table() const { return table_; }
  PlanChart* chart() const { return chart_; }
  QTableWidget* trust() const { return trust_; }
  QString message() const;  // the line above the table: what it plans for, or why it cannot
  // As wide as the live page asks (670 px): the page shown sets the window's least width, and the setup dock keeps
  // its two columns beside it on a 1366-pixel screen.
  QSize sizeHint() const override { return {670, 560}; }
  QSize minimumSizeHint() const override { return {560, 400}; }

 public Q_SLOTS:
  void refresh();          // now
  void scheduleRefresh();  // soon, once, however many changes come (and only while the page is shown)

 Q_SIGNALS:
  void applyRequested(const QStringList& sets);  // `key=value` lines that make a row fit

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void fillTable();
  void fillTrust();

  PlanViewSources sources_;
  QString db_;
  std::vector<PlanRow> rows_;
  std::vector<QString> labels_;  // each row's name as shown ("gpu1: H100 SXM" for the host's)
  bool dirty_ = true;
  bool haveMachine_ = false;
  CatalogDevice machine_;  // this machine, measured once (its limits are cached by every run's start)
  Precision machinePrecision_ = Precision::kFp32;
  QLabel* message_;
  QSpinBox* gpus_;
  QComboBox* sort_;
  QTableWidget* table_;
  PlanChart* chart_;
  QTableWidget* trust_;
  QTimer* timer_;
};

}  // namespace tokamak::ui
