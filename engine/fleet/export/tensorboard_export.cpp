#include "engine/fleet/export/tensorboard_export.h"

#include <boost/crc.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>

#include "engine/base/run/layer_metrics.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/output_path.h"
#include "engine/fleet/export/tensorboard_event.pb.h"

namespace tokamak {
namespace {

namespace tb = tokamak::tensorboard;

constexpr int32_t kDtString = 7;  // TensorFlow's DataType DT_STRING

std::string le_bytes(uint64_t v, int n) {
  std::string out(static_cast<size_t>(n), '\0');
  for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

std::string encoded(const tb::Event& e) {
  std::string data;
  if (!e.SerializeToString(&data)) throw Error("a TensorBoard event could not be encoded", "this is a bug in Tokamak");
  return tfrecord(data);
}

// A text summary: a string tensor under the text plugin, which TensorBoard renders as Markdown.
void add_text(tb::Summary& summary, const std::string& tag, const std::string& text) {
  tb::Summary::Value* v = summary.add_value();
  v->set_tag(tag);
  v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  tb::TensorProto* t = v->mutable_tensor();
  t->set_dtype(kDtString);
  t->mutable_tensor_shape();
  t->add_string_val(text);
}

std::string run_folder_name(const RunInfo& r) {
  return safe_file_name(r.name.empty() ? "run" : r.name) + "-" + r.uid.substr(0, 8);
}

// One run's event file, whole: the version, the config, a summary per stored row, a text per sample.
std::string events_of(RunStore& store, const RunInfo& run, TensorboardExport& counts) {
  std::string out;
  tb::Event version;
  version.set_wall_time(run.created);
  version.set_file_version("brain.Event:2");
  out += encoded(version);
  tb::Event config;
  config.set_wall_time(run.created);
  config.set_step(0);
  const nlohmann::json cj = nlohmann::json::parse(run.config_json, nullptr, false);
  add_text(*config.mutable_summary(), "config", "```\n" + (cj.is_discarded() ? run.config_json : cj.dump(2)) + "\n```");
  out += encoded(config);
  ++counts.texts;
  for (const MetricRow& row : store.metrics(run.id)) {
    tb::Event e;
    const double wall = row["wall_s"];
    e.set_wall_time(run.created + (std::isnan(wall) ? 0 : wall));
    e.set_step(row.step);
    for (const MetricValue& m : row.values) {
      tb::Summary::Value* v = e.mutable_summary()->add_value();
      v->set_tag(tensorboard_tag(m.key));
      v->set_simple_value(static_cast<float>(m.value));
      ++counts.scalars;
    }
    out += encoded(e);
  }
  for (const SampleRow& s : store.samples(run.id)) {
    tb::Event e;
    e.set_wall_time(s.created);
    e.set_step(s.step);
    add_text(*e.mutable_summary(), "samples", s.prompt.empty() ? s.text : "**" + s.prompt + "**\n\n" + s.text);
    out += encoded(e);
    ++counts.texts;
  }
  return out;
}

}  // namespace

uint32_t masked_crc32c(const std::string& bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;  // CRC-32C (Castagnoli)
  crc.process_bytes(bytes.data(), bytes.size());
  const uint32_t c = crc.checksum();
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;  // TFRecord's mask: a CRC of data that holds CRCs stays apart
}

std::string tfrecord(const std::string& data) {
  const std::string length = le_bytes(data.size(), 8);
  return length + le_bytes(masked_crc32c(length), 4) + data + le_bytes(masked_crc32c(data), 4);
}

std::string tensorboard_tag(const std::string& key) {
  const auto k = parse_layer_metric(key);
  return k ? "layers/" + k->stat + "/" + k->group : key;
}

TensorboardExport export_tensorboard(RunStore& store, const std::vector<int64_t>& ids, const std::string& dir,
                                     bool replace) {
  std::vector<RunInfo> runs;
  for (int64_t id : ids.empty() ? store.run_ids() : ids) runs.push_back(store.run(id));
  if (runs.empty()) throw Error("there are no runs to export", "train a run first, or name runs by id");
  const OutputRule rule{"the TensorBoard export", {".tokamak"}, replace, {store.path()}};
  std::vector<std::string> folders;
  for (const RunInfo& r : runs) folders.push_back(run_folder_name(r));
  OutputRule top = rule;
  top.made_are_folders = true;  // each run's folder is checked below, --force or not
  check_output_folder(dir, folders, top);
  const auto file_of = [](const RunInfo& r) {
    return "events.out.tfevents." + std::to_string(static_cast<int64_t>(r.created)) + ".tokamak";
  };
  for (const RunInfo& r : runs) check_output_folder(dir + "/" + run_folder_name(r), {file_of(r)}, rule);  // all first
  TensorboardExport result;
  for (const RunInfo& r : runs) {
    const std::string folder = dir + "/" + run_folder_name(r);
    make_dirs(folder);
    write_file_atomically(folder + "/" + file_of(r), events_of(store, r, result));
    result.files.push_back(folder + "/" + file_of(r));
  }
  return result;
}

}  // namespace tokamak
