// The engine's `--json` event stream, read back into events: one JSON object per line, as app/tokamak's
// PrinterSink writes them. Step events are flat: every numeric key other than event/step/tokens/wall_s is a
// metric, so a metric the engine adds later flows through without an edit here.
#pragma once
#include <QByteArray>
#include <QString>

namespace tokamak {
class EventSink;
}

namespace tokamak::ui {

// Hands the event of one line to sink. False (and why in *error) for a line that is not an event; unknown
// event kinds are skipped (true), so an older studio reads a newer engine.
bool dispatchJsonEvent(const QByteArray& line, EventSink& sink, QString* error = nullptr);

}  // namespace tokamak::ui
