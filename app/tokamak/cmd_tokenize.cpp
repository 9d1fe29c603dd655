// `tokamak tokenize`: the GPT-2 ids of a text or a file, the text of ids, or a dataset prepared into llm.c
// token shards. Ids go to stdout alone (space-separated, nothing added) so scripts can compare them with
// other tokenizers; everything meant for a person goes to stderr.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <thread>

#include "app/cli/commands.h"
#include "engine/base/data/dataset.h"
#include "engine/base/data/token_ids.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {
namespace {

struct TokenizeArgs {
  std::string text, file, ids, dataset, out;
  double val_fraction = 0.05;
  CLI::Option *encode_opt = nullptr, *file_opt = nullptr, *decode_opt = nullptr, *prepare_opt = nullptr;
};

int cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void write_stdout(const std::string& bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0)
    throw Error("cannot write to standard output", "check the pipe or the disk it goes to");
}

void print_ids(const std::vector<int32_t>& ids) {
  std::string line;
  line.reserve(ids.size() * 6 + 1);
  char buf[16];
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ' ';
    line.append(buf, std::to_chars(buf, buf + sizeof buf, ids[i]).ptr);
  }
  line += '\n';
  write_stdout(line);
}

void encode(const std::string& text) {
  EncodeStats stats;
  // Large files use every core; the result is the same as one thread's.
  const auto ids = text.size() >= (size_t(1) << 20) ? Tokenizer::gpt2().encode_parallel(text, cores(), {}, &stats)
                                                    : Tokenizer::gpt2().encode(text, &stats);
  print_ids(ids);
  if (stats.invalid_utf8)
    std::fprintf(stderr, "tokamak: %zu invalid UTF-8 sequences replaced by U+FFFD\n", stats.invalid_utf8);
}

std::string read_input(const std::string& path) {
  if (path != "-") return read_file(path);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// A percentage bar on stderr, redrawn in place only when the percentage changes.
class ProgressBar {
 public:
  bool operator()(uint64_t done, uint64_t total) {
    const int percent = total ? static_cast<int>(done * 100 / total) : 100;
    if (percent == shown_) return true;
    shown_ = percent;
    const int filled = percent * kWidth / 100;
    std::fprintf(stderr, "\rtokenizing [%s%s] %3d%%", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), percent);
    std::fflush(stderr);
    return true;
  }
  void finish() const {
    if (shown_ >= 0) std::fputc('\n', stderr);
  }

 private:
  static constexpr int kWidth = 40;
  int shown_ = -1;
};

void prepare(const TokenizeArgs& a) {
  if (a.out.empty())
    throw Error("--prepare needs --out DIR", "for example: tokamak tokenize --prepare default --out data/jargon");
  auto bar = std::make_shared<ProgressBar>();
  PreparedDataset result;
  try {
    result = prepare_dataset_into(a.dataset, a.out, a.val_fraction,
                                  [bar](uint64_t done, uint64_t total) { return (*bar)(done, total); });
  } catch (...) {
    bar->finish();
    throw;
  }
  bar->finish();
  for (const auto& w : result.warnings) std::fprintf(stderr, "tokamak: warning: %s\n", w.c_str());
  write_stdout(result.description + "\n");
}

void run_tokenize(const TokenizeArgs& a) {
  const int modes = int(a.encode_opt->count() > 0) + int(a.file_opt->count() > 0) + int(a.decode_opt->count() > 0) +
                    int(a.prepare_opt->count() > 0);
  if (modes != 1)
    throw Error("tokenize needs exactly one of --encode, --encode-file, --decode, --prepare",
                "for example: tokamak tokenize --encode \"hello world\"");
  if (a.encode_opt->count()) return encode(a.text);
  if (a.file_opt->count()) return encode(read_input(a.file));
  if (a.decode_opt->count()) return write_stdout(Tokenizer::gpt2().decode(parse_token_ids(a.ids)));
  prepare(a);
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto a = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("tokenize", "GPT-2 token ids of text, text of ids, or a dataset as token shards");
  a->encode_opt =
      cmd->add_option("--encode", a->text, "print the token ids of TEXT (no <|endoftext|> added)")->type_name("TEXT");
  a->file_opt =
      cmd->add_option("--encode-file", a->file, "print the token ids of a file's text ('-': stdin)")->type_name("PATH");
  a->decode_opt =
      cmd->add_option("--decode", a->ids, "write the bytes of the ids to stdout")->type_name("\"ID ID ...\"");
  a->prepare_opt = cmd->add_option("--prepare", a->dataset,
                                   "write DATASET ('default', a text file or folder, or .bin shards) as shards")
                       ->type_name("DATASET");
  cmd->add_option("--out", a->out, "folder for --prepare's train_*.bin and val_*.bin shards")->type_name("DIR");
  cmd->add_option("--val-fraction", a->val_fraction, "tail of the tokens --prepare writes as val shards (0 = none)")
      ->type_name("F")
      ->check(CLI::Range(0.0, 0.999));
  cmd->callback([a] { run_tokenize(*a); });
}

}  // namespace tokamak::cli
