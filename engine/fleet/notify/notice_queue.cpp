// See notice_queue.h.
#include "engine/fleet/notify/notice_queue.h"

#include <chrono>

namespace tokamak {
namespace {

double queue_clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

NoticeQueue::NoticeQueue(NotifySettings settings)
    : NoticeQueue([s = std::move(settings)](const Notice& n, const std::atomic<bool>& aborted) {
        return send_notice(s, n, &aborted);
      }) {}

NoticeQueue::NoticeQueue(Sender send, size_t capacity, double max_age_s)
    : send_(std::move(send)), capacity_(capacity), max_age_s_(max_age_s) {
  thread_ = std::thread([this] { loop(); });
}

NoticeQueue::~NoticeQueue() { finish(0); }

bool NoticeQueue::post(const Notice& n) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || items_.size() >= capacity_) {
    ++dropped_;
    return false;
  }
  items_.push_back({n, queue_clock_s()});
  changed_.notify_all();
  return true;
}

void NoticeQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !items_.empty(); });
    if (items_.empty() || abort_) break;
    Item item = std::move(items_.front());
    items_.pop_front();
    if (queue_clock_s() - item.posted_s > max_age_s_) {
      ++dropped_;
      continue;
    }
    busy_ = true;
    lock.unlock();
    std::string why;
    try {
      why = send_(item.notice, abort_);
    } catch (const std::exception& e) {  // a sender never ends the run, nor this thread
      why = e.what();
    } catch (...) {
      why = "an unknown error";
    }
    lock.lock();
    busy_ = false;
    ++sent_;
    if (!why.empty() && !abort_) failure_ = why;  // an aborted send is in what finish() said it gave up
    changed_.notify_all();
  }
}

size_t NoticeQueue::finish(double wait_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!thread_.joinable()) return 0;
  stopping_ = true;
  changed_.notify_all();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  changed_.wait_until(lock, deadline, [&] { return items_.empty() && !busy_; });
  const size_t left = items_.size() + (busy_ ? 1 : 0);
  if (left > 0) {
    abort_ = true;
    dropped_ += items_.size();
    items_.clear();
    failure_ = std::to_string(left) + (left == 1 ? " notice was" : " notices were") +
               " still being sent when the run ended and " + (left == 1 ? "was" : "were") + " given up" +
               (failure_.empty() ? "" : " (before: " + failure_ + ")");
    changed_.notify_all();
  }
  lock.unlock();
  thread_.join();  // a send in flight sees abort_ within a second (libcurl's progress callback, gdbus's limit)
  return left;
}

size_t NoticeQueue::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return items_.size() + (busy_ ? 1 : 0);
}

size_t NoticeQueue::sent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sent_;
}

size_t NoticeQueue::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

std::string NoticeQueue::last_failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

}  // namespace tokamak
