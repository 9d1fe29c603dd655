// The colour of the i-th compared run: its curve, its scoreboard name and its group's band share it, so a
// reader matches them by eye.
#pragma once
#include <QColor>

namespace tokamak::ui {

// Tableau's ten colours: distinct on light and dark backgrounds and for most colour-blind readers.
inline QColor runColor(int runIndex) {
  static const QColor palette[] = {QColor(0x1f77b4), QColor(0xff7f0e), QColor(0x2ca02c), QColor(0xd62728),
                                   QColor(0x9467bd), QColor(0x8c564b), QColor(0xe377c2), QColor(0x7f7f7f),
                                   QColor(0xbcbd22), QColor(0x17becf)};
  return palette[runIndex % 10];
}

}  // namespace tokamak::ui
