// ControlFolder (see control_folder.h).
#include "app/tokamak-engine/control_folder.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "engine/base/run/control_file.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {

ControlFolder::ControlFolder(const RunFolder& folder, ControlHandlers handlers,
                             std::function<void(const std::string&)> note)
    : folder_(folder), handlers_(std::move(handlers)), note_(std::move(note)) {
  make_dirs(folder_.control_dir());
  // Commands left from an earlier process of this run (a resume) were meant for that one; those written since
  // this process's pid file (which `runs control` needs to find it running) are for this one — a stop sent
  // while the engine was still loading must not be lost.
  struct stat pid {};
  const int64_t since = ::stat(folder_.pid_file().c_str(), &pid) == 0
                            ? int64_t(pid.st_mtim.tv_sec) * 1000000000 + pid.st_mtim.tv_nsec
                            : std::numeric_limits<int64_t>::max();
  drop_control_commands_before(folder_.control_dir(), since);
  std::remove(folder_.paused_file().c_str());
  thread_ = std::thread([this] {
    // A thread of the run never ends the process: what goes wrong here is said, and the folder is no longer read.
    try {
      poll_loop();
    } catch (const std::exception& e) {
      note_(std::string("control: the run folder's commands are no longer read: ") + e.what());
    } catch (...) {  // a handler's own throw of anything else: std::thread would call std::terminate
      note_("control: the run folder's commands are no longer read: an error that is no std::exception");
    }
  });
}

ControlFolder::~ControlFolder() {
  done_ = true;
  if (thread_.joinable()) thread_.join();
  std::remove(folder_.paused_file().c_str());
}

void ControlFolder::poll_loop() {
  while (!done_) {
    for (const std::string& command : take_control_commands(folder_.control_dir())) {
      try {  // the marker is a nicety for `runs list`; a full disk must not end the poller
        if (command == "pause" && handlers_.pause) write_file_atomically(folder_.paused_file(), "");
      } catch (const std::exception&) {}
      if (command == "resume" && handlers_.resume) std::remove(folder_.paused_file().c_str());
      handle_control_line(handlers_, note_, command);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace tokamak::cli
