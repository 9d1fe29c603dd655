// Config keys of older releases still load. tests/data/config_v1 holds files written before the config's sections
// were split by concern (tests/data/config_v1/README.md says how they were made): a saved setup, a ladder, a
// sweep file and a run store with a finished run, a queued run and a queued sweep. Each must read as the same
// settings under today's names.
#include <QtTest>

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/config/ladder.h"
#include "engine/base/config/renamed_keys.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/fleet/queue/sweep.h"
#include "engine/fleet/queue/sweep_importance.h"
#include "engine/fleet/queue/sweep_store.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

using namespace tokamak;

namespace {

std::string fixture(const std::string& name) {
  return std::string(TOKAMAK_SOURCE_DIR) + "/tests/data/config_v1/" + name;
}
std::string example(const std::string& name) { return std::string(TOKAMAK_SOURCE_DIR) + "/resources/" + name; }

QString error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

// Every key the file's JSON names, dotted ("train.lr"), top level and sections alike.
std::set<std::string> keys_named(const nlohmann::json& config) {
  std::set<std::string> keys;
  for (const auto& [name, value] : config.items()) {
    if (!value.is_object()) keys.insert(name);
    else
      for (const auto& [leaf, v] : value.items()) keys.insert(name + "." + leaf);
  }
  return keys;
}

}  // namespace

