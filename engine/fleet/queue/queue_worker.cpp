// The queue worker (see queue_worker.h). Single-threaded on purpose: it forks its runs (run_launch.h).
#include "engine/fleet/queue/queue_worker.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "engine/fleet/queue/sweep.h"
#include "engine/fleet/queue/gpu_slots.h"
#include "engine/base/config/config.h"
#include "engine/base/run/journal.h"
#include "engine/fleet/notify/notice_queue.h"
#include "engine/fleet/notify/notify.h"
#include "engine/base/run/pace_watch.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/run/run_identity.h"
#include "engine/base/run/run_launch.h"
#include "engine/fleet/queue/sweep_settle.h"
#include "engine/fleet/queue/sweep_store.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/store/queue_lock.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

extern char** environ;

namespace tokamak {
namespace {

std::string store_path_of(const std::string& db) { return db.empty() ? default_db_path() : db; }

StoreOptions worker_store_options() {
  StoreOptions s;
  s.queue_worker = true;
  return s;
}

class Worker {
 public:
  explicit Worker(const QueueWorkerOptions& o)
      : o_(o), store_(o.db, RunStore::Mode::create, worker_store_options()), queue_(store_), sweeps_(store_),
        engine_(o.engine.empty() ? engine_beside_self() : o.engine) {}
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  // A notice still out when the worker ends (a webhook that hangs) is given up; the log is the only place a
  // detached worker can say so.
  ~Worker() {
    if (notices_.finish() > 0) note("a notification was not sent: " + notices_.last_failure());
  }

  // A worker killed between recording a trial's rung and deciding on it left nothing half-done (the decision is
  // one transaction) but may have left it undecided: decide now, for every sweep.
  void catch_up() {
    for (int64_t id : sweeps_.sweep_ids()) promote(id);
  }

  // One pass: reap, settle ended runs, start what may start. False when there is nothing left to do.
  bool tick() {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {}  // our runs' zombies would look alive (run_folder.h)
    bool going = false;
    for (const QueueItem& q : local_running()) going = settle(q) || going;
    if (queue_.paused()) return going;
    auto running = static_cast<int64_t>(local_running().size());
    while (running < queue_.parallel()) {
      std::optional<QueueItem> next = queue_.next_queued();
      if (!next) break;
      const GpuChoice gpus = gpus_for(*next);
      if (gpus.refused) continue;  // its row failed, with why
      if (!gpus.free) break;       // it waits, in its turn, until a run ends and gives its GPUs back
      start(*next, gpus.gpus);
      ++running, going = true;
    }
    return going || queue_.next_queued().has_value();
  }

  // Why this worker must leave the queue alone: the store is newer than it knows (opened read-only, or
  // migrated since by a newer program), so its rows may name keys it cannot read. "" when it may work it.
  std::string superseded() {
    if (!store_.read_only_note().empty()) return store_.read_only_note();
    const int now = store_.schema_on_disk();
    if (now > kSchemaVersion)
      return "a newer Tokamak upgraded it to schema " + std::to_string(now) + " (this is " + TOKAMAK_VERSION +
             ", schema " + std::to_string(kSchemaVersion) + ")";
    return "";
  }

  bool has_work() { return !local_running().empty() || (!queue_.paused() && queue_.next_queued()); }

 private:
  // Rows a scheduler runs (a sweep on Slurm) are the scheduler's: this worker neither starts nor settles them.
  std::vector<QueueItem> local_running() {
    std::vector<QueueItem> mine;
    for (QueueItem& q : queue_.in_state("running"))
      if (q.target == "local") mine.push_back(std::move(q));
    return mine;
  }

  void note(const std::string& s) {
    if (o_.note) o_.note(s);
  }

