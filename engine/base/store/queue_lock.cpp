#include "engine/base/store/queue_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/version.h"

namespace tokamak {
namespace {

struct flock whole_file(short type) {
  struct flock l {};
  l.l_type = type, l.l_whence = SEEK_SET, l.l_start = 0, l.l_len = 0;
  return l;
}

int open_lock(const std::string& db) {
  const int fd = ::open(queue_lock_path(db).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot open the queue lock " + queue_lock_path(db) + ": " + std::strerror(errno), "");
  return fd;
}

}  // namespace

std::string queue_lock_path(const std::string& db) { return (db.empty() ? default_db_path() : db) + ".queue-lock"; }

int take_queue_lock(const std::string& db) {
  const int fd = open_lock(db);
  struct flock l = whole_file(F_WRLCK);
  if (::fcntl(fd, F_OFD_SETLK, &l) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool queue_lock_held(const std::string& db) {
  // No file, no holder: a worker makes the file before it locks it. Read-only is enough to ask, so a store in a
  // folder this user cannot write is asked too.
  const int fd = ::open(queue_lock_path(db).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock l = whole_file(F_WRLCK);
  const bool held = ::fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

void write_queue_holder(const std::string& db) {
  write_file_atomically(queue_lock_path(db) + ".pid", std::to_string(::getpid()) + " " +
                                                          std::to_string(kFormats.store_schema) + " " +
                                                          TOKAMAK_VERSION + "\n");
}

QueueHolder queue_holder(const std::string& db) {
  QueueHolder h;
  if (!queue_lock_held(db)) return h;
  h.pid = -1;
  std::string text;
  try {
    text = read_file(queue_lock_path(db) + ".pid");
  } catch (const std::exception&) {
    return h;
  }
  std::istringstream in(text);
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return h;
  h.pid = pid;
  in >> h.schema >> h.version;  // a note of an older build holds the pid alone: schema stays 0
  return h;
}

}  // namespace tokamak
