// What a run reads of the machine it shares: NVML opened and shut down in the right order (against a stand-in
// for the driver's library, tests/fake_nvml), and other processes' names made printable before they reach a
// terminal.
#include <QtTest>

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "engine/base/run/machine_health.h"
#include "engine/base/run/metrics.h"
#include "engine/base/util/cores.h"

using namespace tokamak;

class TestMachineHealth : public QObject {
  Q_OBJECT
  void* nvml_ = nullptr;  // held open for the whole suite: MachineHealth's dlopen by soname gets this one

  std::string nvmlCalls() {
    auto calls = reinterpret_cast<const char* (*)()>(dlsym(nvml_, "fake_nvml_calls"));
    return calls ? calls() : "";
  }
  void forget() { reinterpret_cast<void (*)()>(dlsym(nvml_, "fake_nvml_forget"))(); }

 private Q_SLOTS:
  void initTestCase() {
    nvml_ = dlopen(TOKAMAK_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
    QVERIFY2(nvml_, dlerror());
  }

  // Unloading NVML while it is initialised can crash at exit on some drivers: it is shut down first, whether
  // the GPU was found or not.
  void nvmlIsShutDownBeforeItIsLetGo() {
    forget();
    {
      MachineHealth health("0000:01:00.0");
      QCOMPARE(QString::fromStdString(health.gpu_note()), QString());
      Metrics m;
      health.add_to(m);
      QVERIFY(m.has("gpu_power_w"));
      QCOMPARE(m.get("gpu_power_w"), 123.456);
    }
    QCOMPARE(QString::fromStdString(nvmlCalls()), QString("init bus shutdown"));
    forget();
    {
      MachineHealth health("0000:99:00.0");
      QVERIFY2(health.gpu_note().find("NVML could not open the GPU at 0000:99:00.0") == 0, health.gpu_note().c_str());
    }
    QCOMPARE(QString::fromStdString(nvmlCalls()), QString("init bus-fail shutdown"));
  }

  // Any user's process may name itself with escape bytes (prctl PR_SET_NAME): the core-sharing warning shows it
  // escaped, read from /proc by the same path a run's warning takes.
  void anotherProcesssNameIsShownPrintable() {
    int ready[2];
    QVERIFY(pipe(ready) == 0);
    const pid_t middle = fork();
    if (middle == 0) {
      // A grandchild, reparented away from this process: children of the asking process are left out.
      if (fork() == 0) {
        prctl(PR_SET_NAME, "\x1b[31mEVIL\a", 0, 0, 0);
        (void)!write(ready[1], "x", 1);
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        volatile unsigned long spin = 0;
        while (std::chrono::steady_clock::now() < end) ++spin;
        _exit(0);
      }
      _exit(0);
    }
    waitpid(middle, nullptr, 0);
    char c = 0;
    QVERIFY(read(ready[0], &c, 1) == 1);
    ::close(ready[0]), ::close(ready[1]);
    const std::vector<BusyPeer> peers = busy_torch_peers(1.0, 0.05);  // a loaded machine still gives it 5%
    std::string name;
    long pid = 0;
    for (const BusyPeer& p : peers)
      if (p.name.find("EVIL") != std::string::npos) name = p.name, pid = p.pid;
    if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
    QVERIFY2(pid > 0, qPrintable(QString::fromStdString(busy_peers_text(peers))));
    QCOMPARE(QString::fromStdString(name), QString("\\x1b[31mEVIL\\x07"));
    const std::string text = busy_peers_text(peers);
    for (char ch : text) QVERIFY2(static_cast<unsigned char>(ch) >= 0x20, text.c_str());
  }
};

QTEST_GUILESS_MAIN(TestMachineHealth)
#include "test_machine_health.moc"
