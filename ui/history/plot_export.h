// Saving a QCustomPlot as PNG, PDF or SVG at its on-screen size. QCustomPlot writes PNG and PDF itself; SVG
// goes through QSvgGenerator, painting the plot with QCPPainter so it stays vector (lines, not a bitmap).
#pragma once

#include <QString>

class QCustomPlot;

namespace tokamak::ui {

// The format is taken from the suffix (.png, .pdf, .svg). Returns "" on success, else the reason. An existing
// file is replaced only with REPLACE (the save dialog asked), and never when it is not a plain file of that
// format (engine/base/util/output_path.h).
QString savePlot(QCustomPlot* plot, const QString& path, bool replace = false);

}  // namespace tokamak::ui
