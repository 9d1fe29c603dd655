// The kernel table of `tokamak bench --kernels` (see kernel_table.h).
#include "app/tokamak/kernel_table.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <vector>

#include "engine/store/scoreboard.h"  // format_text_table
#include "engine/util/error.h"

namespace tokamak::cli {
namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

std::set<ActivityType> activities(bool cuda) {
  if (cuda) return {ActivityType::CPU, ActivityType::CUDA};  // CPU too: CUPTI links kernels to their launches
  return {ActivityType::CPU};
}

// Template arguments and parameter lists make kernel names pages long: the name up to the first '<' or '(',
// with its namespace, is what tells kernels apart in a table.
std::string short_name(std::string name) {
  for (size_t at; (at = name.find("(anonymous namespace)::")) != std::string::npos;) name.erase(at, 23);
  const size_t cut = name.find_first_of("<(");
  if (cut != std::string::npos && cut > 0) name = name.substr(0, cut);
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  if (name.size() > 64) name = name.substr(0, 61) + "...";
  return name;
}

// The kind of a kernel or operator, by the names cuBLAS, FlashAttention, Tokamak's kernels and ATen give them.
std::string kind_of(const std::string& name) {
  static const std::regex matmul("gemm|nvjet|cutlass|xmma|sm90_|aten::(mm|addmm|bmm|matmul|linear)", std::regex::icase);
  static const std::regex attention("flash|fmha|attention|sdpa|cudnn", std::regex::icase);
  static const std::regex ours(
      "softmax_ce_grad|residual_layernorm|layernorm_backward_kernel|gelu_backward_bias|"
      "tokamak");
  static const std::regex optimizer("adam|multi_tensor|foreach|_fused_", std::regex::icase);
  static const std::regex copies("memcpy|memset|aten::copy_|aten::to", std::regex::icase);
  if (std::regex_search(name, ours)) return "tokamak";
  if (std::regex_search(name, attention)) return "attention";
  if (std::regex_search(name, matmul)) return "matmul";
  if (std::regex_search(name, optimizer)) return "optimizer";
  if (std::regex_search(name, copies)) return "copies";
  return "other";
}

struct Row {
  double ns = 0;
  int64_t calls = 0;
};

// A CPU operator's self time: its duration less that of the operators it called on the same thread. Autograd's
// nodes and Python-style scopes are left out: they only enclose operators.
std::vector<std::pair<std::string, double>> cpu_self_times(const std::vector<prof::KinetoEvent>& events) {
  std::vector<const prof::KinetoEvent*> ops;
  for (const auto& e : events)
    if (e.deviceType() == c10::DeviceType::CPU &&
        (e.name().rfind("aten::", 0) == 0 || e.name().rfind("tokamak::", 0) == 0))
      ops.push_back(&e);  // ATen's operators and our own scopes (the fused classifier's row kernel)
  std::sort(ops.begin(), ops.end(), [](const auto* a, const auto* b) {
    return a->startThreadId() != b->startThreadId() ? a->startThreadId() < b->startThreadId()
           : a->startNs() != b->startNs()           ? a->startNs() < b->startNs()
                                                    : a->endNs() > b->endNs();
  });
  std::vector<std::pair<std::string, double>> self;
  std::vector<size_t> open;  // indices into self of the enclosing ops, innermost last
  std::vector<uint64_t> ends;
  uint64_t thread = 0;
  for (const auto* e : ops) {
    if (e->startThreadId() != thread) open.clear(), ends.clear(), thread = e->startThreadId();
    while (!open.empty() && ends.back() <= e->startNs()) open.pop_back(), ends.pop_back();
    const double d = static_cast<double>(e->durationNs());
    if (!open.empty()) self[open.back()].second -= d;
    self.emplace_back(e->name(), d);
    open.push_back(self.size() - 1), ends.push_back(e->endNs());
  }
  return self;
}

}  // namespace

void KernelTable::start(bool cuda) {
  if (running_) return;
  const ProfilerConfig config(ProfilerState::KINETO);
  prof::prepareProfiler(config, activities(cuda));
  prof::enableProfiler(config, activities(cuda));
  running_ = true, cuda_ = cuda;
}

std::string KernelTable::table(int64_t steps, int top) {
  if (!running_) return "";
  running_ = false;
  const std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  std::vector<std::pair<std::string, double>> times;
  if (cuda_) {
    for (const auto& e : result->events())
      if (e.deviceType() == c10::DeviceType::CUDA && e.durationNs() > 0)
        times.emplace_back(e.name(), static_cast<double>(e.durationNs()));
  } else {
    times = cpu_self_times(result->events());
  }
  std::map<std::string, Row> by_name;
  std::map<std::string, double> by_kind;
  double total = 0;
  for (const auto& [name, ns] : times) {
    Row& r = by_name[short_name(name)];
    r.ns += ns, ++r.calls;
    by_kind[kind_of(name)] += ns;
    total += ns;
  }
  if (total <= 0 || steps <= 0)
    return std::string("  kernels: the profiler recorded no ") + (cuda_ ? "device kernels" : "operators") +
           " (CUPTI missing, or nothing ran)\n";
  std::vector<std::pair<std::string, Row>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  if (static_cast<int>(rows.size()) > top) rows.resize(top);
  const double per_step = 1e-6 / static_cast<double>(steps);
  char buf[64];
  std::vector<std::vector<std::string>> t = {{cuda_ ? "kernel" : "operator (self)", "calls/step", "ms/step", "share"}};
  for (const auto& [name, r] : rows) {
    std::vector<std::string> line = {name};
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(r.calls) / steps), line.push_back(buf);
    std::snprintf(buf, sizeof buf, "%.2f", r.ns * per_step), line.push_back(buf);
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * r.ns / total), line.push_back(buf);
    t.push_back(line);
  }
  std::string out = format_text_table(t);
  std::snprintf(buf, sizeof buf, "  %s: %.2f ms/step in all;", cuda_ ? "device time" : "operators' self time",
                total * per_step);
  out += buf;
  for (const auto& [kind, ns] : by_kind) {
    std::snprintf(buf, sizeof buf, " %s %.1f%%", kind.c_str(), 100 * ns / total);
    out += buf;
  }
  return out + "\n";
}

}  // namespace tokamak::cli
