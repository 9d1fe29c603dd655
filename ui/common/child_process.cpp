// ChildProcess: a program run as the studio's child, its output as lines and its failure as one line (see
// child_process.h).
#include "ui/common/child_process.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QMetaMethod>
#include <QTimer>
#include <utility>

#include "ui/common/programs.h"

namespace tokamak::ui {
namespace {

// Enough for the error line of any failure (the newest "tokamak: " line), never the whole of a long child's
// chatter.
constexpr int kChildStderrLinesKept = 200;

}  // namespace

QString errorLineOf(const QStringList& lines, bool orLastLine) {
  for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
    const QString l = it->trimmed();
    if (l.startsWith("tokamak: ")) return l.mid(9);
    if (l.startsWith("what():")) return l.mid(7).trimmed();
  }
  for (auto it = lines.crbegin(); orLastLine && it != lines.crend(); ++it)
    if (!it->trimmed().isEmpty()) return it->trimmed();
  return {};
}

ChildProcess::~ChildProcess() { stop(); }

bool ChildProcess::startEngine(const QStringList& args) { return start(enginePath(), args, tr("engine")); }

bool ChildProcess::startTokamak(const QStringList& args) { return start(tokamakFrontPath(), args, "tokamak"); }

bool ChildProcess::start(const QString& program, const QStringList& args, const QString& what) {
  if (process_) return false;
  cancelled_ = crashed_ = false;
  exitCode_ = 0;
  output_.clear(), pending_.clear(), pendingErrors_.clear();
  result_ = {};
  stderrTail_.clear();
  error_.clear();
  what_ = what.isEmpty() ? QFileInfo(program).fileName() : what;
  if (program.isEmpty()) {
    // Reported from the event loop, as a real failure would be, so callers handle one path.
    QTimer::singleShot(0, this, [this] {
      exitCode_ = -1;
      error_ = engineMissingText();
      Q_EMIT finished(error_);
    });
    return true;
  }
  process_ = new QProcess(this);
  if (discard_) {
    process_->setStandardOutputFile(QProcess::nullDevice());
    process_->setStandardErrorFile(QProcess::nullDevice());
  }
  connect(process_, &QProcess::readyReadStandardOutput, this, &ChildProcess::readOutput);
  connect(process_, &QProcess::readyReadStandardError, this, &ChildProcess::readErrors);
  connect(process_, &QProcess::finished, this,
          [this](int code, QProcess::ExitStatus status) { ended(code, status, false); });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) ended(-1, QProcess::NormalExit, true);
  });
  process_->start(program, args);
  return true;
}

QString ChildProcess::startDetached(const QString& program, const QStringList& args, const QString& stdoutFile,
                                    const QString& stderrFile, qint64* pid) {
  if (program.isEmpty()) return engineMissingText();
  QProcess p;
  p.setProgram(program);
  p.setArguments(args);
  p.setStandardOutputFile(stdoutFile);
  p.setStandardErrorFile(stderrFile);
  if (!p.startDetached(pid)) return tr("could not start %1: %2").arg(program, p.errorString());
  return {};
}

void ChildProcess::write(const QByteArray& data) {
  if (process_) process_->write(data);
}

void ChildProcess::closeInput() {
  if (process_) process_->closeWriteChannel();
}

void ChildProcess::cancel() {
  if (!process_) return;
  cancelled_ = true;
  process_->kill();
}

void ChildProcess::kill() {
  if (process_) process_->kill();
}

bool ChildProcess::waitForFinished(int ms) {
  QProcess* p = process_;
  return !p || p->waitForFinished(ms) || !process_;
}

void ChildProcess::stop() {
  QProcess* p = process_;
  if (!p) return;
  process_ = nullptr;
  p->disconnect(this);
  if (gentle_) {
    p->terminate();  // what it has committed stays; what it was writing is its own to finish
    if (!p->waitForFinished(3000)) p->kill(), p->waitForFinished(3000);
  } else {
    p->kill();
    p->waitForFinished(2000);
  }
  p->deleteLater();
}

void ChildProcess::readOutput() {
  if (!process_) return;
  const QByteArray data = process_->readAllStandardOutput();
  if (keepOutput_) output_ += data;
  pending_ += data;
  qsizetype from = 0, newline;
  while ((newline = pending_.indexOf('\n', from)) >= 0) {
    takeLine(pending_.mid(from, newline + 1 - from));
    from = newline + 1;
    if (!process_) break;  // a slot ended it
  }
  pending_.remove(0, from);
}

void ChildProcess::takeLine(const QByteArray& line) {
  Q_EMIT outputLine(line);
  if (!readJson_ || !line.trimmed().startsWith('{')) return;
  const QJsonObject j = QJsonDocument::fromJson(line).object();
  if (j.isEmpty()) return;
  if (j.value("event").toString() == QLatin1String("progress"))
    Q_EMIT progress(j.value("what").toString(), j.value("done").toInteger(), j.value("total").toInteger());
  else result_ = j;
  if (isSignalConnected(QMetaMethod::fromSignal(&ChildProcess::jsonLine))) Q_EMIT jsonLine(j);
}

void ChildProcess::readErrors() {
  if (!process_) return;
  pendingErrors_ += QString::fromUtf8(process_->readAllStandardError());
  // Progress bars redraw with \r: each piece is a line of its own.
  qsizetype from = 0;
  for (qsizetype i = 0; i < pendingErrors_.size(); ++i) {
    if (pendingErrors_[i] != '\n' && pendingErrors_[i] != '\r') continue;
    takeErrorLine(pendingErrors_.mid(from, i - from));
    from = i + 1;
  }
  pendingErrors_.remove(0, from);
}

void ChildProcess::takeErrorLine(const QString& line) {
  if (line.trimmed().isEmpty()) return;
  stderrTail_ << line;
  while (stderrTail_.size() > kChildStderrLinesKept) stderrTail_.removeFirst();
  Q_EMIT errorLine(line);
}

void ChildProcess::ended(int exitCode, QProcess::ExitStatus status, bool failedToStart) {
  if (!process_) return;
  readOutput();
  readErrors();
  if (!pending_.isEmpty()) takeLine(std::exchange(pending_, {}));  // a last line without its newline
  if (!pendingErrors_.isEmpty()) takeErrorLine(std::exchange(pendingErrors_, {}));
  QProcess* p = process_;
  process_ = nullptr;
  p->disconnect(this);
  p->deleteLater();
  exitCode_ = exitCode;
  crashed_ = status == QProcess::CrashExit;
  if (failedToStart) error_ = tr("could not start %1: %2").arg(p->program(), p->errorString());
  else if (!crashed_ && exitCode == 0) error_.clear();
  else if (cancelled_) error_ = tr("cancelled");
  else if (error_ = errorLineOf(stderrTail_); error_.isEmpty())
    error_ =
        crashed_ ? tr("the %1 process crashed").arg(what_) : tr("%1 ended with exit code %2").arg(what_).arg(exitCode);
  Q_EMIT finished(error_);
}

}  // namespace tokamak::ui
