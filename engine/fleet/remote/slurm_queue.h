// What Slurm says about a job, parsed from `scontrol show job -o` (one line of Key=Value pairs): pending and
// why, running where, ended and how. Text in, struct out: no process, no Qt, no LibTorch. `scontrol` rather
// than `sacct` because a cluster without accounting (and the tests' one-node Slurm) has no sacct; it knows a
// job until MinJobAge after its end.
#pragma once
#include <map>
#include <string>

namespace tokamak {

struct SlurmJob {
  long id = 0;
  std::string name;
  std::string state;   // PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, PREEMPTED, NODE_FAIL, ...
  std::string reason;  // why it waits (Resources, Priority, PartitionDown, JobHeldUser, BeginTime, ...); "None"
  std::string nodes;   // NodeList ("n[1-4]"), "" while pending
  std::string run_time, time_limit;
  int exit_code = 0;    // of the batch script
  int exit_signal = 0;  // the signal that ended it, 0 = none
  int restarts = 0;     // how often it was requeued
  bool pending() const { return state == "PENDING" || state == "REQUEUED" || state == "REQUEUE_HOLD"; }
  bool running() const { return state == "RUNNING" || state == "COMPLETING" || state == "CONFIGURING"; }
  bool ended() const { return !pending() && !running() && state != "SUSPENDED" && state != "STOPPED"; }
};

// The pairs of one `scontrol show job -o` line (values may hold spaces: "Reason=..." is taken up to the next key).
std::map<std::string, std::string> parse_scontrol_pairs(const std::string& line);
// The job of one `scontrol show job -o JOB` line; throws an Error when the line holds no JobId.
SlurmJob parse_scontrol_job(const std::string& line);

// One line for a person: "pending: Resources (the nodes it asks for are busy)", "running on n1 for
// 00:01:05 of 01:00:00", "ended: cancelled", "ended: failed (exit code 1)", "ended: time limit reached".
std::string describe_slurm_job(const SlurmJob& job);

}  // namespace tokamak
