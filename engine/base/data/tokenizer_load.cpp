// Loading GPT-2's vocabulary from either form it is found in: tiktoken's ranks file (base64 token, rank per
// line) or the original encoder.json (bytes_to_unicode strings -> ids, which are the ranks) plus vocab.bpe
// (the merge list, checked against encoder.json exactly as tiktoken's own loader checks it). Every problem
// names the file and says how to get a good copy.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engine/base/data/tokenizer.h"
#include "engine/base/data/tokenizer_impl.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/utf8.h"

namespace tokamak {

namespace {

const char kRefetchHint[] = "the file is damaged or not a GPT-2 vocabulary: delete it and run scripts/setup.sh";

std::string read_vocab_file(const std::string& path, const char* what) {
  if (!path_exists(path))
    throw Error(std::string(what) + " '" + path + "' does not exist", "run scripts/setup.sh to fetch it");
  return read_file(path);
}

// Standard base64 with padding (the only kind tiktoken writes); false on anything else.
bool decode_base64(std::string_view in, std::string& out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out.clear();
  if (in.empty() || in.size() % 4 != 0) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad || (v[k] = value(c)) < 0) {
        return false;  // a character after '=' or outside the alphabet
      }
    }
    const uint32_t bits = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out += static_cast<char>(bits >> 16);
    if (pad < 2) out += static_cast<char>((bits >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(bits & 0xFF);
  }
  return true;
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes are shifted to
// U+0100.. so that every token is a printable string. Returns code point -> byte (-1 when not a byte).
std::vector<int> unicode_to_byte() {
  std::vector<int> map(256 + 68, -1);
  int shifted = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    map[printable ? b : 256 + shifted++] = b;
  }
  return map;
}

// A bytes_to_unicode string (UTF-8, as JSON and vocab.bpe hold it) back to the bytes it stands for.
bool unicode_to_bytes(std::string_view s, const std::vector<int>& map, std::string& out) {
  out.clear();
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp;
    if (c < 0x80) {
      cp = c, i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size()) {
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu), i += 2;
    } else {
      return false;  // bytes_to_unicode never goes above U+0143, so two bytes suffice
    }
    if (cp >= map.size() || map[cp] < 0) return false;
    out += static_cast<char>(map[cp]);
  }
  return !out.empty();
}

// Ranks must be 0..n-1 with no gap and no repeat, and every single byte must be a token (else some text
// could not be encoded at all).
void check_vocabulary(const std::vector<std::string>& tokens, const std::vector<bool>& seen, const std::string& path) {
  if (tokens.empty()) throw Error("'" + path + "' holds no tokens", kRefetchHint);
  for (size_t r = 0; r < seen.size(); ++r)
    if (!seen[r]) throw Error("'" + path + "' has no token of rank " + std::to_string(r), kRefetchHint);
  bpe::RankTable table(tokens);
  if (table.first_duplicate() >= 0)
    throw Error("'" + path + "' lists the bytes of token " + std::to_string(table.first_duplicate()) + " twice",
                kRefetchHint);
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<uint8_t>(b);
    if (table.find(&byte, 1) < 0)
      throw Error("'" + path + "' has no token for the single byte " + std::to_string(b), kRefetchHint);
  }
}

void place(std::vector<std::string>& tokens, std::vector<bool>& seen, long long rank, std::string bytes,
           const std::string& where) {
  if (rank < 0 || rank > 2'000'000)
    throw Error(where + ": rank " + std::to_string(rank) + " is out of range", kRefetchHint);
  if (static_cast<size_t>(rank) >= tokens.size()) tokens.resize(rank + 1), seen.resize(rank + 1, false);
  if (seen[rank]) throw Error(where + ": rank " + std::to_string(rank) + " appears twice", kRefetchHint);
  tokens[rank] = std::move(bytes);
  seen[rank] = true;
}

}  // namespace

