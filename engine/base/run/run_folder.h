// Run folders: where a run keeps what outlives the process that watches it. A run's folder is the folder its
// checkpoints have always gone to by default, data_dir()/checkpoints/<name>-<first 8 of uid>/, and holds
// (engine/base/run/README.md):
//   run.json      uid, name, host, created: written once, before training
//   pid           "PID STARTTIME" of the process that owns the run (start time tells a reused pid apart)
//   events.jsonl  the journal (engine/base/run/journal.h)
//   output.log    stdout and stderr of a detached run (its last error line says why it crashed)
//   control/      commands for the run, one file each (engine/base/run/control_file.h)
//   paused        present while the run is paused
//   exit          at the end: {"status":..,"code":..,"error":..}
//   cuda_visible_devices  a queued run's GPUs of its own, as the queue's worker gave them (gpu_slots.h)
// LibTorch-free: `tokamak runs follow|control|list` read these without starting the engine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

// data_dir()/checkpoints/<safe name>-<uid's first 8 characters>.
std::string run_folder_path(const std::string& name, const std::string& uid);
// A new random run uid (16 hex digits).
std::string new_run_uid();
// Where a sweep trial writes its checkpoints when the sweep's base sets checkpoint.dir: a folder of its
// own inside it, named as its run folder ("" when checkpoint_dir is ""). Checkpoint files are named by step
// alone, so trials (and two sweeps from one file) sharing the folder would take each other's weights.
std::string trial_checkpoint_dir(const std::string& checkpoint_dir, const std::string& run_folder);

struct RunFolder {
  std::string path;
  std::string journal() const { return path + "/events.jsonl"; }
  std::string pid_file() const { return path + "/pid"; }
  std::string exit_file() const { return path + "/exit"; }
  std::string info_file() const { return path + "/run.json"; }
  std::string output_log() const { return path + "/output.log"; }
  std::string control_dir() const { return path + "/control"; }
  std::string paused_file() const { return path + "/paused"; }
  std::string gpus_file() const { return path + "/cuda_visible_devices"; }
  // Written by the queue's worker before it kills a stalled run ({"pid", "minutes", "step"}): a worker started after
  // it ended finishes queueing the run again, instead of settling it as the crash it looks like.
  std::string queue_kill_file() const { return path + "/queue-killed.json"; }
};

// What run.json holds.
struct RunFolderInfo {
  std::string uid, name, host, folder;
  double created = 0;
};

// Creates the folder (and control/) and writes run.json atomically.
void create_run_folder(const RunFolder& f, const RunFolderInfo& info);
RunFolderInfo read_run_folder_info(const RunFolder& f);  // throws an Error naming the file

// The pid file: PID of the owning process and its start time (/proc/PID/stat, clock ticks since boot).
void write_pid_file(const RunFolder& f, long pid);
// A new segment of the run in F owned by PID (a first start, or a resume in the same folder): the last segment's
// exit file is removed first, so that a segment that dies without one reads "crashed", never the old status; then
// the pid file. A failure to remove or write throws an Error naming the file.
void begin_run_segment(const RunFolder& f, long pid);
// True when F's pid file already names process PID (its pid and start time): the launcher's child wrote it
// before exec.
bool pid_file_names(const RunFolder& f, long pid);
// Field 22 of /proc/PID/stat, the process's start in clock ticks since boot ("" when it does not exist): with
// the pid it names one process, where a pid alone may be another's after a reboot or a wrap.
std::string process_start_time(long pid);
// True while the process the pid file names is alive (same pid, same start time), or, once it has ended, while a
// live process of the group it led remains (a rank the stall's SIGKILL did not end); false without a pid file.
bool run_process_alive(const RunFolder& f);
// True while a process group PGID has a member that is not a zombie.
bool process_group_alive(long pgid);
long read_pid(const RunFolder& f);  // 0 without a pid file

// The exit file, written atomically when the run's process ends (status: finished|stopped|failed).
void write_exit_file(const RunFolder& f, const std::string& status, int code, const std::string& error);

// Where a run stands, from its folder alone.
struct RunState {
  std::string state;  // running | paused | finished | stopped | failed | crashed
  std::string error;  // failed: the exit file's error; crashed: the last error line of output.log
  long pid = 0;
  uint64_t journal_bytes = 0;
};
RunState read_run_state(const RunFolder& f);
// The last non-empty line of output.log, preferring one that starts with "tokamak:" (the one-line errors).
std::string last_error_line(const RunFolder& f);

// Every run folder under data_dir()/checkpoints (those with a run.json), newest first.
std::vector<RunFolderInfo> list_run_folders();
// A run by its uid, a unique prefix of it (4 characters or more) or its folder's path; throws an Error with
// the fix (`tokamak runs list --json`) otherwise.
RunFolder find_run_folder(const std::string& id);

}  // namespace tokamak
