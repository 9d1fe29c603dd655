// Dataset preparation: text is tokenized once into llm.c shards under datasets_dir()/<name>-<key>/,
// where the key hashes the bytes of every document (and their boundaries) with the tokenizer's fingerprint.
// The manifest is written last and atomically, so an interrupted prepare never looks like a finished one.
#include "engine/base/data/dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>

#include "engine/base/data/dataset_source.h"
#include "engine/base/data/jsonl.h"
#include "engine/base/data/shard.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"

namespace fs = std::filesystem;

namespace tokamak {
namespace {

// Bumped when the layout of cached shards changes, so old caches are not mistaken for new ones.
constexpr const char* kCacheFormat = "tokamak-dataset-v1";
// Documents below this size are encoded whole on one thread each; larger ones use every core.
constexpr size_t kSmallDocument = 1 << 20;

// One document's text: a whole text file, or one line's field of a JSON-lines file.
class Document {
 public:
  virtual ~Document() = default;
  virtual std::string_view text() const = 0;
};

// A read-only view of a text file; mmap avoids a copy of corpora that are gigabytes long.
class TextFile : public Document {
 public:
  explicit TextFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw Error("cannot open '" + path + "': " + std::strerror(errno), "check the path and its permissions");
    struct stat st {};
    ::fstat(fd, &st);
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (map_ == MAP_FAILED) {
        ::close(fd);
        throw Error("cannot memory-map '" + path + "': " + std::strerror(errno), "check that it is a regular file");
      }
    }
    ::close(fd);
  }
  ~TextFile() override {
    if (map_) ::munmap(map_, size_);
  }
  TextFile(const TextFile&) = delete;
  TextFile& operator=(const TextFile&) = delete;
  std::string_view text() const override { return {static_cast<const char*>(map_), size_}; }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
};

// A document held in memory elsewhere (JSON-lines documents are parsed out of their lines).
class TextView : public Document {
 public:
  explicit TextView(std::string_view text) : text_(text) {}
  std::string_view text() const override { return text_; }

 private:
  std::string_view text_;
};

// Opens document i of a dataset (0-based, in join order).
using OpenDocument = std::function<std::unique_ptr<Document>(size_t i)>;

