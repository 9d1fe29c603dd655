// The `tokamak` CLI run as a user runs it, spelled once for every suite that drives it: the program CTest
// built (TOKAMAK_TOKAMAK_BIN), its exit code and what it wrote to stdout and stderr.
#pragma once
#include <QByteArray>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tokamak::test {

// The built CLI; empty when the suite was not started by CTest (or TOKAMAK_TOKAMAK_BIN by hand).
QString tokamak_bin();

struct CliResult {
  int code = -1;  // the exit code; -1 when the program crashed, was killed or did not start
  QByteArray out, err;
  QString out_text() const { return QString::fromUtf8(out); }
  QString err_text() const { return QString::fromUtf8(err); }
  // stdout as one JSON object (`--json` commands that print one); empty when it is not one.
  QJsonObject json() const;
  // stdout as JSON lines (`--json` commands that stream events), one value a non-empty line
  // (a line that is not JSON is a discarded value: is_discarded()).
  std::vector<nlohmann::json> json_lines() const;
  // stderr's "tokamak: " lines, without progress: what the user is told.
  QStringList errors() const;
};

// Runs PROGRAM with ARGS in ENV (empty: this process's environment) and waits up to TIMEOUT_MS; a program
// still running then is killed (code -1), so a hung command fails its test instead of outliving it.
CliResult run_program(const QString& program, const QStringList& args, const QProcessEnvironment& env = {},
                      int timeout_ms = 300000);
// run_program with the built CLI.
CliResult run_tokamak(const QStringList& args, const QProcessEnvironment& env = {}, int timeout_ms = 300000);

// run_tokamak with ARGS written as one line, split at spaces ("double-quoted words" stay one; QProcess::
// splitCommand, no shell, so single quotes are characters): returns the exit code, and in *OUT what the CLI
// wrote to stdout, and after it to stderr WITH_ERR.
int tokamak_line(const std::string& args, std::string* out = nullptr, bool with_err = false);

// Each override as `--set KEY=VALUE`, the CLI's way to take a config override.
QStringList set_args(const std::vector<std::string>& overrides);

// This process's environment with each "KEY=VALUE" of ASSIGNMENTS set (a later one wins).
QProcessEnvironment environment_with(const QStringList& assignments);

}  // namespace tokamak::test
