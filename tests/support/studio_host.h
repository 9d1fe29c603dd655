// The studio suites' one way to point the setup's "Where" at a test host (ssh_host.h): the host's alias in
// the list and the tokamak to run there. Header-only: tests/support links no Qt Widgets, these suites do.
#pragma once
#include <QComboBox>
#include <QLineEdit>
#include <QString>

#include "ui/window/main_window.h"
#include "ui/remote/where_box.h"
#include "ui/setup/setup_panel.h"

namespace tokamak::test {

inline void choose_host(ui::MainWindow& w, const QString& alias, const QString& tokamak) {
  ui::WhereBox* where = w.setupPanel()->whereBox();
  where->findChild<QComboBox*>("where")->setCurrentText(alias);
  where->findChild<QLineEdit*>("hostTokamak")->setText(tokamak);
}

}  // namespace tokamak::test
