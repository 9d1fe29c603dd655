// The command lines of the system OpenSSH client that reach a Tokamak host, and what its failures mean in one
// line. Strings only (no process, no Qt): the studio (ui/remote/) and the tests run the same argv. Choices and
// why: BatchMode (never a password prompt the studio cannot answer), one shared connection (ControlMaster
// with a short ControlPath: unix socket paths are limited to ~108 bytes, so %C, a hash), ServerAliveInterval
// (a dead network is noticed in seconds, not at TCP's minutes), the user's own ~/.ssh/config, keys, agent
// and ProxyJump untouched unless a field below overrides them.
#pragma once
#include <string>
#include <vector>

namespace tokamak {

// Where: a Host entry of ~/.ssh/config ("gpu1"), or user@host[:port] as typed.
struct SshTarget {
  std::string user, host;
  int port = 0;              // 0: ssh's default (or the config's Port)
  std::string spec() const;  // as the user would type it again
};
// Throws an Error naming the text when it is not HOST, USER@HOST or USER@HOST:PORT.
SshTarget parse_ssh_target(const std::string& text);

struct SshOptions {
  std::string control_dir;      // where the shared connection's socket lives ("" = no sharing)
  std::string known_hosts;      // UserKnownHostsFile ("" = ssh's default)
  std::string identity;         // -i KEY ("" = the user's keys and agent)
  std::string config_file;      // -F FILE ("" = ~/.ssh/config)
  bool accept_new_host = true;  // StrictHostKeyChecking=accept-new: a first visit is learnt, a change refused
  int alive_interval_s = 5;     // ServerAliveInterval; three missed answers end the connection
  int connect_timeout_s = 10;
  int control_persist_s = 60;  // how long the shared connection outlives its last user
};

// "ssh -o ... [-p PORT] [user@]host -- REMOTE", REMOTE joined as one shell command line (quoted).
std::vector<std::string> ssh_argv(const SshTarget& target, const SshOptions& options,
                                  const std::vector<std::string>& remote_command);
// ssh -O exit: ends the shared connection (and the ssh master process) for TARGET.
std::vector<std::string> ssh_close_argv(const SshTarget& target, const SshOptions& options);

// 'text' for a POSIX shell (the remote login shell parses the command line ssh sends).
std::string shell_quote(const std::string& text);

// One line for a failed ssh command: what went wrong on the way to TARGET and how to fix it, from ssh's exit
// code and its stderr. Remote commands that ran and failed (code != 255) are described by their own last
// error line; 127 means the command is not installed there (TOKAMAK names what was run).
std::string describe_ssh_failure(const SshTarget& target, int exit_code, const std::string& stderr_text,
                                 const std::string& tokamak = "tokamak");

// The Host names of an ssh config file's text, in order, without patterns (*, ?, !) and duplicates.
std::vector<std::string> ssh_config_hosts(const std::string& config_text);

}  // namespace tokamak
