// Where the studio finds its programs: tokamak-engine, the headless trainer every run and every "sample now"
// is a process of, and the `tokamak` front beside it. tokamak-engine is $TOKAMAK_ENGINE_BIN, then beside the studio
// (installed: both in bin/), then the build tree's app/ folder, then beside $TOKAMAK_TOKAMAK_BIN (the tests), then
// PATH.
#pragma once
#include <QString>

namespace tokamak::ui {

// "" when none is found.
QString enginePath();
// The `tokamak` front program beside tokamak-engine ("" when there is none): `tokamak remote` runs there.
QString tokamakFrontPath();
// One line for a run that cannot start: what is missing and how to get it.
QString engineMissingText();

}  // namespace tokamak::ui
