// File helpers shared by the engine: where caches and assets live, and writes that never leave a
// half-written file behind (write to a temporary name in the same folder, then rename).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace tokamak {

// $TOKAMAK_CACHE, else $XDG_CACHE_HOME/tokamak, else ~/.cache/tokamak. Created on first use.
std::string cache_dir();
// cache_dir()/assets/NAME; else an installed package's copy (<prefix>/share/tokamak/assets/NAME); else, for the
// default corpus, Debian's jargon-text unpacked into the cache; else an Error that says how to get it.
std::string asset_path(const std::string& name);
// Where tokenized datasets are cached: $TOKAMAK_DATASETS, else cache_dir()/datasets. Separate from the cache
// so a machine can start with no prepared data while keeping the set-up's venv and assets (.ci/run does).
std::string datasets_dir();
// The presets the product ships and opens (KIND: "ladders", "sweeps"): an installed package's
// <prefix>/share/tokamak/KIND, else the source tree's resources/KIND (a program run from the build it was built
// in); "" when neither is there.
std::string presets_dir(const std::string& kind);
// $XDG_DATA_HOME/tokamak, else ~/.local/share/tokamak. Created on first use.
std::string data_dir();
// The user's settings: $XDG_CONFIG_HOME/tokamak (~/.config/tokamak), not created here.
std::string config_dir();

std::string read_file(const std::string& path);
// Calls write(path_of_temporary) and renames the temporary onto path only if write returns without throwing; the
// file and then its folder are synced, so after a power cut PATH is the old file or the whole new one.
void write_atomically(const std::string& path, const std::function<void(const std::string& tmp)>& write);
void write_file_atomically(const std::string& path, const std::string& contents);
// As write_file_atomically, for a file that may hold a secret (a webhook URL, a token): the file is 0600 from its
// creation and its folder is made 0700.
void write_private_file(const std::string& path, const std::string& contents);
// Runs fn holding an exclusive flock on LOCK_PATH (created when missing): a read-modify-write of a file that
// several processes update (a cache of measurements) then loses nobody's entry. Without a lock file (a read-only
// folder) fn runs unlocked.
void with_file_lock(const std::string& lock_path, const std::function<void()>& fn);

// NAME made safe as one component of a path (run names become checkpoint folders): '/', '\\' and control
// characters become '_', a leading '.' gets a '_' before it (no "..", no hidden folder), at most 100 bytes cut
// at a character boundary; bytes that are not UTF-8 become '_', so the result is always valid UTF-8.
std::string safe_file_name(const std::string& name);

// Deletes a folder and everything in it (links are removed, never followed); a missing path is fine.
// Best effort, never throws. Not std::filesystem::remove_all: in a process that links LibTorch, libtorch.so's
// own exported copy of it is the one called, and its error_code overload jumps to address 0.
void remove_tree(const std::string& path);

bool path_exists(const std::string& path);
bool is_directory(const std::string& path);
void make_dirs(const std::string& path);
// A stable 64-bit FNV-1a hash, for cache keys.
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 1469598103934665603ULL);
std::string hex64(uint64_t value);

}  // namespace tokamak
