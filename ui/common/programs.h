// Where the studio finds tokamak-engine, the headless trainer it starts one child process of per run (and per
// "sample now"): $TOKAMAK_ENGINE_BIN, then beside the studio (installed: both in bin/), then the build tree's
// app/ folder, then beside $TOKAMAK_TOKAMAK_BIN (the tests), then PATH.
#pragma once
#include <QString>

namespace tokamak::ui {

// "" when none is found.
QString enginePath();
// The `tokamak` front program beside tokamak-engine ("" when there is none): `tokamak remote` runs there.
QString tokamakFrontPath();
// One line for a run that cannot start: what is missing and how to get it.
QString engineMissingText();
// The line of a child's stderr that best says why it failed: the last "tokamak: ..." error, a C++ exception's
// what(), or else (orLastLine) the last non-empty line. lines: the newest last.
QString errorLineOf(const QStringList& lines, bool orLastLine = true);

}  // namespace tokamak::ui
