// The queue worker's lock on a run store (DB.queue-lock) and the note beside it (DB.queue-lock.pid): who works
// the store's queue, and with which schema. It lives with the store because opening a store asks it: a store
// is not migrated under a worker of an older schema (docs/RELIABILITY.md, "Versions and migrations").
#pragma once
#include <string>

namespace tokamak {

std::string queue_lock_path(const std::string& db);  // db "" = the default store

// An open-file-description lock (F_OFD_SETLK): the kernel drops it when its holder dies, however it dies.
// Returns the locked descriptor, or -1 when another process holds it.
int take_queue_lock(const std::string& db);
// Whether some process holds it now, asked with F_OFD_GETLK (a probing lock would, for an instant, make a
// starting worker believe another one is there).
bool queue_lock_held(const std::string& db);

// The holder's note, written by this build's worker right after it takes the lock: "PID SCHEMA VERSION".
void write_queue_holder(const std::string& db);

struct QueueHolder {
  long pid = 0;          // 0: nobody holds the lock; -1: held, the note not written yet
  int schema = 0;        // the store schema the holder knows; 0 when its note does not say (a build before 0.2)
  std::string version;   // its Tokamak version, "" when not said
};
QueueHolder queue_holder(const std::string& db);

}  // namespace tokamak
