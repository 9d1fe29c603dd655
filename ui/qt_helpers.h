// Small helpers several rooms of the studio share, defined once (a unity build sees every file of a batch as one).
#pragma once

#include <QLocale>
#include <QSpinBox>
#include <QString>
#include <string>

namespace tokamak::ui {

inline QString qs(const std::string& s) { return QString::fromStdString(s); }

// Bytes as a person reads them: "1.5 GB".
inline QString data_size(qint64 bytes) { return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeSIFormat); }

inline QSpinBox* spin_box(int lo, int hi, const QString& tip) {
  auto* s = new QSpinBox;
  s->setRange(lo, hi);
  s->setToolTip(tip);
  return s;
}

}  // namespace tokamak::ui
