// The kernel table of `--kernels` (see kernel_table.h).
#include "app/tokamak-engine/kernel_table.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "engine/base/store/scoreboard.h"  // format_text_table
#include "engine/base/util/error.h"
#include "engine/base/perf/op_kinds.h"

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

const std::string kNode = "autograd::engine::evaluate_function: ";
bool is_op(const std::string& name) { return name.rfind("aten::", 0) == 0 || name.rfind("tokamak::", 0) == 0; }
bool is_node(const std::string& name) { return name.rfind(kNode, 0) == 0; }
// The operators whose FLOPs the profiler counts as matrix products (it counts elementwise ones too).
bool is_gemm(const std::string& name) {
  return name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" || name == "aten::baddbmm";
}

// The CPU side of a profile: ATen's operators, Tokamak's scopes and autograd's nodes ("MmBackward0"), each with
// the event that encloses it on its thread, and each operator's self time (its duration less that of the
// operators it called; nodes only enclose).
struct CpuEvents {
  std::vector<std::string> names;
  std::vector<int64_t> parent;  // -1: outermost
  std::vector<double> self_ns;
  std::vector<bool> op;
  std::map<uint64_t, size_t> by_correlation;  // a CUDA kernel's linked correlation id → the op that launched it

  // The event's name, then those enclosing it, innermost first.
  std::vector<std::string> chain(int64_t i) const {
    std::vector<std::string> out;
    for (; i >= 0; i = parent[i]) out.push_back(names[i]);
    return out;
  }
  // "aten::sum ← AddmmBackward0": an operator, and the autograd node or Tokamak scope it ran in, if any; a node
  // or a scope is its own name.
  std::string launched_by(int64_t i) const {
    if (!op[i] || names[i].rfind("tokamak::", 0) == 0) return names[i];
    for (int64_t p = parent[i]; p >= 0; p = parent[p])
      if (!op[p] || names[p].rfind("tokamak::", 0) == 0) return names[i] + " ← " + names[p];
    return names[i];
  }
};

CpuEvents cpu_events(const std::vector<prof::KinetoEvent>& events) {
  std::vector<const prof::KinetoEvent*> sorted;
  for (const auto& e : events)
    if (e.deviceType() == c10::DeviceType::CPU && (is_op(e.name()) || is_node(e.name()))) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return a->startThreadId() != b->startThreadId() ? a->startThreadId() < b->startThreadId()
           : a->startNs() != b->startNs()           ? a->startNs() < b->startNs()
                                                    : a->endNs() > b->endNs();
  });
  CpuEvents out;
  std::vector<size_t> open;  // the enclosing events, innermost last
  std::vector<uint64_t> ends;
  uint64_t thread = 0;
  for (const auto* e : sorted) {
    if (e->startThreadId() != thread) open.clear(), ends.clear(), thread = e->startThreadId();
    while (!open.empty() && ends.back() <= e->startNs()) open.pop_back(), ends.pop_back();
    const size_t i = out.names.size();
    const bool op = is_op(e->name());
    out.names.push_back(op ? e->name() : e->name().substr(kNode.size()));
    out.parent.push_back(open.empty() ? -1 : static_cast<int64_t>(open.back()));
    out.op.push_back(op);
    const double d = static_cast<double>(e->durationNs());
    out.self_ns.push_back(op ? d : 0);
    if (op)  // the innermost operator around it spent this much less itself
      for (auto it = open.rbegin(); it != open.rend(); ++it)
        if (out.op[*it]) {
          out.self_ns[*it] -= d;
          break;
        }
    if (e->correlationId() > 0) out.by_correlation[e->correlationId()] = i;
    open.push_back(i), ends.push_back(e->endNs());
  }
  return out;
}

// One timed piece of work: a CUDA kernel or a CPU operator's self time, with what launched it and its kind.
struct Work {
  std::string name, launched_by, kind;
  double ns = 0;
};

std::vector<Work> profiled_work(const prof::ProfilerResult& result, bool cuda) {
  const CpuEvents cpu = cpu_events(result.events());
  std::vector<Work> work;
  if (cuda) {
    for (const auto& e : result.events()) {
      if (e.deviceType() != c10::DeviceType::CUDA || e.durationNs() == 0) continue;
      Work w{e.name(), "?", "unattributed", static_cast<double>(e.durationNs())};
      const auto at = cpu.by_correlation.find(e.linkedCorrelationId());
      if (at != cpu.by_correlation.end()) {
        std::vector<std::string> chain = cpu.chain(static_cast<int64_t>(at->second));
        chain.insert(chain.begin(), e.name());  // the kernel's own name speaks first (a GEMM in the head)
        w.kind = op_kind(chain), w.launched_by = cpu.launched_by(static_cast<int64_t>(at->second));
      }
      work.push_back(w);
    }
  } else {
    for (size_t i = 0; i < cpu.names.size(); ++i) {
      if (!cpu.op[i]) continue;
      const int64_t p = cpu.parent[i];
      work.push_back(
          {cpu.names[i], p < 0 ? "" : cpu.launched_by(p), op_kind(cpu.chain(static_cast<int64_t>(i))), cpu.self_ns[i]});
    }
  }
  return work;
}

