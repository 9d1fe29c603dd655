// HostRecorders (see host_recorders.h).
#include "ui/live/host_recorders.h"

#include "ui/common/child_process.h"
#include "ui/live/live_runs.h"

namespace tokamak::ui {

HostRecorders::HostRecorders(QObject* parent) : QObject(parent) {}

// The studio goes: its recorders go with it (the runs train on; the next studio records them again). Each is
// stopped gently (ChildProcess::setGentleStop) as it is destroyed with this object.
HostRecorders::~HostRecorders() = default;

void HostRecorders::record(const LiveRun& run, const QString& front) {
  if (run.host.isEmpty() || front.isEmpty() || recorders_.contains(run.uid)) return;
  auto* p = new ChildProcess(this);
  p->setDiscardOutput(true);
  // What it recorded is committed line by line; SIGTERM lets it end between two lines.
  p->setGentleStop(true);
  QStringList args{"remote", "attach", "--host", run.host, "--tokamak", run.tokamak, run.uid};
  if (!dbPath_.isEmpty()) args << "--db" << dbPath_;
  const QString uid = run.uid;
  connect(p, &ChildProcess::finished, this, [this, uid, p] {  // the run has ended (or the host stayed away)
    if (recorders_.value(uid) != p) return;
    recorders_.remove(uid);
    p->deleteLater();
  });
  recorders_.insert(uid, p);
  p->start(front, args);
}

void HostRecorders::stop(const QString& uid) {
  ChildProcess* p = recorders_.take(uid);
  if (!p) return;
  p->stop();  // the live page's reader goes on from what it recorded
  p->deleteLater();
}

}  // namespace tokamak::ui
