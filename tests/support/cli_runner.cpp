#include "tests/support/cli_runner.h"

#include <QJsonDocument>
#include <QProcess>

namespace tokamak::test {

QString tokamak_bin() { return qEnvironmentVariable("TOKAMAK_TOKAMAK_BIN"); }

QJsonObject CliResult::json() const { return QJsonDocument::fromJson(out.trimmed()).object(); }

std::vector<nlohmann::json> CliResult::json_lines() const {
  std::vector<nlohmann::json> v;
  for (const QByteArray& l : out.split('\n'))
    if (!l.isEmpty()) v.push_back(nlohmann::json::parse(l.toStdString(), nullptr, false));
  return v;
}

QStringList CliResult::errors() const {
  QStringList l;
  for (const QByteArray& line : err.split('\n'))
    if (line.startsWith("tokamak: ")) l << QString::fromUtf8(line);
  return l;
}

CliResult run_program(const QString& program, const QStringList& args, const QProcessEnvironment& env, int timeout_ms) {
  QProcess p;
  if (!env.isEmpty()) p.setProcessEnvironment(env);
  p.start(program, args);
  if (!p.waitForFinished(timeout_ms) && p.state() != QProcess::NotRunning) p.kill(), p.waitForFinished();
  const bool ended = p.exitStatus() == QProcess::NormalExit && p.error() != QProcess::FailedToStart;
  return {ended ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

CliResult run_tokamak(const QStringList& args, const QProcessEnvironment& env, int timeout_ms) {
  return run_program(tokamak_bin(), args, env, timeout_ms);
}

int tokamak_line(const std::string& args, std::string* out, bool with_err) {
  const CliResult r = run_tokamak(QProcess::splitCommand(QString::fromStdString(args)));
  if (out) *out = (with_err ? r.out + r.err : r.out).toStdString();
  return r.code;
}

QStringList set_args(const std::vector<std::string>& overrides) {
  QStringList args;
  for (const std::string& kv : overrides) args << "--set" << QString::fromStdString(kv);
  return args;
}

QProcessEnvironment environment_with(const QStringList& assignments) {
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  for (const QString& kv : assignments) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
  return e;
}

}  // namespace tokamak::test
