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
// format (engine/base/util/output_path.h).
QString writeSweepTable(const SweepResults& s, const QString& format, const QString& path, bool replace = false);
// Spearman's ρ per key, strongest first, naming the measure and the rung it was taken at; a choice key's
// mean metric per value.
QString importanceHtml(const SweepResults& s);
// Where an export of the plots to PATH puts each of the first PLOTS keys' plots: STEM-KEY.SUFFIX beside it.
QStringList sweepKeyPlotPaths(const SweepResults& s, int plots, const QString& path);
// The parallel coordinates at PATH, each key's plot beside it (sweepKeyPlotPaths). REPLACE: the dialog asked about
// PATH; REPLACE_KEYS: the key plots the person was asked about as well and said yes to. The dialog's answer was
// about PATH alone, so any other key plot that exists is refused, and then nothing is written.
QString saveSweepPlots(const QList<QCustomPlot*>& keyPlots, const SweepResults& s, QCustomPlot* parallel,
                       const QString& path, QStringList* written, bool replace = false,
                       const QStringList& replaceKeys = {});

}  // namespace tokamak::ui
