// Small helpers several rooms of the studio share, defined once (a unity build sees every file of a batch as one).
#pragma once

#include <QSpinBox>
#include <QString>
#include <string>

#include "engine/base/util/format.h"

namespace tokamak::ui {

inline QString qs(const std::string& s) { return QString::fromStdString(s); }

// The core's one formatter for bytes and counts (engine/base/util/format.h), as the studio shows them: "1.5 GB",
// "12.3K".
inline QString data_size(double bytes) { return qs(format_bytes(bytes)); }
inline QString count_text(double count) { return qs(format_count(count)); }

// A spin box over [lo, hi]; bound to a config key, it takes the key's description as its tooltip.
inline QSpinBox* spin_box(int lo, int hi) {
  auto* s = new QSpinBox;
  s->setRange(lo, hi);
  return s;
}

}  // namespace tokamak::ui
