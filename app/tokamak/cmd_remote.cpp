// `tokamak remote test|train|attach|list --host HOST`: a run on an SSH host, seen from this machine as if it
// were a local child. `train` starts the run detached on the host and then does what `attach` does: follows
// its journal over ssh (`tokamak runs follow UID --from BYTES` there), prints each journal line once on stdout
// — exactly the lines `tokamak-engine train --json` prints, so the studio reads a host's run through the same
// event path as a local one —, records them in this machine's run store (JournalIngest: each line once, by
// its offset), and when the connection drops says so on stderr and follows again from the last line it has,
// with back-off. With --control it takes pause/resume/stop/sample lines on stdin and sends them to the host;
// the end of stdin (the studio closed or killed) leaves the run training there. The follower also tells this
// computer's desktop and webhook (notifications.json here) what the run does: the host has no desktop of ours.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/tokamak/cmd_remote.h"
#include "app/cli/commands.h"
#include "app/cli/control_channel.h"
#include "app/tokamak/ssh_args.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/run/journal_events.h"
#include "engine/fleet/notify/notify.h"
#include "engine/fleet/notify/notify_sink.h"
#include "engine/base/store/journal_ingest.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {
namespace {}  // namespace

RemoteHost host_of(const RemoteArgs& a) {
  return RemoteHost(parse_ssh_target(a.host), cli_ssh_options(a.identity, a.known_hosts, a.ssh_config), a.tokamak);
}

