// The journal's codec: each event as the JSON object of its journal (and `--json`) line, which the CLI's
// printer writes, and such a line back into its event, so a journal read from anywhere can feed the same sinks
// as a run in this process. Both directions sit here so that a field renamed in one is renamed in the other.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <string>

#include "engine/base/run/events.h"

namespace tokamak {

// The line's object for each event ({"event": "start", ...}). Step and eval lines are flat: the axes (step,
// tokens, wall_s), then every metric under its own key, so a metric added in the trainer reaches every reader
// of the journal unedited.
nlohmann::json event_json(const RunStart& e);
nlohmann::json event_json(const StepEvent& e);
nlohmann::json event_json(const EvalEvent& e);
nlohmann::json event_json(const SkipEvent& e);
nlohmann::json event_json(const SpikeEvent& e);
nlohmann::json event_json(const SampleEvent& e);
nlohmann::json event_json(const AlertEvent& e);  // {"event": KIND, "step", "message"}
nlohmann::json event_json(const CheckpointEvent& e);
nlohmann::json event_json(const EndEvent& e);
nlohmann::json event_json(const ProgressEvent& e);
nlohmann::json event_json(const WarningEvent& e);

// Calls the sink's on_* for LINE and returns its event name ("step", "end", ...); "" for a line that is not
// a JSON event object, and the name without a call for events no sink takes (progress of unknown shape).
std::string dispatch_journal_line(const std::string& line, EventSink& sink);

}  // namespace tokamak
