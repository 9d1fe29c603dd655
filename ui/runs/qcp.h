// Includes <qcustomplot.h> under QT_NO_KEYWORDS. tokamak_ui disables Qt's `signals`/`foreach` keywords
// (they break LibTorch's headers), but QCustomPlot's header spells its sections `signals:` and uses
// `foreach`: map them to the Q_ macros for the length of the include only.
#pragma once

#ifdef QT_NO_KEYWORDS
#define signals Q_SIGNALS
#define slots Q_SLOTS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef foreach
#else
#include <qcustomplot.h>
#endif
