// The sink that tells the person about a run of this process (rank 0) or one it follows: its end, spikes,
// slowdowns, stalls and the target reached. Each kind at most once a minute (a run that keeps spiking is one
// notice, then its failure). Notices leave through a NoticeQueue: the trainer's thread only posts them.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "engine/base/run/events.h"
#include "engine/fleet/notify/notice_queue.h"
#include "engine/fleet/notify/notify.h"

namespace tokamak {

class NotifySink : public EventSink {
 public:
  explicit NotifySink(NotifySettings settings);
  // For tests: the queue's sender and its bound.
  NotifySink(NoticeQueue::Sender send, size_t capacity = NoticeQueue::kCapacity);
  void on_start(const RunStart& e) override;
  void on_eval(const EvalEvent& e) override;
  void on_spike(const SpikeEvent& e) override;
  void on_alert(const AlertEvent& e) override;
  // Posts the end, then waits up to NoticeQueue::kEndWaitS for what is still queued.
  void on_end(const EndEvent& e) override;
  // The last send that failed, or what the end gave up; "" when every notice went.
  std::string last_failure() const { return queue_.last_failure(); }
  const NoticeQueue& queue() const { return queue_; }
  // A follower reading a journal's backlog (events from before it came) takes the run's name from it but sends
  // nothing for it: attaching to a run tells of what happens from then on.
  void set_muted(bool muted) { muted_ = muted; }

 private:
  void send(const std::string& kind, int64_t step, const std::string& title, const std::string& body);
  NoticeQueue queue_;
  std::string uid_, name_;
  std::map<std::string, double> last_sent_;
  bool muted_ = false;
};

}  // namespace tokamak
