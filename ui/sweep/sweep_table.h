// The sweep view's ranked table and its exports: the table widget filled from a SweepResults, the same rows
// written as CSV, JSON or Markdown (atomically: a failed write leaves no half file), "which key matters most"
// in words, and the plots saved through ui/history/plot_export.h.
#pragma once
#include <QList>
#include <QString>
#include <QStringList>

#include "ui/sweep/sweep_results.h"

class QCustomPlot;
class QTableWidget;

namespace tokamak::ui {

// The columns: rank, trial, one per swept key, the metric, the step reached, state, best of.
QStringList sweepTableHeader(const SweepResults& s);
QList<QStringList> sweepTableRows(const SweepResults& s);
void fillSweepTable(QTableWidget* table, const SweepResults& s);
// format: csv | json | md. "" on success, else the reason.
// REPLACE: an existing file may be replaced (the save dialog asked); never one that is not a plain file of that
// format (engine/core/util/output_path.h).
QString writeSweepTable(const SweepResults& s, const QString& format, const QString& path, bool replace = false);
// Spearman's ρ per key, strongest first, naming the measure and the rung it was taken at; a choice key's
// mean metric per value.
QString importanceHtml(const SweepResults& s);
// The parallel coordinates at PATH, each key's plot at STEM-KEY.SUFFIX beside it. REPLACE (the dialog asked about
// PATH) covers the key plots named after it too.
QString saveSweepPlots(const QList<QCustomPlot*>& keyPlots, const SweepResults& s, QCustomPlot* parallel,
                       const QString& path, QStringList* written, bool replace = false);

}  // namespace tokamak::ui
