// `tokamak runs follow ID [--from BYTES]`, `tokamak runs control ID COMMAND`, `tokamak runs list --json`,
// `tokamak runs checkpoints ID`.
// They read and write only the run folder, never the run store and never a pipe the run writes, so any
// number of them can come and go while the run trains at full speed. `follow --control` is how the studio
// follows a run on this computer: the journal on stdout, pause/resume/stop/sample lines on stdin turned into
// control files, and the end of stdin (the studio closed or killed) ends only this reader.
#include "app/tokamak/cmd_runs_live.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/cli/control_channel.h"
#include "engine/base/run/control_file.h"
#include "engine/base/run/journal.h"
#include "engine/base/run/pace_watch.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"

namespace tokamak::cli {
namespace {

using json = nlohmann::json;

struct LiveArgs {
  std::string id, command;
  uint64_t from = 0;
  bool control = false;
};

void runs_note(const std::string& line) {
  std::fprintf(stderr, "tokamak runs: %s\n", line.c_str());
  std::fflush(stderr);
}

std::string event_of(const std::string& line) {
  json j = json::parse(line, nullptr, false);
  return j.is_object() ? j.value("event", "") : "";
}

// The journal's last whole line ("" when empty), for a follower that starts past the end event.
std::string last_journal_line(const RunFolder& f, uint64_t size) {
  const uint64_t tail = 1 << 16, from = size > tail ? size - tail : 0;
  uint64_t next = 0;
  auto lines = read_journal(f.journal(), from, &next, tail);
  return lines.empty() ? "" : lines.back().text;
}

// How a run that has no process any more ended: 0 (finished or stopped), or an Error with its reason.
int report_end(const RunFolder& f, const std::string& uid) {
  RunState s = read_run_state(f);
  if (s.state == "crashed") {
    // Killed after its end event was written, before the exit file: the journal is the word.
    const std::string last = last_journal_line(f, s.journal_bytes);
    if (event_of(last) == "end") {
      json j = json::parse(last);
      s.state = j.value("status", "failed"), s.error = j.value("error", "");
    }
  }
  if (s.state == "finished" || s.state == "stopped") return 0;
  if (s.state == "failed") throw Error("run " + uid + " failed: " + s.error);
  throw Error("run " + uid + " crashed (it ended without an end event): " + s.error,
              "its output is in " + f.output_log() + "; resume it from its last checkpoint");
}

int follow(const LiveArgs& a) {
  const RunFolder f = find_run_folder(a.id);
  const RunFolderInfo info = read_run_folder_info(f);
  uint64_t offset = a.from;
  std::atomic<bool> reader_gone{false};
  std::unique_ptr<ControlChannel> channel;
  if (a.control) {
    auto send = [&f](const char* command) {
      return [&f, command] {
        try {
          write_control_command(f.control_dir(), command);
        } catch (const std::exception& e) {
          runs_note(std::string(command) + " did not reach the run: " + e.what());
        }
      };
    };
    channel = std::make_unique<ControlChannel>(
        ControlHandlers{send("pause"), send("resume"), send("stop"), send("sample"), [&] { reader_gone = true; }},
        runs_note);
  }
  using clock = std::chrono::steady_clock;
  const auto began = clock::now();
  JournalStallWatch stall;  // a stalled run is said here, in the follower: a stopped process cannot say it
  const auto now = [&] { return std::chrono::duration<double>(clock::now() - began).count(); };
  const auto say = [](const std::string& line) {
    std::fprintf(stdout, "%s\n", line.c_str());
    std::fflush(stdout);
    runs_note(json::parse(line).value("message", ""));
  };
  for (;;) {
    if (reader_gone) {
      runs_note("the reader went away; run " + info.uid + " goes on");
      return 0;
    }
    uint64_t next = offset;
    const auto lines = read_journal(f.journal(), offset, &next);
    std::optional<std::string> over;
    for (const JournalLine& l : lines) {
      std::fprintf(stdout, "%s\n", l.text.c_str());
      if (auto o = stall.line(l.text, now())) over = o;
    }
    if (over) say(*over);
    if (!lines.empty()) {
      std::fflush(stdout);
      offset = next;
      continue;
    }
    if (const bool alive = run_process_alive(f); alive) {
      if (auto s = stall.idle(now(), [&] { return read_run_state(f).state == "paused"; })) say(*s);
    } else {
      // A run folder whose owner has not written its pid yet (it is starting) gets a few seconds.
      const bool starting = read_pid(f) == 0 && now_seconds() - info.created < 10;
      // A Slurm job's run waits in the queue for as long as the scheduler says (`tokamak slurm status`).
      const bool queued = read_run_state(f).state == "queued";
      if (!queued && (!starting || clock::now() - began > std::chrono::seconds(10))) {
        // What was written between the last read and the owner's exit comes out before the verdict.
        if (!read_journal(f.journal(), offset, &next).empty()) continue;
        return report_end(f, info.uid);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void control(const LiveArgs& a) {
  if (!is_control_command(a.command))
    throw Error("'" + a.command + "' is not a run control command", "use pause, resume, stop or sample");
  const RunFolder f = find_run_folder(a.id);
  const RunFolderInfo info = read_run_folder_info(f);
  const RunState s = read_run_state(f);
  if (s.state != "running" && s.state != "paused")
    throw Error(
        "run " + info.uid + " is not running (it " + (s.state == "crashed" ? "crashed" : "ended " + s.state) + ")",
        "nothing to control; `tokamak runs follow " + info.uid + "` shows how it ended");
  write_control_command(f.control_dir(), a.command);
  std::fprintf(stderr, "sent %s to run %s (pid %ld)\n", a.command.c_str(), info.uid.c_str(), s.pid);
}

// The run's checkpoints that still exist, from its journal's checkpoint events (checkpoint.keep may have
// deleted older ones), oldest first: what `tokamak remote download` picks from.
void checkpoints(const LiveArgs& a) {
  const RunFolder f = find_run_folder(a.id);
  std::vector<std::pair<int64_t, std::string>> seen;
  std::vector<JournalLine> lines;
  for (uint64_t from = 0, next = 0; !(lines = read_journal(f.journal(), from, &next, 1 << 22)).empty(); from = next)
    for (const JournalLine& l : lines) {
      json j = json::parse(l.text, nullptr, false);
      if (!j.is_object() || j.value("event", "") != "checkpoint") continue;
      const std::string path = j.value("path", "");
      seen.erase(std::remove_if(seen.begin(), seen.end(), [&](const auto& s) { return s.second == path; }),
                 seen.end());  // a resumed run writes a step again
      seen.emplace_back(j.value("step", int64_t{0}), path);
    }
  for (const auto& [step, path] : seen) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    if (ec) continue;
    std::printf("%s\n", json({{"step", step}, {"path", path}, {"bytes", bytes}})
                            .dump(-1, ' ', false, json::error_handler_t::replace)
                            .c_str());
  }
  std::fflush(stdout);
}

}  // namespace

void print_run_folders(bool live_only) {
  for (const RunFolderInfo& r : list_run_folders()) {
    const RunFolder f{r.folder};
    const RunState s = read_run_state(f);
    if (live_only && s.state != "running" && s.state != "paused") continue;
    json j = {{"run_uid", r.uid},     {"name", r.name},   {"folder", r.folder}, {"host", r.host},
              {"created", r.created}, {"state", s.state}, {"pid", s.pid},       {"journal_bytes", s.journal_bytes}};
    if (!s.error.empty()) j["error"] = s.error;
    std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  }
  std::fflush(stdout);
}

void add_run_folder_commands(CLI::App* runs) {
  auto args = std::make_shared<LiveArgs>();
  CLI::App* c = runs->add_subcommand(
      "follow", "Print a run's journal (events.jsonl) from a byte offset and follow it until the run has ended");
  c->add_option("id", args->id, "run uid (or a unique prefix of 4+ characters), or its run folder")->required();
  c->add_option("--from", args->from, "byte offset to start at (default 0: the whole journal)");
  c->add_flag("--control", args->control,
              "read pause/resume/stop/sample lines on stdin and send them to the run (as `runs control` does); "
              "the end of stdin ends only this reader, the run goes on");
  c->callback([args] { follow(*args); });

  c = runs->add_subcommand("control", "Send a command to a running run through its run folder");
  c->add_option("id", args->id, "run uid (or a unique prefix of 4+ characters), or its run folder")->required();
  c->add_option("command", args->command, "pause, resume, stop (checkpoint, then end) or sample (at the next step)")
      ->required();
  c->callback([args] { control(*args); });

  c = runs->add_subcommand("checkpoints", "A run's checkpoints that exist, oldest first (one JSON object per line)");
  c->add_option("id", args->id, "run uid (or a unique prefix of 4+ characters), or its run folder")->required();
  c->callback([args] { checkpoints(*args); });
}

}  // namespace tokamak::cli
