// The ranked table, its exports and the importance text (see sweep_table.h).
#include "ui/sweep/sweep_table.h"

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTableWidget>
#include <cmath>

#include "engine/base/util/output_path.h"
#include "ui/history/plot_export.h"
#include "ui/history/run_colors.h"

namespace tokamak::ui {
namespace {

QString valueText(const QVariant& v) {
  if (!v.isValid()) return {};
  if (v.typeId() == QMetaType::Double) return QString::number(v.toDouble(), 'g', 4);
  return v.toString();
}

QString metricText(double m) { return std::isfinite(m) ? QString::number(m, 'f', 4) : QStringLiteral("—"); }

QString csvField(const QString& f) {
  if (!f.contains(QLatin1Char(',')) && !f.contains(QLatin1Char('"')) && !f.contains(QLatin1Char('\n'))) return f;
  return QLatin1Char('"') + QString(f).replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
}

}  // namespace

QStringList sweepTableHeader(const SweepResults& s) {
  QStringList h{QObject::tr("rank"), QObject::tr("trial")};
  for (const SweptKey& k : s.keys) h << k.key;
  h << s.metric << QObject::tr("step reached") << QObject::tr("state") << QObject::tr("best of");
  return h;
}

QList<QStringList> sweepTableRows(const SweepResults& s) {
  QList<QStringList> rows;
  for (const SweepTrialRow& t : s.trials) {
    QStringList r{QString::number(t.rank), t.name};
    for (const QVariant& v : t.values) r << valueText(v);
    r << metricText(t.metric) << (t.rung >= 0 ? QString::number(t.step) : QString()) << t.state << t.bestOf;
    rows << r;
  }
  return rows;
}

void fillSweepTable(QTableWidget* table, const SweepResults& s) {
  const QStringList header = sweepTableHeader(s);
  const QList<QStringList> rows = sweepTableRows(s);
  table->setColumnCount(int(header.size()));
  table->setHorizontalHeaderLabels(header);
  table->setRowCount(int(rows.size()));
  for (int r = 0; r < rows.size(); ++r) {
    const SweepTrialRow& t = s.trials[r];
    for (int c = 0; c < rows[r].size(); ++c) {
      auto* item = new QTableWidgetItem(rows[r][c]);
      if (t.rank == 1 && std::isfinite(t.metric)) {
        QFont f = item->font();
        f.setBold(true);
        item->setFont(f);
      }
      // The "best of" mark in its series' colour, as on the plots.
      if (c == rows[r].size() - 1 && !t.bestOf.isEmpty() && s.colorKey >= 0)
        item->setForeground(runColor(int(s.keys[s.colorKey].categories.indexOf(t.values[s.colorKey].toString()))));
      if (!t.error.isEmpty()) item->setToolTip(t.error);
      table->setItem(r, c, item);
    }
  }
  table->resizeColumnsToContents();
  table->horizontalHeader()->setStretchLastSection(true);
}

QString writeSweepTable(const SweepResults& s, const QString& format, const QString& path, bool replace) {
  const QStringList header = sweepTableHeader(s);
  const QList<QStringList> rows = sweepTableRows(s);
  QByteArray out;
  if (format == QLatin1String("csv")) {
    QStringList lines;
    QStringList h;
    for (const QString& f : header) h << csvField(f);
    lines << h.join(QLatin1Char(','));
    for (const QStringList& r : rows) {
      QStringList l;
      for (const QString& f : r) l << csvField(f);
      lines << l.join(QLatin1Char(','));
    }
    out = (lines.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8();
  } else if (format == QLatin1String("json")) {
    QJsonArray trials;
    for (int i = 0; i < s.trials.size(); ++i) {
      const SweepTrialRow& t = s.trials[i];
      QJsonObject o{{"rank", t.rank}, {"name", t.name}, {"state", t.state}, {"step", t.step}, {"best_of", t.bestOf}};
      o.insert(QStringLiteral("metric"), std::isfinite(t.metric) ? QJsonValue(t.metric) : QJsonValue());
      QJsonObject values;
      for (int k = 0; k < s.keys.size(); ++k) values.insert(s.keys[k].key, QJsonValue::fromVariant(t.values[k]));
      o.insert(QStringLiteral("values"), values);
      trials.append(o);
    }
    out = QJsonDocument(QJsonObject{{"sweep_id", s.id},
                                    {"name", s.name},
                                    {"metric", s.metric},
                                    {"direction", s.maximize ? "max" : "min"},
                                    {"trials", trials}})
              .toJson();
  } else if (format == QLatin1String("md")) {
    QString md = QStringLiteral("| %1 |\n|").arg(header.join(QStringLiteral(" | ")));
    for (int i = 0; i < header.size(); ++i) md += QStringLiteral("---|");
    md += QLatin1Char('\n');
    for (const QStringList& r : rows) md += QStringLiteral("| %1 |\n").arg(r.join(QStringLiteral(" | ")));
    out = md.toUtf8();
  } else {
    return QObject::tr("Unknown table format '%1': use csv, json or md.").arg(format);
  }
  try {
    tokamak::check_output_file(path.toStdString(), {"the ranked trials", {"." + format.toStdString()}, replace, {}});
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  QSaveFile file(path);  // temp + rename: a failed export leaves no half file
  if (!file.open(QIODevice::WriteOnly) || file.write(out) != out.size() || !file.commit())
    return QObject::tr("Could not write '%1': %2").arg(path, file.errorString());
  return {};
}

QString importanceHtml(const SweepResults& s) {
  QString html = QObject::tr(
                     "<b>Which key matters most</b><br>Spearman's rank correlation ρ between each key and "
                     "%1 at the first rung (step %2), where every trial has a result; |ρ| near 1: it "
                     "matters, near 0: it does not.<br>")
                     .arg(s.metric)
                     .arg(s.firstRungStep);
  for (const KeyImportance& k : s.importance) {
    const QString key = QString::fromStdString(k.key);
    if (std::isfinite(k.rho)) html += QObject::tr("• %1: ρ = %2 (n = %3)<br>").arg(key).arg(k.rho, 0, 'f', 2).arg(k.n);
    else if (s.colorKey >= 0 && key == s.keys[s.colorKey].key) {
      QStringList means;
      for (const auto& [value, mean] : s.choiceMeans) means << QStringLiteral("%1 %2").arg(value).arg(mean, 0, 'f', 4);
      html += QObject::tr("• %1: a choice (no order for ρ); mean at step %2: %3<br>")
                  .arg(key)
                  .arg(s.firstRungStep)
                  .arg(means.join(QStringLiteral(", ")));
    } else {
      html += QObject::tr("• %1: not enough trials yet (n = %2)<br>").arg(key).arg(k.n);
    }
  }
  return html;
}

QStringList sweepKeyPlotPaths(const SweepResults& s, int plots, const QString& path) {
  const QFileInfo info(path);
  QStringList paths;
  for (int k = 0; k < plots && k < s.keys.size(); ++k)
    paths << info.dir().filePath(
        QStringLiteral("%1-%2.%3").arg(info.completeBaseName(), QString(s.keys[k].key).replace('.', '_'), info.suffix()));
  return paths;
}

QString saveSweepPlots(const QList<QCustomPlot*>& keyPlots, const SweepResults& s, QCustomPlot* parallel,
                       const QString& path, QStringList* written, bool replace, const QStringList& replaceKeys) {
  const QStringList files = sweepKeyPlotPaths(s, keyPlots.size(), path);
  // All checked before the first is drawn: a key plot refused halfway would leave half an export behind.
  try {
    const std::string suffix = "." + QFileInfo(path).suffix().toLower().toStdString();
    for (const QString& f : files)
      tokamak::check_output_file(f.toStdString(), {"the plot", {suffix}, replaceKeys.contains(f), {},
                                                   "only the file the dialog named was asked about: export under "
                                                   "another name, or remove it"});
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  QString why = savePlot(parallel, path, replace);
  if (!why.isEmpty()) return why;
  if (written) *written << path;
  for (int k = 0; k < files.size(); ++k) {
    why = savePlot(keyPlots[k], files[k], replaceKeys.contains(files[k]));
    if (!why.isEmpty()) return why;
    if (written) *written << files[k];
  }
  return {};
}

}  // namespace tokamak::ui