namespace {

void remote_note(const std::string& line) {
  std::fprintf(stderr, "tokamak remote: %s\n", line.c_str());
  std::fflush(stderr);
}

// The ssh reader of a journal: a child whose stdout is read as it comes, ended with us (PR_SET_PDEATHSIG).
class Follower {
 public:
  explicit Follower(const std::vector<std::string>& argv) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) throw Error("cannot start ssh: no pipes", "");
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0), ::dup2(out[1], 1), ::dup2(err[1], 2);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::close(out[1]), ::close(err[1]);
    out_ = out[0], err_ = err[0];
    ::fcntl(out_, F_SETFL, O_NONBLOCK), ::fcntl(err_, F_SETFL, O_NONBLOCK);
  }
  ~Follower() {
    if (pid_ > 0 && !exited_) ::kill(pid_, SIGTERM), wait();
    ::close(out_), ::close(err_);
  }
  // Waits up to 200 ms; appends what came to *out. False once the child has exited and its output is read.
  bool read(std::string* out) {
    pollfd p[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    ::poll(p, 2, 200);
    char buf[65536];
    ssize_t n;
    while ((n = ::read(out_, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
    while ((n = ::read(err_, buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
    if (!exited_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) {
      exited_ = true;
      while ((n = ::read(out_, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
      while ((n = ::read(err_, buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
      return false;
    }
    return !exited_;
  }
  void wait() {
    while (!exited_ && ::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {}
    exited_ = true;
  }
  int code() const { return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1; }
  std::string err;

 private:
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1, status_ = 0;
  bool exited_ = false;
};

// Failures no retry can mend: the host refuses us, its key changed, Tokamak is not there.
bool permanent(const std::string& why) {
  return why.find("refused the login") != std::string::npos || why.find("host key of") != std::string::npos ||
         why.find("not installed") != std::string::npos;
}

// The run's notices, sent from here. Attached from the journal's start, the lines already there (read before the
// first quiet moment) are history: they name the run but send nothing.
class RemoteNotices {
 public:
  RemoteNotices(const std::string& uid, bool history) : history_(history) {
    try {
      sink_ = std::make_unique<NotifySink>(read_notify_settings());
      sink_->on_start({uid, uid});
    } catch (const Error& e) {
      remote_note("no notifications from here: " + std::string(e.what()));
    }
  }
  ~RemoteNotices() { report(); }
  void lines(const std::vector<JournalLine>& ls) {
    if (ls.empty()) history_ = false;  // caught up: what comes now is news
    if (!sink_) return;
    sink_->set_muted(history_);
    for (const JournalLine& l : ls) ended_ = dispatch_journal_line(l.text, *sink_) == "end" || ended_;
    report();
  }
  // A run that ended without its end event reaching the journal (it crashed there).
  void failed(const std::string& why) {
    if (!sink_ || ended_) return;
    sink_->set_muted(false);
    sink_->on_end({"failed", why});
    report();
  }

 private:
  // A notice that was not sent is said once, in one line (the webhook's URL redacted, as send_webhook words it), as
  // the trainer says it: the person who relies on the notices learns that one did not go.
  void report() {
    if (said_ || !sink_) return;
    const std::string why = sink_->last_failure();
    if (!why.empty()) said_ = true, remote_note("a notification was not sent: " + why);
  }
  std::unique_ptr<NotifySink> sink_;
  bool history_, ended_ = false, said_ = false;
};

int follow_run(const RemoteArgs& a, const RemoteHost& host, const std::string& uid, bool attached) {
  RunStore store(a.db);
  JournalIngest ingest(store, uid, host.store_name());
  RemoteNotices notices(uid, attached && a.from == 0);
  bool heard = false;  // any line yet: the quiet before the connection is made is no catching up
  std::atomic<bool> parent_gone{false};
  std::unique_ptr<ControlChannel> channel;
  if (a.control) {
    auto send = [&host, uid](const char* command) {
      return [&host, uid, command] {
        try {
          host.control(uid, command);
        } catch (const std::exception& e) {
          remote_note(std::string(command) + " did not reach the run: " + e.what());
        }
      };
    };
    channel = std::make_unique<ControlChannel>(
        ControlHandlers{send("pause"), send("resume"), send("stop"), send("sample"), [&] { parent_gone = true; }},
        [](const std::string& s) { remote_note(s); });
  }
  uint64_t printed = a.from;  // journal bytes already printed by this process: each line goes out once
  int delay_s = 1;
  for (;;) {
    Follower f(host.follow_argv(uid, printed));
    std::string pending;
    bool alive = true;
    while (alive && !parent_gone) {
      alive = f.read(&pending);
      uint64_t used = 0;
      const auto lines = split_journal(pending, printed, &used);
      pending.erase(0, used);
      if (heard || !lines.empty()) notices.lines(lines);
      heard = heard || !lines.empty();
      if (lines.empty()) continue;
      for (const JournalLine& l : lines) std::fprintf(stdout, "%s\n", l.text.c_str());
      std::fflush(stdout);
      printed = lines.back().end;
      ingest.ingest(lines);
      delay_s = 1;  // data came: the connection works again
    }
    if (parent_gone) {
      remote_note("the reader went away; run " + uid + " goes on on " + host.target().spec());
      return 0;
    }
    const int code = f.code();
    if (code == 0) return 0;  // the run has ended and all of its journal is here
    const std::string why = describe_ssh_failure(host.target(), code, f.err, a.tokamak);
    if (code != 255 && code != -1 && why.rfind("tokamak:", 0) == 0) {  // failed, or crashed without an end event
      // A run whose end event never reached its journal (a full disk there refuses it) ends here by what the
      // host says, so the local row does not stay "running".
      if (ingest.ended().empty() && ingest.run_id() != 0) {
        const bool crashed = why.find(" crashed ") != std::string::npos;
        store.transaction(
            [&] { store.end_run(ingest.run_id(), crashed ? "crashed" : "failed", why.substr(9), now_seconds()); });
      }
      notices.failed(why.substr(9));
      throw Error(why.substr(9));
    }
    if (permanent(why)) throw Error(why);
    remote_note("disconnected from " + host.target().spec() + " (" + why + ") — retrying in " +
                std::to_string(delay_s) + " s");
    for (int i = 0; i < delay_s * 10 && !parent_gone; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    delay_s = std::min(delay_s * 2, 30);
  }
}

void test(const RemoteArgs& a) {
  const HostReport r = host_of(a).test_connection();
  if (a.json) {
    nlohmann::json datasets = nlohmann::json::array();
    for (const DatasetListing& d : r.datasets)
      datasets.push_back(
          {{"name", d.name}, {"path", d.path}, {"kind", d.kind}, {"description", d.description}, {"tokens", d.tokens}});
    std::printf(
        "%s\n",
        nlohmann::json(
            {{"version", r.version}, {"devices", r.devices}, {"free_disk", r.free_disk}, {"datasets", datasets}})
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
            .c_str());
    return;
  }
  std::printf("Tokamak %s on %s\n", r.version.c_str(), a.host.c_str());
  for (const std::string& d : r.devices) std::printf("device: %s\n", d.c_str());
  std::printf("disk: %s\n", r.free_disk.c_str());
  for (const DatasetListing& d : r.datasets) std::printf("dataset: %s (%s)\n", d.path.c_str(), d.description.c_str());
}

void train(const RemoteArgs& a) {
  const RemoteHost host = host_of(a);
  const std::string config = a.config.empty() ? "{}" : read_file(a.config);
  const RemoteRun run = host.start_run(config, a.sets);
  remote_note("started run " + run.uid + " on " + host.target().spec() + " in " + run.folder);
  if (int code = follow_run(a, host, run.uid, false); code != 0) throw CLI::RuntimeError(code);
}

void attach(const RemoteArgs& a) {
  const RemoteHost host = host_of(a);
  if (int code = follow_run(a, host, a.uid, true); code != 0) throw CLI::RuntimeError(code);
}

void list(const RemoteArgs& a) {
  for (const RemoteRun& r : host_of(a).runs(a.live))
    std::printf("%s\n", nlohmann::json({{"run_uid", r.uid},
                                        {"name", r.name},
                                        {"folder", r.folder},
                                        {"state", r.state},
                                        {"pid", r.pid},
                                        {"journal_bytes", r.journal_bytes}})
                            .dump()
                            .c_str());
}

}  // namespace

void add_remote_command(CLI::App& app) {
  auto args = std::make_shared<RemoteArgs>();
  CLI::App* remote = app.add_subcommand("remote", "Train on an SSH host and follow the run from here (docs/REMOTE.md)");
  remote->require_subcommand(1);
  auto common = [args](CLI::App* c) {
    c->add_option("--host", args->host, "a Host of ~/.ssh/config, or user@host[:port]")->required();
    c->add_option("--tokamak", args->tokamak, "the tokamak command on the host (default: tokamak on its PATH)");
    c->add_option("--identity", args->identity, "ssh key to log in with (default: ssh's own choice and agent)");
    c->add_option("--known-hosts", args->known_hosts, "known_hosts file (default: ssh's)");
    c->add_option("--ssh-config", args->ssh_config,
                  "ssh config file (default: $TOKAMAK_SSH_CONFIG, else ~/.ssh/config)");
  };
  auto following = [&](CLI::App* c) {
    c->add_option("--db", args->db, "this machine's run store (default: $XDG_DATA_HOME/tokamak/runs.db)");
    c->add_flag("--control", args->control,
                "read pause/resume/stop/sample lines on stdin and send them to the run; the end of stdin leaves "
                "the run training");
    c->add_option("--from", args->from, "journal byte offset to print from (default 0: the whole journal)");
  };
  CLI::App* c = remote->add_subcommand("test", "The host's Tokamak version, devices and free disk, or why not");
  common(c);
  c->add_flag("--json", args->json, "one JSON object");
  c->callback([args] { test(*args); });

  c = remote->add_subcommand("train", "Start a detached run on the host and follow it (its --json lines on stdout)");
  common(c);
  following(c);
  c->add_option("--config", args->config, "JSON config file (read here, sent to the host)");
  c->add_option("--set", args->sets, "override a config key (repeatable)");
  c->callback([args] { train(*args); });

  c = remote->add_subcommand("attach", "Follow a run on the host again (after a lost connection or a restart)");
  common(c);
  following(c);
  c->add_option("uid", args->uid, "the run's uid")->required();
  c->callback([args] { attach(*args); });

  c = remote->add_subcommand("list", "The host's runs with their state (one JSON object per line)");
  common(c);
  c->add_flag("--live", args->live, "only runs that are running or paused");
  c->callback([args] { list(*args); });

  add_remote_job_commands(remote, args, common);
  add_remote_install_commands(remote, args, common);
}

}  // namespace tokamak::cli
