// Run folders (see run_folder.h).
#include "engine/base/run/run_folder.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/proc_files.h"

namespace tokamak {

using json = nlohmann::json;

std::string run_folder_path(const std::string& name, const std::string& uid) {
  // The run name is the user's; as a folder name it must not climb out of data_dir() ("../x", "a/b").
  return data_dir() + "/checkpoints/" + safe_file_name(name) + "-" + uid.substr(0, 8);
}

std::string trial_checkpoint_dir(const std::string& checkpoint_dir, const std::string& run_folder) {
  if (checkpoint_dir.empty()) return {};
  const size_t slash = run_folder.find_last_of('/');
  return checkpoint_dir + "/" + (slash == std::string::npos ? run_folder : run_folder.substr(slash + 1));
}

std::string new_run_uid() {
  std::random_device rd;
  return hex64((static_cast<uint64_t>(rd()) << 32) ^ rd());
}

void create_run_folder(const RunFolder& f, const RunFolderInfo& info) {
  make_dirs(f.control_dir());
  json j = {{"uid", info.uid}, {"name", info.name}, {"host", info.host}, {"created", info.created}};
  write_file_atomically(f.info_file(), j.dump() + "\n");
}

RunFolderInfo read_run_folder_info(const RunFolder& f) {
  json j = json::parse(read_file(f.info_file()), nullptr, false);
  if (!j.is_object() || !j.contains("uid"))
    throw Error("'" + f.info_file() + "' is not a run description", "delete the folder if the run is not wanted");
  RunFolderInfo i;
  i.uid = j.value("uid", ""), i.name = j.value("name", ""), i.host = j.value("host", "");
  i.created = j.value("created", 0.0), i.folder = f.path;
  return i;
}

// Field 22 of /proc/PID/stat; "" when the process does not exist.
static std::string start_time(long pid) {
  const std::optional<ProcStat> s = read_proc_stat(pid);
  return s ? s->start_time : std::string();
}

std::string process_start_time(long pid) { return start_time(pid); }

void write_pid_file(const RunFolder& f, long pid) {
  write_file_atomically(f.pid_file(), std::to_string(pid) + " " + start_time(pid) + "\n");
}

void begin_run_segment(const RunFolder& f, long pid) {
  // The pid first: at no instant does the folder hold the earlier segment's pid without its exit file (read as
  // "crashed"); the stale exit file, older than the new pid file, is ignored until it is gone.
  write_pid_file(f, pid);
  if (::unlink(f.exit_file().c_str()) != 0 && errno != ENOENT)
    throw Error("cannot remove '" + f.exit_file() + "': " + std::strerror(errno),
                "check the permissions of the run's folder");
}

bool pid_file_names(const RunFolder& f, long pid) {
  return path_exists(f.pid_file()) && read_file(f.pid_file()) == std::to_string(pid) + " " + start_time(pid) + "\n";
}

long read_pid(const RunFolder& f) {
  if (!path_exists(f.pid_file())) return 0;
  std::istringstream in(read_file(f.pid_file()));
  long pid = 0;
  in >> pid;
  return pid;
}

bool run_process_alive(const RunFolder& f) {
  if (!path_exists(f.pid_file())) return false;
  std::istringstream in(read_file(f.pid_file()));
  long pid = 0;
  std::string started;
  in >> pid >> started;
  if (pid <= 0) return false;
  // A zombie (the owner exited, its parent has not reaped it yet) has ended for our purposes.
  const std::optional<ProcStat> stat = read_proc_stat(pid);
  if (stat && stat->state != 'Z') return started.empty() || stat->start_time == started;
  // The owner has ended, but a run started detached leads a session and group of its own (run_launch.cpp), which
  // the stall's SIGKILL goes to whole: a rank of it still alive (stuck in D state) holds the run's GPU and files.
  // Linux gives no new process a pid that still names a group, so a group of this number is the run's.
  return process_group_alive(pid);
}

bool process_group_alive(long pgid) {
  if (pgid <= 0 || (::kill(static_cast<pid_t>(-pgid), 0) != 0 && errno == ESRCH)) return false;
  // kill() counts zombies (a leader not yet reaped, a child whose reaper is slow): only a live member counts.
  DIR* d = ::opendir("/proc");
  if (!d) return true;
  bool alive = false;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    const std::optional<ProcStat> s = read_proc_stat(pid);
    if (s && s->pgrp == pgid && s->state != 'Z') {
      alive = true;
      break;
    }
  }
  ::closedir(d);
  return alive;
}