std::string with_commas(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

int cores() { return std::max(1u, std::thread::hardware_concurrency()); }

// Tokenizes the documents in order into writer, 50256 between documents. Runs of small documents are
// encoded in parallel (one document per task); large documents are split by the tokenizer itself.
// invalid[i] becomes the number of invalid UTF-8 sequences of document i (each encoded as U+FFFD).
void tokenize_documents(size_t count, const OpenDocument& open, uint64_t total_bytes, ShardWriter& writer,
                        const Progress& progress, std::vector<size_t>& invalid) {
  invalid.assign(count, 0);
  const Tokenizer& tok = Tokenizer::gpt2();
  uint64_t done = 0;
  auto report = [&](uint64_t d) {
    if (progress && !progress(d, total_bytes))
      throw Cancelled("tokenizing was cancelled", "start it again; nothing half-written is kept");
  };
  bool first = true;
  auto emit = [&](const std::vector<int32_t>& ids) {
    if (!first) writer.add(Tokenizer::kEndOfText);
    first = false;
    writer.add(ids.data(), ids.size());
  };
  size_t i = 0;
  while (i < count) {
    std::unique_ptr<Document> doc = open(i);
    if (doc->text().size() >= kSmallDocument) {
      uint64_t base = done;
      std::function<bool(size_t, size_t)> inner;
      if (progress) inner = [&](size_t d, size_t) { return progress(base + d, total_bytes); };
      EncodeStats stats;
      emit(tok.encode_parallel(doc->text(), cores(), inner, &stats));
      invalid[i] = stats.invalid_utf8;
      done += doc->text().size();
      report(done);
      ++i;
      continue;
    }
    // A batch of consecutive small documents, up to 8 MB, encoded by all cores at once.
    std::vector<std::unique_ptr<Document>> batch;
    const size_t first_index = i;
    size_t batch_bytes = 0;
    while (i < count && batch_bytes < (8u << 20)) {
      if (!doc) doc = open(i);
      if (doc->text().size() >= kSmallDocument) break;
      batch_bytes += doc->text().size();
      batch.push_back(std::move(doc));
      ++i;
    }
    std::vector<std::vector<int32_t>> ids(batch.size());
    std::vector<EncodeStats> stats(batch.size());
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> failed(batch.size());
    auto work = [&] {
      for (size_t k; (k = next.fetch_add(1)) < batch.size();) try {
          ids[k] = tok.encode(batch[k]->text(), &stats[k]);
        } catch (...) {
          failed[k] = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < std::min<int>(cores(), static_cast<int>(batch.size())); ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    for (const auto& e : failed)
      if (e) std::rethrow_exception(e);
    for (const auto& v : ids) emit(v);
    for (size_t k = 0; k < batch.size(); ++k) invalid[first_index + k] = stats[k].invalid_utf8;
    done += batch_bytes;
    report(done);
  }
}

// fnv1a64 runs at about 1 GB/s on one core; large texts are hashed in 64 MB chunks on every core so that a
// cache hit on a multi-GB corpus does not cost seconds. The chunk hashes are then hashed into key.
uint64_t hash_text(std::string_view text, uint64_t key) {
  constexpr size_t kChunk = size_t(64) << 20;
  const size_t n = (text.size() + kChunk - 1) / kChunk;
  if (n <= 1) return fnv1a64(text.data(), text.size(), key);
  std::vector<uint64_t> parts(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < n;)
      parts[k] = fnv1a64(text.data() + k * kChunk, std::min(kChunk, text.size() - k * kChunk));
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(cores(), static_cast<int>(n)); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return fnv1a64(parts.data(), parts.size() * sizeof(uint64_t), key);
}

nlohmann::json read_manifest(const std::string& path) {
  try {
    return nlohmann::json::parse(read_file(path));
  } catch (const std::exception&) {
    return nullptr;  // unreadable or half-written by hand: prepare again
  }
}

// A cache hit only when the manifest is complete and every shard it lists still has a valid header.
bool load_cached(const std::string& dir, PreparedDataset& out) {
  nlohmann::json m = read_manifest(dir + "/manifest.json");
  try {
    if (!m.is_object() || m.value("format", "") != kCacheFormat) return false;
    std::vector<std::string> shards;
    uint64_t tokens = 0;
    for (const auto& name : m.at("shards")) {
      shards.push_back(dir + "/" + name.get<std::string>());
      tokens += shard_token_count(shards.back());
    }
    if (shards.empty()) return false;
    out.train_shards = std::move(shards);
    out.train_tokens = tokens;
    out.description = m.value("description", "") + " (cached)";
    if (m.contains("warnings")) out.warnings = m.at("warnings").get<std::vector<std::string>>();
    return true;
  } catch (const std::exception&) {
    return false;  // a shard is gone or damaged: prepare again, overwriting it
  }
}

PreparedDataset prepare_text(const ResolvedSource& src, const std::string& source, const Progress& progress,
                             const std::string& jsonl_field) {
  // A JSON-lines file's documents are its lines' fields, parsed into memory once (a malformed line fails
  // here, naming it); text documents are files, mapped when tokenized.
  const bool jsonl = src.kind == ResolvedSource::Kind::kJsonl;
  std::vector<std::string> texts, names;
  if (jsonl) {
    for (const auto& f : src.files)
      for_each_jsonl_document(f, jsonl_field, [&](int64_t line, const std::string& text) {
        texts.push_back(text);
        names.push_back(f + " line " + std::to_string(line));
      });
    if (texts.empty())
      throw Error("dataset file '" + src.files.front() + "' holds no JSON lines", "give one document per line");
  } else {
    names = src.files;
  }
  const size_t count = names.size();
  const OpenDocument open = [&](size_t i) -> std::unique_ptr<Document> {
    if (jsonl) return std::make_unique<TextView>(texts[i]);
    return std::make_unique<TextFile>(src.files[i]);
  };
  // Key: every document's length and bytes, so neither an edit nor a moved boundary between files is missed
  // (and for JSON-lines, the field read).
  uint64_t fingerprint = Tokenizer::gpt2().fingerprint();
  uint64_t key = fnv1a64(kCacheFormat, std::strlen(kCacheFormat));
  key = fnv1a64(&fingerprint, sizeof fingerprint, key);
  if (jsonl) key = fnv1a64(jsonl_field.data(), jsonl_field.size(), fnv1a64("jsonl", 5, key));
  uint64_t total_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    std::unique_ptr<Document> doc = open(i);
    uint64_t n = doc->text().size();
    key = fnv1a64(&n, sizeof n, key);
    key = hash_text(doc->text(), key);
    total_bytes += n;
  }
  PreparedDataset out;
  out.source = source.empty() ? "default" : source;
  std::string dir = datasets_dir() + "/" + src.stem + "-" + hex64(key);
  if (load_cached(dir, out)) {
    out.warnings.insert(out.warnings.begin(), src.warnings.begin(), src.warnings.end());
    return out;
  }

  make_dirs(dir);
  ShardWriter writer(dir, "train");
  std::vector<size_t> invalid;
  tokenize_documents(count, open, total_bytes, writer, progress, invalid);
  std::vector<std::string> utf8_warnings;  // cached with the shards: a cache hit reports them again
  for (size_t i = 0; i < count; ++i)
    if (invalid[i] > 0)
      utf8_warnings.push_back("'" + names[i] + "': " + with_commas(invalid[i]) +
                              " invalid UTF-8 sequences, each tokenized as U+FFFD (is it in another encoding?)");
  out.train_shards = writer.finish();
  out.train_tokens = writer.tokens();
  std::string files = jsonl                  ? with_commas(count) + " documents, "
                      : src.files.size() > 1 ? with_commas(src.files.size()) + " files, "
                                             : "";
  out.description = src.label + ": " + files + format_bytes(static_cast<double>(total_bytes)) + " text → " +
                    with_commas(out.train_tokens) + " tokens";
  nlohmann::json manifest = {{"format", kCacheFormat},
                             {"source", out.source},
                             {"description", out.description},
                             {"documents", count},
                             {"bytes", total_bytes},
                             {"tokens", out.train_tokens},
                             {"tokenizer", hex64(fingerprint)},
                             {"warnings", utf8_warnings},
                             {"shards", nlohmann::json::array()}};
  for (const auto& p : out.train_shards) manifest["shards"].push_back(fs::path(p).filename().string());
  write_file_atomically(dir + "/manifest.json",
                        manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  out.warnings = src.warnings;
  out.warnings.insert(out.warnings.end(), utf8_warnings.begin(), utf8_warnings.end());
  return out;
}

PreparedDataset prepare_shards(const ResolvedSource& src, const std::string& source) {
  PreparedDataset out;
  out.source = source;
  out.warnings = src.warnings;
  bool single = src.files.size() == 1;  // one named file is trained on, whatever its name says
  for (const auto& f : src.files) {
    uint64_t n = shard_token_count(f);  // validates magic, version and length, naming the file
    if (!single && is_val_shard_name(f)) {
      out.val_shards.push_back(f);
      out.val_tokens += n;
    } else {
      out.train_shards.push_back(f);
      out.train_tokens += n;
    }
  }
  if (out.train_shards.empty())
    throw Error("dataset '" + source + "' has only validation shards (*_val_*)",
                "add training shards next to them, or name one shard file to train on it");
  std::string shards = with_commas(src.files.size()) + (single ? " shard" : " shards");
  out.description = src.label + ": " + shards + " → " + with_commas(out.train_tokens) + " tokens";
  if (out.val_tokens) out.description += " (+" + with_commas(out.val_tokens) + " validation)";
  return out;
}

// A hidden sibling of dir for building or retiring it: "data/.shards.new-1234" beside "data/shards".
std::string sibling_name(const std::string& dir, const char* what) {
  fs::path p(dir);
  if (!p.has_filename()) p = p.parent_path();
  return (p.parent_path() / ("." + p.filename().string() + "." + what + "-" + std::to_string(::getpid()))).string();
}

// The swap would take every file of out_dir with it: only a folder of shards (or none) may be replaced.
void check_only_shards(const std::string& dir) {
  if (!path_exists(dir)) return;
  if (!is_directory(dir))
    throw Error("--out '" + dir + "' is a file", "give a folder for the shards (it is created when missing)");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool shard =
        entry.path().extension() == ".bin" && (name.rfind("train_", 0) == 0 || name.rfind("val_", 0) == 0);
    if (!shard)
      throw Error("--out '" + dir + "' holds '" + name + "', which is not a shard; it is replaced as a whole",
                  "give a new or empty folder, or one that holds only train_*.bin and val_*.bin shards");
  }
  if (ec) throw Error("cannot read folder '" + dir + "': " + ec.message(), "check its permissions");
}

// Puts the finished build_dir in place of dir in one step: renameat2(RENAME_EXCHANGE) swaps the two names
// atomically; where the file system cannot, the old folder is moved aside first (a moment with no folder,
// never a mixed one). The old shards are then deleted.
void swap_in(const std::string& build_dir, const std::string& dir) {
  if (!path_exists(dir)) {
    make_dirs(fs::path(dir).parent_path().string().empty() ? "." : fs::path(dir).parent_path().string());
    std::error_code ec;
    fs::rename(build_dir, dir, ec);
    if (ec)
      throw Error("cannot move the new shards to '" + dir + "': " + ec.message(), "check the folder's permissions");
    return;
  }
  std::string old_dir = build_dir;  // after an exchange the old folder has the build folder's name
  if (::renameat2(AT_FDCWD, build_dir.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
    old_dir = sibling_name(dir, "old");
    std::error_code ec;
    fs::rename(dir, old_dir, ec);
    if (!ec) fs::rename(build_dir, dir, ec);
    if (ec) throw Error("cannot replace '" + dir + "': " + ec.message(), "check the folder's permissions");
  }
  remove_tree(old_dir);  // a leftover hidden folder is harmless; the new shards are in place
}

}  // namespace

void check_token_ids(const PreparedDataset& data, int64_t vocab_size) {
  if (vocab_size > 65535) return;  // every uint16 id fits
  const auto limit = static_cast<uint16_t>(vocab_size);
  for (const auto* list : {&data.train_shards, &data.val_shards})
    for (const auto& path : *list) {
      MappedShard shard(path);
      const uint16_t* t = shard.tokens();
      // Blocks of 64K: the max of a block vectorises; only a block with a bad id is searched for the position.
      constexpr uint64_t kBlock = 1 << 16;
      for (uint64_t at = 0; at < shard.size(); at += kBlock) {
        const uint64_t n = std::min(kBlock, shard.size() - at);
        uint16_t top = 0;
        for (uint64_t k = 0; k < n; ++k) top = std::max(top, t[at + k]);
        if (top < limit) continue;
        const uint64_t pos =
            static_cast<uint64_t>(std::find_if(t + at, t + at + n, [&](uint16_t v) { return v >= limit; }) - t);
        throw Error("shard '" + path + "' holds token id " + std::to_string(t[pos]) + " (token " + with_commas(pos) +
                        ") but the model's vocabulary has " + std::to_string(vocab_size) + " ids (0.." +
                        std::to_string(vocab_size - 1) + ")",
                    "shards must come from the model's tokenizer (GPT-2: tokamak tokenize --prepare), or raise "
                    "model.vocab_size above the largest id");
      }
    }
}

PreparedDataset prepare_dataset(const std::string& source, const Progress& progress, const std::string& jsonl_field) {
  ResolvedSource src = resolve_source(source);
  if (src.kind == ResolvedSource::Kind::kShards) return prepare_shards(src, source);
  return prepare_text(src, source, progress, jsonl_field);
}

PreparedDataset prepare_dataset_into(const std::string& source, const std::string& out_dir, double val_fraction,
                                     const Progress& progress, uint64_t max_shard_tokens) {
  if (!(val_fraction >= 0.0 && val_fraction < 1.0))
    throw Error("validation fraction " + std::to_string(val_fraction) + " is outside [0, 1)",
                "use a value such as 0.05, or 0 for no validation shard");
  PreparedDataset in = prepare_dataset(source, progress);
  // Train shards first, then val shards: the val tail of the output is drawn from the source's own val
  // shards when it had them.
  std::vector<MappedShard> maps;
  uint64_t total = 0;
  for (const auto* list : {&in.train_shards, &in.val_shards})
    for (const auto& p : *list) {
      maps.emplace_back(p);
      total += maps.back().size();
    }
  uint64_t n_val = static_cast<uint64_t>(static_cast<double>(total) * val_fraction);
  if (n_val >= total)
    throw Error("dataset '" + source + "' is too small to split", "use a longer text or a smaller validation fraction");

  // Built beside out_dir, then swapped in: out_dir never holds a mix of old and new shards.
  const std::string final_dir = fs::path(out_dir).lexically_normal().string();
  check_only_shards(final_dir);
  const std::string build_dir = sibling_name(final_dir, "new");
  remove_tree(build_dir);
  make_dirs(build_dir);
  PreparedDataset out;
  out.source = in.source;
  out.warnings = in.warnings;
  size_t n_train_shards = 0, n_val_shards = 0;
  try {
    ShardWriter train(build_dir, "train", max_shard_tokens), val(build_dir, "val", max_shard_tokens);
    uint64_t pos = 0, n_train = total - n_val;
    for (const auto& m : maps) {
      uint64_t to_train = pos < n_train ? std::min<uint64_t>(m.size(), n_train - pos) : 0;
      train.add(m.tokens(), to_train);
      val.add(m.tokens() + to_train, m.size() - to_train);
      pos += m.size();
      if (progress && !progress(pos, total))
        throw Cancelled("writing shards was cancelled", "'" + out_dir + "' was left as it was; start again");
    }
    n_train_shards = train.finish().size(), n_val_shards = val.finish().size();
    out.train_tokens = train.tokens();
    out.val_tokens = val.tokens();
    swap_in(build_dir, final_dir);
  } catch (...) {
    remove_tree(build_dir);
    throw;
  }
  for (size_t k = 0; k < n_train_shards; ++k) out.train_shards.push_back(out_dir + "/" + shard_name("train", k));
  for (size_t k = 0; k < n_val_shards; ++k) out.val_shards.push_back(out_dir + "/" + shard_name("val", k));
  out.description = in.description + " → " + out_dir + ": " + with_commas(out.train_tokens) + " train, " +
                    with_commas(out.val_tokens) + " val tokens";
  return out;
}

}  // namespace tokamak
