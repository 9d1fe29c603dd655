// slurm_job_script and the --time forms (see slurm_script.h).
#include "engine/fleet/remote/slurm_script.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "engine/fleet/remote/ssh_command.h"
#include "engine/base/util/error.h"

namespace tokamak {
namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char ch : s) {
    if (ch == sep) parts.push_back(cur), cur.clear();
    else cur += ch;
  }
  parts.push_back(cur);
  return parts;
}

// A value of an #SBATCH line as sbatch reads it: it splits the line at blanks, takes an unquoted '#' as the
// start of a comment and aborts on a lone quote, but keeps what is inside double quotes and the character after
// a backslash. Plain values stay as they are (the script reads as before); any other is quoted. A line break
// would end the #SBATCH line and start a script line of its own: refused.
std::string sbatch_value(const std::string& what, const std::string& v) {
  for (char c : v)
    if (c == '\n' || c == '\r' || c == '\0')
      throw Error(what + " holds a line break", "give it on one line, without control characters");
  bool plain = !v.empty();
  for (char c : v)
    plain = plain &&
            (std::isalnum(static_cast<unsigned char>(c)) || std::string("._-+:/@=,%").find(c) != std::string::npos);
  if (plain) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A path for --output: Slurm expands %j, %a, ... in it, so a '%' of a folder's own name is written "%%".
std::string slurm_file_pattern(const std::string& folder, const std::string& file_pattern) {
  std::string out;
  for (char c : folder) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out + "/" + file_pattern;
}

}  // namespace

int parse_slurm_time(const std::string& text) {
  const Error bad("time limit '" + text + "' is not a Slurm time",
                  "write HH:MM:SS (e.g. --time 04:00:00), MM:SS, MINUTES or D-HH:MM:SS");
  std::string rest = text;
  long days = 0;
  if (auto dash = rest.find('-'); dash != std::string::npos) {
    if (!all_digits(rest.substr(0, dash))) throw bad;
    days = std::atol(rest.substr(0, dash).c_str());
    rest = rest.substr(dash + 1);
  }
  std::vector<std::string> p = split(rest, ':');
  if (p.size() > 3) throw bad;
  for (const std::string& x : p)
    if (!all_digits(x) || x.size() > 6) throw bad;
  std::vector<long> v;
  for (const std::string& x : p) v.push_back(std::atol(x.c_str()));
  long s = 0;
  if (text.find('-') != std::string::npos) {  // D-HH, D-HH:MM, D-HH:MM:SS
    s = v[0] * 3600 + (v.size() > 1 ? v[1] * 60 : 0) + (v.size() > 2 ? v[2] : 0);
  } else if (v.size() == 1) {
    s = v[0] * 60;  // MINUTES
  } else if (v.size() == 2) {
    s = v[0] * 60 + v[1];  // MM:SS
  } else {
    s = v[0] * 3600 + v[1] * 60 + v[2];
  }
  s += days * 86400;
  if (s <= 0 || s > 366L * 86400) throw bad;
  return static_cast<int>(s);
}

std::string format_slurm_time(int seconds) {
  char buf[32];
  const int d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
  if (d > 0) std::snprintf(buf, sizeof buf, "%d-%02d:%02d:%02d", d, h, m, s);
  else std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", h, m, s);
  return buf;
}

int slurm_master_port(long job_id) { return 20000 + static_cast<int>(job_id % 40000); }

std::string slurm_master_addr_lines() {
  // A node's Slurm name need not resolve (NodeName=n1 NodeAddr=127.0.0.1): the ranks would then wait out the
  // rendezvous timeout. Its NodeAddr is what slurmctld itself reaches it by.
  return "first=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
         "if getent hosts \"$first\" >/dev/null 2>&1; then\n"
         "  export MASTER_ADDR=$first; master=\"$first (the first node's name)\"\n"
         "else\n"
         "  export MASTER_ADDR=$(scontrol show node \"$first\" | tr ' ' '\\n' | sed -n 's/^NodeAddr=//p' | head -n 1)\n"
         "  master=\"$MASTER_ADDR (NodeAddr of $first, whose name does not resolve)\"\n"
         "fi\n";
}

// The #SBATCH lines every job of ours has (the caller adds --output, requeue and, for a sweep, --array).
static void write_resources(std::ostringstream& s, const SlurmJobSpec& j) {
  s << "#SBATCH --job-name=" << sbatch_value("the job name", j.job_name) << "\n"
    << "#SBATCH --partition=" << sbatch_value("--partition", j.partition) << "\n";
  if (!j.account.empty()) s << "#SBATCH --account=" << sbatch_value("--account", j.account) << "\n";
  if (!j.qos.empty()) s << "#SBATCH --qos=" << sbatch_value("--qos", j.qos) << "\n";
  s << "#SBATCH --nodes=" << j.nodes << "\n"
    << "#SBATCH --ntasks-per-node=" << j.tasks_per_node() << "\n";
  if (j.gpus_per_node > 0) s << "#SBATCH --gpus-per-node=" << j.gpus_per_node << "\n";
  s << "#SBATCH --time=" << format_slurm_time(j.time_limit_s) << "\n";
}

