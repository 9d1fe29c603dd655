// WhereBox: where a run trains — this computer, or an SSH host (a Host entry of ~/.ssh/config, or
// user@host[:port] typed) — with "Test connection", which shows the host's Tokamak version, devices and free
// disk and datasets, or one line saying why not, and "Install…", which puts Tokamak there (install_dialog.h). It
// only chooses: RunController (ui/live) starts a host's run as the child `tokamak remote train --host HOST`, whose
// stdout is the host's journal, so everything after it (the event bridge, plots, samples, store) is the path a
// local run takes. The test runs `tokamak remote test` as a child, so the window never waits on the network. It is
// one line, in the window's toolbar beside Start (as a section of the setup it pushed the speed-up switches below
// the fold of a 768-pixel screen); the tokamak command field and Install… show only with a host chosen, and the
// test's result is shortened to fit, whole in its tooltip.
#pragma once
#include <QWidget>
#include <QString>
#include <QStringList>
#include <vector>

#include "engine/base/data/dataset_list.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace tokamak::ui {

class ChildProcess;
class InstallDialog;

class WhereBox : public QWidget {
  Q_OBJECT
 public:
  explicit WhereBox(QWidget* parent = nullptr);

  // "" for this computer, else the host as typed or picked.
  QString host() const;
  // The tokamak command on the host ("tokamak": on its PATH).
  QString tokamakCommand() const;
  // The line shown under the box: the last test's result, or why the host text is not one.
  QString resultText() const;
  // The datasets the host listed at the last successful test (`tokamak datasets` there); empty before.
  const std::vector<tokamak::DatasetListing>& datasets() const { return datasets_; }
  // The host's devices at the last successful test ("cuda:0 NVIDIA H100 80GB HBM3", …); empty before.
  const QStringList& devices() const { return devices_; }

 public Q_SLOTS:
  void testConnection();
  // "Install…": the install dialog for the chosen host, opened (nullptr with none chosen).
  InstallDialog* installOnHost();

 Q_SIGNALS:
  void changed();
  void tested(bool ok);

 private:
  void update();
  void showResult(const QString& text);

  QString resultText_;  // the result label shows it shortened
  QComboBox* where_;
  QLabel* tokamakLabel_;
  QLineEdit* tokamak_;
  QPushButton* test_;
  QPushButton* install_;
  QLabel* result_;
  ChildProcess* job_;  // `tokamak remote test`
  std::vector<tokamak::DatasetListing> datasets_;
  QStringList devices_;
};

}  // namespace tokamak::ui
