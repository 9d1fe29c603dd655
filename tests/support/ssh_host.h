// A test host reached over SSH, spelled once for the suites that drive one: a real sshd on loopback
// (sshd_server.h) whose sessions keep their runs and store in a data folder of their own inside the suite's
// scratch folder (sharing this side's cache: tokenizer assets, corpus), optionally named ALIAS in an ssh
// config of the test's own that TOKAMAK_SSH_CONFIG points at (how the studio and `tokamak remote` find it).
#pragma once
#include <QString>
#include <QStringList>
#include <memory>
#include <string>

#include "engine/fleet/remote/remote_host.h"
#include "tests/support/scratch_env.h"
#include "tests/support/sshd_server.h"

namespace tokamak::test {

class SshHost {
 public:
  // MORE_ENV adds to the host's session environment; with an ALIAS the ssh config is written (then
  // MORE_CONFIG as it is) and exported.
  explicit SshHost(const ScratchEnv& env, const QStringList& more_env = {}, const std::string& alias = {},
                   const std::string& more_config = {});
  // Closes the shared connections (the test's and the studio's), stops sshd, unsets TOKAMAK_SSH_CONFIG.
  ~SshHost();
  bool ok() const { return sshd_->ok(); }
  const QString& error() const { return sshd_->error(); }
  const std::string& data() const { return data_; }  // the host's XDG_DATA_HOME
  SshdServer& sshd() const { return *sshd_; }
  const QString& ssh_config() const { return ssh_config_; }  // empty without an alias
  // The host as the tests reach it (target and key given directly), running TOKAMAK there.
  RemoteHost direct(const std::string& tokamak = "tokamak") const;
  // The host as the studio reaches it: by alias through the ssh config, over the studio's shared connection.
  RemoteHost by_alias(const std::string& tokamak = "tokamak") const;
  // Ends by pid every run a failed test left training on the host (run_reaper.h): a suite's cleanup().
  void end_runs() const;

 private:
  std::string data_, alias_;
  std::unique_ptr<SshdServer> sshd_;
  QString ssh_config_;
};

}  // namespace tokamak::test
