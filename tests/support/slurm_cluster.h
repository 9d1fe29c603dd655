// A real one-node Slurm (Debian's slurmctld, slurmd and munge) for the tests that submit jobs: everything in a
// temporary folder (munge key, socket, pid, log and seed; slurm.conf; state and spool folders; logs), on free
// loopback ports, nothing of the system's configuration touched. Started on construction: munged, then
// slurmctld and slurmd with SLURM_CONF pointing at the folder's slurm.conf (exported into this process's
// environment, so sbatch, squeue, scontrol, scancel, srun and the jobs all reach this cluster); ready when
// `sinfo` says the node is idle. The destructor cancels every job, waits until the queue is empty, then ends
// slurmd, slurmctld and munged by their pid files. When it cannot start, error() says why in one line.
// Node "localhost" (so MASTER_ADDR, the first node's name, resolves) with this machine's CPUs; partitions
// "debug" (the default) and "down" (State=DOWN: jobs wait there with reason PartitionDown); KillWait=30
// (the seconds between SIGTERM and SIGKILL: room for a checkpoint even on a machine busy with other work).
#pragma once
#include <QString>
#include <QTemporaryDir>

namespace tokamak::test {

class SlurmCluster {
 public:
  SlurmCluster();
  ~SlurmCluster();
  bool ok() const { return ok_; }
  const QString& error() const { return error_; }  // why it did not start
  int cpus() const { return cpus_; }
  QString path(const QString& name) const { return dir_.filePath(name); }
  // Runs a Slurm client command (sbatch, squeue, scontrol, scancel ...) on this cluster; returns its stdout,
  // and its exit code in *code.
  QString run(const QString& program, const QStringList& args, int* code = nullptr) const;

 private:
  bool start();
  void stop();

  QTemporaryDir dir_;
  int cpus_ = 1;
  bool ok_ = false;
  QString error_;
};

}  // namespace tokamak::test
