// Notices leave on a thread of their own. A webhook that never answers, or a desktop bus that hangs, must cost a
// run nothing: the trainer (or the queue's worker) posts a notice and goes on, and the time a send takes is never
// part of a step. The queue is bounded, and a notice that waited too long is dropped: the person hears of what is
// happening now, not of a backlog.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "engine/fleet/notify/notify.h"

namespace tokamak {

class NoticeQueue {
 public:
  // SEND delivers one notice and returns "" or why it failed; it may watch `aborted()` to give up early. The
  // default sends as SETTINGS say (send_notice).
  using Sender = std::function<std::string(const Notice&, const std::atomic<bool>& aborted)>;
  static constexpr size_t kCapacity = 16;
  static constexpr double kMaxAgeS = 120;  // a notice older than this when its turn comes is dropped
  static constexpr double kEndWaitS = 5;   // how long a run's end waits for what is still queued

  explicit NoticeQueue(NotifySettings settings);
  NoticeQueue(Sender send, size_t capacity = kCapacity, double max_age_s = kMaxAgeS);
  ~NoticeQueue();  // as finish(0)
  NoticeQueue(const NoticeQueue&) = delete;
  NoticeQueue& operator=(const NoticeQueue&) = delete;

  // Never waits for a send. False (and the notice is counted as dropped) when the queue is full or finished.
  bool post(const Notice& n);
  // Waits up to WAIT_S for every posted notice to be sent; what is left then is abandoned (a send in flight is
  // aborted) and said in last_failure(). The thread has ended when this returns; later posts are refused. Returns
  // how many were given up (0 when all were sent, or finish was called before).
  size_t finish(double wait_s = kEndWaitS);
  size_t pending() const;   // queued plus the one being sent
  size_t sent() const;      // delivered, or tried and failed: every notice the thread took
  size_t dropped() const;   // refused by a full queue, too old, or abandoned at the end
  std::string last_failure() const;

 private:
  struct Item {
    Notice notice;
    double posted_s;
  };
  void loop();
  Sender send_;
  size_t capacity_;
  double max_age_s_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> items_;
  bool busy_ = false, stopping_ = false;
  size_t sent_ = 0, dropped_ = 0;
  std::string failure_;
  std::atomic<bool> abort_{false};
  std::thread thread_;
};

}  // namespace tokamak
