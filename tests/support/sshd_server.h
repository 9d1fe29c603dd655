// A real OpenSSH server (Debian's openssh-server) for the tests that drive a host over SSH: sshd on a free
// loopback port, everything in a temporary folder (config, a throwaway host key, a user key, its
// authorized_keys, the pid file), nothing of the system's configuration touched. Started with
// `sshd -D -e -f CFG -p PORT` (docs: /work/shared/DESIGN.md, "Runs on servers"), ready when its log says
// "Server listening", ended by pid. Sessions get SET_ENV (sshd's SetEnv), so a test points the host's data
// and cache folders into its own scratch folder.
#pragma once
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <string>

#include "engine/fleet/remote/ssh_command.h"

namespace tokamak::test {

// The environment of a test host's sessions: its own data folder (its runs and store, apart from this side's)
// and this side's cache (tokenizer assets, corpus); MORE adds to it.
QStringList host_environment(const std::string& host_data, const QStringList& more = {});

class SshdServer {
 public:
  // LAUNCHER: a command that ends by exec'ing its arguments (the sshd command line), to run sshd in another
  // world, e.g. a mount namespace with a tiny filesystem (`unshare -m sh -c 'mount … && exec "$@"' sh`).
  explicit SshdServer(const QStringList& set_env = {}, const QStringList& launcher = {});
  ~SshdServer();
  bool ok() const { return ok_; }
  const QString& error() const { return error_; }  // why it did not start
  int port() const { return port_; }

  // The client side: this user at 127.0.0.1:PORT, the accepted key, a known_hosts file of the test's own
  // (empty at first: the first connection learns the host key) and a folder for the shared connection.
  SshTarget target() const;
  SshOptions client() const;
  // client() as the CLI's options (`--host SPEC --identity … --known-hosts … --ssh-config /dev/null`), for a
  // test that runs `tokamak remote …`, `datasets get --host` or `slurm … --host` against this server.
  QStringList cli_args() const;
  QString path(const QString& name) const { return dir_.filePath(name); }
  // Writes an ssh config (path("ssh_config")) whose `Host ALIAS` reaches this server as client() does, then
  // MORE as it is; returns its path (for TOKAMAK_SSH_CONFIG: the studio's host list and `tokamak remote`).
  QString writeSshConfig(const std::string& alias, const std::string& more = {}) const;
  // A second key pair that the server does not accept.
  QString strangerKey() const { return dir_.filePath("stranger"); }

  // Stops sshd and starts it again on the same port with a new host key (a reinstalled server).
  bool restartWithNewHostKey();
  void stop();

 private:
  bool start();

  QTemporaryDir dir_;
  QProcess sshd_;
  QStringList set_env_, launcher_;
  int port_ = 0;
  bool ok_ = false;
  QString error_;
};

}  // namespace tokamak::test
