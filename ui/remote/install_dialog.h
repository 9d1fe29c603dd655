// InstallDialog: "Install…" beside Test connection. It runs `tokamak remote install --json --host HOST` as a child
// (engine/fleet/remote/host_install.h) and shows where torch will come from, each step as it comes, the kit's push
// as a bar, and the end: the summary with the version and the 3-step run, or the one line that refuses the host
// and names the fix. A successful install hands the host's tokamak command back to WhereBox (installed()).
#pragma once
#include <QDialog>
#include <QString>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace tokamak::ui {

class ChildProcess;

class InstallDialog : public QDialog {
  Q_OBJECT
 public:
  InstallDialog(const QString& host, QWidget* parent = nullptr);

  QString resultText() const { return resultText_; }  // the last install's summary or refusal; "" before
  bool isRunning() const;

 public Q_SLOTS:
  void install();  // starts it (or, while it runs, cancels it)

 Q_SIGNALS:
  void installed(const QString& command);  // the tokamak command on the host, after a good install
  void ended(bool ok);

 private:
  void showEnd(bool ok, const QString& text);

  QString host_, resultText_;
  QLineEdit* torchPython_;
  QPushButton* start_;
  QProgressBar* bar_;
  QLabel* step_;
  QLabel* result_;
  QPlainTextEdit* log_;
  ChildProcess* job_;
};

}  // namespace tokamak::ui
