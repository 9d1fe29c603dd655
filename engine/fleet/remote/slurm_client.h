// The Slurm commands Tokamak runs on a cluster (through CommandHost: here, or a login node over ssh): the
// checks before a submission (sbatch is there, the partition exists), sbatch, scontrol and scancel. Each
// failure is an Error of one line that names the thing and how to fix it.
#pragma once
#include <string>
#include <vector>

#include "engine/fleet/remote/command_host.h"
#include "engine/fleet/remote/slurm_queue.h"
#include "engine/base/util/error.h"

namespace tokamak {

// sbatch gave no answer in time: Slurm may have accepted the job all the same, so whatever the job would use
// (its run folders, its rows in the store) must stay.
class SlurmSubmitUnknown : public Error {
 public:
  using Error::Error;
};

class SlurmClient {
 public:
  // timeout_s bounds each Slurm command (sbatch that does not answer: SlurmSubmitUnknown).
  explicit SlurmClient(CommandHost host, double timeout_s = 60) : host_(std::move(host)), timeout_s_(timeout_s) {}
  const CommandHost& host() const { return host_; }

  // Throws "no sbatch on HOST" when Slurm's client commands are missing there.
  void require_sbatch() const;
  // The partitions `sinfo` lists ("debug", ...), without the default's '*'.
  std::vector<std::string> partitions() const;
  // Throws, naming the partitions there are, when PARTITION is not one of them.
  void require_partition(const std::string& partition) const;
  // sbatch --parsable SCRIPT (a path on the host); returns the job id. Throws SlurmSubmitUnknown when sbatch does
  // not answer in time, an Error when it refuses the job.
  long submit(const std::string& script_path) const;
  // `scontrol show job -o JOB`; throws when Slurm does not know the job (never submitted, or ended longer
  // than MinJobAge ago).
  SlurmJob job(long id) const;
  // scancel JOB: SIGTERM to every task and to the batch script, SIGKILL KillWait seconds later.
  void cancel(long id) const;

 private:
  ProcessResult run(const std::vector<std::string>& argv) const;
  CommandHost host_;
  double timeout_s_;
};

// A job id as typed ("123", "123;cluster" as sbatch --parsable prints it); throws an Error naming the text.
long parse_job_id(const std::string& text);

}  // namespace tokamak
