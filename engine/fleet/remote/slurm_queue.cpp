// Parsing scontrol's job lines (see slurm_queue.h).
#include "engine/fleet/remote/slurm_queue.h"

#include <cctype>
#include <cstdlib>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

// A key of scontrol's output: letters, digits and the few marks its names use ("Socks/Node", "NtasksPerN:B:S:C").
bool is_key(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '/' || ch == ':')) return false;
  return true;
}

const char* reason_meaning(const std::string& r) {
  if (r == "Resources") return "the nodes it asks for are busy";
  if (r == "Priority") return "jobs of higher priority are ahead of it";
  if (r == "PartitionDown") return "its partition is down";
  if (r == "PartitionNodeLimit" || r == "PartitionTimeLimit") return "it asks for more than its partition allows";
  if (r == "JobHeldUser" || r == "JobHeldAdmin") return "held: `scontrol release JOB` lets it start";
  if (r == "BeginTime") return "it may not start yet (a requeued job waits a moment)";
  if (r == "QOSMaxJobsPerUserLimit" || r == "AssocMaxJobsLimit") return "you have as many jobs running as allowed";
  if (r == "ReqNodeNotAvail") return "a node it needs is unavailable";
  return nullptr;
}

}  // namespace

std::map<std::string, std::string> parse_scontrol_pairs(const std::string& line) {
  std::map<std::string, std::string> pairs;
  std::string last;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\n')) ++i;
    size_t end = line.find(' ', i);
    if (end == std::string::npos) end = line.size();
    std::string word = line.substr(i, end - i);
    while (!word.empty() && word.back() == '\n') word.pop_back();
    i = end;
    if (word.empty()) continue;
    const size_t eq = word.find('=');
    if (eq != std::string::npos && is_key(word.substr(0, eq))) {
      last = word.substr(0, eq);
      pairs[last] = word.substr(eq + 1);
    } else if (!last.empty()) {
      pairs[last] += " " + word;  // a value with spaces (Reason, Command, Comment)
    }
  }
  return pairs;
}

SlurmJob parse_scontrol_job(const std::string& line) {
  const auto p = parse_scontrol_pairs(line);
  auto get = [&](const char* k) {
    auto it = p.find(k);
    return it == p.end() ? std::string() : it->second;
  };
  SlurmJob j;
  j.id = std::atol(get("JobId").c_str());
  if (j.id <= 0) throw Error("scontrol printed no job: '" + line.substr(0, 200) + "'", "");
  j.name = get("JobName");
  j.state = get("JobState");
  j.reason = get("Reason");
  j.nodes = get("NodeList");
  if (j.nodes == "(null)") j.nodes.clear();
  j.run_time = get("RunTime");
  j.time_limit = get("TimeLimit");
  j.restarts = std::atoi(get("Restarts").c_str());
  const std::string code = get("ExitCode");  // "CODE:SIGNAL"
  j.exit_code = std::atoi(code.c_str());
  if (auto colon = code.find(':'); colon != std::string::npos) j.exit_signal = std::atoi(code.c_str() + colon + 1);
  return j;
}

std::string describe_slurm_job(const SlurmJob& j) {
  if (j.pending()) {
    std::string s = "pending: " + (j.reason.empty() || j.reason == "None" ? std::string("waiting to start") : j.reason);
    if (const char* why = reason_meaning(j.reason)) s += std::string(" (") + why + ")";
    if (j.restarts > 0) s += ", requeued " + std::to_string(j.restarts) + " time(s)";
    return s;
  }
  if (j.state == "COMPLETING")
    return "ending on " + j.nodes + " (its processes are finishing: a checkpoint, then the end)";
  if (j.running())
    return "running on " + j.nodes + " for " + j.run_time + " of " + j.time_limit +
           (j.restarts > 0 ? ", requeued " + std::to_string(j.restarts) + " time(s)" : "");
  if (j.state == "COMPLETED") return "ended: completed (exit code 0)";
  if (j.state == "CANCELLED") return "ended: cancelled";
  if (j.state == "TIMEOUT") return "ended: time limit reached";
  if (j.state == "PREEMPTED") return "ended: preempted";
  if (j.state == "NODE_FAIL") return "ended: a node failed";
  if (j.state == "OUT_OF_MEMORY") return "ended: out of memory";
  if (j.state == "FAILED")
    return "ended: failed (" +
           (j.exit_signal ? "signal " + std::to_string(j.exit_signal) : "exit code " + std::to_string(j.exit_code)) +
           ")";
  return "state " + j.state + (j.reason.empty() || j.reason == "None" ? "" : " (" + j.reason + ")");
}

}  // namespace tokamak