class TestRenamedKeys : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Each old key names a key of today's registry, is none itself, and sets the same field as its new name.
  void everyOldKeyIsTheFieldOfItsNewName() {
    const Config defaults;
    std::map<std::string, KeyDoc> current;
    for (const KeyDoc& k : config_keys(defaults)) current[k.key] = k;
    QVERIFY(renamed_keys().size() >= 40);
    for (const RenamedKey& r : renamed_keys()) {
      QVERIFY2(current.count(r.key), r.key);
      QVERIFY2(!current.count(r.old_key), r.old_key);
      // A value other than the default: written under the old name, it must show under the new one.
      const KeyDoc& k = current[r.key];
      std::string value = "x";
      if (k.type == "bool") value = k.value == "true" ? "false" : "true";
      else if (k.type == "int") value = std::to_string(static_cast<int64_t>(k.number) + 1);
      else if (k.type == "float") value = std::to_string(k.ranged ? (k.min + k.max) / 2 : k.number + 1);
      for (const ChoiceInfo& choice : choices_of(r.key))
        if (choice.value != k.value) value = choice.value;
      Config by_old, by_new;
      set_key(by_old, r.old_key, value);
      set_key(by_new, r.key, value);
      QCOMPARE(config_to_json(by_old), config_to_json(by_new));
      QVERIFY2(config_to_json(by_old) != config_to_json(defaults), r.key);
    }
  }

  void oldNamesWorkOnTheCommandLine() {
    Config c;
    apply_overrides(c, {"train.lr=0.01", "opt.precision=fp32", "train.eval_every=7", "opt.optimizer=muon"});
    QCOMPARE(c.optimizer.lr, 0.01);
    QCOMPARE(name_of(c.speed.precision), std::string("fp32"));
    QCOMPARE(c.eval.every, int64_t{7});
    QCOMPARE(name_of(c.optimizer.name), std::string("muon"));
    // A typo is still an unknown key, and the hint names today's key.
    const QString typo = error_of([] {
      Config d;
      set_key(d, "optimizer.lrr", "1");
    });
    QVERIFY2(typo.contains("unknown config key 'optimizer.lrr'") && typo.contains("'optimizer.lr'"), qPrintable(typo));
  }

  void aKeyGivenUnderBothNamesIsOneLine() {
    const QString e = error_of([] { config_from_json(R"({"train": {"lr": 0.1}, "optimizer": {"lr": 0.2}})"); });
    QVERIFY2(e.contains("'train.lr' is the old name of 'optimizer.lr', which is given too"), qPrintable(e));
    QVERIFY(!e.contains('\n'));
    // In a flat file too (dotted names at the top), whichever name the file gives first.
    const QString flat = error_of([] { config_from_json(R"({"optimizer.lr": 0.2, "train.lr": 0.1})"); });
    QVERIFY2(flat.contains("'train.lr' is the old name of 'optimizer.lr', which is given too"), qPrintable(flat));
    const QString twice = error_of([] { config_from_json(R"({"optimizer.lr": 0.2, "optimizer": {"lr": 0.1}})"); });
    QVERIFY2(twice.contains("'optimizer.lr' is given twice"), qPrintable(twice));
    // A flat file with each key once still loads as its nested twin.
    QCOMPARE(config_from_json(R"({"optimizer.lr": 0.2, "train.steps": 9})").optimizer.lr, 0.2);
    // An old key whose new section is given as something else than an object is named, not dropped.
    const QString section = error_of([] { config_from_json(R"({"optimizer": 5, "train": {"lr": 0.1}})"); });
    QVERIFY2(section.contains("config section 'optimizer' is not an object of keys"), qPrintable(section));
  }

  // The studio's saved setup of before: every setting arrives, and today's writer names no old key.
  void aSavedSetupLoads() {
    const std::string text = read_file(fixture("setup.json"));
    QVERIFY(text.find("\"opt\"") != std::string::npos);  // the fixture is of the old shape
    const Config c = config_from_json(text);
    QCOMPARE(c.optimizer.lr, 0.003);
    QCOMPARE(c.optimizer.weight_decay, 0.05);
    QCOMPARE(c.optimizer.beta2, 0.99);
    QCOMPARE(c.optimizer.grad_clip, 0.5);
    QCOMPARE(c.optimizer.embed_lr, 0.01);
    QCOMPARE(name_of(c.schedule.name), std::string("wsd"));
    QCOMPARE(c.schedule.warmup_steps, int64_t{1});
    QCOMPARE(c.schedule.decay_fraction, 0.5);
    QCOMPARE(c.eval.every, int64_t{2});
    QCOMPARE(c.eval.batches, int64_t{1});
    QCOMPARE(c.eval.target_val_loss, 20.0);
    QCOMPARE(c.sample.every, int64_t{-1});
    QCOMPARE(c.sample.tokens, int64_t{8});
    QCOMPARE(c.sample.prompt, std::string("Hi"));
    QCOMPARE(c.checkpoint.keep, int64_t{1});
    QCOMPARE(c.checkpoint.minutes, 0.0);
    QCOMPARE(name_of(c.speed.precision), std::string("fp32"));
    QCOMPARE(name_of(c.speed.layers), std::string("native"));
    QCOMPARE(c.speed.fused_adamw, false);
    QCOMPARE(c.speed.prefetch, false);
    QCOMPARE(c.train.steps, int64_t{3});
    const auto written = keys_named(nlohmann::json::parse(config_to_json(c)));
    for (const RenamedKey& r : renamed_keys()) QVERIFY2(!written.count(r.old_key), r.old_key);
    QCOMPARE(written.size(), config_keys().size());
  }

  // A ladder of before (dotted old keys) builds the same rungs as today's file of the same name.
  void anOldLadderBuildsTheSameRungs() {
    const Ladder old = load_ladder(fixture("ladder.json"));
    const Ladder now = load_ladder(example("ladders/cpu-speedrun.json"));
    QVERIFY(read_file(fixture("ladder.json")).find("\"opt.") != std::string::npos);
    QCOMPARE(old.rungs.size(), now.rungs.size());
    QVERIFY(old.rungs.size() >= 5);
    for (size_t i = 0; i < old.rungs.size(); ++i) {
      QCOMPARE(old.rungs[i].name, now.rungs[i].name);
      QCOMPARE(config_to_json(old.rungs[i].config), config_to_json(now.rungs[i].config));
    }
  }

  // A sweep file of before (old keys in "base" and in "sweep") plans the same trials, names and all.
  void anOldSweepPlansTheSameTrials() {
    const SweepPlan old = plan_sweep(read_file(fixture("sweep.json")), "sweep.json", 0);
    const SweepPlan now = plan_sweep(read_file(example("sweeps/small_lr_optimizer.json")), "now.json", 0);
    QCOMPARE(old.keys, now.keys);
    QCOMPARE(old.keys.front(), std::string("optimizer.lr"));
    QCOMPARE(old.trials.size(), now.trials.size());
    QCOMPARE(old.trials.size(), size_t{8});
    for (size_t i = 0; i < old.trials.size(); ++i) {
      QCOMPARE(old.trials[i].name, now.trials[i].name);
      QCOMPARE(config_to_json(old.trials[i].config), config_to_json(now.trials[i].config));
    }
    // The trials' names were "…-lr=0.0003-optimizer=adamw" before and are still.
    QVERIFY(QString::fromStdString(old.trials[0].name).endsWith("lr=0.0003-optimizer=adamw"));
    QVERIFY(error_of([] {
              plan_sweep(R"({"sweep": {"train.lr": [1], "optimizer.lr": [2]}})", "both.json", 0);
            }).contains("swept twice"));
  }

  // A run store of before: opened by today's store, every stored config and sweep reads under today's names, with
  // the same values and the swept keys in their order, while the stored text stays as the old release wrote it (an
  // older program may still be reading it: docs/RELIABILITY.md, "Versions and migrations").
  void anOldRunStoreReadsUnderTodaysNames() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("runs.db").toStdString();
    int64_t runs = 0, queued = 0;
    std::string stored_run, stored_sweep;
    {
      Db db(path);
      db.exec(read_file(fixture("store.sql")));
      QCOMPARE(db.query_int("PRAGMA user_version"), int64_t{6});
      runs = db.query_int("SELECT count(*) FROM runs");
      queued = db.query_int("SELECT count(*) FROM queue");
      Stmt r(db, "SELECT config_json FROM runs");
      QVERIFY(r.step());
      stored_run = r.text(0);
      Stmt w(db, "SELECT spec_json FROM sweeps");
      QVERIFY(w.step());
      stored_sweep = w.text(0);
    }
    QCOMPARE(runs, int64_t{1});
    QCOMPARE(queued, int64_t{9});
    RunStore store(path);
    QCOMPARE(store.db().query_int("PRAGMA user_version"), int64_t{kSchemaVersion});
    QCOMPARE(store.db().query_int("SELECT count(*) FROM runs"), runs);
    QCOMPARE(store.db().query_int("SELECT count(*) FROM queue"), queued);
    QCOMPARE(store.db().query_int("SELECT count(*) FROM runs WHERE config_json = '" + stored_run + "'"), int64_t{1});

    const std::string config = store.run(store.run_ids().front()).config_json;
    for (const RenamedKey& r : renamed_keys())
      QVERIFY2(!keys_named(nlohmann::json::parse(config)).count(r.old_key), r.old_key);
    const Config c = config_from_json(config);
    QCOMPARE(c.optimizer.lr, 0.003);
    QCOMPARE(name_of(c.speed.precision), std::string("fp32"));
    QCOMPARE(name_of(c.schedule.name), std::string("wsd"));
    QCOMPARE(c.eval.target_val_loss, 20.0);
    QCOMPARE(flatten_config(config).at("optimizer.lr"), std::string("0.003"));

    RunQueue queue(store);
    int rows = 0;
    for (const QueueItem& q : queue.list()) {
      const Config qc = config_from_json(q.config_json);
      QVERIFY(qc.optimizer.name == OptimizerKind::kAdamW || qc.optimizer.name == OptimizerKind::kMuon);
      QVERIFY(q.config_json.find("\"opt\"") == std::string::npos);
      ++rows;
    }
    QCOMPARE(rows, 9);

    SweepStore sweeps(store);
    const SweepStatus st = sweeps.status(sweeps.sweep_ids().front());
    const auto spec = nlohmann::ordered_json::parse(st.spec_json);
    std::vector<std::string> axes;
    for (const auto& [key, values] : spec["sweep"].items()) axes.push_back(key);
    QCOMPARE(axes, (std::vector<std::string>{"optimizer.lr", "optimizer.name"}));
    QCOMPARE(spec["base"]["eval"]["every"].get<int>(), 10);
    QVERIFY(!spec["base"]["train"].contains("eval_every"));
    QCOMPARE(swept_keys(st.spec_json), (std::vector<std::string>{"optimizer.lr", "optimizer.name"}));
    Stmt raw(store.db(), "SELECT spec_json FROM sweeps");
    QVERIFY(raw.step());
    QCOMPARE(raw.text(0), stored_sweep);
  }

  // Flattening a config stored by an older release reads its keys under today's names, so an old run and a new
  // one with the same setting never differ in a comparison.
  void oldAndNewConfigsFlattenAlike() {
    const auto old = flatten_config(R"({"opt": {"precision": "bf16"}, "train": {"lr": 0.001, "steps": 5}})");
    const auto now =
        flatten_config(R"({"speed": {"precision": "bf16"}, "optimizer": {"lr": 0.001}, "train": {"steps": 5}})");
    QCOMPARE(old, now);
  }
};

QTEST_GUILESS_MAIN(TestRenamedKeys)
#include "test_renamed_keys.moc"
