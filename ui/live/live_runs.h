// LiveRuns: the runs still going that the studio can follow, for its start (re-attach) and its "live runs"
// picker. This computer's are read from its run folders here and now (engine/base/run/run_folder.h); each known
// host's come from a child `tokamak remote list --host HOST --live` of their own, so a slow or unreachable host
// delays nothing else. Known hosts are those the studio has trained on: kept in its settings with their tokamak
// command, because the store's `remote` is the resolved user@host:port, which an ssh config alias (its key,
// its ProxyJump) would not match.
#pragma once
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>

namespace tokamak::ui {

class ChildProcess;

struct LiveRun {
  QString host;     // "" = this computer
  QString tokamak;  // the host's tokamak command
  QString uid, name, state;
  QString label() const;  // "name · this computer" / "name · host", with " (paused)"
};

class LiveRuns : public QObject {
  Q_OBJECT
 public:
  explicit LiveRuns(QObject* parent = nullptr);

  // Lists again: this computer's runs at once, each host's when it answers; changed() after each.
  void refresh();
  const QList<LiveRun>& runs() const { return runs_; }
  bool listing() const { return !listers_.isEmpty(); }  // some host has not answered yet

  // The hosts the studio has trained on (settings "remote/hosts": host → its tokamak command).
  static void rememberHost(const QString& host, const QString& tokamak);
  static QMap<QString, QString> knownHosts();

 Q_SIGNALS:
  void changed();

 private:
  void hostAnswered(ChildProcess* lister, const QString& host, const QString& tokamak);

  QList<LiveRun> runs_;
  QList<ChildProcess*> listers_;  // `tokamak remote list`, one a host
};

}  // namespace tokamak::ui
