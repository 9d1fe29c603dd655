// QueueModel: the queue's rows from the store, and drag-to-reorder (see queue_model.h).
#include "ui/queue/queue_model.h"

#include <QMimeData>

#include <nlohmann/json.hpp>

#include "engine/base/run/journal.h"
#include "engine/base/run/run_folder.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"

namespace tokamak::ui {
namespace {

const char* kMime = "application/x-tokamak-queue-item";

bool sameRow(const QueueRow& a, const QueueRow& b) {
  return a.id == b.id && a.index == b.index && a.state == b.state && a.name == b.name && a.target == b.target &&
         a.runUid == b.runUid && a.runState == b.runState && a.progress == b.progress && a.error == b.error;
}

// Where a running row's run is, from its journal's last step line (as `queue list` says it).
QString progressOf(const RunFolder& f) {
  const nlohmann::json last = nlohmann::json::parse(last_event_line(f.journal(), "step"), nullptr, false);
  if (!last.is_object()) return {};
  QString s = QObject::tr("step %1").arg(last.value("step", qint64{0}));
  if (const auto eta = last.find("eta_s"); eta != last.end() && eta->is_number())
    s += QObject::tr(" · %1 left").arg(QString::fromStdString(format_duration(eta->get<double>())));
  return s;
}

}  // namespace

QueueModel::QueueModel(QObject* parent) : QAbstractTableModel(parent) {}

bool QueueModel::reload(tokamak::RunStore& store) {
  QVector<QueueRow> rows;
  int index = 0;
  for (const QueueItem& q : RunQueue(store).list()) {
    QueueRow r;
    r.id = q.id, r.index = q.state == "queued" ? index++ : -1;
    r.state = QString::fromStdString(q.state), r.target = QString::fromStdString(q.target);
    r.name = QString::fromStdString(q.name), r.runUid = QString::fromStdString(q.run_uid);
    r.folder = QString::fromStdString(q.folder), r.error = QString::fromStdString(q.error);
    r.configJson = QString::fromStdString(q.config_json), r.sweepId = q.sweep_id;
    // Paused by the live page or `runs control`: only the run's folder knows (as `queue list` reads it).
    if (q.state == "running" && path_exists(RunFolder{q.folder}.info_file())) {
      r.runState = QString::fromStdString(read_run_state(RunFolder{q.folder}).state);
      r.progress = progressOf(RunFolder{q.folder});
    }
    rows << r;
  }
  bool same = rows.size() == rows_.size();
  for (int i = 0; same && i < rows.size(); ++i) same = sameRow(rows[i], rows_[i]);
  if (same) return false;
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
  return true;
}

int QueueModel::rowOfId(qint64 id) const {
  for (int i = 0; i < rows_.size(); ++i)
    if (rows_[i].id == id) return i;
  return -1;
}

int QueueModel::waitingCount() const {
  int n = 0;
  for (const QueueRow& r : rows_) n += r.state == QLatin1String("queued");
  return n;
}

int QueueModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }
int QueueModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant QueueModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size()) return {};
  const QueueRow& r = rows_[index.row()];
  if (role == IdRole) return r.id;
  if (role == Qt::ToolTipRole) {
    QString tip = tr("Queue item %1: %2").arg(r.id).arg(r.state);
    if (!r.runUid.isEmpty()) tip += tr("\nRun %1 in %2").arg(r.runUid, r.folder);
    if (!r.error.isEmpty()) tip += "\n" + r.error;
    return tip;
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Order:
      return r.index >= 0 ? QVariant(r.index + 1) : QVariant();
    case Name:
      return r.name;
    case Target:
      return r.target == QLatin1String("local") ? tr("this computer") : r.target;
    case State:
      return r.error.isEmpty() ? r.state : r.state + ": " + r.error;
    case RunState:
      return r.progress.isEmpty() ? r.runState : r.runState + " · " + r.progress;
  }
  return {};
}

QVariant QueueModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {QT_TR_NOOP("#"), QT_TR_NOOP("Name"), QT_TR_NOOP("Where"), QT_TR_NOOP("State"),
                                QT_TR_NOOP("Run")};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

Qt::ItemFlags QueueModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (!index.isValid()) return f | Qt::ItemIsDropEnabled;  // between rows
  if (rows_[index.row()].state == QLatin1String("queued")) f |= Qt::ItemIsDragEnabled | Qt::ItemIsDropEnabled;
  return f;
}

QStringList QueueModel::mimeTypes() const { return {kMime}; }

QMimeData* QueueModel::mimeData(const QModelIndexList& indexes) const {
  if (indexes.isEmpty()) return nullptr;
  const QueueRow& r = rows_.value(indexes.first().row());
  if (r.state != QLatin1String("queued")) return nullptr;
  auto* data = new QMimeData;
  data->setData(kMime, QByteArray::number(r.id));
  return data;
}

bool QueueModel::canDropMimeData(const QMimeData* data, Qt::DropAction, int, int, const QModelIndex&) const {
  return data && data->hasFormat(kMime);
}

// Dropped on a waiting row: it takes that row's place. Between rows: it goes before the row below (or last).
bool QueueModel::dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int, const QModelIndex& parent) {
  if (!canDropMimeData(data, action, row, 0, parent)) return false;
  const qint64 id = data->data(kMime).toLongLong();
  const int from = rowOfId(id), waiting = waitingCount();
  if (from < 0 || rows_[from].index < 0) return false;
  int to;
  if (parent.isValid()) to = parent.row();
  else if (row < 0 || row >= waiting) to = waiting - 1;
  else to = row > from ? row - 1 : row;
  to = std::clamp(to, 0, waiting - 1);
  if (to != from) Q_EMIT moveRequested(id, to);
  return false;  // nothing to remove here: the new order comes from the store
}

}  // namespace tokamak::ui
