// Reading HellaSwag's JSON-lines into token ids (see hellaswag_items.h).
#include "engine/torch/eval/hellaswag_items.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "engine/base/data/jsonl.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"

namespace tokamak {
namespace {

constexpr int kEndings = 4;
const char* kItemHint =
    "each line must be a HellaSwag item: {\"ctx\": \"...\", \"endings\": [4 strings], \"label\": 0..3}";

struct Text {
  std::string ctx;
  std::vector<std::string> endings;
  int64_t label = 0;
};

// The checks in the order a reader would make them; the first failure names the field.
Text check_item(const std::string& path, int64_t line, const nlohmann::json& v) {
  auto fail = [&](const std::string& what) { return jsonl_error(path, line, what, kItemHint); };
  if (!v.is_object()) throw fail("is not a JSON object");
  Text t;
  auto ctx = v.find("ctx");
  if (ctx == v.end()) throw fail("has no \"ctx\"");
  if (!ctx->is_string()) throw fail("\"ctx\" is not a string");
  t.ctx = ctx->get<std::string>();
  if (t.ctx.empty()) throw fail("\"ctx\" is empty (an ending needs a context to be scored after)");
  auto endings = v.find("endings");
  if (endings == v.end()) throw fail("has no \"endings\"");
  if (!endings->is_array() || endings->size() != kEndings)
    throw fail("\"endings\" is not an array of " + std::to_string(kEndings) + " strings");
  for (size_t i = 0; i < endings->size(); ++i) {
    const nlohmann::json& e = (*endings)[i];
    if (!e.is_string()) throw fail("ending " + std::to_string(i) + " is not a string");
    if (e.get_ref<const std::string&>().empty()) throw fail("ending " + std::to_string(i) + " is empty");
    t.endings.push_back(e.get<std::string>());
  }
  auto label = v.find("label");
  if (label == v.end()) throw fail("has no \"label\" (the test split has none: use the validation split)");
  // The published files hold an integer; some re-exports hold it as a string ("2").
  if (label->is_number_integer()) t.label = label->get<int64_t>();
  else if (label->is_string() && label->get_ref<const std::string&>().size() == 1 &&
           std::isdigit(static_cast<unsigned char>(label->get_ref<const std::string&>()[0])))
    t.label = label->get_ref<const std::string&>()[0] - '0';
  else throw fail("\"label\" is not an integer");
  if (t.label < 0 || t.label >= kEndings) throw fail("\"label\" " + std::to_string(t.label) + " is not in 0..3");
  return t;
}

}  // namespace

std::vector<ChoiceItem> read_hellaswag(const std::string& path, int64_t limit) {
  const Tokenizer& tok = Tokenizer::gpt2();
  std::vector<ChoiceItem> items;
  struct Enough {};  // stops reading once `limit` items are in
  try {
    for_each_jsonl(path, [&](int64_t line, const nlohmann::json& v) {
      Text t = check_item(path, line, v);
      ChoiceItem item;
      item.context = tok.encode(t.ctx);
      for (const std::string& e : t.endings) item.endings.push_back(tok.encode(" " + e));
      item.label = t.label, item.line = line;
      items.push_back(std::move(item));
      if (limit > 0 && static_cast<int64_t>(items.size()) >= limit) throw Enough{};
    });
  } catch (const Enough&) {}
  if (items.empty()) throw Error("HellaSwag file '" + path + "' holds no items", kItemHint);
  return items;
}

}  // namespace tokamak
