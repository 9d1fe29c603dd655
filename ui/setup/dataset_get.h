// DatasetGet: the Hub catalog as this computer has it (`tokamak datasets catalog --json` in a child process)
// and the catalog downloads (`tokamak datasets get NAME --shards N --json`). A download is started detached,
// in a session of its own, so closing the studio does not stop it: its JSON lines go to a log in the data
// folder (data_dir()/downloads/NAME.log, stderr beside it in NAME.err, its pid in NAME.pid), which this class
// follows by byte offset, as runs are followed through their journal. A studio started later finds the pid
// file and follows the same download. Cancel kills the process; its .part files stay for a resume.
#pragma once
#include <string>
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>

class QTimer;

namespace tokamak::ui {

class ChildProcess;

// One row of `tokamak datasets catalog --json`.
struct CatalogEntry {
  QString name, repo, about, path;  // path: where it is (or would be) on this computer
  int trainShards = 0, trainPresent = 0, partial = 0;
  bool valPresent = false;
  qint64 shardTokens = 0, shardBytes = 0, bytes = 0, bytesPresent = 0;
  bool present() const { return valPresent && trainPresent >= trainShards; }
  bool usable() const { return trainPresent > 0; }  // something to train on
  QString state() const;                            // "absent", "2 of 103 shards here (400 MB)", "present"
};

// A download as its log tells it.
struct DownloadState {
  qint64 done = 0, total = 0;
  double bytesPerS = 0, etaS = 0;
  int filesDone = 0, files = 0;
  QString text() const;  // "1.2 GB of 4.0 GB (30%), 38.0 MB/s, 1m14s left"
};

class DatasetGet : public QObject {
  Q_OBJECT
 public:
  explicit DatasetGet(QObject* parent = nullptr);
  ~DatasetGet() override;

  void refreshCatalog();  // catalogChanged() once the child answers
  const QList<CatalogEntry>& catalog() const { return catalog_; }
  const CatalogEntry* entry(const QString& name) const;

  // Starts the download of the first SHARDS train shards (and the val shard); "" or why it cannot start.
  QString start(const QString& name, int shards);
  void cancel(const QString& name);
  bool isGetting(const QString& name) const { return following_.contains(name); }
  QStringList downloads() const { return following_.keys(); }
  DownloadState state(const QString& name) const { return following_.value(name).state; }

  static QString folder();  // data_dir()/downloads

 Q_SIGNALS:
  void catalogChanged();
  void catalogFailed(const QString& why);
  void progressed(const QString& name, const tokamak::ui::DownloadState& state);
  // error: "" when every file is in place, "cancelled", or the command's one line.
  void finished(const QString& name, const QString& error);

 private:
  struct Follow {
    qint64 pid = 0, offset = 0;
    std::string start;  // the process's start time (/proc/PID/stat): with the pid it names that one process
    bool done = false, cancelled = false;
    DownloadState state;
  };
  void adoptRunning();  // downloads started by an earlier studio
  void poll();
  void end(const QString& name, const QString& error);

  QList<CatalogEntry> catalog_;
  ChildProcess* lister_ = nullptr;  // `tokamak datasets catalog --json` while it answers
  QMap<QString, Follow> following_;
  QTimer* timer_;
};

}  // namespace tokamak::ui
