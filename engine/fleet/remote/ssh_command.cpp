// ssh command lines and their failures (see ssh_command.h).
#include "engine/fleet/remote/ssh_command.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "engine/base/util/error.h"

namespace tokamak {

std::string SshTarget::spec() const {
  return (user.empty() ? "" : user + "@") + host + (port > 0 ? ":" + std::to_string(port) : "");
}

SshTarget parse_ssh_target(const std::string& text) {
  SshTarget t;
  std::string rest = text;
  auto bad = [&](const std::string& why) {
    return Error("'" + text + "' is not an SSH host: " + why,
                 "type a Host of ~/.ssh/config, or user@host, or user@host:port");
  };
  if (rest.empty()) throw bad("it is empty");
  if (rest.find_first_of(" \t\n'\"\\;|&$`") != std::string::npos) throw bad("it holds a space or a shell character");
  if (rest[0] == '-') throw bad("it starts with '-'");
  if (size_t at = rest.find('@'); at != std::string::npos) {
    t.user = rest.substr(0, at), rest = rest.substr(at + 1);
    if (t.user.empty()) throw bad("the user before '@' is empty");
  }
  if (size_t colon = rest.rfind(':'); colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit))
      throw bad("the port after ':' is not a number");
    t.port = std::stoi(port);
    if (t.port < 1 || t.port > 65535) throw bad("the port is not between 1 and 65535");
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) throw bad("the host is empty");
  t.host = rest;
  return t;
}

std::string shell_quote(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "@%_-+=:,./") == std::string::npos)
    return text;
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

static void common_options(std::vector<std::string>& a, const SshOptions& o) {
  auto opt = [&](const std::string& kv) { a.push_back("-o"), a.push_back(kv); };
  if (!o.config_file.empty()) a.push_back("-F"), a.push_back(o.config_file);
  opt("BatchMode=yes");
  opt("ConnectTimeout=" + std::to_string(o.connect_timeout_s));
  opt("ServerAliveInterval=" + std::to_string(o.alive_interval_s));
  opt("ServerAliveCountMax=3");
  if (o.accept_new_host) opt("StrictHostKeyChecking=accept-new");
  if (!o.known_hosts.empty()) opt("UserKnownHostsFile=" + o.known_hosts);
  if (!o.identity.empty()) a.push_back("-i"), a.push_back(o.identity), opt("IdentitiesOnly=yes");
  if (!o.control_dir.empty()) {
    opt("ControlMaster=auto");
    opt("ControlPath=" + o.control_dir + "/%C");
    opt("ControlPersist=" + std::to_string(o.control_persist_s));
  }
}

static void destination(std::vector<std::string>& a, const SshTarget& t) {
  if (t.port > 0) a.push_back("-p"), a.push_back(std::to_string(t.port));
  a.push_back((t.user.empty() ? "" : t.user + "@") + t.host);
}

std::vector<std::string> ssh_argv(const SshTarget& target, const SshOptions& options,
                                  const std::vector<std::string>& remote_command) {
  std::vector<std::string> a = {"ssh"};
  common_options(a, options);
  destination(a, target);
  std::string line;
  for (const std::string& w : remote_command) line += (line.empty() ? "" : " ") + shell_quote(w);
  a.push_back("--");
  a.push_back(line);
  return a;
}

std::vector<std::string> ssh_close_argv(const SshTarget& target, const SshOptions& options) {
  std::vector<std::string> a = {"ssh"};
  common_options(a, options);
  a.push_back("-O"), a.push_back("exit");
  destination(a, target);
  return a;
}

static bool has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

static std::string last_said(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  while (!last.empty() && (last.back() == '\r' || last.back() == ' ')) last.pop_back();
  return last;
}

std::string describe_ssh_failure(const SshTarget& target, int code, const std::string& err,
                                 const std::string& tokamak) {
  const std::string h = target.spec();
  // Only the shell's own words for a program it cannot find (exit 127): "No such file or directory" is also
  // how the host's tokamak says that a path it was given is missing.
  if (code == 127 || has(err, "command not found"))
    if (code != 255)
      return "Tokamak is not installed on " + h + " ('" + tokamak +
             "' was not found there) (hint: `tokamak remote install --host " + h +
             "`, or Install… beside Test connection; or set the host's tokamak command; docs/REMOTE.md)";
  if (code != 255) {
    const std::string last = last_said(err);
    return last.empty() ? "the command on " + h + " failed with exit code " + std::to_string(code) : last;
  }
  if (has(err, "REMOTE HOST IDENTIFICATION HAS CHANGED") || has(err, "Host key verification failed"))
    return "the host key of " + h +
           " has changed (or is not the one known) and ssh refuses to connect (hint: if the server was "
           "reinstalled, run `ssh-keygen -R " +
           target.host + "` and connect once with `ssh " + h + "`; otherwise someone may be in the way)";
  if (has(err, "Permission denied"))
    return h +
           " refused the login (Permission denied: no key it accepts; Tokamak never asks for a password) "
           "(hint: `ssh-copy-id " +
           h + "` installs your key there; check with `ssh " + h + " true`)";
  if (has(err, "Connection refused"))
    return "cannot reach " + h + ": connection refused (hint: is sshd running there, and is the port right?)";
  if (has(err, "Could not resolve hostname"))
    return "cannot reach " + h + ": no such host name (hint: check the name, or add a Host entry to ~/.ssh/config)";
  if (has(err, "timed out") || has(err, "No route to host") || has(err, "Network is unreachable"))
    return "cannot reach " + h + ": " + (has(err, "timed out") ? "the connection timed out" : "no route to it") +
           " (hint: check the network, VPN or ProxyJump)";
  if (has(err, "Broken pipe") || has(err, "Connection reset") || has(err, "closed by remote host") ||
      has(err, "Timeout, server"))
    return "the connection to " + h + " was lost";
  const std::string last = last_said(err);
  return "ssh to " + h + " failed" + (last.empty() ? "" : ": " + last);
}

std::vector<std::string> ssh_config_hosts(const std::string& text) {
  std::vector<std::string> hosts;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key, name;
    if (!(words >> key)) continue;
    std::transform(key.begin(), key.end(), key.begin(), ::tolower);
    if (key.rfind("host=", 0) == 0) {  // "Host=name" is allowed too
      std::istringstream first(line.substr(line.find('=') + 1));
      key = "host", words.swap(first);
    }
    if (key != "host") continue;
    while (words >> name) {
      if (name[0] == '#') break;
      if (name.find_first_of("*?!") != std::string::npos) continue;
      if (std::find(hosts.begin(), hosts.end(), name) == hosts.end()) hosts.push_back(name);
    }
  }
  return hosts;
}

}  // namespace tokamak
