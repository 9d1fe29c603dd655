// LiveRuns: this computer's live runs from their folders, each known host's from `tokamak remote list`
// (see live_runs.h).
#include "ui/live/live_runs.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <exception>

#include "engine/base/run/run_folder.h"
#include "ui/common/child_process.h"
#include "ui/common/programs.h"

namespace tokamak::ui {
namespace {

bool live(const QString& state) { return state == "running" || state == "paused"; }

}  // namespace

QString LiveRun::label() const {
  const QString where = host.isEmpty() ? QObject::tr("this computer") : host;
  return QString("%1 · %2%3").arg(name, where, state == "paused" ? QObject::tr(" (paused)") : QString());
}

LiveRuns::LiveRuns(QObject* parent) : QObject(parent) {}

void LiveRuns::rememberHost(const QString& host, const QString& tokamak) {
  QSettings settings("Tokamak", "Tokamak Studio");
  QVariantMap hosts = settings.value("remote/hosts").toMap();
  hosts[host] = tokamak;
  settings.setValue("remote/hosts", hosts);
}

QMap<QString, QString> LiveRuns::knownHosts() {
  QMap<QString, QString> out;
  const QVariantMap hosts = QSettings("Tokamak", "Tokamak Studio").value("remote/hosts").toMap();
  for (auto it = hosts.begin(); it != hosts.end(); ++it) out[it.key()] = it.value().toString();
  return out;
}

void LiveRuns::refresh() {
  for (ChildProcess* p : listers_) p->disconnect(this), p->deleteLater();  // its child is killed with it
  listers_.clear();
  runs_.clear();
  try {
    for (const RunFolderInfo& r : list_run_folders()) {  // newest first
      const QString state = QString::fromStdString(read_run_state(RunFolder{r.folder}).state);
      if (live(state)) runs_ << LiveRun{{}, {}, QString::fromStdString(r.uid), QString::fromStdString(r.name), state};
    }
  } catch (const std::exception&) {
    // An unreadable checkpoints folder: no local runs to offer (the runs page reports store problems).
  }
  const QString front = tokamakFrontPath();
  const QMap<QString, QString> hosts = knownHosts();
  for (auto it = hosts.begin(); it != hosts.end() && !front.isEmpty(); ++it) {
    auto* p = new ChildProcess(this);
    p->setKeepOutput(true);
    const QString host = it.key(), tokamak = it.value();
    connect(p, &ChildProcess::finished, this, [this, p, host, tokamak] { hostAnswered(p, host, tokamak); });
    listers_ << p;
    p->start(front, {"remote", "list", "--host", host, "--tokamak", tokamak, "--live"});
  }
  Q_EMIT changed();
}

// A host that cannot be reached lists nothing; its runs are offered the next time it answers.
void LiveRuns::hostAnswered(ChildProcess* lister, const QString& host, const QString& tokamak) {
  if (!listers_.removeOne(lister)) return;
  lister->deleteLater();
  for (const QByteArray& line : lister->output().split('\n')) {
    const QJsonObject o = QJsonDocument::fromJson(line).object();
    if (o.isEmpty() || !live(o.value("state").toString())) continue;
    runs_ << LiveRun{host, tokamak, o.value("run_uid").toString(), o.value("name").toString(),
                     o.value("state").toString()};
  }
  Q_EMIT changed();
}

}  // namespace tokamak::ui
