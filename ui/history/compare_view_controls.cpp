// CompareView's controls: the metric and X-axis pickers, the baseline, the grouping and its band (see
// compare_view.h). Each setter keeps its box in step (tests and the runs panel call them too) and redraws
// what the choice changes.
#include "ui/history/compare_view.h"
#include "ui/common/qt_helpers.h"

#include <QComboBox>
#include <QLineEdit>
#include <QSignalBlocker>

namespace tokamak::ui {
namespace {}  // namespace

void CompareView::setMetric(PlotMetric metric) {
  metric_ = int(metric);
  if (metricBox_->currentIndex() != metric_) metricBox_->setCurrentIndex(metric_);
  rebuildPlot();
}

bool CompareView::setMetricKey(const QString& key) {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].key == key.toStdString()) {
      metric_ = int(i);
      if (metricBox_->currentIndex() != metric_) metricBox_->setCurrentIndex(metric_);
      rebuildPlot();
      return true;
    }
  return false;
}

QString CompareView::metricKey() const { return qs(axes_.at(size_t(metric_)).key); }

QStringList CompareView::metricKeys() const {
  QStringList keys;
  for (const CurveChoice& y : axes_) keys << qs(y.key);
  return keys;
}

// The five usual metrics first, then every other key the compared runs recorded (tokens and wall time are
// X axes, not curves). The current choice is kept when it is still offered.
void CompareView::rebuildMetricChoices() {
  const std::string current = axes_.empty() ? std::string() : axes_[size_t(metric_)].key;
  QStringList names;
  axes_ = curveChoices(metrics_, &names);
  metric_ = 0;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].key == current) metric_ = int(i);
  QSignalBlocker block(metricBox_);
  metricBox_->clear();
  metricBox_->addItems(names);
  metricBox_->setCurrentIndex(metric_);
  QSignalBlocker blockX(xBox_);
  xBox_->clear();
  xBox_->addItems({tr("Step"), tr("Tokens"), tr("Wall time")});
  bool keyOffered = false;
  for (const CurveChoice& y : axes_) {
    xBox_->addItem(qs(y.key));
    if (y.key == xKey_) keyOffered = true, xBox_->setCurrentIndex(xBox_->count() - 1);
  }
  if (!keyOffered) xKey_.clear(), xBox_->setCurrentIndex(int(xAxis_));
}

void CompareView::setXAxis(XAxis axis) {
  xAxis_ = axis;
  xKey_.clear();
  if (xBox_->currentIndex() != int(axis)) xBox_->setCurrentIndex(int(axis));
  rebuildPlot();
}

bool CompareView::setXAxisKey(const QString& key) {
  const int i = xBox_->findText(key);
  if (i < 3) return false;  // not offered (the first three are the built-in axes' names)
  xKey_ = key.toStdString();
  if (xBox_->currentIndex() != i) xBox_->setCurrentIndex(i);
  rebuildPlot();
  return true;
}

void CompareView::setBaseline(int runIndex) {
  if (runIndex < 0 || runIndex >= ids_.size()) return;
  baseline_ = runIndex;
  if (baselineBox_->currentIndex() != runIndex) baselineBox_->setCurrentIndex(runIndex);
  rebuildScoreboard();
}

bool CompareView::setGrouping(const QString& spec) {
  tokamak::GroupSpec parsed;
  try {
    parsed = tokamak::parse_group_spec(spec.toStdString());
  } catch (const std::exception& e) {
    groupError_ = QString::fromUtf8(e.what());
    patternEdit_->setToolTip(groupError_);
    patternEdit_->setStyleSheet(QStringLiteral("color: #c0392b"));
    return false;
  }
  groupError_.clear();
  patternEdit_->setStyleSheet({});
  group_ = parsed;
  grouping_ = tokamak::group_runs(members_, group_);
  {
    const QSignalBlocker blockBox(groupBox_), blockEdit(patternEdit_);
    groupBox_->setCurrentIndex(int(group_.by));
    if (group_.by == tokamak::GroupSpec::By::kName) patternEdit_->setText(qs(group_.pattern));
  }
  patternEdit_->setVisible(group_.by == tokamak::GroupSpec::By::kName);
  bandBox_->setEnabled(group_.by != tokamak::GroupSpec::By::kNone);
  rebuildPlot();
  rebuildScoreboard();
  return true;
}

QString CompareView::grouping() const {
  switch (group_.by) {
    case tokamak::GroupSpec::By::kSeed:
      return QStringLiteral("seed");
    case tokamak::GroupSpec::By::kTag:
      return QStringLiteral("tag");
    case tokamak::GroupSpec::By::kName:
      return QStringLiteral("name:") + qs(group_.pattern);
    case tokamak::GroupSpec::By::kNone:
      break;
  }
  return QStringLiteral("none");
}

void CompareView::applyGroupControls() {
  const QString kind = groupBox_->currentData().toString();
  patternEdit_->setVisible(kind == QLatin1String("name"));
  if (kind != QLatin1String("name")) return void(setGrouping(kind));
  const QString pattern = patternEdit_->text().isEmpty() ? patternEdit_->placeholderText() : patternEdit_->text();
  setGrouping(QStringLiteral("name:") + pattern);
}

void CompareView::setBand(BandKind band) {
  band_ = band;
  if (bandBox_->currentIndex() != int(band)) bandBox_->setCurrentIndex(int(band));
  rebuildPlot();
}

}  // namespace tokamak::ui