  // The GPUs a row gets (gpu_slots.h): none needed or none to hand out (gpus empty), none free yet (!free), or
  // more than the pool holds (refused: the row is failed here, it could never start).
  struct GpuChoice {
    std::vector<std::string> gpus;
    bool free = true, refused = false;
  };
  GpuChoice gpus_for(const QueueItem& q) {
    GpuChoice choice;
    int64_t need = 0;
    try {
      need = gpus_needed(config_from_json(q.config_json), queue_.gpus_per_run());
    } catch (const std::exception&) {
      return choice;  // a config this version refuses fails at launch, with its own line
    }
    const std::vector<std::string> pool = gpu_pool(queue_.gpus(), gpus_here(), std::getenv("CUDA_VISIBLE_DEVICES"));
    if (need == 0 || pool.empty()) return choice;  // no GPU here: the run says so itself
    if (need > static_cast<int64_t>(pool.size())) {
      const std::string why = "needs " + std::to_string(need) + " GPUs of its own; the queue hands out " +
                              std::to_string(pool.size()) + " (" + join_gpu_list(pool) +
                              "): set dist.gpus lower, or `tokamak queue work --gpus-per-run 0` to share them";
      queue_.finish(q.id, "failed", why, now_seconds(), q.state);
      note("queue item " + std::to_string(q.id) + " (" + q.name + ") " + why);
      choice.refused = true;
      return choice;
    }
    std::vector<std::vector<std::string>> held;
    for (const QueueItem& r : local_running())
      if (const std::string g = recorded_gpus(RunFolder{r.folder}.gpus_file()); r.id != q.id && !g.empty())
        held.push_back(parse_gpu_list(g));
    const std::optional<std::vector<std::string>> picked = pick_gpus(pool, held, need);
    if (picked) choice.gpus = *picked;
    else choice.free = false;
    return choice;
  }

  // A running row: still going (true), or ended and recorded (false).
  bool settle(const QueueItem& q) {
    const RunFolder f{q.folder};
    if (!path_exists(f.pid_file())) {  // claimed by a worker that died before its run started
      note("queue item " + std::to_string(q.id) + " was claimed but never started: starting it");
      // Its GPUs, when its folder already records them; else as a row of its turn gets them.
      const std::string recorded = recorded_gpus(f.gpus_file());
      GpuChoice gpus{recorded.empty() ? std::vector<std::string>{} : parse_gpu_list(recorded)};
      if (recorded.empty()) gpus = gpus_for(q);
      if (gpus.refused) return false;
      launch(q, gpus.gpus);
      return true;
    }
    // Killed for a stall: once its process is gone the row is queued again, never settled as the crash it looks like.
    if (const auto w = watches_.find(q.id); w != watches_.end() && w->second.killed) {
      end_and_requeue(q, w->second.requeue_minutes, w->second.killed_step);
      return true;
    }
    // Killed by a worker that ended before the process did (restarted, killed itself): this one finishes the work.
    // The mark names the segment's pid, so a mark left beside a later segment is not read as that one's.
    if (path_exists(f.queue_kill_file())) {
      try {
        const nlohmann::json mark = nlohmann::json::parse(read_file(f.queue_kill_file()));
        if (mark.value("pid", 0L) == read_pid(f)) {
          Watch& w = watches_[q.id];
          w.killed = true, w.requeue_minutes = mark.value("minutes", 0.0), w.killed_step = mark.value("step", 0L);
          note("queue item " + std::to_string(q.id) + " (" + q.name +
               ") was ended by an earlier worker: queued again once its process is gone");
          end_and_requeue(q, w.requeue_minutes, w.killed_step);
          return true;
        }
      } catch (const std::exception&) {}  // unreadable: settled as any other ended run
    }
    std::string what;
    if (!settle_ended_run(queue_, sweeps_, q, &what)) {
      watch_for_stall(q);
      return true;
    }
    watches_.erase(q.id);
    note("queue item " + std::to_string(q.id) + " (" + q.name + ") " + what);
    if (q.sweep_id > 0) promote(q.sweep_id);
    return false;
  }

  void promote(int64_t sweep_id) {
    for (const Promotion& p : sweeps_.promotions(sweep_id))
      note("queue item " + std::to_string(p.queue_id) + " promoted to rung " + std::to_string(p.rung) +
           (p.halt_step > 0 ? " (to step " + std::to_string(p.halt_step) + ")" : " (to the end)"));
  }

