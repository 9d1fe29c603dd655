// PrinterSink (see printer.h).
#include "app/tokamak/printer.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace tokamak::cli {
namespace {

using json = nlohmann::json;

void emit(const json& j) {
  // error_handler::replace: generated text may hold invalid UTF-8 (a token can end mid-character).
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
}

std::string human_count(double v) {
  char buf[32];
  if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%.1fK", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

}  // namespace

void PrinterSink::on_start(const RunStart& e) {
  total_steps_ = e.total_steps;
  std::string ranks = e.world_size > 1 ? " ×" + std::to_string(e.world_size) + " ranks" : "";
  std::fprintf(stderr, "run %s (%s): %s, %s parameters, on %s%s%s\n", e.name.c_str(), e.run_uid.c_str(), e.model.c_str(),
               human_count(static_cast<double>(e.n_params)).c_str(), e.device.c_str(), ranks.c_str(),
               e.gpu_name.empty() ? "" : (" (" + e.gpu_name + ")").c_str());
  std::fprintf(stderr, "data: %s\n", e.dataset.c_str());
  if (e.start_step > 0) std::fprintf(stderr, "resuming at step %lld\n", static_cast<long long>(e.start_step));
  if (json_)
    emit({{"event", "start"}, {"run_uid", e.run_uid}, {"name", e.name}, {"n_params", e.n_params},
          {"device", e.device}, {"world_size", e.world_size}, {"start_step", e.start_step}, {"steps", e.total_steps},
          {"config", json::parse(e.config_json)}});
}

void PrinterSink::on_step(const StepEvent& e) {
  char mfu[32] = "--";
  if (e.mfu >= 0) std::snprintf(mfu, sizeof mfu, "%.1f%%", 100 * e.mfu);
  std::fprintf(stderr, "step %5lld/%lld | loss %.4f | lr %.2e | norm %.3f | %.1f ms | %s tok/s | mfu %s | mem %.0f MB\n",
               static_cast<long long>(e.step), static_cast<long long>(total_steps_), e.loss, e.lr, e.grad_norm,
               e.step_ms, human_count(e.tok_s).c_str(), mfu, static_cast<double>(e.mem_peak) / 1e6);
  if (json_)
    emit({{"event", "step"}, {"step", e.step}, {"tokens", e.tokens}, {"loss", e.loss}, {"lr", e.lr},
          {"grad_norm", e.grad_norm}, {"tok_s", e.tok_s}, {"mfu", e.mfu >= 0 ? json(e.mfu) : json(nullptr)},
          {"step_ms", e.step_ms}, {"mem_bytes", e.mem_peak}, {"mem_allocated", e.mem_allocated},
          {"mem_reserved", e.mem_reserved}, {"wall_s", e.wall_s}});
}

void PrinterSink::on_eval(const EvalEvent& e) {
  std::fprintf(stderr, "step %5lld | val loss %.4f\n", static_cast<long long>(e.step), e.val_loss);
  if (json_) emit({{"event", "eval"}, {"step", e.step}, {"tokens", e.tokens}, {"val_loss", e.val_loss}, {"wall_s", e.wall_s}});
}

void PrinterSink::on_sample(const SampleEvent& e) {
  std::fprintf(stderr, "---- sample at step %lld ----\n%s\n----\n", static_cast<long long>(e.step), e.text.c_str());
  if (json_) emit({{"event", "sample"}, {"step", e.step}, {"prompt", e.prompt}, {"text", e.text}});
}

void PrinterSink::on_checkpoint(const CheckpointEvent& e) {
  std::fprintf(stderr, "checkpoint: %s\n", e.path.c_str());
  if (json_) emit({{"event", "checkpoint"}, {"step", e.step}, {"path", e.path}});
}

void PrinterSink::on_end(const EndEvent& e) {
  std::fprintf(stderr, "run %s at step %lld after %.1f s%s%s\n", e.status.c_str(), static_cast<long long>(e.step),
               e.wall_s, e.error.empty() ? "" : ": ", e.error.c_str());
  if (json_)
    emit({{"event", "end"}, {"status", e.status}, {"step", e.step}, {"tokens", e.tokens}, {"wall_s", e.wall_s},
          {"error", e.error}});
}

void PrinterSink::on_progress(const ProgressEvent& e) {
  if (e.total == 0) return;
  int percent = static_cast<int>(100 * e.done / e.total);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  if (json_) emit({{"event", "progress"}, {"what", e.what}, {"done", e.done}, {"total", e.total}});
  int filled = percent / 4;
  std::fprintf(stderr, "\r%s [%s%s] %3d%%%s", e.what.c_str(), std::string(filled, '#').c_str(),
               std::string(25 - filled, ' ').c_str(), percent, percent == 100 ? "\n" : "");
  if (percent == 100) last_percent_ = -1;
}

}  // namespace tokamak::cli
