// QCustomPlot's header spells Qt's `signals:` and `foreach` keywords, which tokamak_ui turns off
// (QT_NO_KEYWORDS, because the keyword macros break LibTorch's headers). Include it through here: the
// keywords are mapped to the Q_ macros for the length of the include only.
#pragma once
#define signals Q_SIGNALS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef foreach
