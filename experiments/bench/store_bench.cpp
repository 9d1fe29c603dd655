// Run store benchmark: fills a database with RUNS runs of ROWS metric rows each (every metric reported,
// an eval every 10th row), then times `runs list` (RunStore::list_runs, what the CLI and the studio call),
// reading one run's curves (RunStore::metrics, what `runs show`, compare and export read), and the
// StoreSink's cost per event on the trainer's thread and on its writer thread.
// Usage: store_bench DB [RUNS=1000] [ROWS=1000]   (built and run by store_bench.sh)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/store/store_sink.h"
#include "engine/base/util/error.h"

using namespace tokamak;
using clk = std::chrono::steady_clock;

static double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

static void fill(RunStore& store, int runs, int rows_per_run) {
  std::string config =
      R"({"model":{"preset":"mini","n_layer":4,"n_head":4,"n_embd":256,"context":256},)"
      R"("train":{"batch_size":16,"steps":1000},"optimizer":{"lr":0.0006},"speed":{"precision":"bf16"}})";
  for (int r = 0; r < runs; ++r) {
    store.transaction([&] {
      RunStart st;
      st.run_uid = "bench-" + std::to_string(r);
      st.name = "run " + std::to_string(r);
      st.config_json = config;
      st.model = "mini";
      st.device = "cuda:0";
      st.total_steps = rows_per_run;
      int64_t id = store.begin_run(st, now_seconds(), 1);
      std::vector<MetricRow> rows(static_cast<size_t>(rows_per_run));
      // The twelve metrics a training step records today (tokens and wall_s are stored as metrics too).
      static const char* keys[] = {"tokens", "wall_s", "train_loss", "val_loss",      "lr",           "grad_norm",
                                   "tok_s",  "mfu",    "step_ms",    "mem_allocated", "mem_reserved", "mem_peak"};
      for (int i = 0; i < rows_per_run; ++i) {
        MetricRow& m = rows[static_cast<size_t>(i)];
        m.step = i + 1;
        for (int k = 0; k < 12; ++k)
          if (k != 3 || i % 10 == 9) m.set(keys[k], 1000.0 * k + i + r * 1e-3);
      }
      store.add_metrics(id, rows);
      store.end_run(id, "finished", "", now_seconds());
    });
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: store_bench DB [RUNS] [ROWS]\n");
    return 2;
  }
  std::string path = argv[1];
  int runs = argc > 2 ? std::atoi(argv[2]) : 1000;
  int rows = argc > 3 ? std::atoi(argv[3]) : 1000;
  try {
    {
      RunStore store(path);
      if (store.list_runs(1).empty()) {
        auto t = clk::now();
        fill(store, runs, rows);
        std::printf("fill: %d runs x %d rows = %lld metric rows in %.1f s\n", runs, rows,
                    static_cast<long long>(runs) * rows, since(t));
      }
      std::printf("metric values in the database: %lld\n",
                  static_cast<long long>(store.db().query_int("SELECT count(*) FROM metric_values")));
    }
    // Cold: a fresh connection's first listing (schema read, page cache empty in this process).
    auto t = clk::now();
    RunStore store(path);
    size_t n = store.list_runs().size();
    double cold = since(t);
    std::vector<double> warm;
    for (int i = 0; i < 20; ++i) {
      t = clk::now();
      n = store.list_runs().size();
      warm.push_back(since(t));
    }
    std::sort(warm.begin(), warm.end());
    std::printf("list_runs (%zu runs): open + first list %.1f ms, then median %.1f ms (min %.1f, max %.1f)\n", n,
                cold * 1e3, warm[warm.size() / 2] * 1e3, warm.front() * 1e3, warm.back() * 1e3);

    // One run's curves: every value of a run from the middle of the file.
    const int64_t middle = store.list_runs()[n / 2].run.id;
    std::vector<double> curves;
    size_t steps = 0;
    for (int i = 0; i < 20; ++i) {
      t = clk::now();
      steps = store.metrics(middle).size();
      curves.push_back(since(t));
    }
    std::sort(curves.begin(), curves.end());
    std::printf("metrics(one run) (%zu steps): median %.2f ms (min %.2f, max %.2f)\n", steps,
                curves[curves.size() / 2] * 1e3, curves.front() * 1e3, curves.back() * 1e3);

    // The sink: what the trainer's thread pays per event, and what the writer thread then spends.
    std::string sink_path = path + ".sink.db";
    std::remove(sink_path.c_str());
    const int events = 200000;
    StoreSink sink(sink_path);
    RunStart st;
    st.run_uid = "sink-bench";
    sink.on_start(st);
    StepEvent e;
    e.metrics.add("loss", 3.0), e.metrics.add("tok_s", 1e5), e.metrics.add("lr", 6e-4), e.metrics.add("mfu", 0.4);
    t = clk::now();
    for (int i = 1; i <= events; ++i) {
      e.step = i;
      e.tokens = i * 1024LL;
      sink.on_step(e);
    }
    double enqueue = since(t);
    auto t2 = clk::now();
    sink.flush();
    double drain = since(t2);
    std::printf("StoreSink::on_step: %.3f us per event on the trainer's thread (%d events)\n", enqueue / events * 1e6,
                events);
    std::printf("writer thread: %.2f us per event to commit (flush of the remaining queue: %.0f ms)\n",
                (enqueue + drain) / events * 1e6, drain * 1e3);
    sink.on_end({"finished", "", events, 0, 0});
    std::remove(sink_path.c_str());
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "store_bench: %s\n", ex.what());
    return 1;
  }
  return 0;
}
