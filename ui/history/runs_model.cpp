// The runs browser's model: reading the store into rows, merging refreshes, and editing tags and notes.
#include "ui/history/runs_model.h"
#include "ui/common/qt_helpers.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <cmath>
#include <limits>

#include "engine/base/store/run_store.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/store/sqlite_db.h"
#include "ui/history/run_switches.h"

namespace tokamak::ui {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// NaN sorts below every number, so unreported values gather at one end instead of scattering.
QVariant sortable(double v) { return std::isnan(v) ? QVariant(-std::numeric_limits<double>::max()) : QVariant(v); }

QString number(double v, int precision) {
  return std::isnan(v) ? QStringLiteral("-") : QString::number(v, 'f', precision);
}

}  // namespace

QString tagsToJson(const QString& commaSeparated) {
  QJsonArray a;
  for (const QString& t : commaSeparated.split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (!t.trimmed().isEmpty()) a.append(t.trimmed());
  return QString::fromUtf8(QJsonDocument(a).toJson(QJsonDocument::Compact));
}

QString tagsFromJson(const QString& json) {
  QStringList tags;
  for (const QJsonValue& v : QJsonDocument::fromJson(json.toUtf8()).array()) tags << v.toString();
  return tags.join(QStringLiteral(", "));
}

RunsTableModel::RunsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunsTableModel::reload(tokamak::RunStore& store) {
  // MFU and peak memory live in run_summary like the listing's values: one query for all runs instead of a
  // summary() call per run keeps a refresh of 1,000 runs in milliseconds.
  QHash<qint64, QPair<double, double>> extra;  // id -> (last mfu, max peak memory)
  QHash<qint64, double> toTarget;              // id -> time_to_target_s (recorded once, when reached)
  {
    tokamak::Stmt s(store.db(),
                    "SELECT run_id, metric, last, max FROM run_summary WHERE metric IN ('mfu', 'mem_peak', "
                    "'time_to_target_s')");
    while (s.step()) {
      if (s.text(1) == "time_to_target_s") {
        toTarget.insert(s.int64(0), s.real(2));
        continue;
      }
      auto it = extra.find(s.int64(0));
      if (it == extra.end()) it = extra.insert(s.int64(0), {kNan, kNan});
      if (s.text(1) == "mfu") it->first = s.real(2);
      else it->second = s.real(3);
    }
  }
  QVector<RunRow> rows;
  for (const tokamak::RunListing& l : store.list_runs()) {
    const tokamak::RunInfo& r = l.run;
    RunRow row;
    row.id = r.id;
    row.name = qs(r.name);
    row.status = qs(r.status);
    row.model = qs(r.model);
    row.dataset = qs(r.dataset);
    row.device = qs(r.device);
    row.tags = tagsFromJson(qs(r.tags_json));
    row.notes = qs(r.notes);
    row.error = qs(r.error);
    row.created = r.created;
    row.tokS = l.tok_s;
    row.bestValLoss = l.best_val_loss;
    row.lastStep = l.last_step;
    row.totalSteps = r.total_steps;
    auto e = extra.value(r.id, {kNan, kNan});
    row.mfu = e.first;
    row.peakMem = e.second > 0 ? e.second : kNan;  // CPU runs report 0: unknown, not "no memory"
    auto cached = switchesCache_.find(r.id);
    if (cached == switchesCache_.end() || cached->first != row.status) {
      const std::string config = store.run(r.id).config_json;
      QString summary = switchesSummary(qs(config));
      cached = switchesCache_.insert(r.id, {row.status, summary});
      const auto flat = tokamak::flatten_config(config);
      const auto target = flat.find("eval.target_val_loss");
      targetCache_.insert(r.id, target == flat.end() ? 0.0 : std::atof(target->second.c_str()));
    }
    row.target = targetCache_.value(r.id, 0.0);
    row.timeToTarget = toTarget.value(r.id, kNan);
    row.switches = cached->second;
    rows.push_back(row);
  }
  setRows(std::move(rows));
}

void RunsTableModel::clear() {
  switchesCache_.clear();
  targetCache_.clear();
  setRows({});
}

void RunsTableModel::setRows(QVector<RunRow> rows) {
  QHash<qint64, int> fresh;
  for (int i = 0; i < rows.size(); ++i) fresh.insert(rows[i].id, i);
  // Removed runs, back to front so the row numbers stay valid.
  for (int i = rows_.size() - 1; i >= 0; --i) {
    if (fresh.contains(rows_[i].id)) continue;
    beginRemoveRows({}, i, i);
    rows_.remove(i);
    endRemoveRows();
  }
  rebuildIndex();
  for (const RunRow& r : rows) {
    int at = index_.value(r.id, -1);
    if (at < 0) {
      beginInsertRows({}, rows_.size(), rows_.size());
      rows_.push_back(r);
      index_.insert(r.id, rows_.size() - 1);
      endInsertRows();
    } else {
      rows_[at] = r;
    }
  }
  if (!rows_.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(rows_.size() - 1, ColumnCount - 1));
}

void RunsTableModel::rebuildIndex() {
  index_.clear();
  for (int i = 0; i < rows_.size(); ++i) index_.insert(rows_[i].id, i);
}

const RunRow* RunsTableModel::runById(qint64 id) const {
  int at = index_.value(id, -1);
  return at < 0 ? nullptr : &rows_[at];
}

int RunsTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : rows_.size(); }
int RunsTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size()) return {};
  const RunRow& r = rows_[index.row()];
  if (role == IdRole) return r.id;
  if (role == Qt::DisplayRole || role == Qt::EditRole) {
    switch (index.column()) {
      case Name:
        return r.name.isEmpty() ? QStringLiteral("#%1").arg(r.id) : r.name;
      case Date:
        return QDateTime::fromSecsSinceEpoch(qint64(r.created)).toString(QStringLiteral("yyyy-MM-dd HH:mm"));
      case Model:
        return r.model;
      case Dataset:
        return r.dataset;
      case Switches:
        return r.switches;
      case TokS:
        return QString::fromStdString(tokamak::format_count(r.tokS));
      case Mfu:
        return std::isnan(r.mfu) || r.mfu < 0 ? QStringLiteral("-") : number(100 * r.mfu, 1) + QLatin1Char('%');
      case BestVal:
        return number(r.bestValLoss, 4);
      case ToTarget:  // "not reached" for a run with a target that has not reached it (yet)
        return QString::fromStdString(tokamak::format_time_to_target(r.timeToTarget, r.target));
      case PeakMem:
        return QString::fromStdString(tokamak::format_bytes(r.peakMem));
      case Status:
        return r.status == QLatin1String("running") && r.totalSteps > 0
                   ? QStringLiteral("running %1/%2").arg(r.lastStep).arg(r.totalSteps)
                   : r.status;
      case Tags:
        return r.tags;
      case Notes:
        return r.notes;
    }
  }
  if (role == SortRole) {
    switch (index.column()) {
      case Date:
        return r.created;
      case TokS:
        return sortable(r.tokS);
      case Mfu:
        return sortable(r.mfu);
      case BestVal:
        return sortable(r.bestValLoss);
      case ToTarget:
        return sortable(r.timeToTarget);
      case PeakMem:
        return sortable(r.peakMem);
      default:
        return data(index, Qt::DisplayRole);
    }
  }
  if (role == Qt::ToolTipRole && index.column() == Switches) return r.switches;
  if (role == Qt::ToolTipRole && index.column() == Status && !r.error.isEmpty()) return r.error;
  if (role == Qt::TextAlignmentRole && index.column() >= TokS && index.column() <= PeakMem)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  // The listing keeps each run's last tok/s and MFU (the store's summary); compare's scoreboard takes the
  // median after the warm-up, so the two can differ: say which is which.
  if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && (section == TokS || section == Mfu))
    return tr("The last value the run logged; Compare's scoreboard shows the median after the first 10%");
  if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == ToTarget)
    return tr(
        "Training time until val loss first reached eval.target_val_loss (checked every eval.every "
        "steps; evaluations left out)");
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  static const char* names[ColumnCount] = {"Name",   "Date", "Model",         "Dataset",   "Switches",
                                           "tok/s",  "MFU",  "Best val loss", "To target", "Peak memory",
                                           "Status", "Tags", "Notes"};
  return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

Qt::ItemFlags RunsTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (store_ && (index.column() == Tags || index.column() == Notes)) f |= Qt::ItemIsEditable;
  return f;
}

bool RunsTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!store_ || role != Qt::EditRole || !index.isValid() || (index.column() != Tags && index.column() != Notes))
    return false;
  RunRow& r = rows_[index.row()];
  QString tags = index.column() == Tags ? value.toString() : r.tags;
  QString notes = index.column() == Notes ? value.toString() : r.notes;
  try {
    store_->transaction([&] { store_->set_tags(r.id, tagsToJson(tags).toStdString(), notes.toStdString()); });
  } catch (const std::exception& e) {
    Q_EMIT errorOccurred(tr("Could not save tags and notes: %1").arg(QString::fromUtf8(e.what())));
    return false;
  }
  r.tags = tagsFromJson(tagsToJson(tags));  // normalised: "a,  b," reads back "a, b"
  r.notes = notes;
  Q_EMIT dataChanged(index, index);
  return true;
}

}  // namespace tokamak::ui
