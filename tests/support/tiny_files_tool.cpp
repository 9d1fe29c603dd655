// The tiny models as files (see tiny.h) for the suites that link no LibTorch: made by the tiny-files program
// (tests/tools/tiny_files.cpp, built beside the suites), which calls tiny_files.cpp's functions. A failure throws,
// as theirs do.
#include <QProcess>
#include <stdexcept>

#include "tests/support/tiny.h"

namespace tokamak::test {
namespace {

QString runTinyFiles(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(TOKAMAK_TINY_FILES_BIN), args);
  if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
    throw std::runtime_error("tiny-files " + args.join(' ').toStdString() + " failed: " +
                             QString::fromUtf8(p.readAllStandardError()).trimmed().toStdString());
  return QString::fromUtf8(p.readAllStandardOutput()).trimmed();
}

}  // namespace

std::string save_tiny_checkpoint(const std::string& dir, int64_t step, const std::string& run_uid, uint64_t seed) {
  return runTinyFiles({"checkpoint", QString::fromStdString(dir), QString::number(step),
                       QString::fromStdString(run_uid), QString::number(seed)})
      .toStdString();
}

void export_tiny_hf(const std::string& dir, int64_t vocab_size, uint64_t seed) {
  runTinyFiles({"hf", QString::fromStdString(dir), QString::number(vocab_size), QString::number(seed)});
}

}  // namespace tokamak::test
