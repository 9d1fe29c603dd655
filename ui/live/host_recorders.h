// HostRecorders: a host's live runs that the live page does not show are recorded all the same. Each is
// followed by a child `tokamak remote attach --host HOST UID` whose output is thrown away: it records the
// run's journal into the local store by offset (the same ingest as the run on the live page), so a run never
// picked still ends with the store equal to its journal, and one picked later is back-filled from where its
// recorder got to, nothing twice. This computer's runs need none: they record themselves.
#pragma once
#include <QMap>
#include <QObject>
#include <QString>

namespace tokamak::ui {

class ChildProcess;
struct LiveRun;

class HostRecorders : public QObject {
  Q_OBJECT
 public:
  explicit HostRecorders(QObject* parent = nullptr);
  ~HostRecorders() override;

  void setDatabase(const QString& path) { dbPath_ = path; }  // "" = the default run store
  // Starts a recorder for RUN (a host's run) unless one is going; its tokamak front is FRONT.
  void record(const LiveRun& run, const QString& front);
  // Ends UID's recorder (the live page follows it now); the store keeps what it recorded.
  void stop(const QString& uid);
  bool recording(const QString& uid) const { return recorders_.contains(uid); }

 private:
  QMap<QString, ChildProcess*> recorders_;  // uid → its `tokamak remote attach`
  QString dbPath_;
};

}  // namespace tokamak::ui
