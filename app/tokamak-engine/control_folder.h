// ControlFolder: how `tokamak runs control ID pause|resume|stop|sample` reaches a run: a thread takes the
// command files of the run folder's control/ (engine/base/run/control_file.h) every 0.1 s and calls the same
// handlers as the stdin channel (control_channel.h), which only set the flags the trainer polls each step,
// so the training thread never touches the file system for control. Pause and resume also keep the
// folder's "paused" marker, so `runs list` can say a run is paused.
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "app/cli/control_channel.h"
#include "engine/base/run/run_folder.h"

namespace tokamak::cli {

class ControlFolder {
 public:
  ControlFolder(const RunFolder& folder, ControlHandlers handlers, std::function<void(const std::string&)> note);
  ~ControlFolder();  // stops polling within ~0.1 s; removes the paused marker
  ControlFolder(const ControlFolder&) = delete;
  ControlFolder& operator=(const ControlFolder&) = delete;

 private:
  void poll_loop();

  RunFolder folder_;
  ControlHandlers handlers_;
  std::function<void(const std::string&)> note_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace tokamak::cli
