// Plot export (see plot_export.h). Each writer reports failure differently (a bool, or nothing at all for
// QSvgGenerator), so every path ends with a check that a non-empty file is there.
#include "ui/history/plot_export.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QSvgGenerator>
#include "ui/plots/qcp.h"

#include <cstdio>

#include "engine/base/util/output_path.h"

namespace tokamak::ui {

namespace {

bool saveSvg(QCustomPlot* plot, const QString& path, int w, int h) {
  // QSvgGenerator silently paints nothing into a file it cannot open: open it ourselves to know.
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  QSvgGenerator svg;
  svg.setOutputDevice(&file);
  svg.setSize(QSize(w, h));
  svg.setViewBox(QRect(0, 0, w, h));
  svg.setTitle(QStringLiteral("Tokamak runs"));
  QCPPainter painter;
  if (!painter.begin(&svg)) return false;
  plot->toPainter(&painter, w, h);
  painter.end();
  file.close();
  return file.error() == QFile::NoError;
}

}  // namespace

QString savePlot(QCustomPlot* plot, const QString& path, bool replace) {
  if (!plot) return QObject::tr("There is no plot to export.");
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix != QLatin1String("png") && suffix != QLatin1String("pdf") && suffix != QLatin1String("svg"))
    return QObject::tr("Unknown plot format '%1': use .png, .pdf or .svg.").arg(suffix);
  try {
    tokamak::check_output_file(path.toStdString(), {"the plot", {"." + suffix.toStdString()}, replace, {}});
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  // The widget's size, or a sensible page when it was never laid out (a hidden panel, a test).
  const int w = plot->width() > 50 ? plot->width() : 900;
  const int h = plot->height() > 50 ? plot->height() : 500;
  // Drawn into a temporary beside it, then renamed: a failed export leaves the earlier file as it was.
  const QString tmp = path + QStringLiteral(".tmp-%1.").arg(QCoreApplication::applicationPid()) + suffix;
  bool ok = false;
  if (suffix == QLatin1String("png")) ok = plot->savePng(tmp, w, h);
  else if (suffix == QLatin1String("pdf")) ok = plot->savePdf(tmp, w, h);
  else ok = saveSvg(plot, tmp, w, h);
  if (!ok || QFileInfo(tmp).size() == 0 || std::rename(QFile::encodeName(tmp).constData(), QFile::encodeName(path).constData()) != 0) {
    QFile::remove(tmp);
    return QObject::tr("Could not write '%1': check that its folder exists and is writable.").arg(path);
  }
  return {};
}

}  // namespace tokamak::ui
