// `tokamak plan` and what it rests on: the device catalog parses and a bad entry is one line naming the file, the
// device and the field; the step time is each kind's work ÷ (limit × fraction) on a stated fixture; the fit
// decision follows the memory estimate (the setup's batch, a smaller one with accumulation, checkpointing, none);
// the all-reduce and the target's tokens are the stated formulas; stored profiled runs and targets are read; the
// CLI's rows, JSON and its errors.
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cmath>

#include "engine/base/config/config.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/perf/speed_of_light.h"
#include "engine/torch/model/memory_estimate.h"
#include "engine/base/plan/device_catalog.h"
#include "engine/base/plan/plan.h"
#include "engine/base/plan/plan_rates.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

// A device of round numbers: 100 TFLOP/s in bf16, 10 in fp32, 1 TB/s, 100 GB/s between GPUs, $2 an hour.
CatalogDevice fixture(double memory_bytes = 80e9) {
  CatalogDevice d;
  d.name = "Fixture", d.architecture = "Testwell", d.memory_bytes = memory_bytes;
  d.flops = {{"fp32", 10e12}, {"bf16", 100e12}};
  d.memory_bytes_per_s = 1e12, d.interconnect_bytes_per_s = 100e9, d.price_per_hour = 2;
  return d;
}

PlanRates half_rates() {
  PlanRates r;
  for (const char* k : {"matmul", "attention", "head", "norm", "activation", "residual", "casts/copies", "optimizer"})
    r.of_limit[k] = 0.5;
  r.overhead_ms_per_layer = 0;
  r.basis = "half of every limit";
  return r;
}

Config small() {
  Config c;
  apply_overrides(c, {"model.n_layer=2", "model.n_head=2", "model.n_embd=64", "model.context=64",
                      "train.batch_size=8", "train.steps=100", "speed.precision=bf16"});
  return c;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what()) + " (hint: " + e.hint() + ")";
  }
  return "";
}

}  // namespace

