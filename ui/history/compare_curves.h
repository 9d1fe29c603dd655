// The compare view's curves: which metrics it offers (the five usual plots, then every other key the compared
// runs recorded, so a metric added to the trainer can be compared without an edit here) and the drawing of
// one of them for every run against step, tokens, wall time or another metric (then as points), a group of
// runs as one mean curve with a band (min–max or ± one standard deviation, engine/base/store/run_groups.h).
#pragma once
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

#include "engine/base/store/run_groups.h"
#include "engine/base/store/run_store.h"

class QCustomPlot;

namespace tokamak::ui {

struct CurveChoice {
  std::string key;  // the stored name
  double scale;     // stored value × scale = what the axis shows (MFU in %, bytes in MiB)
  QString label;    // the Y axis' label
};

// The five usual metrics first (train loss, val loss, tok/s, MFU, peak memory: CompareView::PlotMetric's
// order), then every other key the runs recorded but tokens and wall time (X axes, not curves). `names` gets
// the picker's text for each.
std::vector<CurveChoice> curveChoices(const std::vector<std::vector<tokamak::MetricRow>>& metrics, QStringList* names);

struct CurveRequest {
  CurveChoice y;
  int builtinX = 0;                           // 0 step, 1 tokens, 2 wall time (CompareView::XAxis), when xKey is ""
  std::string xKey;                           // a metric as the X axis: drawn as points, never grouped
  const tokamak::Grouping* groups = nullptr;  // null or no groups: one curve per run
  bool stdBand = false;                       // a group's band: ± one std (else min–max)
};

// Replaces `plot`'s graphs by one curve per run (`labels[i]` in runColor(i)) or per group, and rescales.
void drawCurves(QCustomPlot* plot, const std::vector<std::vector<tokamak::MetricRow>>& metrics,
                const QStringList& labels, const CurveRequest& request);

}  // namespace tokamak::ui
