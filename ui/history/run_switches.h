// The "switches" column of the runs browser: a short summary of the speed-up switches (opt.*) that a run
// set differently from the defaults, e.g. "fp32, buffered-mask, fused-adamw". Runs made with the defaults
// read "defaults", so a glance at the column tells which runs tried something.
#pragma once

#include <QString>

namespace tokamak::ui {

QString switchesSummary(const QString& configJson);

}  // namespace tokamak::ui
