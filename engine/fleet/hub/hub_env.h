// The Hugging Face Hub's own conventions, read the way its Python client reads them, so mirrors, tokens and
// offline mode work as people expect: HF_ENDPOINT (default https://huggingface.co), HF_TOKEN or the token
// file (HF_TOKEN_PATH, else $HF_HOME/token, HF_HOME defaulting to $XDG_CACHE_HOME/huggingface or
// ~/.cache/huggingface), HF_HUB_OFFLINE=1 (no request at all).
#pragma once
#include <string>

namespace tokamak {

struct HubEnv {
  std::string endpoint;      // no trailing slash
  std::string token;         // "" = anonymous
  std::string token_source;  // "HF_TOKEN" or the token file's path; "" when there is no token
  std::string token_file;    // where a token file would be read from (named in 401/403 errors)
  bool offline = false;      // HF_HUB_OFFLINE: 1, true, yes or on
};

HubEnv hub_env();

// ENDPOINT/datasets/REPO/resolve/main/FILE, each path segment of FILE percent-encoded.
std::string hub_file_url(const std::string& endpoint, const std::string& repo, const std::string& file);
// ENDPOINT/api/datasets/REPO/tree/main: the repository's top-level files as JSON (path, size, lfs.oid).
std::string hub_tree_url(const std::string& endpoint, const std::string& repo);

}  // namespace tokamak
