// QueueModel: this computer's queue (engine/fleet/queue/run_queue.h) as a table for the studio's Queue dock: waiting
// runs first in their order (row = place in the queue), then the others newest first, as `tokamak queue list`
// shows them. A running row's run state (running, paused) is read from its run folder, with its step and its own
// estimate of the time left from its journal. Waiting rows can be
// dragged to another place; the drop asks for the move (moveRequested) and the store's order comes back on the
// next reload, so the table never shows an order the store does not have.
#pragma once
#include <QAbstractTableModel>
#include <QString>
#include <QVector>

namespace tokamak {
class RunStore;
}

namespace tokamak::ui {

struct QueueRow {
  qint64 id = 0;
  int index = -1;  // place among the waiting runs (0 = next); -1 for the others
  QString state, target, name, runUid, folder, error;
  QString runState;  // a running row's run: running | paused | (ended, not yet settled) finished ...
  QString progress;  // a running row's last report: "step 120 · 3m25s left" (its own estimate, evals included)
  QString configJson;
  qint64 sweepId = 0;
};

class QueueModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Order, Name, Target, State, RunState, ColumnCount };
  static constexpr int IdRole = Qt::UserRole;

  explicit QueueModel(QObject* parent = nullptr);

  // Reads the queue again; true when anything shown changed. Throws the store's Error.
  bool reload(tokamak::RunStore& store);
  const QVector<QueueRow>& rows() const { return rows_; }
  int rowOfId(qint64 id) const;
  int waitingCount() const;  // rows in state queued

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  Qt::DropActions supportedDropActions() const override { return Qt::MoveAction; }
  QStringList mimeTypes() const override;
  QMimeData* mimeData(const QModelIndexList& indexes) const override;
  bool canDropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                       const QModelIndex& parent) const override;
  bool dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                    const QModelIndex& parent) override;

 Q_SIGNALS:
  void moveRequested(qint64 id, int to);  // a waiting row dropped at place `to` among the waiting ones

 private:
  QVector<QueueRow> rows_;
};

}  // namespace tokamak::ui
