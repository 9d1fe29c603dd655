// Each kind of a step's work against its floor (see speed_of_light.h).
#include "engine/base/perf/speed_of_light.h"

#include <algorithm>
#include <cstdio>

#include "engine/base/perf/op_kinds.h"
#include "engine/base/store/scoreboard.h"  // format_text_table
#include "engine/base/util/format.h"

namespace tokamak {

double MemoryBandwidth::rate_for(double working_set) const {
  if (rates.empty()) return -1;
  size_t at = 0;
  for (size_t i = 0; i < rates.size(); ++i)
    if (rates[i].working_set <= working_set) at = i;
  // A smaller working set copies at least as fast as a larger one (it sits in a nearer cache): a sample below a
  // larger set's rate was measured while something else had the cores, and would put the floor above the time.
  double rate = rates[at].bytes_per_s;
  for (size_t i = at + 1; i < rates.size(); ++i) rate = std::max(rate, rates[i].bytes_per_s);
  return rate;
}

std::map<std::string, KindWork> step_work(const Config& c) {
  const double L = static_cast<double>(c.model.n_layer), C = static_cast<double>(c.model.n_embd);
  const double T = static_cast<double>(train_context(c)), V = static_cast<double>(padded_vocab(c.model));
  const double tokens = static_cast<double>(c.train.batch_size) * T * static_cast<double>(grad_accum_steps(c));
  // Bytes of an activation in the matmuls' number format, and of the residual stream, which autocast keeps
  // in fp32 (bf16-pure keeps everything in bf16).
  const Precision p = c.speed.precision;
  const bool half = p == Precision::kBf16 || p == Precision::kBf16Pure || p == Precision::kFp16;
  const double d = half ? 2 : 4, s = p == Precision::kBf16Pure ? 2 : 4;
  const double linear = L * 12 * C * C;  // qkv 3C², proj C², fc 4C², fc2 4C²
  std::map<std::string, KindWork> w;
  // The head's three GEMMs are matrix products like the blocks' (op_kind names them so): its own kind is the
  // softmax and loss around them, which must at least write the logits in the matmuls' format and read them back.
  w["matmul"].flops = 6 * (linear + C * V) * tokens;
  w["attention"].flops = 6 * L * C * T * tokens;
  w["head"].bytes = 2 * V * d * tokens;
  // Each LayerNorm reads the stream and writes its output; its backward reads the stream and the output's
  // gradient and writes the stream's: 2L + 1 of them.
  w["norm"].bytes = (2 * L + 1) * C * (3 * s + 2 * d) * tokens;
  // GELU on 4C: forward reads and writes it, backward reads it and the gradient and writes the input's.
  w["activation"].bytes = L * 4 * C * 5 * d * tokens;
  // 2L adds of a branch into the stream (read both, write the stream), and as many gradients summed on the way
  // back (read two, write one).
  w["residual"].bytes = 2 * L * C * (2 * s + d + 3 * s) * tokens;
  // Under autocast each linear weight is read in fp32 and written in the matmuls' format once a step.
  if (half && p != Precision::kBf16Pure) w["casts/copies"].bytes = linear * (4 + d);
  // AdamW's fp32 update reads the weight, its gradient and both moments and writes three of them: 28 bytes a
  // parameter (the embeddings' and the head's included).
  if (c.optimizer.name == OptimizerKind::kAdamW) {
    const double params = linear + V * C + (c.model.tie_weights ? 0 : V * C) + static_cast<double>(c.model.context) * C;
    w["optimizer"].bytes = 28 * params;
  }
  return w;
}

std::vector<KindFloor> speed_of_light(const Config& config, const std::map<std::string, Measured>& measured,
                                      double matmul_flops, const MemoryBandwidth& bandwidth) {
  const std::map<std::string, KindWork> work = step_work(config);
  // On a GPU every kind is held to the largest working set's rate: a small copy there is timed by the host's ~5-8 µs
  // a launch, not by the memory (~10 GB/s at 64 KiB against ~4 TB/s), and a step's tensors are past the L2 anyway.
  const bool gpu = config.device.rfind("cuda", 0) == 0;
  std::vector<KindFloor> rows;
  for (const std::string& kind : op_kinds()) {
    const auto m = measured.find(kind);
    if (m == measured.end()) continue;
    KindFloor r;
    r.kind = kind, r.ms = m->second.ms, r.calls = m->second.calls;
    const auto w = work.find(kind);
    if (w != work.end()) {
      r.flops = w->second.flops, r.bytes = w->second.bytes;
      const double compute_ms = matmul_flops > 0 ? 1e3 * r.flops / matmul_flops : 0;
      const double rate = gpu ? bandwidth.dram() : bandwidth.rate_for(r.bytes / std::max(1.0, r.calls));
      const double memory_ms = rate > 0 ? 1e3 * r.bytes / rate : 0;
      if (compute_ms > 0 || memory_ms > 0) {
        r.floor_ms = std::max(compute_ms, memory_ms);
        r.bound = compute_ms >= memory_ms ? "compute" : "memory";
        if (r.ms > 0) r.of_limit = r.floor_ms / r.ms;
      }
    }
    rows.push_back(r);
  }
  return rows;
}

std::string kind_switches(const std::string& kind) {
  static const std::map<std::string, std::string> switches = {
      {"matmul",
       "speed.precision (tf32 and bf16 run on the tensor cores), model.vocab_pad_multiple (the head's GEMM shapes), "
       "train.batch_size (fuller GEMMs)"},
      {"attention", "speed.attention and speed.sdpa_backend (flash or cuDNN: the whole attention in one kernel)"},
      {"head", "speed.layers=fused (the fused classifier: no logits tensor written and read back)"},
      {"norm",
       "speed.layers=fused (our LayerNorm, with the residual add inside), speed.fused_glue (no casts around it)"},
      {"activation", "speed.layers=fused (bias + GELU in one kernel), speed.fused_glue (no clone before it)"},
      {"residual",
       "speed.layers=fused (the add inside the LayerNorm's kernel), speed.fused_glue (the add across the block "
       "boundary too)"},
      {"casts/copies",
       "speed.fused_glue (no casts at autocast's borders; the attention heads' gradients in one pass, no cat), "
       "speed.precision=bf16-pure (no fp32 weights to cast)"},
      {"optimizer", "speed.fused_adamw (one multi-tensor kernel for the whole update)"},
      {"other", "speed.cuda_graphs (no launch overhead), speed.prefetch and speed.pin_memory (the host's waits)"},
      {"unattributed", "none: work the profiler could not link to what launched it"},
  };
  const auto it = switches.find(kind);
  return it == switches.end() ? "" : it->second;
}

namespace {
std::string fixed(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
// FLOPs with an SI prefix, three significant digits, as a datasheet writes them: "12.3 GFLOP", "989 TFLOP/s".
std::string flop_text(double v, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (v >= 999.5 && i < 6) v /= 1000, ++i;
  return fixed(v, v < 9.995 ? "%.2f" : v < 99.95 ? "%.1f" : "%.0f") + " " + prefixes[i] + unit;
}
}  // namespace

std::string machine_limits_lines(double matmul_flops, const std::string& matmul_source, double memory_bytes_per_s,
                                 const std::string& memory_source) {
  const auto source = [](const std::string& s) { return s.empty() ? std::string() : " (" + s + ")"; };
  return "matmul limit: " +
         (matmul_flops > 0 ? flop_text(matmul_flops, "FLOP/s") + source(matmul_source) + ", MFU's peak"
                           : std::string("unknown (no MFU)")) +
         "\nmemory limit: " +
         (memory_bytes_per_s > 0 ? format_bytes(memory_bytes_per_s) + "/s from memory" + source(memory_source)
                                 : std::string("unknown")) +
         "\n";
}

std::string matmul_work_check(double shapes_flops, double profiler_flops) {
  std::string line = "  matmul work: " + flop_text(shapes_flops, "FLOP") + " a step from the model's shapes, ";
  if (!(profiler_flops > 0)) return line + "none counted by the profiler (it saw no GEMM calls)\n";
  return line + flop_text(profiler_flops, "FLOP") + " by the profiler's count of its GEMM calls (" +
         fixed(100 * profiler_flops / shapes_flops, "%.1f%%") + ")\n";
}

std::string speed_of_light_table(const std::vector<KindFloor>& rows, double matmul_flops,
                                 const std::string& peak_source, const MemoryBandwidth& bandwidth) {
  std::vector<std::vector<std::string>> t = {
      {"kind", "ms/step", "work/step", "achieved", "floor ms", "gap ms", "of limit", "bound by"}};
  double time = 0, floor = 0, uncounted = 0;
  for (const KindFloor& r : rows) {
    time += r.ms;
    const bool counted = r.floor_ms >= 0;
    const double seconds = r.ms / 1e3;
    std::string work = "-", achieved = "-";
    if (r.flops > 0) {
      work = flop_text(r.flops, "FLOP");
      if (seconds > 0) achieved = flop_text(r.flops / seconds, "FLOP/s");
    } else if (r.bytes > 0) {
      work = format_bytes(r.bytes);
      if (seconds > 0) achieved = format_bytes(r.bytes / seconds) + "/s";
    }
    if (counted) floor += r.floor_ms;
    else uncounted += r.ms;
    t.push_back({r.kind, fixed(r.ms, "%.2f"), work, achieved, counted ? fixed(r.floor_ms, "%.2f") : "-",
                 counted ? fixed(r.ms - r.floor_ms, "%.2f") : "-",
                 counted && r.of_limit >= 0 ? fixed(100 * r.of_limit, "%.1f%%") : "-",
                 counted ? r.bound : "not counted"});
  }
  std::string out = format_text_table(t);
  // A floor above the measured time is a limit that measured low (a noisy sample), not work done faster than
  // the machine can: said, so nobody reads it as a result.
  std::string over;
  for (const KindFloor& r : rows)
    if (r.floor_ms >= 0 && r.of_limit > 1.0) over += (over.empty() ? "" : ", ") + r.kind;
  if (!over.empty())
    out += "  warning: the floor of " + over +
           " is above its measured time: a limit measured low (another program had the cores); measure again on "
           "a quiet machine before reading those rows\n";
  out += "  speed of light: " + fixed(time, "%.2f") + " ms/step measured, floor " + fixed(floor, "%.2f") +
         " ms for the counted kinds (" + fixed(time > 0 ? 100 * floor / time : 0, "%.1f") + "% of the step)" +
         (uncounted > 0 ? ", " + fixed(uncounted, "%.2f") + " ms in kinds with no count" : "") + "\n";
  out += "  limits: matmul " + (matmul_flops > 0 ? flop_text(matmul_flops, "FLOP/s") : std::string("unknown")) +
         (peak_source.empty() ? "" : " (" + peak_source + ")") + "; memory " +
         (bandwidth.dram() > 0 ? format_bytes(bandwidth.dram()) + "/s from memory, " +
                                     format_bytes(bandwidth.rates.front().bytes_per_s) + "/s at " +
                                     format_bytes(bandwidth.rates.front().working_set) + " (" + bandwidth.source + ")"
                               : std::string("unknown")) +
         "\n";
  return out;
}

}  // namespace tokamak
