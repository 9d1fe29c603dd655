// DatasetGet: catalog listing and detached downloads followed through their logs (see dataset_get.h).
#include "ui/setup/dataset_get.h"
#include "ui/common/qt_helpers.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QRegularExpression>
#include <QTimer>

#include <signal.h>

#include "engine/base/run/run_folder.h"
#include "engine/base/util/files.h"
#include "engine/base/util/proc_files.h"
#include "ui/common/child_process.h"
#include "ui/common/programs.h"

namespace tokamak::ui {
namespace {

QString duration(double s) {
  if (s >= 3600) return QString("%1h%2m").arg(int(s / 3600)).arg(int(s / 60) % 60, 2, 10, QChar('0'));
  if (s >= 60) return QString("%1m%2s").arg(int(s / 60)).arg(int(s) % 60, 2, 10, QChar('0'));
  return QString("%1 s").arg(int(s));
}

// Alive and not a zombie: a detached child is reparented, and a container's init may never reap it.
bool alive(qint64 pid) {
  if (pid <= 0) return false;
  const std::optional<ProcStat> stat = read_proc_stat(pid);
  return stat && stat->state != 'Z' && stat->state != 'X';
}

QString file(const QString& name, const char* ext) { return DatasetGet::folder() + "/" + name + ext; }

// The process a pid file names ("PID STARTTIME", as run folders keep theirs), or 0 when it is gone or another
// has its pid now (after a reboot): a pid alone could make Cancel signal an unrelated process.
qint64 recordedProcess(const QString& pidFile, std::string* start = nullptr) {
  QFile f(pidFile);
  if (!f.open(QIODevice::ReadOnly)) return 0;
  const QList<QByteArray> fields = f.readAll().trimmed().split(' ');
  const qint64 pid = fields.value(0).toLongLong();
  if (fields.size() != 2 || !alive(pid) || process_start_time(pid) != fields[1].toStdString()) return 0;
  if (start) *start = fields[1].toStdString();
  return pid;
}

// Still the process that was started: alive, with the start time it had.
bool stillTheDownload(qint64 pid, const std::string& start) { return alive(pid) && process_start_time(pid) == start; }

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

CatalogEntry entryOf(const QJsonObject& j) {
  CatalogEntry e;
  e.name = j["name"].toString(), e.repo = j["repo"].toString(), e.about = j["about"].toString();
  e.path = j["path"].toString();
  e.trainShards = j["train_shards"].toInt(), e.trainPresent = j["train_present"].toInt();
  e.partial = j["partial"].toInt(), e.valPresent = j["val_present"].toBool();
  e.shardTokens = j["shard_tokens"].toInteger(), e.shardBytes = j["shard_bytes"].toInteger();
  e.bytes = j["bytes"].toInteger(), e.bytesPresent = j["bytes_present"].toInteger();
  return e;
}

}  // namespace

QString CatalogEntry::state() const {
  if (present()) return QObject::tr("present (%1)").arg(data_size(bytesPresent));
  QString s = trainPresent || valPresent ? QObject::tr("%1 of %2 shards here (%3 of ~%4)")
                                               .arg(trainPresent)
                                               .arg(trainShards)
                                               .arg(data_size(bytesPresent), data_size(bytes))
                                         : QObject::tr("absent (~%1)").arg(data_size(bytes));
  if (partial) s += QObject::tr(", %n partial", nullptr, partial);
  return s;
}

QString DownloadState::text() const {
  const int percent = total > 0 ? int(100 * done / total) : 0;
  QString s = QObject::tr("%1 of %2 (%3%), %4/%5 files")
                  .arg(data_size(done), data_size(total))
                  .arg(percent)
                  .arg(filesDone)
                  .arg(files);
  if (bytesPerS > 0) s += QObject::tr(", %1 MB/s, %2 left").arg(bytesPerS / 1e6, 0, 'f', 1).arg(duration(etaS));
  return s;
}

DatasetGet::DatasetGet(QObject* parent) : QObject(parent), timer_(new QTimer(this)) {
  timer_->setInterval(500);  // the CLI writes at most one line per whole percent: reading twice a second is ample
  connect(timer_, &QTimer::timeout, this, &DatasetGet::poll);
  adoptRunning();
}

DatasetGet::~DatasetGet() {
  // The downloads go on without us; only the catalog listing is ours.
  if (lister_) lister_->disconnect(this);  // killed as it goes with this object
}

QString DatasetGet::folder() { return QString::fromStdString(data_dir()) + "/downloads"; }

const CatalogEntry* DatasetGet::entry(const QString& name) const {
  for (const CatalogEntry& e : catalog_)
    if (e.name == name) return &e;
  return nullptr;
}

void DatasetGet::refreshCatalog() {
  if (lister_) return;  // one answer is on its way
  lister_ = new ChildProcess(this);
  auto entries = std::make_shared<QList<CatalogEntry>>();
  connect(lister_, &ChildProcess::jsonLine, this, [entries](const QJsonObject& j) { *entries << entryOf(j); });
  connect(lister_, &ChildProcess::finished, this, [this, entries](const QString& error) {
    lister_->deleteLater();
    lister_ = nullptr;
    if (!error.isEmpty()) return Q_EMIT catalogFailed(error);
    catalog_ = *entries;
    Q_EMIT catalogChanged();
  });
  lister_->startTokamak({"datasets", "catalog", "--json"});
}

QString DatasetGet::start(const QString& name, int shards) {
  if (following_.contains(name)) return tr("%1 is already being fetched").arg(name);
  const QString front = tokamakFrontPath();
  if (front.isEmpty()) return engineMissingText();
  if (!QDir().mkpath(folder())) return tr("cannot create %1 (is the data folder writable?)").arg(folder());
  for (const char* ext : {".log", ".err"}) QFile::remove(file(name, ext));
  qint64 pid = 0;
  if (const QString error =
          ChildProcess::startDetached(front, {"datasets", "get", name, "--shards", QString::number(shards), "--json"},
                                      file(name, ".log"), file(name, ".err"), &pid);
      !error.isEmpty())
    return error;
  // The pid file is how a later studio finds it; written whole or not at all.
  const std::string began = process_start_time(pid);
  write_file_atomically(file(name, ".pid").toStdString(), std::to_string(pid) + " " + began + "\n");
  following_[name].pid = pid;
  following_[name].start = began;
  timer_->start();
  return {};
}

void DatasetGet::cancel(const QString& name) {
  auto it = following_.find(name);
  if (it == following_.end()) return;
  it->cancelled = true;
  // SIGTERM ends it where it is: the files in place are whole, the .part files stay for the next Get….
  if (stillTheDownload(it->pid, it->start)) ::kill(static_cast<pid_t>(it->pid), SIGTERM);
  poll();
}

void DatasetGet::adoptRunning() {
  for (const QString& f : QDir(folder()).entryList({"*.pid"}, QDir::Files)) {
    const QString name = f.chopped(4);
    std::string start;
    const qint64 pid = recordedProcess(file(name, ".pid"), &start);
    if (pid == 0) {
      QFile::remove(file(name, ".pid"));  // it ended while no studio was looking; the catalog shows what came
      continue;
    }
    following_[name].pid = pid;
    following_[name].start = start;
  }
  if (!following_.isEmpty()) timer_->start(), QTimer::singleShot(0, this, &DatasetGet::poll);
}

void DatasetGet::poll() {
  for (const QString& name : following_.keys()) {
    Follow& f = following_[name];
    // Before reading: lines written before it ended are all there.
    const bool running = stillTheDownload(f.pid, f.start);
    QFile log(file(name, ".log"));
    bool moved = false;
    // Whole lines only: the last one may still be being written. (QFile::canReadLine sees only its buffer.)
    const QByteArray fresh = log.open(QIODevice::ReadOnly) && log.seek(f.offset) ? log.readAll() : QByteArray();
    const qsizetype whole = fresh.lastIndexOf('\n') + 1;
    f.offset += whole;
    for (const QByteArray& line : fresh.left(whole).split('\n')) {
      const QJsonObject j = QJsonDocument::fromJson(line).object();
      if (j["event"].toString() == QLatin1String("dataset")) f.done = true;
      if (j["event"].toString() != QLatin1String("progress")) continue;
      f.state.done = j["done"].toInteger(), f.state.total = j["total"].toInteger();
      f.state.bytesPerS = j["bytes_per_s"].toDouble(), f.state.etaS = j["eta_s"].toDouble();
      f.state.filesDone = j["files_done"].toInt(), f.state.files = j["files"].toInt();
      moved = true;
    }
    if (moved) Q_EMIT progressed(name, f.state);
    if (running) continue;
    QString why;
    if (!f.done) {
      const QString err = QString::fromUtf8(readAll(file(name, ".err")));
      why = f.cancelled ? tr("cancelled") : errorLineOf(err.split(QRegularExpression("[\r\n]"), Qt::SkipEmptyParts));
      if (why.isEmpty()) why = tr("the download stopped without a word (see %1)").arg(file(name, ".err"));
    }
    end(name, why);
  }
}

void DatasetGet::end(const QString& name, const QString& error) {
  following_.remove(name);
  QFile::remove(file(name, ".pid"));
  if (error.isEmpty())
    for (const char* ext : {".log", ".err"}) QFile::remove(file(name, ext));
  if (following_.isEmpty()) timer_->stop();
  Q_EMIT finished(name, error);
  refreshCatalog();
}

}  // namespace tokamak::ui