void write_exit_file(const RunFolder& f, const std::string& status, int code, const std::string& error) {
  json j = {{"status", status}, {"code", code}, {"error", error}};
  write_file_atomically(f.exit_file(), j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

std::string last_error_line(const RunFolder& f) {
  if (!path_exists(f.output_log())) return {};
  std::istringstream in(read_file(f.output_log()));
  std::string line, last, last_tokamak;
  while (std::getline(in, line)) {
    // Progress bars redraw with '\r': the text after the last one is what a terminal shows.
    if (size_t cr = line.rfind('\r'); cr != std::string::npos) line = line.substr(cr + 1);
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    last = line;
    if (line.rfind("tokamak:", 0) == 0) last_tokamak = line;
  }
  return last_tokamak.empty() ? last : last_tokamak;
}

RunState read_run_state(const RunFolder& f) {
  RunState s;
  s.pid = read_pid(f);
  struct stat st {};
  if (::stat(f.journal().c_str(), &st) == 0) s.journal_bytes = static_cast<uint64_t>(st.st_size);
  if (run_process_alive(f)) {
    s.state = path_exists(f.paused_file()) ? "paused" : "running";
    return s;
  }
  // An exit file older than the pid file is an earlier segment's (a resumed run's, from a program that left it).
  struct stat exit_st {}, pid_st {};
  const bool stale = ::stat(f.exit_file().c_str(), &exit_st) == 0 && ::stat(f.pid_file().c_str(), &pid_st) == 0 &&
                     (exit_st.st_mtim.tv_sec < pid_st.st_mtim.tv_sec ||
                      (exit_st.st_mtim.tv_sec == pid_st.st_mtim.tv_sec && exit_st.st_mtim.tv_nsec < pid_st.st_mtim.tv_nsec));
  if (!stale && path_exists(f.exit_file())) {
    json j = json::parse(read_file(f.exit_file()), nullptr, false);
    if (j.is_object()) {
      s.state = j.value("status", "failed"), s.error = j.value("error", "");
      return s;
    }
  }
  // A Slurm job's run before its first start: the folder was made by `slurm submit`, no rank has owned it yet.
  if (s.pid == 0 && path_exists(f.path + "/slurm.json")) {
    s.state = "queued";
    return s;
  }
  s.state = "crashed";
  s.error = last_error_line(f);
  if (s.error.empty()) s.error = "the run's process (pid " + std::to_string(s.pid) + ") ended without a word";
  return s;
}

std::vector<RunFolderInfo> list_run_folders() {
  std::vector<RunFolderInfo> runs;
  const std::string root = data_dir() + "/checkpoints";
  DIR* d = ::opendir(root.c_str());
  if (!d) return runs;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    RunFolder f{root + "/" + name};
    if (!path_exists(f.info_file())) continue;  // a checkpoint folder of a run from before run folders
    try {
      runs.push_back(read_run_folder_info(f));
    } catch (const Error&) {
      // a damaged run.json: the folder is left out of the list, not the whole list
    }
  }
  ::closedir(d);
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.created > b.created; });
  return runs;
}

RunFolder find_run_folder(const std::string& id) {
  if (id.find('/') != std::string::npos) {
    RunFolder f{id};
    if (!path_exists(f.info_file()))
      throw Error("'" + id + "' is not a run folder (it has no run.json)", "pass a run uid or a run folder");
    return f;
  }
  std::vector<RunFolderInfo> matches;
  if (id.size() >= 4)
    for (const RunFolderInfo& r : list_run_folders())
      if (r.uid.rfind(id, 0) == 0) matches.push_back(r);
  if (matches.size() == 1) return {matches.front().folder};
  if (matches.empty())
    throw Error("no run '" + id + "' in " + data_dir() + "/checkpoints",
                "pass the uid that `tokamak train --detach` printed (4 characters or more); "
                "`tokamak runs list --json` lists the runs here");
  throw Error("'" + id + "' matches " + std::to_string(matches.size()) + " runs", "give more of the uid");
}

}  // namespace tokamak