// From the rendezvous to the end: the same for one run and for each task of a sweep's array, once
// TOKAMAK_RUN_UID, $folder and $checkpoints are set.
static void write_body(std::ostringstream& s, const SlurmJobSpec& j) {
  s << slurm_master_addr_lines() << "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 40000))\n"
    << "resume=()\n"
    << "last=$(ls -1v \"$checkpoints\"/step_*.safetensors 2>/dev/null | tail -n 1)\n"
    << "if [ -n \"$last\" ]; then resume=(--set \"checkpoint.resume=$last\"); fi\n"
    << "echo \"tokamak job $SLURM_JOB_ID (restart ${SLURM_RESTART_COUNT:-0}) on $SLURM_JOB_NODELIST${last:+, resuming "
       "from $last}, MASTER_ADDR $master\"\n";
  if (j.requeue) s << "trap 'scontrol requeue \"$SLURM_JOB_ID\"' USR1\n";
  s << "trap 'echo \"tokamak job: SIGTERM, the ranks write a checkpoint and stop\"' TERM\n"
    << "srun --kill-on-bad-exit=1 " << shell_quote(j.tokamak) << " train --config \"$folder/config.json\""
    << (j.db.empty() ? std::string() : " --db " + shell_quote(j.db)) << " \"${resume[@]}\" \"${halt[@]}\" &\n"
    << "ranks=$!\n"
    << "while :; do wait \"$ranks\"; status=$?; kill -0 \"$ranks\" 2>/dev/null || break; done\n";
  if (!j.sweep_job_file.empty())
    // Outside srun: one process on the batch host. A job killed before this line is settled by `sweep status`.
    s << shell_quote(j.tokamak) << " sweep advance --job " << shell_quote(j.sweep_job_file)
      << " --run \"$TOKAMAK_RUN_UID\"" << (j.db.empty() ? std::string() : " --db " + shell_quote(j.db))
      << " || echo \"tokamak job: the sweep did not take this trial's end; \\`tokamak sweep status\\` will\"\n";
  s << "exit \"$status\"\n";
}

std::string slurm_job_script(const SlurmJobSpec& j) {
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Tokamak run " << j.run_uid << ", written by `tokamak slurm submit` (docs/REMOTE.md, \"Slurm\").\n";
  write_resources(s, j);
  s << "#SBATCH --output=" << sbatch_value("the run folder", slurm_file_pattern(j.run_folder, "output.log")) << "\n"
    << "#SBATCH --open-mode=append\n";
  if (j.requeue)
    s << "#SBATCH --requeue\n"
      << "#SBATCH --signal=B:USR1@" << j.warn_s << "\n";
  else s << "#SBATCH --no-requeue\n";
  s << "\n"
    << "export TOKAMAK_RUN_UID=" << j.run_uid << "\n"
    << "folder=" << shell_quote(j.run_folder) << "\n"
    << "checkpoints=" << shell_quote(j.checkpoint_dir) << "\n"
    << "halt=(" << (j.halt_step > 0 ? "--halt-at-step " + std::to_string(j.halt_step) : std::string()) << ")\n";
  write_body(s, j);
  return s.str();
}

std::string slurm_array_script(const SlurmJobSpec& j, const std::vector<SlurmArrayTask>& tasks,
                               const std::string& sweep_folder) {
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Tokamak sweep: " << tasks.size()
    << " trials, one array task each, written by `tokamak sweep --slurm` (docs/SWEEPS.md).\n";
  write_resources(s, j);
  s << "#SBATCH --array=0-" << (tasks.empty() ? 0 : tasks.size() - 1) << "\n"
    << "#SBATCH --output=" << sbatch_value("the sweep folder", slurm_file_pattern(sweep_folder, "task-%a.log")) << "\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --no-requeue\n\n";
  std::string uids, folders, checkpoints, halts;
  for (const SlurmArrayTask& t : tasks) {
    uids += " " + t.run_uid;
    folders += " " + shell_quote(t.run_folder);
    checkpoints += " " + shell_quote(t.checkpoint_dir);
    halts += " " + std::to_string(t.halt_step);
  }
  s << "uids=(" << uids << " )\n"
    << "folders=(" << folders << " )\n"
    << "checkpoint_dirs=(" << checkpoints << " )\n"
    << "halt_steps=(" << halts << " )  # early stopping: each trial's first rung (0 = to the end)\n"
    << "export TOKAMAK_RUN_UID=${uids[$SLURM_ARRAY_TASK_ID]}\n"
    << "folder=${folders[$SLURM_ARRAY_TASK_ID]}\n"
    << "checkpoints=${checkpoint_dirs[$SLURM_ARRAY_TASK_ID]}\n"
    << "halt=()\n"
    << "if [ \"${halt_steps[$SLURM_ARRAY_TASK_ID]}\" -gt 0 ]; then halt=(--halt-at-step "
       "\"${halt_steps[$SLURM_ARRAY_TASK_ID]}\"); fi\n"
    << "exec >>\"$folder/output.log\" 2>&1  # each trial's own log, as a single job's\n";
  write_body(s, j);
  return s.str();
}

}  // namespace tokamak
