// JournalWriter and the journal readers (see journal.h).
#include "engine/base/run/journal.h"

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/base/util/error.h"

namespace tokamak {

namespace {

// Real blocks, not a sparse file: zeros written, so freeing them gives the disk room back. False (and nothing
// left behind) where the folder takes no such file or the disk has no room for it already.
bool make_reserve(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string zeros(JournalWriter::kReserveBytes, '\0');
  size_t done = 0;
  while (done < zeros.size()) {
    const ssize_t n = ::write(fd, zeros.data() + done, zeros.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == zeros.size() && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) ::unlink(path.c_str());
  return ok;
}

}  // namespace

JournalWriter::JournalWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error("cannot open the run journal '" + path + "': " + std::strerror(errno),
                "check that the run folder is writable (or set XDG_DATA_HOME to a writable folder)");
  struct stat st {};
  const bool regular = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  // A segment killed inside a write (SIGKILL can cut a long line, a power cut too) left a fragment: ended here, it
  // is one line readers drop, instead of swallowing this segment's first line (its start) into it.
  if (regular && st.st_size > 0) {
    const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char last = '\n';
    if (in >= 0) {
      if (::pread(in, &last, 1, st.st_size - 1) != 1) last = '\n';
      ::close(in);
    }
    if (last != '\n' && ::write(fd_, "\n", 1) != 1)
      throw Error("cannot end the run journal '" + path + "' (a line an earlier segment left cut): " +
                      std::strerror(errno),
                  "free some space in the run folder's file system and start again");
  }
  if (regular && make_reserve(path + ".reserve")) reserve_ = path + ".reserve";
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!reserve_.empty()) ::unlink(reserve_.c_str());
}

// One whole line or nothing: a partly written line is cut off again (readers take whole lines only).
bool JournalWriter::write_line(const std::string& whole, int* err) {
  struct stat before {};
  const bool sized = ::fstat(fd_, &before) == 0;
  size_t done = 0;
  while (done < whole.size()) {
    ssize_t n = ::write(fd_, whole.data() + done, whole.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = n < 0 ? errno : ENOSPC;  // a write of 0 bytes on a regular file means no room
      if (done > 0 && sized && S_ISREG(before.st_mode)) (void)!::ftruncate(fd_, before.st_size);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool JournalWriter::append(const std::string& line) {
  if (failed()) return false;
  const std::string whole = line + "\n";
  int err = 0;
  if (write_line(whole, &err)) return true;
  const bool full = err == ENOSPC || err == EDQUOT;
  const std::string why = std::string(full ? "the disk is full" : std::strerror(err)) + " (writing " + path_ + ")";
  if (full && !reserve_.empty()) {  // the reserve's room for this line and the run's last words
    ::unlink(reserve_.c_str());
    reserve_.clear();
    disk_full_ = true;
    full_ = why;
    if (write_line(whole, &err)) return true;
  }
  disk_full_ = disk_full_ || full;
  error_ = why;
  return false;
}

std::vector<JournalLine> split_journal(const std::string& bytes, uint64_t from, uint64_t* consumed) {
  std::vector<JournalLine> lines;
  size_t start = 0;
  for (size_t eol; (eol = bytes.find('\n', start)) != std::string::npos; start = eol + 1)
    lines.push_back({bytes.substr(start, eol - start), from + eol + 1});
  *consumed = start;
  return lines;
}

std::vector<JournalLine> read_journal(const std::string& path, uint64_t from, uint64_t* next, uint64_t max_bytes) {
  *next = from;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string bytes(max_bytes, '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::pread(fd, &bytes[got], bytes.size() - got, static_cast<off_t>(from + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  uint64_t consumed = 0;
  auto lines = split_journal(bytes, from, &consumed);
  *next = from + consumed;
  return lines;
}

std::string last_event_line(const std::string& path, const std::string& event) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return "";
  const uint64_t tail = 1 << 16, from = size > tail ? size - tail : 0;
  uint64_t next = 0;
  const std::string mark = "\"event\":\"" + event + "\"";
  std::string found;
  const std::vector<JournalLine> lines = read_journal(path, from, &next, tail);
  for (size_t i = from > 0 ? 1 : 0; i < lines.size(); ++i)  // read from mid-file, the first line is a tail
    if (lines[i].text.find(mark) != std::string::npos) found = lines[i].text;
  return found;
}

}  // namespace tokamak
