// SlurmClient (see slurm_client.h).
#include "engine/fleet/remote/slurm_client.h"

#include <cstdlib>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

// The last non-empty line of a command's stderr: Slurm's own one-line errors ("sbatch: error: ...").
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return "no message";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

}  // namespace

long parse_job_id(const std::string& text) {
  char* end = nullptr;
  const long id = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || id <= 0 || (*end && *end != ';' && *end != '\n'))
    throw Error("'" + text + "' is not a Slurm job id", "give the number sbatch or `tokamak slurm submit` printed");
  return id;
}

ProcessResult SlurmClient::run(const std::vector<std::string>& argv) const {
  try {
    return host_.run(argv, {}, timeout_s_);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("cannot run " + argv.at(0) + " on " + host_.name() + ": " + e.what(), "");
  }
}

void SlurmClient::require_sbatch() const {
  if (!host_.has_program("sbatch"))
    throw Error("no sbatch on " + host_.name() + " (Slurm's client commands are not installed or not on the PATH)",
                host_.local() ? "run this on the cluster's login node, or submit through it with --host LOGIN"
                              : "pick the cluster's login node as the host, or put Slurm's bin folder on its PATH");
}

std::vector<std::string> SlurmClient::partitions() const {
  const ProcessResult r = run({"sinfo", "-h", "-o", "%P"});
  if (r.code != 0) throw Error("sinfo failed on " + host_.name() + ": " + last_line(r.err), "is slurmctld reachable?");
  std::vector<std::string> names;
  size_t i = 0;
  while (i < r.out.size()) {
    size_t end = r.out.find('\n', i);
    if (end == std::string::npos) end = r.out.size();
    std::string p = r.out.substr(i, end - i);
    if (!p.empty() && p.back() == '*') p.pop_back();
    if (!p.empty()) names.push_back(p);
    i = end + 1;
  }
  return names;
}

void SlurmClient::require_partition(const std::string& partition) const {
  if (partition.empty()) throw Error("no partition given", "add --partition NAME (`sinfo` lists them)");
  const ProcessResult r = run({"sinfo", "-h", "-p", partition, "-o", "%P"});
  if (r.code == 0 && r.out.find_first_not_of("\n ") != std::string::npos) return;
  std::string there;
  for (const std::string& p : partitions()) there += (there.empty() ? "" : ", ") + p;
  throw Error("partition '" + partition + "' does not exist on " + host_.name(),
              "use one of: " + (there.empty() ? std::string("(none listed)") : there));
}

long SlurmClient::submit(const std::string& script_path) const {
  const ProcessResult r = run({"sbatch", "--parsable", script_path});
  if (r.timed_out)
    throw SlurmSubmitUnknown("sbatch on " + host_.name() + " did not answer in time: Slurm may have accepted the job",
                             "look for it with `squeue --me` before submitting again; its folders are kept");
  if (r.code != 0) throw Error("sbatch refused the job: " + last_line(r.err), "the job script is " + script_path);
  return parse_job_id(r.out);
}

SlurmJob SlurmClient::job(long id) const {
  const ProcessResult r = run({"scontrol", "show", "job", "-o", std::to_string(id)});
  if (r.code != 0 || r.out.find("JobId=") == std::string::npos)
    throw Error("Slurm does not know job " + std::to_string(id) + " on " + host_.name() + ": " + last_line(r.err),
                "a job is forgotten MinJobAge after its end; its run's state is in `tokamak runs list --json`");
  return parse_scontrol_job(r.out.substr(0, r.out.find('\n')));
}

void SlurmClient::cancel(long id) const {
  const ProcessResult r = run({"scancel", std::to_string(id)});
  if (r.code != 0) throw Error("scancel " + std::to_string(id) + " failed: " + last_line(r.err), "");
}

}  // namespace tokamak
