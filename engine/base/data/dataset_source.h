// What a dataset source names, resolved to files: text documents to tokenize, or token shards to use as they
// are. Kept apart from the tokenizing and caching so the rules for what counts as what live in one place.
#pragma once
#include <string>
#include <vector>

namespace tokamak {

struct ResolvedSource {
  enum class Kind { kText, kShards, kJsonl } kind = Kind::kText;
  std::string label;                  // short name for descriptions: "jargon.txt", "docs/", "data/*.bin"
  std::string stem;                   // file-name-safe name for the cache folder: "jargon", "docs"
  std::vector<std::string> files;     // text documents in join order, every shard (train and val), or the .jsonl file
  std::vector<std::string> warnings;  // one line each: entries of a folder that were skipped (symlink loops)
};

// Rules (the error names the path and says what to give instead):
//  - "" or "default": the default corpus asset jargon.txt.
//  - a path that does not exist but holds * ? or [: a glob(3) pattern; every match is a shard.
//  - a relative NAME or NAME/FILE that is not a path here: data_dir()/datasets/NAME[/FILE] (where `tokamak
//    datasets get` puts what it fetches); a catalog name that is not there yet is an Error saying how to get it.
//  - anything else that is not a regular file (a FIFO, a device, a socket) is refused: reading one would block
//    or never end.
//  - a file: a shard when its name ends in .bin or it starts with the shard magic; JSON-lines when its name ends
//    in .jsonl (one document per line, in a field named by data.jsonl_field); else one text document.
//  - a folder, walked recursively in sorted path order, skipping names that start with '.':
//    if it holds any .bin file, those .bin files are its shards and nothing else is read;
//    otherwise every non-empty file is a document (a .jsonl file in a folder too: name the file to read its lines),
//    except files with a NUL byte in their first 8 KiB (images, archives: anything that is not text). Entries whose
//    type cannot be read (a symlink loop, a dangling link) are skipped with a warning; FIFOs and devices inside a
//    folder are skipped silently.
ResolvedSource resolve_source(const std::string& source);

// llm.c's naming: "fineweb_val_000000.bin" is validation; so is our own "val_000000.bin".
bool is_val_shard_name(const std::string& path);

}  // namespace tokamak
