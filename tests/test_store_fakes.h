// Fake run events for the run store suites: a trainer's reports with values a test can predict.
#pragma once
#include <QTemporaryDir>
#include <QtTest>
#include <string>

#include "engine/base/store/run_store.h"
#include "tests/support/test_support.h"
#include "engine/base/run/events.h"

namespace tokamak::test {

inline RunStart fake_start(const std::string& uid, const std::string& name = "fake",
                           const std::string& config = R"({"speed":{"precision":"fp32"},"train":{"steps":100}})") {
  RunStart s;
  s.run_uid = uid;
  s.name = name;
  s.config_json = config;
  s.dataset = "jargon";
  s.model = "mini";
  s.n_params = 1234567;
  s.device = "cpu";
  s.torch_version = "2.11.0";
  s.total_steps = 100;
  s.tokens_per_step = 1024;
  return s;
}

// Step i of attempt `attempt` (so a test can tell a resumed run's rows from the lost attempt's).
inline StepEvent fake_step(int64_t i, double tok_s = 10000, int attempt = 0) {
  StepEvent e;
  e.step = i;
  e.tokens = i * 1024;
  e.wall_s = 0.1 * static_cast<double>(i);
  e.metrics.add("loss", 10.0 / static_cast<double>(i + 1) + attempt);
  e.metrics.add("lr", 6e-4);
  e.metrics.add("grad_norm", 1.0 / 3.0);
  e.metrics.add("tok_s", tok_s);
  e.metrics.add("step_ms", 100);
  return e;
}

inline EvalEvent fake_eval(int64_t step, double val_loss) {
  EvalEvent e{step, step * 1024, 0.1 * static_cast<double>(step), {}};
  e.metrics.add("val_loss", val_loss);
  return e;
}

inline std::string db_in(const QTemporaryDir& dir, const char* name = "runs.db") {
  return (dir.path() + "/" + name).toStdString();
}

}  // namespace tokamak::test
