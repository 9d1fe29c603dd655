// `tokamak remote install` against a real sshd on loopback, run as a user runs it: the "host" is a fresh home
// (sshd sets HOME and a PATH with its ~/.local/bin for each session, as a cloud image's non-interactive login has),
// and torch comes from the set-up's venv (--torch-python), so nothing is downloaded. Install, the version it
// reports, 3 steps trained there; a second install does nothing and says so; a push cut short goes on from where
// it stopped; uninstall removes what install made and nothing else; each refusal is one line naming its fix,
// said before anything is pushed; the kit asks no newer C library or C++ runtime than Ubuntu 22.04's.
#include <QDir>
#include <QElapsedTimer>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/fleet/remote/host_facts.h"
#include "engine/fleet/remote/host_install.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/ssh_host.h"
#include "tests/support/test_support.h"

using namespace tokamak;

namespace {

// The install's JSON lines: its progress events and its one result.
struct Installed {
  test::CliResult cli;
  nlohmann::json result;  // the "installed" event (null when there was none)
  std::vector<nlohmann::json> progress;
};

Installed install(const QStringList& more = {}) {
  Installed r;
  r.cli = test::run_tokamak(QStringList{"remote", "install", "--host", "gpuhost", "--json"} + more, {}, 900000);
  for (const nlohmann::json& j : r.cli.json_lines()) {
    if (j.is_discarded()) continue;
    if (j.value("event", "") == "installed") r.result = j;
    if (j.value("event", "") == "progress") r.progress.push_back(j);
  }
  return r;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The one kit the suite's cache holds (engine_kit() names it after the programs).
std::string kit_path() {
  for (const auto& e : std::filesystem::directory_iterator(cache_dir() + "/kits"))
    if (e.path().string().size() > 7 && e.path().string().substr(e.path().string().size() - 7) == ".tar.gz")
      return e.path().string();
  return {};
}

}  // namespace

class TestRemoteInstall : public QObject {
  Q_OBJECT

  test::ScratchEnv env_;
  std::unique_ptr<test::SshHost> ssh_;
  std::string home_;

  QStringList torch() const { return {"--torch-python", QString::fromStdString(test::python())}; }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(env_.ok());
    home_ = env_.path("host-home");
    QVERIFY(QDir().mkpath(QString::fromStdString(home_ + "/.local/bin")));
    const QString home = QString::fromStdString(home_);
    ssh_ = std::make_unique<test::SshHost>(
        env_, QStringList{"HOME=" + home, "PATH=" + home + "/.local/bin:/usr/bin:/bin"}, "gpuhost");
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
    // What the user had there before: install and uninstall leave it be.
    write_file_atomically(home_ + "/.local/bin/their-tool", "#!/bin/sh\n");
    write_file_atomically(home_ + "/notes.txt", "mine\n");
  }

  void cleanup() {
    if (ssh_) ssh_->end_runs();
  }

  void cleanupTestCase() { ssh_.reset(); }

  // The facts the host reports about itself are read back whole.
  void hostFactsAreRead() {
    const HostFacts f = parse_host_facts(ssh_->by_alias().run({"sh", "-c", host_facts_script(test::python())}));
    QCOMPARE(QString::fromStdString(f.home), QString::fromStdString(home_));
    QCOMPARE(QString::fromStdString(f.arch), QString("x86_64"));
    QVERIFY2(!f.glibc.empty() && !version_less(f.glibc, "2.34"), f.glibc.c_str());
    QVERIFY2(!f.glibcxx.empty(), "no GLIBCXX_ version read from the host's libstdc++");
    QVERIFY(!f.python.empty());
    QVERIFY(f.free_kb > 0);
    QVERIFY2(f.torch.rfind("2.11", 0) == 0, f.torch.c_str());
    QVERIFY(f.installed.empty());
  }

