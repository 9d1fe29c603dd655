// kill_runs_under (see run_reaper.h).
#include "tests/support/run_reaper.h"

#include <QDir>
#include <QFile>

#include <signal.h>

#include "engine/base/run/run_folder.h"

namespace tokamak::test {

int kill_runs_under(const std::string& data_home) {
  int killed = 0;
  const QDir root(QString::fromStdString(data_home + "/tokamak/checkpoints"));
  for (const QString& name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    const RunFolder f{root.filePath(name).toStdString()};
    if (!run_process_alive(f)) continue;
    const long pid = read_pid(f);
    QFile cmdline(QString("/proc/%1/cmdline").arg(pid));
    if (!cmdline.open(QIODevice::ReadOnly) || !cmdline.readAll().contains("tokamak-engine")) continue;
    killed += ::kill(static_cast<pid_t>(pid), SIGKILL) == 0;
  }
  return killed;
}

}  // namespace tokamak::test
