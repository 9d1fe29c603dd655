// Inside the run: the per-layer statistics are each group's own numbers (weights, gradients, the step's update,
// the residual stream, head 0's attention entropy), computed by hand here from the parameters by name; a run that
// measures them learns exactly what one that does not learns; metrics.layers_every picks the reports; and a spike
// names the group whose gradients jumped.
#include <ATen/ATen.h>
#include <torch/nn/modules/embedding.h>

#include <QtTest>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <iterator>
#include <set>

#include "engine/base/config/config.h"
#include "engine/base/run/journal_events.h"
#include "engine/base/run/layer_metrics.h"
#include "engine/torch/train/layer_stats.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

GPT tiny_gpt() {
  at::manual_seed(3);
  return GPT(GPTOptions::from_config(test::tiny_model(), SpeedConfig{}));
}

// The parameters of a group by their names' prefixes, spelled here apart from parameter_group.
std::vector<at::Tensor> group_params(GPTImpl& m, const std::string& group) {
  std::vector<std::string> prefixes;
  if (group == "emb") prefixes = {"wte.", "wpe."};
  else if (group == "head") prefixes = {"ln_f."};  // tied: the head is wte
  else {
    const std::string b = "blocks." + group.substr(1, group.find('.') - 1) + ".",
                      part = group.substr(group.find('.') + 1);
    if (part == "attn") prefixes = {b + "attn."};
    if (part == "mlp") prefixes = {b + "c_fc.", b + "c_proj."};
    if (part == "norm") prefixes = {b + "ln_1.", b + "ln_2."};
  }
  std::vector<at::Tensor> out;
  for (const auto& p : m.named_parameters())
    for (const std::string& pre : prefixes)
      if (p.key().rfind(pre, 0) == 0) out.push_back(p.value());
  return out;
}

double sum_sq(const std::vector<at::Tensor>& ts) {
  double s = 0;
  for (const at::Tensor& t : ts) s += t.to(at::kDouble).square().sum().item<double>();
  return s;
}
int64_t numel(const std::vector<at::Tensor>& ts) {
  int64_t n = 0;
  for (const at::Tensor& t : ts) n += t.numel();
  return n;
}

void expect_close(double got, double want, const std::string& what, double rel = 1e-5) {
  QVERIFY2(std::abs(got - want) <= rel * std::max(1e-12, std::abs(want)),
           qPrintable(QString::fromStdString(what) + ": " + QString::number(got, 'g', 9) + " against " +
                      QString::number(want, 'g', 9)));
}

const std::vector<std::string> kTinyGroups = {"emb",     "h0.attn", "h0.mlp",  "h0.norm",
                                              "h1.attn", "h1.mlp",  "h1.norm", "head"};

// Each run its own checkpoint folder: a folder holding another run's checkpoints is refused.
Config run_of(test::ScratchEnv& env, const std::vector<std::string>& more) {
  static int runs = 0;
  Config c;
  apply_overrides(c, test::two_block_run_overrides(env.corpus_excerpt(40000)));
  apply_overrides(
      c, {"train.steps=12", "checkpoint.dir=" + env.path("ckpt" + std::to_string(++runs)), "checkpoint.minutes=0"});
  apply_overrides(c, more);
  return c;
}

std::set<std::string> layer_keys(const StepEvent& e) {
  std::set<std::string> keys;
  for (const MetricValue& v : e.metrics)
    if (is_layer_metric(v.key)) keys.insert(v.key);
  return keys;
}

}  // namespace

