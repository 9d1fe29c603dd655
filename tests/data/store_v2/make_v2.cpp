// Writes a schema-2 run database and its exports with the store of commit 54cc30e (the last with schema 2),
// for TestStore::exportsSurviveMigrationToV3. Built and run by generate.sh; not part of the build.
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "engine/store/run_export.h"
#include "engine/store/run_store.h"

using namespace tokamak;

int main(int argc, char** argv) {
  const std::string db = argv[1], out = argv[2];
  {
    RunStore store(db);
    store.transaction([&] {
      auto start = [&](const char* uid, const char* name, const char* config, double t, int64_t pid) {
        RunStart s;
        s.run_uid = uid, s.name = name, s.config_json = config, s.dataset = "jargon", s.model = "mini";
        s.n_params = 1234567, s.device = "cpu", s.torch_version = "2.11.0", s.host = "testhost";
        s.total_steps = 40, s.tokens_per_step = 1024;
        return store.begin_run(s, t, pid);
      };
      int64_t a = start("uid-a", "baseline, \"quoted\"", R"({"opt":{"precision":"fp32"},"train":{"steps":40}})",
                        1717000000.125, 11);
      int64_t b =
          start("uid-b", "tf32", R"({"opt":{"precision":"tf32","list":[1,2]},"train":{"steps":40}})", 1717000100.5, 12);
      int64_t c = start("uid-c", "empty", "", 1717000200.25, 13);
      std::vector<MetricRow> rows;
      for (int i = 1; i <= 40; ++i) {
        MetricRow r;
        r.step = i;
        r[Metric::tokens] = 123456789012.0 + 1024.0 * i;
        r[Metric::wall_s] = 0.1 * i + 1.0 / 7;
        r[Metric::train_loss] = 1.0 / 3.0 + i * 0.1;
        if (i % 10 == 0) r[Metric::val_loss] = 2.0 + 1.0 / i;
        r[Metric::lr] = i == 1 ? 1e-300 : 6e-4 * std::cos(i);
        r[Metric::grad_norm] = i == 5 ? 1e300 : std::sqrt(double(i));
        r[Metric::tok_s] = 10000.0 + i;
        if (i > 2) r[Metric::mfu] = 0.4 + i * 1e-3;
        if (i % 3) r[Metric::step_ms] = 100.0 / i;
        r[Metric::mem_allocated] = 1536.0 * 1024 * 1024 + i;
        r[Metric::mem_reserved] = 0;
        if (i == 7) r[Metric::mem_peak] = 9007199254740991.0;  // 2^53 - 1: the largest exact integer
        rows.push_back(r);
      }
      store.add_metrics(a, rows);
      for (auto& r : rows) r[Metric::tok_s] *= 2.5, r[Metric::mfu] = std::numeric_limits<double>::quiet_NaN();
      rows.resize(25);
      store.add_metrics(b, rows);
      MetricRow eval_only;  // a step where only an evaluation was recorded
      eval_only.step = 26, eval_only[Metric::val_loss] = 1.5, eval_only[Metric::tokens] = 26624;
      store.add_metrics(b, {eval_only});
      store.add_sample(a, {10, "Hi", "Hi h\xc3\xa9llo \"you\"\n\ttab, comma", 1717000001.25});
      store.add_checkpoint(a, {40, "/tmp/ckpt 40.pt", 1717000003.0});
      store.end_run(a, "finished", "", 1717000010.0);
      store.end_run(b, "failed", "loss is NaN", 1717000011.0);
      store.end_run(c, "stopped", "", 1717000012.0);
      store.set_tags(a, R"(["ladder","a100"])", "first try");
    });
    for (auto [name, format] :
         {std::pair{"csv", ExportFormat::csv}, {"json", ExportFormat::json}, {"md", ExportFormat::md}}) {
      std::ofstream f(out + "/export." + name, std::ios::binary);
      export_runs(store, {}, format, f);
    }
  }
  return 0;
}
