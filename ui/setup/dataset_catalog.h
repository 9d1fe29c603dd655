// DatasetCatalog: the Hub datasets of `tokamak datasets get` in the dataset picker, each with how much of it
// this computer has (present, "n of m shards", absent, with sizes); "Get…" asks how many shards (with the
// tokens and the disk they take) and fetches them in a download that outlives the studio (dataset_get.h),
// its progress (bytes, MB/s, time left) shown here with a Cancel. Choosing an entry that has shards here
// chooses its folder as data.path.
#pragma once
#include <QWidget>

#include "ui/setup/dataset_get.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;

namespace tokamak::ui {

class DatasetCatalog : public QWidget {
  Q_OBJECT
 public:
  explicit DatasetCatalog(QWidget* parent = nullptr);
  DatasetGet* downloads() const { return get_; }
  QString currentName() const;  // the entry shown in the list ("" while there is none)
  void select(const QString& name);
  // Starts fetching the first SHARDS train shards of NAME (what Get… does once asked); "" or why not.
  QString getShards(const QString& name, int shards);

 public Q_SLOTS:
  void askAndGet();  // Get…: the dialog, then getShards
  void cancelGet();

 Q_SIGNALS:
  void chosen(const QString& path);  // an entry with shards here was chosen: use its folder as data.path

 private:
  void fill();
  void showCurrent();
  void activated(int index);

  DatasetGet* get_;
  QComboBox* list_;
  QPushButton* getButton_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* status_;
};

}  // namespace tokamak::ui
