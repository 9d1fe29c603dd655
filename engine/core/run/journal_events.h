// A journal line (or a `--json` line) back into the event it was printed from (app/tokamak/printer.cpp is
// the other direction), so a journal read from anywhere can feed the same sinks as a run in this process.
#pragma once
#include <string>

#include "engine/core/run/events.h"

namespace tokamak {

// Calls the sink's on_* for LINE and returns its event name ("step", "end", ...); "" for a line that is not
// a JSON event object, and the name without a call for events no sink takes (progress of unknown shape).
std::string dispatch_journal_line(const std::string& line, EventSink& sink);

}  // namespace tokamak
