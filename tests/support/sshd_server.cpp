// SshdServer (see sshd_server.h).
#include "tests/support/sshd_server.h"
#include "tests/support/test_support.h"

#include "engine/base/util/files.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

namespace tokamak::test {
namespace {

bool keygen(const QString& path) {
  QFile::remove(path), QFile::remove(path + ".pub");
  return QProcess::execute("ssh-keygen", {"-q", "-t", "ed25519", "-N", "", "-C", "tokamak-test", "-f", path}) == 0;
}

QString userName() {
  const passwd* pw = ::getpwuid(::getuid());
  return pw ? QString::fromLocal8Bit(pw->pw_name) : "root";
}

}  // namespace

QStringList host_environment(const std::string& host_data, const QStringList& more) {
  return QStringList{"XDG_DATA_HOME=" + QString::fromStdString(host_data),
                     "TOKAMAK_CACHE=" + qEnvironmentVariable("TOKAMAK_CACHE")} +
         more;
}

SshdServer::SshdServer(const QStringList& set_env, const QStringList& launcher)
    : set_env_(set_env), launcher_(launcher) {
  if (!QFile::exists("/usr/sbin/sshd")) {
    error_ = "sshd is not installed (Debian: openssh-server; scripts/setup.sh installs it)";
    return;
  }
  // sshd checks for its privilege-separation folder, a path compiled in.
  QDir().mkpath("/run/sshd");
  if (!keygen(dir_.filePath("host_key")) || !keygen(dir_.filePath("user")) || !keygen(strangerKey())) {
    error_ = "ssh-keygen failed";
    return;
  }
  QFile::copy(dir_.filePath("user.pub"), dir_.filePath("authorized_keys"));
  QFile(dir_.filePath("known_hosts")).open(QIODevice::WriteOnly);
  QDir().mkpath(dir_.filePath("cm"));
  port_ = free_port();
  ok_ = start();
}

SshdServer::~SshdServer() { stop(); }

QString SshdServer::writeSshConfig(const std::string& alias, const std::string& more) const {
  const SshOptions o = client();
  const QString file = path("ssh_config");
  write_file_atomically(file.toStdString(), "Host " + alias + "\n  HostName 127.0.0.1\n  Port " +
                                                std::to_string(port_) + "\n  User " + target().user +
                                                "\n  IdentityFile " + o.identity +
                                                "\n  IdentitiesOnly yes\n  UserKnownHostsFile " + o.known_hosts +
                                                "\n  StrictHostKeyChecking accept-new\n" + more);
  return file;
}

bool SshdServer::start() {
  QFile cfg(dir_.filePath("sshd_config"));
  if (!cfg.open(QIODevice::WriteOnly)) return false;
  QString text = "ListenAddress 127.0.0.1\nHostKey " + dir_.filePath("host_key") + "\nPidFile " +
                 dir_.filePath("sshd.pid") + "\nAuthorizedKeysFile " + dir_.filePath("authorized_keys") +
                 "\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                 "PermitRootLogin prohibit-password\nLogLevel INFO\n";
  if (!set_env_.isEmpty()) text += "SetEnv " + set_env_.join(' ') + "\n";
  cfg.write(text.toUtf8());
  cfg.close();
  sshd_.setProcessChannelMode(QProcess::MergedChannels);
  const QStringList sshd = {"/usr/sbin/sshd", "-D", "-e", "-f", cfg.fileName(), "-p", QString::number(port_)};
  if (launcher_.isEmpty()) sshd_.start(sshd.front(), sshd.mid(1));
  else sshd_.start(launcher_.front(), launcher_.mid(1) + sshd);
  QByteArray log;
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < 10000 && sshd_.state() != QProcess::NotRunning) {
    sshd_.waitForReadyRead(200);
    log += sshd_.readAll();
    if (log.contains("Server listening")) return true;
  }
  error_ = "sshd did not start: " + QString::fromLocal8Bit(log).trimmed();
  return false;
}

void SshdServer::stop() {
  if (sshd_.state() == QProcess::NotRunning) return;
  ::kill(static_cast<pid_t>(sshd_.processId()), SIGTERM);
  if (!sshd_.waitForFinished(5000)) sshd_.kill(), sshd_.waitForFinished();
}

bool SshdServer::restartWithNewHostKey() {
  stop();
  return keygen(dir_.filePath("host_key")) && (ok_ = start());
}

SshTarget SshdServer::target() const {
  SshTarget t;
  t.user = userName().toStdString(), t.host = "127.0.0.1", t.port = port_;
  return t;
}

SshOptions SshdServer::client() const {
  SshOptions o;
  o.identity = dir_.filePath("user").toStdString();
  o.known_hosts = dir_.filePath("known_hosts").toStdString();
  o.control_dir = dir_.filePath("cm").toStdString();
  o.config_file = "/dev/null";  // the user's own ~/.ssh/config must not change what the test does
  o.connect_timeout_s = 5;
  o.alive_interval_s = 2;
  return o;
}

QStringList SshdServer::cli_args() const {
  const SshOptions o = client();
  return {"--host",        QString::fromStdString(target().spec()), "--identity",   QString::fromStdString(o.identity),
          "--known-hosts", QString::fromStdString(o.known_hosts),   "--ssh-config", "/dev/null"};
}

}  // namespace tokamak::test
