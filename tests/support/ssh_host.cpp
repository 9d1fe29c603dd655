#include "tests/support/ssh_host.h"

#include "engine/base/util/files.h"
#include "tests/support/run_reaper.h"

namespace tokamak::test {

SshHost::SshHost(const ScratchEnv& env, const QStringList& more_env, const std::string& alias,
                 const std::string& more_config)
    : data_(env.path("host-data")), alias_(alias) {
  make_dirs(data_);
  sshd_ = std::make_unique<SshdServer>(host_environment(data_, more_env));
  if (!sshd_->ok() || alias.empty()) return;
  ssh_config_ = sshd_->writeSshConfig(alias, more_config);
  qputenv("TOKAMAK_SSH_CONFIG", ssh_config_.toLocal8Bit());
}

SshHost::~SshHost() {
  if (sshd_->ok()) {
    direct().close();
    // `tokamak remote` and the studio share one connection per host in the cache's ssh/ folder.
    SshOptions shared = sshd_->client();
    shared.control_dir = cache_dir() + "/ssh";
    RemoteHost(sshd_->target(), shared).close();
    if (!alias_.empty()) by_alias().close();
  }
  sshd_.reset();
  if (!alias_.empty()) qunsetenv("TOKAMAK_SSH_CONFIG");
}

RemoteHost SshHost::direct(const std::string& tokamak) const {
  return RemoteHost(sshd_->target(), sshd_->client(), tokamak);
}

RemoteHost SshHost::by_alias(const std::string& tokamak) const {
  SshOptions o;
  o.config_file = ssh_config_.toStdString(), o.control_dir = cache_dir() + "/ssh";
  make_dirs(o.control_dir);
  return RemoteHost(parse_ssh_target(alias_), o, tokamak);
}

void SshHost::end_runs() const { kill_runs_under(data_); }

}  // namespace tokamak::test
