// fetch_hub_dataset (see hub_fetch.h): select, ask for sizes, check the disk, then a few workers each take the
// next file, append to its .part, check it and rename it; the calling thread reports progress.
#include "engine/fleet/hub/hub_fetch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "engine/fleet/hub/hub_files.h"
#include "engine/base/data/shard.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"

namespace tokamak {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

bool is_sha256(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// What the workers share.
struct Shared {
  HubEnv env;
  std::string repo, dir;
  FetchOptions options;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> done{0}, fetched{0};
  std::atomic<int> files_done{0}, refetched{0};
  std::mutex mu;
  std::exception_ptr error;

  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lk(mu);
    if (!error) error = e;
    stop = true;
  }
  // Waits SECONDS unless stopped first; false when stopped.
  bool pause(double seconds) {
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until)
      if (stop) return false;
      else std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return !stop;
  }
};

// Runs FN(client, i) for i in [0, COUNT) on up to options.parallel threads, each with its own connection.
void run_parallel(Shared& s, size_t count, const std::function<void(HttpClient&, size_t)>& fn,
                  const std::function<void()>& while_waiting) {
  std::atomic<size_t> next{0};
  std::atomic<int> running{0};
  std::mutex mu;
  std::condition_variable cv;
  auto work = [&] {
    try {
      HttpClient client(s.env.token);
      for (size_t i; !s.stop && (i = next.fetch_add(1)) < count;) fn(client, i);
    } catch (...) {
      s.fail(std::current_exception());
    }
    std::lock_guard<std::mutex> lk(mu);
    --running;
    cv.notify_all();
  };
  const int n = static_cast<int>(std::min<size_t>(count, static_cast<size_t>(std::max(1, s.options.parallel))));
  std::vector<std::thread> pool;
  running = n;
  for (int t = 0; t < n; ++t) pool.emplace_back(work);
  std::unique_lock<std::mutex> lk(mu);
  bool waiting_failed = false;
  while (running > 0) {
    cv.wait_for(lk, std::chrono::milliseconds(500));
    lk.unlock();
    // The caller's progress may throw; the pool must still be joined before anything leaves (a joinable
    // std::thread destroyed ends the process), so it fails the fetch like a worker would.
    try {
      if (while_waiting && !waiting_failed) while_waiting();
    } catch (...) {
      waiting_failed = true;
      s.fail(std::current_exception());
    }
    lk.lock();
  }
  lk.unlock();
  for (auto& t : pool) t.join();
}

// Asks for FILE's size and checksum (HEAD, redirects followed), retrying transient failures.
void ask_size(Shared& s, HttpClient& client, HubFile& f) {
  const std::string url = hub_file_url(s.env.endpoint, s.repo, f.name);
  double wait = s.options.first_backoff_s;
  for (int attempt = 1;; ++attempt) {
    const HttpResult r = client.head(url);
    if (r.curl_code == 0 && r.status < 300 && r.file_size()) {
      f.size = r.file_size();
      if (f.sha256.empty() && is_sha256(r.linked_etag)) f.sha256 = r.linked_etag;
      return;
    }
    if (r.curl_code == 0 && r.status < 300)
      throw Error("the Hub gave no size for " + f.name + " of dataset " + s.repo + " (" + url + ")",
                  "is HF_ENDPOINT (" + s.env.endpoint + ") a Hugging Face Hub?");
    if (!r.transient() || attempt >= s.options.attempts || !s.pause(wait))
      throw_hub_failure(r, s.env, s.repo, f.name, attempt);
    wait *= 2;
  }
}