  void start(const QueueItem& queued, const std::vector<std::string>& gpus) {
    QueueItem q = queued;
    if (!q.folder.empty()) {  // a promoted trial: this segment's pid and exit are its own
      ::unlink(RunFolder{q.folder}.pid_file().c_str());
      ::unlink(RunFolder{q.folder}.exit_file().c_str());
    }
    if (q.folder.empty()) {  // named as every run is (a queued resume takes its checkpoint's uid)
      Config named = config_from_json(q.config_json);
      named.name = q.name;
      const RunIdentity id = identify_run(named, q.run_uid);
      q.run_uid = id.uid, q.folder = id.folder.path;
    }
    queue_.claim(q.id, q.run_uid, q.folder, now_seconds());
    note("queue item " + std::to_string(q.id) + " (" + q.name + "): run " + q.run_uid +
         (gpus.empty() ? "" : " on GPU " + join_gpu_list(gpus)) + cpu_sharing_note(q));
    launch(q, gpus);
  }

  // Runs on the CPU beside other CPU runs of the queue (`queue set --parallel` above 1) split the cores between
  // them (engine/base/util/core_sharing.h): said when one starts so.
  std::string cpu_sharing_note(const QueueItem& q) {
    const auto on_cpu = [](const QueueItem& item) {
      try {
        return config_from_json(item.config_json).device == "cpu";
      } catch (const std::exception&) {
        return false;
      }
    };
    if (!on_cpu(q)) return "";
    int others = 0;
    for (const QueueItem& r : local_running()) others += r.id != q.id && on_cpu(r);
    if (others == 0) return "";
    return "; it shares the CPU with " + std::to_string(others) + " other run" + (others == 1 ? "" : "s") +
           " of the queue, each training with its share of the cores while they run";
  }

  // Writes the folder and the config this segment trains with, then starts it. Idempotent until the pid file.
  // What cannot start (a config this version refuses, a folder that cannot be written) fails its row only.
  void launch(const QueueItem& q, const std::vector<std::string>& gpus) {
    try {
      launch_or_throw(q, gpus);
    } catch (const std::exception& e) {
      queue_.finish(q.id, "failed", e.what(), now_seconds());
      note("queue item " + std::to_string(q.id) + " (" + q.name + ") could not start: " + e.what());
    }
  }

  void launch_or_throw(const QueueItem& q, const std::vector<std::string>& gpus) {
    const RunFolder f{q.folder};
    Config c = config_from_json(q.config_json);
    c.name = q.name;
    c.checkpoint.resume = q.resume;
    if (q.sweep_id > 0) c.checkpoint.dir = trial_checkpoint_dir(c.checkpoint.dir, q.folder);
    std::vector<std::string> args = {"--db", store_.path()};
    if (q.halt_step > 0) args.insert(args.end(), {"--halt-at-step", std::to_string(q.halt_step)});
    // The GPUs it gets are recorded before it starts: a worker that starts after this one's death knows
    // which GPUs are held without asking the run.
    std::vector<std::string> env;
    if (gpus.empty()) {
      ::unlink(f.gpus_file().c_str());  // a promoted trial's earlier segment may have had some
    } else {
      write_file_atomically(f.gpus_file(), join_gpu_list(gpus) + "\n");
      env.push_back("CUDA_VISIBLE_DEVICES=" + join_gpu_list(gpus));
    }
    start_run_detached(engine_, f, q.run_uid, q.name, config_to_json(c, 2), args, env);  // writes the pid file
  }

  // A running row's journal, read on from where the last look ended, for a stall (engine/base/run/pace_watch.h).
  struct Watch {
    JournalStallWatch stall;
    uint64_t offset = 0;
    double stalled_since = -1;
    bool killed = false;  // SIGKILL sent; the row is queued again only once the process is gone
    double requeue_minutes = 0;
    int64_t killed_step = 0;  // the last step it took
  };
  std::map<int64_t, Watch> watches_;
  static constexpr int kMaxRequeues = 3;  // counted in the queue row (QueueItem::requeues), across workers

