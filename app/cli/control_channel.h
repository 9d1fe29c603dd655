// ControlChannel: how a parent process (the studio) drives a run it started. With `train --control`, a thread
// reads lines from stdin: "pause", "resume", "stop". End of input (the parent closed the pipe, or died) means
// stop, so an orphaned run still ends cleanly with a checkpoint instead of training on unseen. Lines arrive
// between steps as the trainer polls its flags; the channel only calls the handlers it was given.
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace tokamak::cli {

struct ControlHandlers {
  std::function<void()> pause, resume, stop;  // an empty handler: that command is refused with a note
  std::function<void()> sample;               // "sample": a sample at the next step's end
  std::function<void()> end_of_input;         // stdin closed (the parent is gone); empty: stop
};

// One command line ("pause", "stop"...) → its handler, or a one-line note for an unknown or refused one.
// Shared by the stdin channel and the run folder's control files (control_folder.h).
void handle_control_line(const ControlHandlers& handlers, const std::function<void(const std::string&)>& note,
                         const std::string& line);

class ControlChannel {
 public:
  // Starts reading fd (stdin by default) on its own thread; note() receives one-line complaints (stderr).
  ControlChannel(ControlHandlers handlers, std::function<void(const std::string&)> note, int fd = 0);
  ~ControlChannel();  // stops reading within ~0.1 s; never closes fd
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  // One line as read (without its newline); public so that tests can drive it without a pipe.
  void handle(const std::string& line);

 private:
  void read_loop(int fd);

  ControlHandlers handlers_;
  std::function<void(const std::string&)> note_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace tokamak::cli