// Appends what is missing of F to its .part: one GET from the part's size (a Range request), retried with
// back-off from wherever the part got to. Returns when the part has F's size.
void fill_part(Shared& s, HttpClient& client, const HubFile& f, const std::string& part) {
  const std::string url = hub_file_url(s.env.endpoint, s.repo, f.name);
  double wait = s.options.first_backoff_s;
  for (int attempt = 1;; ++attempt) {
    uint64_t have = size_of(part);
    if (have > f.size) {  // longer than the file: not a prefix of it
      s.done -= have;
      ::truncate(part.c_str(), 0), have = 0;
    }
    if (have == f.size) return;
    const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("cannot write " + part + ": " + std::strerror(errno), "choose a folder you can write to");
    ::lseek(fd, static_cast<off_t>(have), SEEK_SET);
    int write_errno = 0;
    uint64_t at = have;     // where the next byte goes
    bool past_end = false;  // the server sent more than the file's size
    const auto on_start = [&](const HttpResult& r) {
      if (r.status == 206 && r.range_start == have) return true;
      if (r.status != 200) return false;
      // The server sent the whole file (it ignored the Range): start the part again.
      if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0) return write_errno = errno, false;
      s.done -= have, have = 0, at = 0;
      return true;
    };
    const auto on_data = [&](const char* data, size_t n) {
      // Bytes past the size the Hub announced are never written: a body that does not end would fill the disk.
      // The part is cut there and its check (size, header, sha256) decides.
      if (n > f.size - at) n = static_cast<size_t>(f.size - at), past_end = true;
      at += n;
      while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return write_errno = w < 0 ? errno : ENOSPC, false;
        data += w, n -= static_cast<size_t>(w);
        s.done += static_cast<uint64_t>(w), s.fetched += static_cast<uint64_t>(w);
      }
      return !past_end;
    };
    const HttpResult r = client.get(url, have, on_start, on_data, [&] { return !s.stop.load(); });
    ::close(fd);
    if (write_errno == ENOSPC || write_errno == EDQUOT)
      throw Error("the disk is full in " + s.dir + " (writing ." + f.name + ".part at " +
                      std::to_string(size_of(part)) + " of " + std::to_string(f.size) + " bytes)",
                  "the .part files are kept: free some space and run the same command again to resume");
    if (write_errno) throw Error("cannot write " + part + ": " + std::strerror(write_errno), "check the folder");
    if (s.stop || past_end) return;
    if (r.status == 416) {  // the part is not a prefix the server can continue: start it again
      s.done -= size_of(part);
      ::truncate(part.c_str(), 0);
      continue;
    }
    if (r.curl_code == 0 && size_of(part) == f.size) return;
    const bool again = r.curl_code != 0 ? r.transient() || r.curl_code == 23 /* refused start */ : true;
    if (!again || attempt >= s.options.attempts || !s.pause(wait)) {
      if (r.curl_code == 0 || r.status < 400)
        throw Error(f.name + " of dataset " + s.repo + " came short: " + std::to_string(size_of(part)) + " of " +
                        std::to_string(f.size) + " bytes after " + std::to_string(attempt) + " tries",
                    "run the same command again to resume");
      throw_hub_failure(r, s.env, s.repo, f.name, attempt);
    }
    wait *= 2;
  }
}

// Fills F's .part, checks it and renames it into place; a resumed part that fails comes once more from 0.
void fetch_file(Shared& s, HttpClient& client, HubFile f) {
  const std::string part = s.dir + "/." + f.name + ".part", final_path = s.dir + "/" + f.name;
  for (bool resumed = size_of(part) > 0;; resumed = false) {
    fill_part(s, client, f, part);
    if (s.stop) return;
    const std::string problem = hub_file_problem(part, f);
    if (problem.empty()) break;
    s.done -= size_of(part);
    ::unlink(part.c_str());
    if (!resumed)
      throw Error(f.name + " of dataset " + s.repo + " failed its check: " + problem + "; nothing was kept",
                  "the file at " + s.env.endpoint +
                      " is damaged or not an llm.c shard: try again later, or tell "
                      "the dataset's owner");
    ++s.refetched;
  }
  const int fd = ::open(part.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::fsync(fd), ::close(fd);
  if (::rename(part.c_str(), final_path.c_str()) != 0)
    throw Error("cannot rename " + part + " to " + f.name + ": " + std::strerror(errno), "check the folder");
  const int dfd = ::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) ::fsync(dfd), ::close(dfd);
  ++s.files_done;
}

void check_disk(const Shared& s, uint64_t need, size_t files) {
  struct statvfs fs {};
  if (need == 0 || ::statvfs(s.dir.c_str(), &fs) != 0) return;
  const uint64_t free = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free < need)
    throw Error("not enough disk space in " + s.dir + ": " + std::to_string(files) + " files need " +
                    format_bytes(need) + " more, " + format_bytes(free) + " is free",
                "free some space, fetch fewer shards (--shards N), or point XDG_DATA_HOME at a larger disk");
}

}  // namespace