Tokenizer Tokenizer::from_tiktoken(const std::string& path) {
  const std::string text = read_vocab_file(path, "GPT-2 ranks file");
  std::vector<std::string> tokens;
  std::vector<bool> seen;
  tokens.reserve(50257);
  std::string bytes;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + at, eol - at);
    at = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = "'" + path + "' line " + std::to_string(line_no);
    const size_t space = line.find(' ');
    const std::string_view rank_text = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    long long rank = 0;
    bool number = !rank_text.empty() && rank_text.size() <= 9;
    for (char c : rank_text) number = number && c >= '0' && c <= '9', rank = rank * 10 + (c - '0');
    if (!number || !decode_base64(line.substr(0, space), bytes))
      throw Error(where + " is not '<base64 token> <rank>': '" + printable(line, 60) + "'", kRefetchHint);
    place(tokens, seen, rank, bytes, where);
  }
  check_vocabulary(tokens, seen, path);
  const auto eot = static_cast<int32_t>(tokens.size());  // GPT-2: 50256, right after the ranks
  return Tokenizer(std::make_unique<Impl>(tokens, eot));
}

Tokenizer Tokenizer::from_encoder_json(const std::string& encoder_json, const std::string& vocab_bpe) {
  const std::string json_text = read_vocab_file(encoder_json, "GPT-2 encoder.json");
  const std::string bpe_text = read_vocab_file(vocab_bpe, "GPT-2 vocab.bpe");
  nlohmann::json encoder;
  try {
    encoder = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw Error("'" + encoder_json + "' is not valid JSON: " + e.what(), kRefetchHint);
  }
  if (!encoder.is_object()) throw Error("'" + encoder_json + "' is not a JSON object of token -> id", kRefetchHint);

  const std::vector<int> map = unicode_to_byte();
  std::vector<std::string> tokens;
  std::vector<bool> seen;
  int32_t eot = -1;
  std::string bytes;
  for (const auto& [key, value] : encoder.items()) {
    const std::string where = "'" + encoder_json + "' entry \"" + key + "\"";
    if (!value.is_number_integer()) throw Error(where + " has an id that is not an integer", kRefetchHint);
    if (key == "<|endoftext|>") {
      eot = value.get<int32_t>();
      continue;
    }
    if (key == "<|startoftext|>") continue;  // not a mergeable token; tiktoken drops it too
    if (!unicode_to_bytes(key, map, bytes)) throw Error(where + " is not a bytes_to_unicode string", kRefetchHint);
    place(tokens, seen, value.get<long long>(), bytes, where);
  }
  check_vocabulary(tokens, seen, encoder_json);

  // Merge i must make the token of rank 256 + i: that is what makes ids usable as merge priorities.
  bpe::RankTable table(tokens);
  size_t merges = 0, line_no = 0;
  std::string left, right;
  for (size_t at = 0; at < bpe_text.size();) {
    size_t eol = bpe_text.find('\n', at);
    if (eol == std::string::npos) eol = bpe_text.size();
    std::string_view line(bpe_text.data() + at, eol - at);
    at = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
    const std::string where = "'" + vocab_bpe + "' line " + std::to_string(line_no);
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || !unicode_to_bytes(line.substr(0, space), map, left) ||
        !unicode_to_bytes(line.substr(space + 1), map, right))
      throw Error(where + " is not a merge '<left> <right>'", kRefetchHint);
    const std::string joined = left + right;
    const int32_t rank = table.find(reinterpret_cast<const uint8_t*>(joined.data()), joined.size());
    if (rank != static_cast<int32_t>(256 + merges))
      throw Error(where + " makes the token of id " + std::to_string(rank) + " in '" + encoder_json +
                      "', not the expected " + std::to_string(256 + merges),
                  "encoder.json and vocab.bpe must come from the same model");
    ++merges;
  }
  if (256 + merges != tokens.size())
    throw Error("'" + vocab_bpe + "' has " + std::to_string(merges) + " merges but '" + encoder_json + "' has " +
                    std::to_string(tokens.size()) + " tokens (256 bytes + one per merge expected)",
                "encoder.json and vocab.bpe must come from the same model");
  if (eot < 0) eot = static_cast<int32_t>(tokens.size());
  if (eot < static_cast<int32_t>(tokens.size()))
    throw Error("'" + encoder_json + "' gives <|endoftext|> the id " + std::to_string(eot) + " of another token",
                kRefetchHint);
  return Tokenizer(std::make_unique<Impl>(tokens, eot));
}

}  // namespace tokamak