class TestLayerStats : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void groupsFollowTheModel() {
    QCOMPARE(parameter_group("blocks.11.attn.c_attn.weight"), std::string("h11.attn"));
    QCOMPARE(parameter_group("blocks.0.c_proj.bias"), std::string("h0.mlp"));
    QCOMPARE(parameter_group("blocks.3.ln_2.weight"), std::string("h3.norm"));
    QCOMPARE(parameter_group("value_embeds.1.weight"), std::string("emb"));
    QCOMPARE(parameter_group("lm_head"), std::string("head"));
    QCOMPARE(parameter_group("skip_weights"), std::string("other"));
    std::vector<std::string> shuffled = {"head", "h10.attn", "h2.norm", "emb", "h2.attn", "other"};
    std::sort(shuffled.begin(), shuffled.end(), group_before);
    QCOMPARE(shuffled, (std::vector<std::string>{"emb", "h2.attn", "h2.norm", "h10.attn", "head", "other"}));
    const auto k = parse_layer_metric(layer_metric("g_rms", "h3.attn"));
    QVERIFY(k.has_value());
    QCOMPARE(k->stat, std::string("g_rms"));
    QCOMPARE(k->group, std::string("h3.attn"));
    QVERIFY(!parse_layer_metric("layers.g_rms").has_value());
    QVERIFY(!parse_layer_metric("loss").has_value());
  }

  // Weight RMS, gradient RMS and the update's ratio, each against the group's tensors summed by hand.
  void statisticsAreEachGroupsOwnNumbers() {
    GPT model = tiny_gpt();
    for (const at::Tensor& p : model->parameters()) p.mutable_grad() = at::randn_like(p) * 0.01;
    LayerStats stats(*model);
    QCOMPARE(stats.groups(), kTinyGroups);
    std::map<std::string, double> before_sq;
    stats.keep_weights();
    std::map<std::string, double> delta_sq;
    {
      at::NoGradGuard no_grad;
      for (const std::string& g : kTinyGroups) {
        double d = 0;
        for (at::Tensor& p : group_params(*model, g)) {
          const at::Tensor step = at::randn_like(p) * 1e-3;
          p.add_(step);
          d += step.to(at::kDouble).square().sum().item<double>();
        }
        delta_sq[g] = d;
      }
    }
    Metrics m;
    stats.add_to(m, at::Tensor());
    for (const std::string& g : kTinyGroups) {
      const auto ps = group_params(*model, g);
      std::vector<at::Tensor> grads;
      for (const at::Tensor& p : ps) grads.push_back(p.grad());
      expect_close(m.get(layer_metric("w_rms", g)), std::sqrt(sum_sq(ps) / numel(ps)), "w_rms " + g);
      expect_close(m.get(layer_metric("g_rms", g)), std::sqrt(sum_sq(grads) / numel(ps)), "g_rms " + g);
      expect_close(m.get(layer_metric("update_ratio", g)), std::sqrt(delta_sq[g] / sum_sq(ps)), "update_ratio " + g,
                   1e-3);  // the copy's difference in fp32
    }
    QVERIFY(!m.has(layer_metric("act_rms", "h0")));  // no probe without tokens
    // Without keep_weights there is no update to measure.
    Metrics again;
    stats.add_to(again, at::Tensor());
    QVERIFY(!again.has(layer_metric("update_ratio", "h0.attn")));
    QVERIFY(again.has(layer_metric("w_rms", "h0.attn")));
  }

  // The residual stream after each block, by the blocks' own training forward; head 0's entropy is ln(t + 1) at
  // position t when its queries and keys are all zero (every earlier token weighs the same).
  void theProbeReadsTheStreamAndTheAttention() {
    GPT model = tiny_gpt();
    const at::Tensor idx = at::randint(0, 64, {1, 16}, at::kLong);
    LayerStats stats(*model);
    Metrics m;
    stats.add_to(m, idx);
    auto named = model->named_parameters();
    at::Tensor x = at::embedding(named["wte.weight"], idx) + named["wpe.weight"].narrow(0, 0, 16).unsqueeze(0);
    auto modules = model->named_modules("", false);
    at::NoGradGuard no_grad;
    for (int b = 0; b < 2; ++b) {
      x = modules["blocks." + std::to_string(b)]->as<BlockImpl>()->forward(x);
      expect_close(m.get(layer_metric("act_rms", "h" + std::to_string(b))), x.square().mean().sqrt().item<double>(),
                   "act_rms h" + std::to_string(b), 1e-4);
      const double entropy = m.get(layer_metric("attn_entropy", "h" + std::to_string(b)));
      QVERIFY2(entropy > 0 && entropy < std::log(16.0), qPrintable(QString::number(entropy)));
    }
    for (int b = 0; b < 2; ++b) {
      auto* attn = modules["blocks." + std::to_string(b)]->as<BlockImpl>()->attn.get();
      attn->c_attn->weight.zero_();
      if (attn->c_attn->bias.defined()) attn->c_attn->bias.zero_();
    }
    double uniform = 0;
    for (int t = 0; t < 16; ++t) uniform += std::log(t + 1.0) / 16;
    Metrics flat;
    stats.add_to(flat, idx);
    for (const char* h : {"h0", "h1"}) expect_close(flat.get(layer_metric("attn_entropy", h)), uniform, h, 1e-5);
  }

  // A run that measures its layers learns what one that does not learns, bit for bit on a CPU; every report carries
  // every group's three statistics and every block's two.
  void measuringChangesNothingTheModelLearns() {
    test::ScratchEnv env;
    test::RecordingSink with, without;
    train(run_of(env, {"metrics.layers_every=0"}), with);
    train(run_of(env, {"metrics.layers_every=-1"}), without);
    QCOMPARE(with.end.status, std::string("finished"));
    QCOMPARE(with.losses(), without.losses());
    QCOMPARE(with.steps.size(), size_t{12});
    for (const StepEvent& e : without.steps) QVERIFY(layer_keys(e).empty());
    for (const StepEvent& e : with.steps) {
      QCOMPARE(layer_keys(e).size(), 3 * kTinyGroups.size() + 2 * 2);
      for (const std::string& g : kTinyGroups) {
        const double ratio = e.metric(layer_metric("update_ratio", g));
        QVERIFY2(ratio > 0 && ratio < 1, qPrintable(QString::fromStdString(g) + " " + QString::number(ratio)));
      }
    }
  }

  // Under bf16 autocast and fp16 with its loss scale the statistics are the weights' and the unscaled gradients':
  // every key at every report but one the loss scale skipped (its gradients overflowed: not finite, left out), each
  // gradient RMS within 4× of fp32's (a gradient read before unscaling would be thousands of times larger).
  void everyPrecisionReportsTheSameKeys() {
    test::ScratchEnv env;
    test::RecordingSink fp32;
    train(run_of(env, {"speed.precision=fp32", "train.steps=6"}), fp32);
    for (const char* precision : {"bf16", "fp16"}) {
      test::RecordingSink r;
      train(run_of(env, {std::string("speed.precision=") + precision, "train.steps=6"}), r);
      QCOMPARE(r.end.status, std::string("finished"));
      QCOMPARE(r.steps.size(), fp32.steps.size());
      double skipped = 0;  // fp16: a step the loss scale skipped has overflowed gradients, whose RMS is left out
      for (size_t i = 0; i < r.steps.size(); ++i) {
        const double now = r.steps[i].metric("scale_skipped_steps");
        const bool overflowed = !std::isnan(now) && now > skipped;
        if (!std::isnan(now)) skipped = now;
        if (overflowed) continue;
        const std::set<std::string> ours = layer_keys(r.steps[i]), theirs = layer_keys(fp32.steps[i]);
        std::vector<std::string> differ;
        std::set_symmetric_difference(ours.begin(), ours.end(), theirs.begin(), theirs.end(),
                                      std::back_inserter(differ));
        QVERIFY2(differ.empty(), qPrintable(QString("%1 step %2: %3 (%4 keys against %5)")
                                                .arg(precision)
                                                .arg(r.steps[i].step)
                                                .arg(QString::fromStdString(differ.empty() ? "" : differ.front()))
                                                .arg(ours.size())
                                                .arg(theirs.size())));
        for (const std::string& g : kTinyGroups) {
          const double ours = r.steps[i].metric(layer_metric("g_rms", g)),
                       theirs = fp32.steps[i].metric(layer_metric("g_rms", g));
          QVERIFY2(ours > theirs / 4 && ours < theirs * 4, qPrintable(QString("%1 %2 step %3: %4 against fp32's %5")
                                                                          .arg(precision, QString::fromStdString(g))
                                                                          .arg(r.steps[i].step)
                                                                          .arg(ours)
                                                                          .arg(theirs)));
        }
      }
    }
  }

  // metrics.layers_every=4 with a report every 2 steps: the layers at steps 4, 8 and the last; a value that is no
  // multiple of the reports is refused naming both keys.
  void layersEveryPicksTheReports() {
    test::ScratchEnv env;
    test::RecordingSink r;
    train(run_of(env, {"train.log_every=2", "metrics.layers_every=4", "train.steps=10"}), r);
    std::vector<int64_t> with_layers, reports;
    for (const StepEvent& e : r.steps) {
      reports.push_back(e.step);
      if (!layer_keys(e).empty()) with_layers.push_back(e.step);
    }
    QCOMPARE(reports, (std::vector<int64_t>{1, 2, 4, 6, 8, 10}));
    QCOMPARE(with_layers, (std::vector<int64_t>{4, 8, 10}));
    Config bad = run_of(env, {"train.log_every=2", "metrics.layers_every=3"});
    const auto problems = config_problems(bad, 0);
    bool named = false;
    for (const std::string& p : problems)
      named = named || (p.find("metrics.layers_every=3 is not a multiple of train.log_every=2") != std::string::npos &&
                        p.find("metrics.layers_every=2") != std::string::npos);
    QVERIFY2(named, problems.empty() ? "no problem" : problems.front().c_str());
  }

  // Step 20's gradients of block 1's MLP made a thousand times larger: the spike the gradient norm makes names
  // h1.mlp, in the event, in its journal line and back.
  void aSpikeNamesTheGroupWhoseGradientsJumped() {
    test::ScratchEnv env;
    Config c = run_of(
        env, {"train.steps=24", "health.spike_window=8", "health.grad_norm_threshold=6", "metrics.layers_every=-1"});
    int64_t target = -1, i = 0;
    for (const auto& p : GPT(GPTOptions::from_config(c.model, c.speed))->named_parameters()) {
      if (p.key() == "blocks.1.c_fc.weight") target = i;
      ++i;
    }
    QVERIFY(target >= 0);
    TrainControl control;
    control.gradient_hook = [target](int64_t step, const std::vector<at::Tensor>& params) {
      if (step == 20) params[static_cast<size_t>(target)].grad().mul_(1000);
    };
    test::RecordingSink r;
    train(c, r, &control);
    QCOMPARE(r.end.status, std::string("finished"));
    const SpikeEvent* spike = nullptr;
    for (const SpikeEvent& e : r.spikes)
      if (e.step == 20) spike = &e;
    QVERIFY2(spike, qPrintable(QString("spikes: %1").arg(r.spikes.size())));
    QCOMPARE(spike->signal, std::string("grad_norm"));
    QCOMPARE(spike->layer, std::string("h1.mlp"));
    // One of the group's four tensors ×1000: its RMS ×√(share of the group's squares), far above any other's.
    QVERIFY2(spike->layer_jump > 20, qPrintable(QString::number(spike->layer_jump)));
    const std::string line = event_json(*spike).dump();
    test::RecordingSink back;
    QCOMPARE(dispatch_journal_line(line, back), std::string("spike"));
    QCOMPARE(back.spikes.size(), size_t{1});
    QCOMPARE(back.spikes[0].layer, std::string("h1.mlp"));
    QCOMPARE(back.spikes[0].layer_jump, spike->layer_jump);
  }
};

QTEST_GUILESS_MAIN(TestLayerStats)
#include "test_layer_stats.moc"