  // A refusal is said before anything is pushed: a python without torch 2.11.
  void refusalComesBeforeAnyPush() {
    const Installed r = install({"--torch-python", "/usr/bin/python3"});
    QVERIFY(r.cli.code != 0);
    const QStringList errors = r.cli.errors();
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors[0].contains("/usr/bin/python3") && errors[0].contains("torch 2.11") &&
                 errors[0].contains("hint:"),
             qPrintable(errors[0]));
    QVERIFY(!path_exists(home_ + "/.local/lib/tokamak-kit.tar.gz.part"));
    QVERIFY(!path_exists(install_dir(home_)));
  }

  void installTrainsThereThenASecondDoesNothing() {
    QElapsedTimer t;
    t.start();
    const Installed r = install(torch());
    QVERIFY2(r.cli.code == 0, qPrintable(r.cli.err_text()));
    qInfo("install to a fresh loopback host: %.1f s", t.elapsed() / 1000.0);
    QVERIFY(r.result.is_object());
    QCOMPARE(r.result.value("changed", false), true);
    // ~/.local/bin is on the session's PATH here, so the plain name works.
    QCOMPARE(QString::fromStdString(r.result.value("command", "")), QString("tokamak"));
    QCOMPARE(QString::fromStdString(r.result.value("version", "")), QString(TOKAMAK_VERSION));
    QVERIFY2(r.result.value("smoke", "").find("step 3") != std::string::npos, r.result.dump().c_str());
    // The push was shown as it went, to its end.
    int64_t pushed = 0, total = 0;
    for (const nlohmann::json& p : r.progress)
      if (p.value("what", "").rfind("pushing the engine kit", 0) == 0) pushed = p.value("done", 0), total = p.value("total", 0);
    QVERIFY(total > 0);
    QCOMPARE(pushed, total);
    // What it made: the wrapper, its link on PATH, the VERSION and the MANIFEST; nothing left half-pushed.
    const std::string dest = install_dir(home_);
    QVERIFY(path_exists(dest + "/tokamak") && path_exists(dest + "/bin/tokamak-engine"));
    QCOMPARE(QString::fromStdString(std::filesystem::read_symlink(home_ + "/.local/bin/tokamak").string()),
             QString::fromStdString(dest + "/tokamak"));
    QVERIFY(file_text(dest + "/MANIFEST").find("link " + home_ + "/.local/bin/tokamak") != std::string::npos);
    QVERIFY(!path_exists(home_ + "/.local/lib/tokamak-kit.tar.gz") &&
            !path_exists(home_ + "/.local/lib/tokamak-kit.tar.gz.part"));
    // The host now passes the connection test the studio runs, by the plain name.
    QCOMPARE(QString::fromStdString(ssh_->by_alias("tokamak").test_connection().version), QString(TOKAMAK_VERSION));

    const Installed again = install(torch());
    QVERIFY2(again.cli.code == 0, qPrintable(again.cli.err_text()));
    QCOMPARE(again.result.value("changed", true), false);
    QVERIFY2(again.result.value("summary", "").rfind("nothing to do", 0) == 0, again.result.dump().c_str());
    for (const nlohmann::json& p : again.progress)
      QVERIFY2(p.value("what", "").find("pushing") == std::string::npos, p.dump().c_str());

    // A host with another build's kit gets this one, and says so.
    const std::string stamp = file_text(install_dir(home_) + "/VERSION");
    write_file_atomically(install_dir(home_) + "/VERSION", stamp.substr(0, stamp.find('\n') + 1) + "0123abcd\n");
    const Installed upgrade = install(torch());
    QVERIFY2(upgrade.cli.code == 0, qPrintable(upgrade.cli.err_text()));
    QCOMPARE(upgrade.result.value("changed", false), true);
    QVERIFY2(upgrade.result.value("summary", "").rfind("installed this build of Tokamak " TOKAMAK_VERSION " over another", 0) == 0,
             upgrade.result.dump().c_str());
    QCOMPARE(QString::fromStdString(file_text(install_dir(home_) + "/VERSION")), QString::fromStdString(stamp));
  }

  // Uninstall removes the wrapper's folder and its link, and leaves what the user had.
  void uninstallRemovesOnlyWhatInstallMade() {
    const test::CliResult r = test::run_tokamak({"remote", "uninstall", "--host", "gpuhost"});
    QVERIFY2(r.code == 0, qPrintable(r.err_text()));
    QVERIFY2(r.out_text().startsWith("removed from"), qPrintable(r.out_text()));
    QVERIFY(!path_exists(install_dir(home_)));
    QVERIFY(!std::filesystem::is_symlink(home_ + "/.local/bin/tokamak"));
    QVERIFY(path_exists(home_ + "/.local/bin/their-tool") && path_exists(home_ + "/notes.txt"));
    const test::CliResult again = test::run_tokamak({"remote", "uninstall", "--host", "gpuhost"});
    QCOMPARE(again.code, 0);
    QVERIFY2(again.out_text().startsWith("nothing to remove"), qPrintable(again.out_text()));
  }

  // A push the connection cut short left REMOTE.part: the next install goes on from its end.
  void cutPushGoesOnFromWhereItStopped() {
    const std::string kit = kit_path();
    QVERIFY2(!kit.empty(), "the install above packed no kit in this suite's cache");
    const std::string bytes = file_text(kit);
    QVERIFY(bytes.size() > 1000);
    const size_t half = bytes.size() / 2;
    QVERIFY(QDir().mkpath(QString::fromStdString(home_ + "/.local/lib")));
    std::ofstream(home_ + "/.local/lib/tokamak-kit.tar.gz.part", std::ios::binary).write(bytes.data(), half);
    const Installed r = install(torch());
    QVERIFY2(r.cli.code == 0, qPrintable(r.cli.err_text()));
    QCOMPARE(r.result.value("resumed_at", uint64_t{0}), uint64_t{half});
    QCOMPARE(r.result.value("changed", false), true);
    QVERIFY(path_exists(install_dir(home_) + "/tokamak"));
  }

  // Each thing that cannot work, from the facts of hosts clouds hand out: one line that names it and its fix.
  void eachRefusalIsOneLine() {
    const std::string fine =
        "arch=x86_64\nhome=/home/ubuntu\nos=Ubuntu 22.04.4 LTS\nglibc=2.35\nglibcxx=3.4.30\n"
        "gpu=NVIDIA H100 80GB HBM3, 580.65.06, 9.0\npython=3.10\nvenv=yes\npypi=yes\nfree_kb=100000000\n";
    InstallNeeds needs;
    needs.glibc = "2.34", needs.glibcxx = "3.4.30", needs.kit_kb = 100000, needs.torch_kb = 4500 * 1024;
    QCOMPARE(QString::fromStdString(install_problem(parse_host_facts(fine), needs)), QString());
    const HostFacts parsed = parse_host_facts(fine);
    QCOMPARE(int(parsed.gpus.size()), 1);
    QCOMPARE(QString::fromStdString(parsed.gpus[0].driver), QString("580.65.06"));
    auto with = [&](const std::string& key, const std::string& value) {
      std::string text = fine;
      const size_t at = text.find(key + "=");
      const size_t end = text.find('\n', at);
      return parse_host_facts(text.replace(at, end - at, key + "=" + value));
    };
    struct Case {
      HostFacts host;
      InstallNeeds needs;
      std::vector<std::string> says;
    };
    const std::vector<Case> cases = {
        {with("glibc", "2.31"), needs, {"glibc 2.31", "2.34", "Ubuntu 22.04"}},
        {with("arch", "aarch64"), needs, {"aarch64", "x86_64"}},
        {with("glibcxx", "3.4.29"), needs, {"3.4.29", "3.4.30", "Build there"}},
        {with("gpu", "Tesla V100-SXM2-16GB, 580.65.06, 7.0"), needs, {"V100", "7.0", "CUDA 12"}},
        {with("gpu", "NVIDIA A10, 535.104.05, 8.6"), needs, {"535.104.05", "580"}},
        {with("venv", "no"), needs, {"python3-venv"}},
        {with("python", ""), needs, {"no python3"}},
        {with("pypi", "no"), needs, {"PyPI", "--wheels"}},
        {with("free_kb", "2000000"), needs, {"free", "larger disk"}},
    };
    for (const Case& c : cases) {
      const std::string why = install_problem(c.host, c.needs);
      QVERIFY2(!why.empty(), c.says[0].c_str());
      QVERIFY2(why.find('\n') == std::string::npos && why.find("hint:") != std::string::npos, why.c_str());
      for (const std::string& s : c.says) QVERIFY2(why.find(s) != std::string::npos, (why + " lacks " + s).c_str());
    }
    // With torch's wheels pushed from here, PyPI is not needed.
    InstallNeeds wheels = needs;
    wheels.has_wheels = true;
    QCOMPARE(QString::fromStdString(install_problem(with("pypi", "no"), wheels)), QString());
  }

  // The kit runs on the images clouds use: nothing in it asks for a newer glibc than 2.34 or a newer
  // libstdc++ than Ubuntu 22.04's (GLIBCXX_3.4.30). Read from the kit the install above packed.
  void kitNeedsNoNewerRuntimeThanUbuntu2204() {
    const std::string kit = kit_path();
    QVERIFY(!kit.empty());
    const nlohmann::json j = nlohmann::json::parse(file_text(kit.substr(0, kit.size() - 7) + ".json"));
    const std::string glibc = j.value("glibc", ""), glibcxx = j.value("glibcxx", "");
    qInfo("the kit asks for GLIBC_%s and GLIBCXX_%s at most", glibc.c_str(), glibcxx.c_str());
    QVERIFY2(!glibc.empty() && !version_less("2.34", glibc), glibc.c_str());
    QVERIFY2(!glibcxx.empty() && !version_less("3.4.30", glibcxx), glibcxx.c_str());
  }
};

QTEST_GUILESS_MAIN(TestRemoteInstall)
#include "test_remote_install.moc"
