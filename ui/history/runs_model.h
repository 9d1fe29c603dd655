// RunsTableModel: the runs browser's table, one row per run of the store. Refreshing merges the new listing
// by run id (rows change in place, new runs are inserted, deleted runs removed) instead of resetting, so the
// view keeps its selection, scroll position and sort while a run writes.
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QString>
#include <QVector>
#include <functional>

namespace tokamak {
class RunStore;
}

namespace tokamak::ui {

struct RunRow {
  qint64 id = 0;
  QString name, status, model, dataset, switches, device, tags, notes, error;
  double created = 0;
  double tokS = 0, mfu = 0, bestValLoss = 0, peakMem = 0;  // NaN when not reported
  double target = 0, timeToTarget = 0;  // eval.target_val_loss (0: none); seconds to reach it (NaN: not reached)
  qint64 lastStep = 0, totalSteps = 0;
};

class RunsTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Name,
    Date,
    Model,
    Dataset,
    Switches,
    TokS,
    Mfu,
    BestVal,
    ToTarget,
    PeakMem,
    Status,
    Tags,
    Notes,
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole;    // raw values, so numbers sort as numbers
  static constexpr int IdRole = Qt::UserRole + 1;  // the run's id in the store

  explicit RunsTableModel(QObject* parent = nullptr);

  // Reads the store's listing (plus MFU and peak memory from its summaries) and merges it in. Throws the
  // store's Error; the panel shows it.
  void reload(tokamak::RunStore& store);
  void clear();
  // Writes tags and notes through the store; the panel installs it (nullptr = read-only).
  void setStore(tokamak::RunStore* store) { store_ = store; }

  const RunRow* runById(qint64 id) const;
  int rowOfId(qint64 id) const { return index_.value(id, -1); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;

 Q_SIGNALS:
  void errorOccurred(const QString& message);

 private:
  void setRows(QVector<RunRow> rows);
  void rebuildIndex();

  QVector<RunRow> rows_;
  QHash<qint64, int> index_;  // run id -> row
  // The switches summary needs the run's config, which the listing leaves out: read once per run, again
  // only when its status changes (a resume may change the config).
  QHash<qint64, QPair<QString, QString>> switchesCache_;  // id -> (status, summary)
  QHash<qint64, double> targetCache_;                     // id -> eval.target_val_loss, read with the summary
  tokamak::RunStore* store_ = nullptr;
};

// "a, b" <-> ["a","b"]
QString tagsToJson(const QString& commaSeparated);
QString tagsFromJson(const QString& json);

}  // namespace tokamak::ui
