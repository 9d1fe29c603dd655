// ChildProcess: every program the studio runs as its child — `tokamak …` and `tokamak-engine …` commands, a
// run's reader, a host's recorder — so that a slow network, a full GPU or a crash in the child never reaches
// the window. One place holds what they all need: finding the program (a missing one is a finished() with its
// one line, from the event loop, as a real failure would be), stdout as lines (and, for the CLI's `--json`
// commands, as JSON objects: its `progress` events and its last object, the result), stderr as lines, the one
// line that says why it failed, and the child's end when this object goes (killed, so nothing outlives it but
// what was started detached on purpose).
#pragma once
#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace tokamak::ui {

// The line of a child's stderr that best says why it failed: the last "tokamak: ..." error, a C++ exception's
// what(), or else (orLastLine) the last non-empty line. lines: the newest last.
QString errorLineOf(const QStringList& lines, bool orLastLine = true);

class ChildProcess : public QObject {
  Q_OBJECT
 public:
  explicit ChildProcess(QObject* parent = nullptr) : QObject(parent) {}
  ~ChildProcess() override;  // kills a running child (or stops it gently: setGentleStop) and waits for it

  // Starts PROGRAM ARGS; false (and nothing started) while a child of this object runs. PROGRAM "" (not found)
  // ends at once with engineMissingText(). what names the program in the crash line ("the engine process
  // crashed"); "" = its file name.
  bool start(const QString& program, const QStringList& args, const QString& what = {});
  bool startEngine(const QStringList& args);   // tokamak-engine ARGS (programs.h)
  bool startTokamak(const QStringList& args);  // tokamak ARGS, the LibTorch-free front
  // PROGRAM ARGS in a session of its own, nobody's child here: it outlives the studio (a download). Its stdout
  // and stderr go to those files. "" and *pid set, or why it did not start.
  static QString startDetached(const QString& program, const QStringList& args, const QString& stdoutFile,
                               const QString& stderrFile, qint64* pid);
  // Before start: stdout and stderr go nowhere (a recorder whose output nobody reads).
  void setDiscardOutput(bool discard) { discard_ = discard; }
  // Before start: all of stdout is kept for output() (a command's answer; not for a reader that runs for hours).
  void setKeepOutput(bool keep) { keepOutput_ = keep; }
  // The end when this object goes or stop() is called: SIGTERM, up to 3 s for the child to finish what it
  // commits, then SIGKILL (a recorder). Otherwise SIGKILL at once.
  void setGentleStop(bool gentle) { gentle_ = gentle; }
  // Before start: stdout lines are not read as JSON (a run's reader: its journal has a codec of its own).
  void setReadJson(bool read) { readJson_ = read; }

  bool isRunning() const { return process_ != nullptr; }
  qint64 processId() const { return process_ ? process_->processId() : 0; }
  void write(const QByteArray& data);  // to its stdin
  void closeInput();                   // the end of its stdin
  void cancel();                       // kills it; finished() says "cancelled"
  void kill();                         // kills it; finished() says how it ended
  // Ends it now without finished() (as the destructor does): gently or not, see setGentleStop. Blocks.
  void stop();
  bool waitForFinished(int ms);

  // Of the last child, once finished() came (kept until the next start):
  const QByteArray& output() const { return output_; }   // all of stdout, with setKeepOutput
  const QJsonObject& result() const { return result_; }  // its last JSON object line that is not a progress event
  const QStringList& errorLines() const { return stderrTail_; }  // the last lines of its stderr
  int exitCode() const { return exitCode_; }
  bool crashed() const { return crashed_; }  // ended by a signal
  bool wasCancelled() const { return cancelled_; }
  // "" when it exited 0; else "cancelled", its stderr's error line, or how it ended.
  const QString& error() const { return error_; }

 Q_SIGNALS:
  void outputLine(const QByteArray& line);   // one line of stdout as read, its '\n' included (the last may lack it)
  void jsonLine(const QJsonObject& object);  // a stdout line that is a JSON object (only parsed when connected)
  void progress(const QString& what, qint64 done, qint64 total);  // a `{"event":"progress"}` line
  void errorLine(const QString& line);  // a line of stderr (a progress bar's \r pieces are lines too)
  // The child has ended (or could not start); error() is "" on success.
  void finished(const QString& error);

 private:
  void readOutput();
  void readErrors();
  void takeLine(const QByteArray& line);
  void takeErrorLine(const QString& line);
  void ended(int exitCode, QProcess::ExitStatus status, bool failedToStart);

  QProcess* process_ = nullptr;
  QString what_;
  bool discard_ = false, keepOutput_ = false, gentle_ = false, readJson_ = true, cancelled_ = false, crashed_ = false;
  QByteArray output_, pending_;  // pending_: stdout after its last newline
  QString pendingErrors_;        // stderr after its last line end
  QJsonObject result_;
  QStringList stderrTail_;
  int exitCode_ = 0;
  QString error_;
};

}  // namespace tokamak::ui
