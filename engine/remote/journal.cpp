// JournalWriter and the journal readers (see journal.h).
#include "engine/remote/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/util/error.h"

namespace tokamak {

JournalWriter::JournalWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error("cannot open the run journal '" + path + "': " + std::strerror(errno),
                "check that the run folder is writable (or set XDG_DATA_HOME to a writable folder)");
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

bool JournalWriter::append(const std::string& line) {
  if (failed()) return false;
  std::string whole = line + "\n";
  struct stat before {};
  const bool sized = ::fstat(fd_, &before) == 0;
  size_t done = 0;
  while (done < whole.size()) {
    ssize_t n = ::write(fd_, whole.data() + done, whole.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;  // a write of 0 bytes on a regular file means no room
      disk_full_ = err == ENOSPC || err == EDQUOT;
      error_ = std::string(disk_full_ ? "the disk is full" : std::strerror(err)) + " (writing " + path_ + ")";
      // Readers take whole lines only; cut a partial one off so the journal stays readable to its end.
      if (done > 0 && sized && S_ISREG(before.st_mode)) (void)!::ftruncate(fd_, before.st_size);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
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

}  // namespace tokamak
