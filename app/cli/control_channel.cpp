// ControlChannel: stdin lines → handlers, on a thread (see control_channel.h).
#include "app/cli/control_channel.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace tokamak::cli {

ControlChannel::ControlChannel(ControlHandlers handlers, std::function<void(const std::string&)> note, int fd)
    : handlers_(std::move(handlers)), note_(std::move(note)) {
  thread_ = std::thread([this, fd] {
    // A thread of the run never ends the process: what goes wrong here is said, and the channel closes.
    try {
      read_loop(fd);
    } catch (const std::exception& e) {
      note_(std::string("control: the control channel stopped: ") + e.what());
    } catch (...) {  // a handler's own throw of anything else: std::thread would call std::terminate
      note_("control: the control channel stopped: an error that is no std::exception");
    }
  });
}

ControlChannel::~ControlChannel() {
  done_ = true;
  if (thread_.joinable()) thread_.join();
}

void ControlChannel::handle(const std::string& line) { handle_control_line(handlers_, note_, line); }

void handle_control_line(const ControlHandlers& handlers_, const std::function<void(const std::string&)>& note_,
                         const std::string& raw) {
  std::string line = raw;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) return;
  const std::function<void()>* h = line == "pause"    ? &handlers_.pause
                                   : line == "resume" ? &handlers_.resume
                                   : line == "stop"   ? &handlers_.stop
                                   : line == "sample" ? &handlers_.sample
                                                      : nullptr;
  if (!h) return note_("control: unknown command \"" + line + "\" (known: pause, resume, stop, sample)");
  if (!*h) return note_("control: " + line + " is not offered for this run");
  (*h)();
}

void ControlChannel::read_loop(int fd) {
  std::string pending;
  char buf[256];
  while (!done_) {
    // poll with a timeout, so that the destructor never waits on a read that no line will ever end.
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    ssize_t n = ready < 0 ? -1 : ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // end of input or a broken pipe: the parent is gone
      if (!pending.empty()) handle(pending);
      if (handlers_.end_of_input) handlers_.end_of_input();
      else if (handlers_.stop) handlers_.stop();
      return;
    }
    pending.append(buf, static_cast<size_t>(n));
    for (size_t eol; (eol = pending.find('\n')) != std::string::npos; pending.erase(0, eol + 1))
      handle(pending.substr(0, eol));
  }
}

}  // namespace tokamak::cli