  void watch_for_stall(const QueueItem& q) {
    Watch& w = watches_[q.id];
    const RunFolder f{q.folder};
    const double now = now_seconds();
    uint64_t next = w.offset;
    for (const JournalLine& l : read_journal(f.journal(), w.offset, &next))
      if (w.stall.line(l.text, now) && w.stalled_since >= 0) {
        note("queue item " + std::to_string(q.id) + " (" + q.name + ") steps again");
        w.stalled_since = -1;
      }
    w.offset = next;
    if (const auto said = w.stall.idle(now, [&] { return read_run_state(f).state == "paused"; })) {
      w.stalled_since = now;
      const std::string message = nlohmann::json::parse(*said).value("message", "");
      note("queue item " + std::to_string(q.id) + " (" + q.name + ") stalled: " + message);
      // The run's own process cannot tell the person (it is the one stopped): the worker does, from a thread of
      // its own, so that a webhook that hangs holds up no other row.
      if (!notices_.post({"stalled", q.name + ": stalled", message, q.run_uid, q.name, w.stall.last_step()}))
        note("a notification was not sent: too many are waiting to be sent");
    }
    if (w.stalled_since < 0) return;
    double minutes = 0;
    try {
      minutes = config_from_json(q.config_json).health.stall_requeue_minutes;
    } catch (const std::exception&) {
    }
    if (minutes > 0 && now - w.stalled_since >= 60 * minutes) end_and_requeue(q, minutes, w.stall.last_step());
  }

  bool alive(const RunFolder& f) { return o_.process_alive ? o_.process_alive(f.path) : run_process_alive(f); }

