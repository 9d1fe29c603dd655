// JournalIngest: records a run's journal (engine/base/run/journal.h), read from wherever it is (a file here,
// `ssh HOST tokamak runs follow UID --from BYTES`), into this machine's run store, each event exactly once.
// The store keeps, in the run's row, how many bytes of the journal it has recorded (schema version 4), and
// moves that offset in the same transaction as the rows it covers: a reader that is cut off, restarted or
// that reads a stretch twice resumes from resume_offset() and never records a line twice or skips one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/run/journal.h"

namespace tokamak {

class RunStore;

class JournalIngest {
 public:
  // The run with UID, which lives at REMOTE ("ssh:user@host:port"; kept in the row so the studio can find the
  // run's host again, and so that opening the store never marks it crashed for want of a local process).
  JournalIngest(RunStore& store, std::string uid, std::string remote);

  // Where to read the journal from: the bytes recorded so far (0 for a run the store does not have yet).
  uint64_t resume_offset() const { return offset_; }
  // Records LINES (in journal order, each with the offset its line ends at) in one transaction; lines ending
  // at or before resume_offset() are skipped. Returns how many lines were recorded. Lines before the run's
  // start event (progress while a dataset is tokenized) have no row to go to and are passed over.
  int ingest(const std::vector<JournalLine>& lines);
  int64_t run_id() const { return run_; }
  // The status of the last end event recorded ("" while the run goes on).
  const std::string& ended() const { return ended_; }

 private:
  RunStore& store_;
  std::string uid_, remote_, ended_;
  int64_t run_ = 0;
  uint64_t offset_ = 0;
  double wall_offset_ = 0;  // wall seconds of a resumed run before its latest start, as StoreSink adds them
};

// Where the run RUN_ID of STORE lives: "ssh:user@host:port" for a run recorded from a host's journal, "" for one
// that trained on this machine.
std::string run_remote(RunStore& store, int64_t run_id);

}  // namespace tokamak