class TestPlan : public QObject {
  Q_OBJECT
  std::unique_ptr<test::ScratchEnv> env_;

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
  }

  void theCatalogHoldsTheDevicesAPlanNeeds() {
    const DeviceCatalog c = load_device_catalog();
    for (const char* name : {"H200 SXM", "H100 SXM", "H100 PCIe", "A100 80GB SXM", "A100 40GB SXM", "L40S", "L4", "A10",
                             "RTX 5090", "RTX 4090", "RTX 4080", "RTX 3090", "RTX 3080", "T4"}) {
      const CatalogDevice& d = find_device(c, name);
      QVERIFY2(d.flops.at("fp32") > 0 && d.memory_bytes > 0 && d.memory_bytes_per_s > 0 &&
                   d.interconnect_bytes_per_s > 0 && d.price_per_hour > 0,
               name);
    }
    QCOMPARE(find_device(c, "h100 sxm").flops.at("bf16"), 989e12);
    QVERIFY(!find_device(c, "T4").flops.count("bf16"));  // Turing has none: planned in fp32
    QVERIFY(!c.prices_as_of.empty() && !c.price_source.empty());
    // A CUDA device's name finds its entry, the longest match first.
    QCOMPARE(QString::fromStdString(device_for_gpu_name(c, "NVIDIA H100 PCIe")->name), QString("H100 PCIe"));
    QCOMPARE(QString::fromStdString(device_for_gpu_name(c, "NVIDIA H100 80GB HBM3")->name), QString("H100 SXM"));
    QVERIFY(device_for_gpu_name(c, "Quadro Fantasy") == nullptr);
    const QString unknown = QString::fromStdString(error_of([&] { find_device(c, "H10 SXM"); }));
    QVERIFY2(unknown.startsWith("no device 'H10 SXM' in the catalog") && unknown.contains("did you mean 'H100 SXM'?"),
             qPrintable(unknown));
  }

  void theUsersFileChangesAndAddsAndBadEntriesSayWhere() {
    const std::string user = R"({"devices": [{"name": "H100 SXM", "price_per_hour": 9},
      {"name": "My card", "architecture": "Ada", "memory_gb": 12, "tflops": {"fp32": 20, "bf16": 40},
       "memory_bandwidth_gbs": 500, "interconnect": {"kind": "PCIe 4", "gbs": 32}, "price_per_hour": 0}]})";
    const DeviceCatalog c = parse_device_catalog(builtin_devices_json(), user, "/my/devices.json");
    QCOMPARE(find_device(c, "H100 SXM").price_per_hour, 9.0);
    QCOMPARE(find_device(c, "H100 SXM").flops.at("bf16"), 989e12);  // the rest stays
    QVERIFY(find_device(c, "H100 SXM").source.find("changed by /my/devices.json") != std::string::npos);
    QCOMPARE(find_device(c, "my card").memory_bytes, 12e9);
    const struct {
      const char* text;
      const char* says;
    } bad[] = {
        {"{", "/my/devices.json is not JSON"},
        {R"({"gpus": []})", "/my/devices.json: no \"devices\" list"},
        {R"({"devices": [{"architecture": "Ada"}]})", "/my/devices.json: a device without a \"name\""},
        {R"({"devices": [{"name": "New", "architecture": "Ada", "tflops": {"fp32": 1}, "memory_bandwidth_gbs": 1,
           "interconnect": {"kind": "PCIe", "gbs": 1}}]})",
         "/my/devices.json: device 'New': 'memory_gb' is missing"},
        {R"({"devices": [{"name": "L4", "memory_gb": -3}]})", "/my/devices.json: device 'L4': 'memory_gb' must be a number from 0.1 to"},
        // A typo of a few hundred orders of magnitude: refused, not planned as a 63-digit time.
        {R"({"devices": [{"name": "H100 SXM", "memory_bandwidth_gbs": 1e-300}]})",
         "/my/devices.json: device 'H100 SXM': 'memory_bandwidth_gbs' must be a number from 1 to"},
        {R"({"devices": [{"name": "L4", "tflops": {"fp32": 1e300}}]})",
         "/my/devices.json: device 'L4': 'tflops.fp32' must be a number from 0.001 to 1e6"},
        {R"({"devices": [{"name": "L4", "memory_gb": 1e9}]})",
         "/my/devices.json: device 'L4': 'memory_gb' must be a number from 0.1 to 100000"},
        {R"({"devices": [{"name": "L4", "tflops": {"int4": 5}}]})",
         "/my/devices.json: device 'L4': 'tflops.int4' is no precision Tokamak plans for"},
        {R"({"devices": [{"name": "L4", "interconnect": "PCIe"}]})", "/my/devices.json: device 'L4': 'interconnect' must be"},
    };
    for (const auto& b : bad) {
      const QString e = QString::fromStdString(error_of([&] { parse_device_catalog(builtin_devices_json(), b.text, "/my/devices.json"); }));
      QVERIFY2(e.startsWith(b.says), qPrintable(e));
      QVERIFY2(!e.contains('\n'), qPrintable(e));
    }
  }

  // The step on the fixture at half of every limit: each kind's work from the model's shapes, by hand.
  void aStepIsEachKindsWorkOverItsLimit() {
    const Config c = plan_config(small(), fixture(), Precision::kFp32);
    const auto ms = kind_times_ms(c, fixture(), half_rates(), 100e12);
    const double L = 2, C = 64, T = 64, V = 50304, tokens = 8 * 64;
    QCOMPARE(ms.at("matmul"), 1e3 * 6 * (L * 12 * C * C + C * V) * tokens / 50e12);
    QCOMPARE(ms.at("attention"), 1e3 * 6 * L * C * T * tokens / 50e12);
    QCOMPARE(ms.at("head"), 1e3 * 2 * V * 2 * tokens / 0.5e12);  // bf16 logits written and read back
    QCOMPARE(ms.at("other"), 0.0);
    PlanRates launches = half_rates();
    launches.overhead_ms_per_layer = 0.25;
    QCOMPARE(kind_times_ms(c, fixture(), launches, 100e12).at("other"), 0.25 * L);
    Config graphs = c;
    graphs.speed.cuda_graphs = true;  // the step replayed: no launches
    QVERIFY(!kind_times_ms(graphs, fixture(), launches, 100e12).count("other"));

    PlanRequest r;
    const PlanRow row = plan_for(small(), fixture(), r, half_rates());
    double sum = 0;
    for (const auto& [kind, t] : row.kind_ms) sum += t;
    QCOMPARE(row.step_ms, sum);
    QCOMPARE(row.tok_s, tokens / (sum / 1e3));
    QCOMPARE(row.tokens, tokens * 100);
    QCOMPARE(row.hours, row.tokens / row.tok_s / 3600);
    QCOMPARE(row.cost, row.hours * 2);
    QCOMPARE(QString::fromStdString(row.basis), QString("half of every limit"));
  }

  void theFitFollowsTheEstimate() {
    Config c = small();
    c.device = "cuda";
    const auto estimate = [&](int64_t batch, bool ckpt) {
      Config x = c;
      x.train.batch_size = batch, x.speed.activation_checkpointing = ckpt;
      return static_cast<double>(estimate_memory(x).total());
    };
    PlanRequest r;
    PlanRow row = plan_for(small(), fixture(estimate(8, false) * 1.01), r, half_rates());
    QVERIFY(row.fits);
    QCOMPARE(row.batch_size, int64_t(8));
    QCOMPARE(row.grad_accum, int64_t(1));
    QVERIFY(row.fix.empty());
    // Room for half the batch: 4 × 2, the same tokens a step, and the switches that say so.
    row = plan_for(small(), fixture((estimate(8, false) + estimate(4, false)) / 2), r, half_rates());
    QVERIFY(row.fits);
    QCOMPARE(row.batch_size, int64_t(4));
    QCOMPARE(row.grad_accum, int64_t(2));
    QCOMPARE(QString::fromStdString(row.fix), QString("train.batch_size=4 train.grad_accum=2"));
    QVERIFY2(QString::fromStdString(row.fit).contains("so: train.batch_size=4"), row.fit.c_str());
    // Room for nothing without checkpointing.
    row = plan_for(small(), fixture((estimate(1, false) + estimate(1, true)) / 2), r, half_rates());
    if (estimate(1, true) < estimate(1, false)) {
      QVERIFY(row.fits);
      QVERIFY(row.checkpointing);
      QVERIFY2(QString::fromStdString(row.fix).contains("speed.activation_checkpointing=true"), row.fix.c_str());
    }
    row = plan_for(small(), fixture(1e6), r, half_rates());
    QVERIFY(!row.fits);
    QVERIFY2(QString::fromStdString(row.fit).startsWith("does not fit: "), row.fit.c_str());
  }

  // Data parallel: the ring all-reduce of the fp32 gradients over the interconnect, half of it hidden by backward.
  void manyGpusAddTheExposedAllReduce() {
    PlanRequest r;
    r.gpus = 8;
    const PlanRow row = plan_for(small(), fixture(), r, half_rates());
    Config c = small();
    c.device = "cuda";
    const double params = static_cast<double>(estimate_memory(c).parameters);
    QCOMPARE(row.allreduce_ms, 1e3 * 2.0 * 7 / 8 * 4 * params / 100e9 * 0.5);
    QCOMPARE(row.tok_s, 8 * 8 * 64 / (row.step_ms / 1e3));
    QCOMPARE(row.cost, row.hours * 8 * 2);
  }

  void theTargetsTokensComeFromStoredRunsElseTheLaw() {
    std::string basis;
    // Hoffmann et al.'s fit solved for D at N = 124M, loss 3.3.
    const double n = 124e6, want = std::pow(410.7 / (3.3 - 1.69 - 406.4 / std::pow(n, 0.34)), 1 / 0.28);
    QCOMPARE(tokens_for_target(nullptr, int64_t(n), 3.3, &basis), want);
    QVERIFY(basis.find("Hoffmann") != std::string::npos);
    QCOMPARE(tokens_for_target(nullptr, int64_t(n), 1.5, &basis), 0.0);  // below what any data reaches at that size
    // Two stored runs of this size reached 3.3 at steps 10 and 30 of 1,000 tokens: the median, 20,000 tokens.
    RunStore store(env_->path("runs.db"));
    for (int64_t reach : {10, 30}) {
      RunStart s;
      s.run_uid = "run" + std::to_string(reach), s.name = s.run_uid, s.n_params = int64_t(n), s.config_json = "{}";
      s.tokens_per_step = 1000;
      const int64_t id = store.begin_run(s, 1, 0);
      std::vector<MetricRow> rows;
      for (int64_t step : {int64_t{5}, reach, reach + 5}) {
        MetricRow m;
        m.step = step;
        m.set("val_loss", step >= reach ? 3.2 : 3.6);
        rows.push_back(m);
      }
      store.add_metrics(id, rows);
    }
    QCOMPARE(tokens_for_target(&store, int64_t(n), 3.3, &basis), 20000.0);
    QCOMPARE(QString::fromStdString(basis), QString("from 2 stored runs of this size that reached it"));
  }

  // A profiled run on an H100 gives every Hopper device its fractions: the kind's work over its time, against the
  // H100's own limits; kinds it did not time keep the defaults, and its other time is the launches' overhead.
  void storedProfiledRunsGiveTheirArchitectureItsFractions() {
    RunStore store(env_->path("profiled.db"));
    Config c = small();
    c.device = "cuda";
    RunStart s;
    s.run_uid = "hopper0000000001", s.name = "profiled", s.device = "cuda:0", s.gpu_name = "NVIDIA H100 80GB HBM3";
    s.config_json = config_to_json(c);
    const int64_t id = store.begin_run(s, 1, 0);
    SpeedOfLightRecord sol;
    sol.matmul_flops = 989e12, sol.memory_bytes_per_s = 3e12;
    sol.kinds = {{"matmul", 10.0, 100, 4.945e12, 0, 5.0, "compute"},  // 494.5 TFLOP/s: half the bf16 peak
                 {"norm", 2.0, 50, 0, 1.675e9, 0.5, "memory"},       // 837.5 GB/s: a quarter of 3.35 TB/s
                 {"other", 1.0, 30, 0, 0, -1, ""}};
    store.set_speed_of_light(id, sol);
    const DeviceCatalog catalog = load_device_catalog();
    const PlanRates h200 = plan_rates(find_device(catalog, "H200 SXM"), catalog, &store, false);
    QCOMPARE(QString::fromStdString(h200.basis), QString("from 1 profiled run on Hopper"));
    QCOMPARE(h200.of_limit.at("matmul"), 0.5);
    QCOMPARE(h200.of_limit.at("norm"), 0.25);
    QCOMPARE(h200.of_limit.at("attention"), default_rates(true, false).of_limit.at("attention"));
    QCOMPARE(h200.overhead_ms_per_layer, 1.0 / 2);  // 1 ms over 2 layers, one micro-step
    // Another architecture is not told by it.
    const PlanRates a100 = plan_rates(find_device(catalog, "A100 80GB SXM"), catalog, &store, false);
    QVERIFY2(a100.basis.find("no profiled run on Ampere yet") != std::string::npos, a100.basis.c_str());
    QCOMPARE(a100.of_limit.at("matmul"), default_rates(true, false).of_limit.at("matmul"));
  }

  // A run on this machine keeps what the plan said of it in its first report, beside what it measured.
  void aRunKeepsItsOwnPlan() {
    const test::CliResult r = test::run_tokamak(
        QStringList{"train"} + test::set_args(test::quiet_run_overrides(env_->corpus_excerpt(20000), 4)));
    QVERIFY2(r.code == 0, r.err.right(600).constData());
    RunStore store;
    const std::vector<RunListing> runs = store.list_runs();
    QCOMPARE(int(runs.size()), 1);
    const RunInfo run = store.run(runs.front().run.id);
    const std::vector<MetricRow> rows = store.metrics(run.id);
    QCOMPARE(int(rows.size()), 4);
    const double tok_s = rows.front()["plan_tok_s"], step_ms = rows.front()["plan_step_ms"];
    QVERIFY2(tok_s > 0 && step_ms > 0, r.err.constData());
    QVERIFY(std::abs(tok_s * step_ms / 1e3 / double(run.tokens_per_step) - 1) < 1e-9);
    for (size_t i = 1; i < rows.size(); ++i) QVERIFY(std::isnan(rows[i]["plan_tok_s"]));  // the first report only
    QVERIFY(rows.back()["tok_s"] > 0);
  }

  void theCliSaysItPerDevice() {
    test::CliResult r = test::run_tokamak({"plan", "--device", "H100 SXM", "--json", "--set", "model.preset=gpt2",
                                           "--set", "train.batch_size=64", "--set", "model.context=1024"});
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(r.out.count('\n'), 1);
    const QJsonObject o = r.json();
    for (const char* key : {"device", "fits", "batch_size", "grad_accum", "step_ms", "tok_s", "mfu", "hours", "cost", "basis"})
      QVERIFY2(o.contains(key), key);
    QCOMPARE(o["device"].toString(), QString("H100 SXM"));
    QVERIFY(o["fits"].toBool());
    QVERIFY(o["tok_s"].toDouble() > 0 && o["mfu"].toDouble() > 0 && o["mfu"].toDouble() < 1);
    QCOMPARE(o["cost"].toDouble(), o["hours"].toDouble() * 2.5);
    QVERIFY2(o["basis"].toString().contains("no profiled run on Hopper yet"), qPrintable(o["basis"].toString()));

    // A GPU setup is planned on a machine without one: CUDA graphs take the launches out of the step.
    r = test::run_tokamak({"plan", "--device", "H100 SXM", "--json", "--set", "speed.cuda_graphs=true"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(!r.json()["kind_ms"].toObject().contains("other"));

    // Every device and this machine, one line each, by time; a table without --json.
    r = test::run_tokamak({"plan", "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const int devices = int(load_device_catalog().devices.size()) + 1;
    QCOMPARE(int(r.out.count('\n')), devices);
    QVERIFY(r.out.contains("\"this_machine\":true"));
    r = test::run_tokamak({"plan", "--sort", "cost"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.out.startsWith("device ") && r.out.contains("batch × accum") && r.out.contains("prices as of"),
             r.out.constData());

    r = test::run_tokamak({"plan", "--device", "A100 80"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("no device 'A100 80' in the catalog") && r.err.contains("did you mean 'A100 80GB SXM'?"),
             r.err.constData());
    r = test::run_tokamak({"plan", "--tokens", "10", "--target-loss", "3"});
    QVERIFY(r.code != 0);
    // Numbers no plan can mean are refused in one line, before any work.
    for (const QStringList& args : {QStringList{"--tokens", "inf"}, QStringList{"--tokens", "1e308"},
                                    QStringList{"--gpus", "2147483647"}, QStringList{"--tokens", "nan"}}) {
      r = test::run_tokamak(QStringList{"plan", "--device", "H100 SXM"} + args);
      QVERIFY2(r.code != 0 && r.out.isEmpty() && r.err.contains("--") && !r.err.contains("years"),
               qPrintable(args.join(' ') + ": " + r.err));
    }
    // A T4 has no bf16: GPT-2 124M is planned in fp16 (its tensor cores), at well over 4× its fp32 row.
    r = test::run_tokamak({"plan", "--device", "T4", "--json", "--set", "model.preset=gpt2"});
    const QJsonObject fp16 = QJsonDocument::fromJson(r.out.trimmed()).object();
    r = test::run_tokamak({"plan", "--device", "T4", "--json", "--set", "model.preset=gpt2", "--set", "speed.precision=fp32"});
    const QJsonObject fp32 = QJsonDocument::fromJson(r.out.trimmed()).object();
    QCOMPARE(fp16["precision"].toString(), QString("fp16"));
    QVERIFY2(fp16["tok_s"].toDouble() >= 4 * fp32["tok_s"].toDouble(),
             qPrintable(QString("%1 against %2").arg(fp16["tok_s"].toDouble()).arg(fp32["tok_s"].toDouble())));
    r = test::run_tokamak({"plan", "--device", "T4", "--set", "model.preset=gpt2"});
    QVERIFY2(r.out.contains("precision") && r.out.contains(" fp16 "), r.out.constData());
    // The largest that is taken prints a time with its unit.
    r = test::run_tokamak({"plan", "--device", "H100 SXM", "--tokens", "1e16"});
    QVERIFY2(r.code == 0 && r.out.contains(" years"), r.out.constData());
    write_file_atomically(env_->path("rates.json"), R"({"of_limit": {"matmul": 1.5}})");
    r = test::run_tokamak({"plan", "--device", "L4", "--rates", QString::fromStdString(env_->path("rates.json"))});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("rates.json: 'of_limit.matmul' must be a fraction from 0.0001 to 1"), r.err.constData());
  }

  // A rates file, a setup or a number that would make a plan of astronomical years is refused in one line naming
  // it; the slowest plan that is taken prints its time and cost in a column's width.
  void absurdInputsAreRefusedAndNumbersStayNarrow() {
    const auto plan = [&](const char* rates_json, const QStringList& more) {
      write_file_atomically(env_->path("rates.json"), rates_json);
      return test::run_tokamak(QStringList{"plan", "--device", "H100 SXM", "--set", "model.preset=gpt2", "--rates",
                                           QString::fromStdString(env_->path("rates.json"))} + more);
    };
    const std::pair<const char*, const char*> refused[] = {
        {R"({"of_limit": {"matmul": 1e-300, "norm": 1e-300}})", "'of_limit.matmul' must be a fraction from 0.0001 to 1"},
        {R"({"overhead_ms_per_layer": 1e300})", "'overhead_ms_per_layer' must be a number of milliseconds from 0 to 1000"},
    };
    for (const auto& [rates, said] : refused) {
      const test::CliResult r = plan(rates, {});
      QVERIFY2(r.code != 0 && r.out.isEmpty() && r.err.contains(said) && r.err.count('\n') == 1, r.err.constData());
    }
    test::CliResult r = plan("{}", {"--set", "train.steps=800000000000", "--set", "train.batch_size=64"});
    QVERIFY2(r.code != 0 && r.out.isEmpty() &&
                 r.err.contains("tokens to plan for (train.steps × tokens a step), more than the 1e+16") &&
                 r.err.contains("hint: lower train.steps, or plan by --tokens"),
             r.err.constData());
    r = plan("{}", {"--tokens", "0x10"});
    QVERIFY2(r.code != 0 && r.err.contains("'0x10' is not a number"), r.err.constData());
    const char* slowest = R"({"of_limit": {"matmul": 1e-4, "attention": 1e-4, "head": 1e-4, "norm": 1e-4,
        "activation": 1e-4, "residual": 1e-4, "casts/copies": 1e-4, "optimizer": 1e-4}, "overhead_ms_per_layer": 1000})";
    r = plan(slowest, {"--tokens", "1e16"});
    QVERIFY2(r.code == 0 && r.out.contains(" years") && r.out.contains(" billion"), r.out.constData());
    const QString row = QString::fromUtf8(r.out.split('\n').value(1));  // the device's row, under the header
    QVERIFY2(row.startsWith("H100 SXM") && !row.contains(QRegularExpression("\\d{8,}")), r.out.constData());
  }
};

QTEST_GUILESS_MAIN(TestPlan)
#include "test_plan.moc"
