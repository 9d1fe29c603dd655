// hub_env (see hub_env.h).
#include "engine/fleet/hub/hub_env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "engine/base/util/files.h"

namespace tokamak {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

bool truthy(std::string v) {
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

std::string encode_segment(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') out += static_cast<char>(c);
    else out += '%', out += hex[c >> 4], out += hex[c & 15];
  }
  return out;
}

}  // namespace

HubEnv hub_env() {
  HubEnv e;
  e.endpoint = env("HF_ENDPOINT").empty() ? "https://huggingface.co" : env("HF_ENDPOINT");
  while (!e.endpoint.empty() && e.endpoint.back() == '/') e.endpoint.pop_back();
  e.offline = truthy(env("HF_HUB_OFFLINE"));
  const std::string home = env("HOME").empty() ? "/tmp" : env("HOME");
  const std::string hf_home = !env("HF_HOME").empty()          ? env("HF_HOME")
                              : !env("XDG_CACHE_HOME").empty() ? env("XDG_CACHE_HOME") + "/huggingface"
                                                               : home + "/.cache/huggingface";
  e.token_file = !env("HF_TOKEN_PATH").empty() ? env("HF_TOKEN_PATH") : hf_home + "/token";
  if (!trimmed(env("HF_TOKEN")).empty()) {
    e.token = trimmed(env("HF_TOKEN")), e.token_source = "HF_TOKEN";
  } else if (path_exists(e.token_file)) {
    try {
      e.token = trimmed(read_file(e.token_file));
      if (!e.token.empty()) e.token_source = e.token_file;
    } catch (const std::exception&) {
      // an unreadable token file is no token: a gated repo then answers 401, which names the file
    }
  }
  return e;
}

std::string hub_file_url(const std::string& endpoint, const std::string& repo, const std::string& file) {
  return endpoint + "/datasets/" + repo + "/resolve/main/" + encode_segment(file);
}

std::string hub_tree_url(const std::string& endpoint, const std::string& repo) {
  return endpoint + "/api/datasets/" + repo + "/tree/main";
}

}  // namespace tokamak
