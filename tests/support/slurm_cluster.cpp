// SlurmCluster (see slurm_cluster.h). Why each setting: docs/ARCHITECTURE.md, "Runs on servers: SSH and Slurm"
// (DESIGN.md), and docs/REMOTE.md's Slurm section.
#include "tests/support/slurm_cluster.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QThread>

#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace tokamak::test {
namespace {

QString userName() {
  QProcess p;
  p.start("id", {"-un"});
  p.waitForFinished();
  return QString::fromLocal8Bit(p.readAllStandardOutput()).trimmed();
}

pid_t pidOf(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) return 0;
  return static_cast<pid_t>(f.readAll().trimmed().toLong());
}

// SIGTERM, then up to 10 s for the daemon to go (SIGKILL after that).
void endDaemon(const QString& pidFile) {
  const pid_t pid = pidOf(pidFile);
  if (pid <= 0 || ::kill(pid, SIGTERM) != 0) return;
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < 10000 && ::kill(pid, 0) == 0) QThread::msleep(50);
  if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
}

// The last lines of a log, for the one line that says why Slurm did not start.
QString logTail(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) return "no log";
  const QStringList lines = QString::fromLocal8Bit(f.readAll()).trimmed().split('\n');
  return lines.mid(std::max<qsizetype>(0, lines.size() - 2)).join(" | ");
}

}  // namespace

SlurmCluster::SlurmCluster() {
  for (const char* program : {"munged", "slurmctld", "slurmd", "sbatch"})
    if (QProcess::execute("sh", {"-c", QString("command -v %1 >/dev/null").arg(program)}) != 0) {
      error_ = QString(
                   "Slurm cannot start: %1 is not installed (Debian: slurmctld slurmd slurm-client munge; "
                   "scripts/setup.sh installs them)")
                   .arg(program);
      return;
    }
  // munged refuses a socket whose folders others cannot search; QTemporaryDir makes a 0700 folder.
  QFile::setPermissions(dir_.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                                         QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther |
                                         QFileDevice::ExeOther);
  cpus_ = std::max(1, QThread::idealThreadCount());
  ok_ = start();
  if (!ok_) stop();
}

SlurmCluster::~SlurmCluster() { stop(); }

QString SlurmCluster::run(const QString& program, const QStringList& args, int* code) const {
  QProcess p;
  p.start(program, args);
  p.waitForFinished(60000);
  if (code) *code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  return QString::fromLocal8Bit(p.readAllStandardOutput());
}

bool SlurmCluster::start() {
  QDir().mkpath(path("state")), QDir().mkpath(path("spool"));
  QFile key(path("munge.key"));
  QFile random("/dev/urandom");
  if (!key.open(QIODevice::WriteOnly) || !random.open(QIODevice::ReadOnly)) {
    error_ = "Slurm cannot start: cannot write a munge key in " + dir_.path();
    return false;
  }
  key.write(random.read(1024));
  key.close();
  key.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
  if (QProcess::execute("munged", {"--key-file=" + path("munge.key"), "--socket=" + path("munge.sock"),
                                   "--pid-file=" + path("munged.pid"), "--log-file=" + path("munged.log"),
                                   "--seed-file=" + path("munge.seed")}) != 0) {
    error_ = "Slurm cannot start: munged failed: " + logTail(path("munged.log"));
    return false;
  }
  const QString conf = QString(
                           "ClusterName=tokamaktest\n"
                           "SlurmctldHost=localhost(127.0.0.1)\n"
                           "SlurmctldPort=%1\nSlurmdPort=%2\nSlurmUser=%3\n"
                           "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=%4,cred_expire=10\n"
                           "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                           "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
                           "JobCompType=jobcomp/filetxt\nJobCompLoc=%5/jobcomp.txt\n"
                           "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
                           "SwitchType=switch/none\nMpiDefault=none\n"
                           "KillWait=30\nMinJobAge=300\nReturnToService=2\n"
                           "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=1,sched_interval=1\n"
                           "StateSaveLocation=%5/state\nSlurmdSpoolDir=%5/spool\n"
                           "SlurmctldPidFile=%5/slurmctld.pid\nSlurmdPidFile=%5/slurmd.pid\n"
                           "SlurmctldLogFile=%5/slurmctld.log\nSlurmdLogFile=%5/slurmd.log\n"
                           "NodeName=localhost NodeAddr=127.0.0.1 CPUs=%6 RealMemory=1000 State=UNKNOWN\n"
                           "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n"
                           "PartitionName=down Nodes=localhost MaxTime=INFINITE State=DOWN\n")
                           .arg(free_port())
                           .arg(free_port())
                           .arg(userName(), path("munge.sock"), dir_.path())
                           .arg(cpus_);
  QFile cf(path("slurm.conf"));
  if (!cf.open(QIODevice::WriteOnly) || cf.write(conf.toUtf8()) < 0) {
    error_ = "Slurm cannot start: cannot write " + cf.fileName();
    return false;
  }
  cf.close();
  qputenv("SLURM_CONF", cf.fileName().toLocal8Bit());  // every Slurm command of this process and its jobs
  if (QProcess::execute("slurmctld", {"-f", cf.fileName(), "-i"}) != 0) {
    error_ = "Slurm cannot start: slurmctld failed: " + logTail(path("slurmctld.log"));
    return false;
  }
  if (QProcess::execute("slurmd", {"-f", cf.fileName(), "-N", "localhost"}) != 0) {
    error_ = "Slurm cannot start: slurmd failed: " + logTail(path("slurmd.log"));
    return false;
  }
  QElapsedTimer t;
  t.start();
  QString state;
  while (t.elapsed() < 30000) {
    state = run("sinfo", {"-h", "-p", "debug", "-o", "%t"}).trimmed();
    if (state == "idle") return true;
    QThread::msleep(200);
  }
  error_ = "Slurm cannot start: the node is '" + state + "', not idle, after 30 s: " + logTail(path("slurmd.log"));
  return false;
}

void SlurmCluster::stop() {
  // Jobs first: daemons killed under running jobs leave their processes behind.
  if (QFile::exists(path("slurmctld.pid")) && ::kill(pidOf(path("slurmctld.pid")), 0) == 0) {
    run("scancel", {"--user=" + userName()});
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 40000 && !run("squeue", {"-h", "-o", "%i"}).trimmed().isEmpty()) QThread::msleep(200);
  }
  endDaemon(path("slurmd.pid"));
  endDaemon(path("slurmctld.pid"));
  endDaemon(path("munged.pid"));
}

}  // namespace tokamak::test
