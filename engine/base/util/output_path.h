// The one rule for every path a user names as an output (exports of models, runs and plots, setups, sweeps'
// results, the checkpoint folder): what may be replaced, and what never is. Checked before any work, and again
// just before the rename where the work takes long (the file may have appeared meanwhile).
//   - Never replaced: anything that is not a regular file (a folder, a link, a FIFO, a device), a run store (an
//     SQLite file), a checkpoint (a safetensors file), and any file the command reads.
//   - An existing file of the same kind (by its extension) is replaced only when the user said so: --force on the
//     command line, or a save dialog that asked.
//   - A folder the command fills is written only when it is empty or holds only the files it makes.
// docs/RELIABILITY.md has the table of each output and what it may replace.
#pragma once
#include <string>
#include <vector>

namespace tokamak {

struct OutputRule {
  std::string what;                     // "the GGUF file", "the CSV export": for messages
  std::vector<std::string> extensions;  // the kind's (".gguf"); a file without one of these is never replaced
  bool replace = false;                 // --force, or the save dialog asked
  std::vector<std::string> inputs;      // what the command reads: never the output
  std::string force_hint = "pass --force to replace it";
  // check_output_folder: the names it makes are folders of their own (a TensorBoard export's run folders), each
  // checked by its own call; a name that is there as anything but a folder (a link included) is refused.
  bool made_are_folders = false;
};

// Throws an Error (one line: which path, why, what to do) when PATH may not be written as RULE says; returns when
// it may (it does not exist, or it is a regular file of the kind that may be replaced).
void check_output_file(const std::string& path, const OutputRule& rule);

// For a folder the command fills with MADE (file names inside it): throws unless the folder does not exist yet,
// is empty, or holds only names in MADE (which are then replaced only with rule.replace). A path that exists and
// is not a folder is refused. Each name in MADE that is there goes through check_output_file's never-replaced
// list (what the command reads, a link, a FIFO, the store, a Tokamak checkpoint), rule.replace or not.
void check_output_folder(const std::string& path, const std::vector<std::string>& made, const OutputRule& rule);

// What a file is, when it is something that is never replaced: "a folder", "a symbolic link", "a FIFO", "a
// device", "a socket", "a run store (an SQLite database)", "a checkpoint (safetensors)"; "" for anything else
// (a plain file, or a path that does not exist).
std::string protected_kind(const std::string& path);

}  // namespace tokamak
