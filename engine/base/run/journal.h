// The run journal (events.jsonl): every event a run emits, one whole JSON line each, exactly as `--json`
// prints them. It is the contract between a run and whoever watches it (docs/ARCHITECTURE.md, "Run
// folders"): the writer appends and never waits on a reader; readers read from a byte offset and take only
// whole lines, so a line being written is never half-read and reading a stretch again is recognisable by
// its offsets.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

// Appends lines with O_APPEND, one write() per line: no buffer to flush, no pipe that someone must drain, so
// a run that nobody watches trains at full speed. Not thread-safe (the trainer's sink calls it on one thread).
class JournalWriter {
 public:
  // Opens (creating) PATH for appending; throws an Error naming the file when it cannot.
  explicit JournalWriter(const std::string& path);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Appends LINE and a newline. Returns false once a write has failed (ENOSPC with no reserve left, or any
  // other error); a partly written line is cut off again, so the journal keeps only whole lines, and every
  // later append is refused at once. error() says why.
  //
  // A full disk is met first with a reserve: the writer keeps kReserveBytes in PATH.reserve, beside the
  // journal, and frees it at the first ENOSPC, so that the line, the run's failure line, its end event and
  // its exit file still find room and a reader learns why the run ended instead of seeing it vanish.
  // disk_full() turns true then (append still succeeds); the owner stops the run.
  bool append(const std::string& line);
  bool failed() const { return !error_.empty(); }
  bool disk_full() const { return disk_full_; }
  const std::string& error() const { return error_.empty() ? full_ : error_; }
  const std::string& path() const { return path_; }

  static constexpr size_t kReserveBytes = 32 * 1024;

 private:
  bool write_line(const std::string& whole, int* err);
  std::string path_, error_, full_;
  std::string reserve_;  // the reserve's path while it exists; empty once freed or where none could be made
  int fd_ = -1;
  bool disk_full_ = false;
};

// One whole line of a journal and where it ends (the byte offset just past its newline): an ingest that
// stores that offset knows which lines it has already taken.
struct JournalLine {
  std::string text;  // without the newline
  uint64_t end = 0;
};

// Splits BYTES, read from byte offset FROM of a journal, into whole lines; *consumed is how many bytes they
// take (a trailing partial line is left for the next read).
std::vector<JournalLine> split_journal(const std::string& bytes, uint64_t from, uint64_t* consumed);

// Reads PATH from byte offset FROM (at most max_bytes) and returns its whole lines; *next is the offset
// after the last one (FROM when there is none yet). A missing file reads as empty.
std::vector<JournalLine> read_journal(const std::string& path, uint64_t from, uint64_t* next,
                                      uint64_t max_bytes = 1 << 20);
// The last line of event EVENT ("step") among the journal's last 64 kB; "" when there is none.
std::string last_event_line(const std::string& path, const std::string& event);

}  // namespace tokamak