std::string hub_dataset_dir(const std::string& name) { return data_dir() + "/datasets/" + name; }

namespace {

// A dataset folder says whose files it holds (kHubRepoMarker: "OWNER/REPO"), so one that holds another repo's —
// moved there by hand, or made before folders were named by owner — is refused before its files are counted as
// already here. A folder without the marker takes it at its first get.
void check_holder(const std::string& dir, const std::string& repo) {
  const std::string marker = dir + "/" + kHubRepoMarker;
  if (!path_exists(marker)) return;
  std::string holder = read_file(marker);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  if (holder != repo)
    throw Error(dir + " holds the files of " + holder + ", not of " + repo,
                "move that folder away (or get " + holder + " into it) and run the same command again");
}

}  // namespace

FetchResult fetch_hub_dataset(const HubSelection& selection, const FetchOptions& options) {
  Shared s;
  s.env = hub_env();
  s.repo = selection.repo, s.options = options;
  s.dir = hub_dataset_dir(selection.name);
  check_holder(s.dir, selection.repo);
  std::vector<HubFile> files;
  {
    HttpClient lister(s.env.token);
    files = select_hub_files(selection, s.env, lister, s.dir);
  }
  FetchResult out;
  out.name = selection.name, out.repo = selection.repo, out.dir = s.dir;
  std::vector<HubFile> missing;
  for (const HubFile& f : files) {
    out.files.push_back(f.name);
    if (path_exists(s.dir + "/" + f.name)) ++out.already_here, s.done += size_of(s.dir + "/" + f.name);
    else missing.push_back(f);
  }
  if (!missing.empty() && s.env.offline)
    throw Error("HF_HUB_OFFLINE is set and " + std::to_string(missing.size()) + " of " + std::to_string(files.size()) +
                    " files of " + selection.name + " are not in " + s.dir + " (" + missing.front().name + " first)",
                "unset HF_HUB_OFFLINE to download them");

  FetchProgress p;
  p.dataset = selection.name, p.files = static_cast<int>(files.size());
  const auto started = Clock::now();
  bool cancelled = false;
  const auto report = [&] {
    p.done = s.done, p.fetched = s.fetched, p.files_done = out.already_here + s.files_done;
    p.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    if (options.progress && !options.progress(p) && !s.stop) cancelled = true, s.stop = true;
  };
  // Sizes first (HEAD; a listing may have given them), so the disk is checked before the first byte.
  std::vector<size_t> unsized;
  for (size_t i = 0; i < missing.size(); ++i)
    if (missing[i].size == 0) unsized.push_back(i);
  run_parallel(
      s, unsized.size(), [&](HttpClient& c, size_t k) { ask_size(s, c, missing[unsized[k]]); }, report);
  if (s.error) std::rethrow_exception(s.error);
  uint64_t need = 0;
  for (const HubFile& f : missing) {
    const uint64_t have = std::min(size_of(s.dir + "/." + f.name + ".part"), f.size);
    out.resumed_from += have, s.done += have, need += f.size - have;
  }
  for (const HubFile& f : missing) p.total += f.size;
  p.total += s.done - out.resumed_from;  // the files already in place
  make_dirs(s.dir);                      // only now: a refused request leaves no empty dataset folder behind
  if (!path_exists(s.dir + "/" + kHubRepoMarker))
    write_file_atomically(s.dir + "/" + kHubRepoMarker, selection.repo + "\n");
  if (!cancelled) check_disk(s, need, missing.size());
  run_parallel(
      s, missing.size(), [&](HttpClient& c, size_t i) { fetch_file(s, c, missing[i]); }, report);
  if (s.error) std::rethrow_exception(s.error);
  if (cancelled)
    throw Error("the download of " + selection.name + " was cancelled",
                "the .part files are kept: run the same command again to resume");
  report();
  for (const std::string& name : out.files) {
    const std::string path = s.dir + "/" + name;
    out.bytes += size_of(path);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0) out.tokens += shard_token_count(path);
  }
  out.fetched = s.fetched, out.refetched = s.refetched;
  return out;
}

}  // namespace tokamak