  // A run stalled past health.stall_requeue_minutes: its process is killed (a stopped or hung one takes no gentler
  // word) and its row queued again at the front, to resume from its newest checkpoint as the same run.
  void end_and_requeue(const QueueItem& q, double minutes, int64_t step) {
    const RunFolder f{q.folder};
    Watch& w = watches_[q.id];
    if (!w.killed) {
      w.killed = true, w.requeue_minutes = minutes, w.killed_step = step;
      if (const long pid = read_pid(f); pid > 0) {
        write_file_atomically(f.queue_kill_file(), nlohmann::json({{"pid", pid}, {"minutes", minutes}, {"step", step}}).dump());
        ::kill(static_cast<pid_t>(-pid), SIGKILL);  // its session's group: a launcher's ranks too
        ::kill(static_cast<pid_t>(pid), SIGKILL);
      }
      for (int i = 0; i < 200 && alive(f); ++i) {
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {}
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      // A process in uninterruptible sleep (a hung driver, NFS) outlives SIGKILL and still holds its GPU: a second
      // segment beside it would be two processes training one run. It is looked at again at the next ticks.
      if (alive(f))
        note("queue item " + std::to_string(q.id) + " (" + q.name + "): its process (pid " +
             std::to_string(read_pid(f)) + ") is still alive after SIGKILL: not queued again until it has ended");
    }
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {}
    if (alive(f)) return;
    watches_.erase(q.id);
    std::remove(f.queue_kill_file().c_str());  // done here: the next segment starts with no mark
    char stalled[96];
    std::snprintf(stalled, sizeof stalled, "stalled %g min after step %lld", minutes, static_cast<long long>(step));
    // Its process wrote no end: the store hears it here, or the next segment is refused as a live run's twin.
    if (const int64_t run = store_.find_uid(q.run_uid); run > 0)
      store_.end_run(run, "crashed", std::string(stalled) + ": ended by the queue's worker", now_seconds());
    if (q.requeues + 1 > kMaxRequeues) {
      const std::string why = std::string(stalled) + ", the " + std::to_string(kMaxRequeues + 1) +
                              "th time: ended (health.stall_requeue_minutes queues a run again at most " +
                              std::to_string(kMaxRequeues) + " times)";
      queue_.finish(q.id, "failed", why, now_seconds());
      note("queue item " + std::to_string(q.id) + " (" + q.name + ") " + why);
      return;
    }
    std::string resume = read_segment_end(f).checkpoint;
    if (!resume.empty() && !path_exists(resume)) resume.clear();
    const std::string why = std::string(stalled) + ": ended and queued again (" + std::to_string(q.requeues + 1) +
                            " of " + std::to_string(kMaxRequeues) + "), " +
                            (resume.empty() ? "from the start (no checkpoint yet)" : "to resume from " + resume);
    if (queue_.requeue(q.id, resume, why)) note("queue item " + std::to_string(q.id) + " (" + q.name + ") " + why);
  }

  QueueWorkerOptions o_;
  // The settings are read for each notice: the studio may change them while the worker runs.
  NoticeQueue notices_{[this](const Notice& n, const std::atomic<bool>& aborted) {
    std::string why;
    try {
      why = send_notice(read_notify_settings(), n, &aborted);
    } catch (const std::exception& e) {
      why = std::string("no notifications: ") + e.what();
    }
    if (!why.empty() && !aborted) note("a notification was not sent: " + why);  // given up: said once, at the end
    return why;
  }};
  RunStore store_;
  RunQueue queue_;
  SweepStore sweeps_;
  std::string engine_;
};

}  // namespace

bool work_queue(const QueueWorkerOptions& o) {
  int lock = take_queue_lock(o.db);
  if (lock < 0) return false;
  // The note first: a newer program opening the store meanwhile learns this worker's schema from it, and
  // leaves the store as it is while this one works it (queue_lock.h).
  write_queue_holder(o.db);
  Worker w(o);
  // A store a newer program owns: its queue is the newer worker's to work, and this one ends at once.
  const auto leave_if_superseded = [&] {
    const std::string why = w.superseded();
    if (!why.empty() && o.note) o.note("this worker leaves the queue of " + store_path_of(o.db) + " to a newer one: " + why);
    return !why.empty();
  };
  if (leave_if_superseded()) return ::close(lock), true;
  // A pass that throws (the store locked past its busy timeout by a big import, a full disk) is tried again
  // after a back-off, 1 s doubling up to 60 s: a worker that ended on it left the queue with work and no worker
  // until the next `queue add`. Said once when it starts failing, once when it works again.
  double backoff_s = 0;
  const auto pass = [&](const std::function<bool()>& fn) {
    for (;;) {
      try {
        const bool more = fn();
        if (backoff_s > 0 && o.note) o.note("the queue works again");
        backoff_s = 0;
        return more;
      } catch (const std::exception& e) {
        if (backoff_s == 0 && o.note)
          o.note(std::string("the queue cannot go on for now: ") + e.what() +
                 "; trying again, up to a minute apart, until it can");
        backoff_s = backoff_s == 0 ? 1 : std::min(60.0, 2 * backoff_s);
        std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
      }
    }
  };
  pass([&] { return w.catch_up(), true; });
  for (;;) {
    pass([&] { return write_queue_holder(o.db), true; });
    while (pass([&] { return w.tick(); })) {
      if (pass([&] { return leave_if_superseded(); })) return ::close(lock), true;
      if (o.should_leave && o.should_leave()) return ::close(lock), true;
      std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_s));
    }
    // Let go first, then look once more: a `queue add` or `resume` writes first, then looks for a worker, so
    // one of the two sees the other and the queue is never left with work and no worker.
    ::close(lock);
    if (!pass([&] { return w.has_work(); })) return true;
    if ((lock = take_queue_lock(o.db)) < 0) return true;  // another worker took over
  }
}

long queue_worker_pid(const std::string& db) { return queue_holder(db).pid; }

void ensure_queue_worker(const std::string& db) {
  if (queue_worker_pid(db) != 0) return;
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw Error("cannot find this program to start the queue worker", "run `tokamak queue work` yourself");
  const std::string store = db.empty() ? default_db_path() : db, log = data_dir() + "/queue-worker.log";
  std::vector<std::string> args = {self, "queue", "work", "--db", store};
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot start the queue worker: ") + std::strerror(errno), "");
  if (pid == 0) {
    // A grandchild in its own session: the worker outlives this command and is nobody's zombie.
    if (::fork() != 0) ::_exit(0);
    ::setsid();
    int in = ::open("/dev/null", O_RDONLY), out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in >= 0) ::dup2(in, 0);
    // O_CREAT's mode is for a new file only: an older version's log may be 0644, and it may name webhooks.
    if (out >= 0) ::fchmod(out, 0600), ::dup2(out, 1), ::dup2(out, 2);
    ::execve(self.c_str(), argp.data(), environ);
    ::_exit(127);
  }
  ::waitpid(pid, nullptr, 0);
}

}  // namespace tokamak
