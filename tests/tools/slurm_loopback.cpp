// `slurm-loopback COMMAND [ARG...]`: the tests' one-node Slurm (tests/support/slurm_cluster.h: Debian's
// slurmctld, slurmd and munge in a temporary folder, on loopback) kept up for one command and every job it
// submits: runs COMMAND with SLURM_CONF pointing at the cluster, then waits until the cluster's queue is empty
// (a sweep's promoted trials are submitted by the jobs themselves), then stops it. For measuring what a Slurm
// user would see on a machine without Slurm (docs/PERFORMANCE.md, the nano sweep on Slurm). Exit status:
// COMMAND's, or 2 when the cluster could not start.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QThread>

#include <cstdio>

#include "tests/support/slurm_cluster.h"

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QStringList args = app.arguments().mid(1);
  if (args.isEmpty()) {
    std::fprintf(stderr, "usage: slurm-loopback COMMAND [ARG...]\n");
    return 2;
  }
  tokamak::test::SlurmCluster slurm;
  if (!slurm.ok()) {
    std::fprintf(stderr, "slurm-loopback: %s\n", qPrintable(slurm.error()));
    return 2;
  }
  std::fprintf(stderr, "slurm-loopback: one node, %d CPUs, SLURM_CONF=%s\n", slurm.cpus(),
               qgetenv("SLURM_CONF").constData());
  QProcess p;
  p.setProcessChannelMode(QProcess::ForwardedChannels);
  p.start(args.takeFirst(), args);
  p.waitForFinished(-1);
  const int code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : 1;
  QElapsedTimer since;
  since.start();
  for (QString queued; !(queued = slurm.run("squeue", {"-h", "-o", "%i"}).trimmed()).isEmpty(); QThread::sleep(5))
    if (since.elapsed() > 60000) {
      std::fprintf(stderr, "slurm-loopback: jobs still queued or running: %s\n",
                   qPrintable(QString(queued).replace('\n', ' ')));
      since.restart();
    }
  std::fprintf(stderr, "slurm-loopback: the queue is empty, stopping the cluster\n");
  return code;
}
