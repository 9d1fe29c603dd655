// HostRecorders (see host_recorders.h).
#include "ui/live/host_recorders.h"

#include <QProcess>

#include "ui/live/live_runs.h"

namespace tokamak::ui {

HostRecorders::HostRecorders(QObject* parent) : QObject(parent) {}

HostRecorders::~HostRecorders() {
  // The studio goes: its recorders go with it (the runs train on; the next studio records them again).
  for (QProcess* p : recorders_) {
    p->disconnect(this);
    p->terminate();
    if (!p->waitForFinished(3000)) p->kill(), p->waitForFinished(3000);
    delete p;
  }
}

void HostRecorders::record(const LiveRun& run, const QString& front) {
  if (run.host.isEmpty() || front.isEmpty() || recorders_.contains(run.uid)) return;
  auto* p = new QProcess;
  p->setStandardOutputFile(QProcess::nullDevice());
  p->setStandardErrorFile(QProcess::nullDevice());
  QStringList args{"remote", "attach", "--host", run.host, "--tokamak", run.tokamak, run.uid};
  if (!dbPath_.isEmpty()) args << "--db" << dbPath_;
  const QString uid = run.uid;
  connect(p, &QProcess::finished, this, [this, uid, p] {  // the run has ended (or the host stayed away)
    if (recorders_.value(uid) != p) return;
    recorders_.remove(uid);
    p->deleteLater();
  });
  recorders_.insert(uid, p);
  p->start(front, args);
}

void HostRecorders::stop(const QString& uid) {
  QProcess* p = recorders_.take(uid);
  if (!p) return;
  p->disconnect(this);
  p->terminate();  // what it recorded is committed line by line; the live page's reader goes on from there
  if (!p->waitForFinished(3000)) p->kill(), p->waitForFinished(3000);
  p->deleteLater();
}

}  // namespace tokamak::ui