struct Row {
  double ns = 0;
  int64_t calls = 0;
  std::string launched_by, kind;
};

std::string fixed(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

void KernelTable::start(bool cuda) {
  if (running_) return;
  // On a machine without a GPU, Kineto's first use logs "gpuGetDeviceCount failed with code 35", which says nothing
  // to a user profiling a CPU run: its log is quieted there, unless the user set KINETO_LOG_LEVEL.
  if (!cuda) setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
  // Input shapes and FLOPs: the profiler counts each GEMM's work from its shapes, the check on step_work()'s.
  const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/false,
                              /*with_stack=*/false, /*with_flops=*/true);
  prof::prepareProfiler(config, activities(cuda));
  prof::enableProfiler(config, activities(cuda));
  running_ = true, cuda_ = cuda;
}

void KernelTable::stop() {
  if (!running_) return;
  running_ = false;
  prof::disableProfiler();
}

std::string KernelTable::table(int64_t steps, int top) {
  if (!running_) return "";
  running_ = false;
  const std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  // Rows by (name, what launched it): one kernel launched by two ops is two rows, each with its own kind.
  std::map<std::pair<std::string, std::string>, Row> by_name;
  std::map<std::string, Row> by_kind;
  double total = 0;
  // The GEMM calls' FLOPs, as the profiler counts them (on the CPU side of the launch, for either device).
  double gemm_flops = 0;
  for (const auto& e : result->events())
    if (e.deviceType() == c10::DeviceType::CPU && is_gemm(e.name())) gemm_flops += static_cast<double>(e.flops());
  for (const Work& w : profiled_work(*result, cuda_)) {
    Row& r = by_name[{short_name(w.name), w.launched_by}];
    r.ns += w.ns, ++r.calls, r.launched_by = w.launched_by, r.kind = w.kind;
    Row& k = by_kind[w.kind];
    k.ns += w.ns, ++k.calls;
    total += w.ns;
  }
  if (total <= 0 || steps <= 0)
    return std::string("  kernels: the profiler recorded no ") + (cuda_ ? "device kernels" : "operators") +
           " (CUPTI missing, or nothing ran)\n";
  std::vector<std::pair<std::pair<std::string, std::string>, Row>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  if (static_cast<int>(rows.size()) > top) rows.resize(top);
  const double per_step = 1e-6 / static_cast<double>(steps);
  std::vector<std::vector<std::string>> t = {
      {cuda_ ? "kernel" : "operator (self)", "calls/step", "ms/step", "share", "kind", "launched by"}};
  for (const auto& [key, r] : rows)
    t.push_back({key.first, fixed(static_cast<double>(r.calls) / steps, "%.1f"), fixed(r.ns * per_step, "%.2f"),
                 fixed(100 * r.ns / total, "%.1f%%"), r.kind, r.launched_by.empty() ? "-" : r.launched_by});
  kinds_.clear();
  for (const auto& [kind, r] : by_kind) kinds_[kind] = {r.ns * per_step, static_cast<double>(r.calls) / steps};
  gemm_flops_ = gemm_flops / static_cast<double>(steps);
  std::string out = format_text_table(t);
  // Every kind of work, in op_kinds()'s order: the rows add up to the total below.
  std::vector<std::vector<std::string>> kinds = {{"kind", "calls/step", "ms/step", "share"}};
  for (const std::string& kind : op_kinds()) {
    const auto it = by_kind.find(kind);
    if (it == by_kind.end()) continue;
    kinds.push_back({kind, fixed(static_cast<double>(it->second.calls) / steps, "%.1f"),
                     fixed(it->second.ns * per_step, "%.2f"), fixed(100 * it->second.ns / total, "%.1f%%")});
  }
  out += format_text_table(kinds);
  out += std::string("  ") + (cuda_ ? "device time" : "operators' self time") + ": " + fixed(total * per_step, "%.2f") +
         " ms/step in all;";
  for (const std::string& kind : op_kinds()) {
    const auto it = by_kind.find(kind);
    if (it != by_kind.end()) out += " " + kind + fixed(100 * it->second.ns / total, " %.1f%%");
  }
  return out + "\n";
}

}  // namespace tokamak::cli
