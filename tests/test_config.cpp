// The config tree: --set parsing and type checks, unknown keys naming the nearest key, presets, JSON
// round-trip, and every validation problem found before any work.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "tests/support/test_support.h"

using namespace tokamak;
using tokamak::test::error_of;

namespace {

// An internal issue number ("issue 12", "issues #3"): the tracker's, which a user never sees.
const QRegularExpression kIssueNumber(R"(\bissues? *#?\d)", QRegularExpression::CaseInsensitiveOption);

// Every string in a JSON document (keys' values at any depth), with where it sits.
void jsonStrings(const nlohmann::json& j, const QString& where, QStringList* out) {
  if (j.is_string()) *out << where + ": " + QString::fromStdString(j.get<std::string>());
  for (auto it = j.begin(); (j.is_object() || j.is_array()) && it != j.end(); ++it)
    jsonStrings(*it, where + "/" + (j.is_object() ? QString::fromStdString(it.key()) : QString()), out);
}

}  // namespace

class TestConfig : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void setParsesEachType() {
    Config c;
    apply_overrides(c, {"train.steps=200", "optimizer.lr=3e-4", "model.tie_weights=false", "speed.precision=bf16"});
    QCOMPARE(c.train.steps, 200);
    QCOMPARE(c.optimizer.lr, 3e-4);
    QCOMPARE(c.model.tie_weights, false);
    QCOMPARE(c.speed.precision, Precision::kBf16);
  }

  // Found by fuzz_config: a value that is not UTF-8 made config_to_json throw nlohmann's type_error later.
  void invalidUtf8ValueIsRefused() {
    Config c;
    for (const std::string& bad : {std::string("device=txt\xf6\x8b"), std::string("name=run\xff")}) {
      const QString e = error_of([&] { apply_overrides(c, {bad}); });
      QVERIFY2(e.contains("has a value that is not valid UTF-8"), qPrintable(e));
    }
    QCOMPARE(QString::fromStdString(config_to_json(c)), QString::fromStdString(config_to_json(Config{})));
  }

  void badSetsNameTheKey_data() {
    QTest::addColumn<QString>("assignment");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown key suggests the nearest") << "train.step=5"
                                                      << "did you mean 'train.steps'";
    QTest::newRow("leaf name suggests the full key") << "lr=0.1"
                                                     << "did you mean 'optimizer.lr'";
    QTest::newRow("int expected") << "train.steps=many"
                                  << "expects an integer";
    QTest::newRow("float expected") << "optimizer.lr=fast"
                                    << "expects a number";
    QTest::newRow("bool expected") << "model.tie_weights=maybe"
                                   << "expects true or false";
    QTest::newRow("not key=value") << "train.steps"
                                   << "is not key=value";
    QTest::newRow("unknown preset") << "model.preset=gpt5"
                                    << "unknown model.preset 'gpt5'";
  }
  void badSetsNameTheKey() {
    QFETCH(QString, assignment);
    QFETCH(QString, expected);
    Config c;
    QString message = error_of([&] { apply_overrides(c, {assignment.toStdString()}); });
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void presetIsAppliedBeforeSizes() {
    Config c;
    apply_overrides(c, {"model.n_layer=3", "model.preset=gpt2"});  // order on the command line does not matter
    QCOMPARE(c.model.n_layer, 3);
    QCOMPARE(c.model.n_embd, 768);
    QCOMPARE(c.model.context, 1024);
  }

  void jsonRoundTrip() {
    Config c;
    apply_overrides(
        c, {"model.preset=mini", "model.n_layer=5", "sample.prompt=Hello \"world\"", "speed.fused_adamw=true"});
    Config back = config_from_json(config_to_json(c));
    QCOMPARE(QString::fromStdString(config_to_json(back)), QString::fromStdString(config_to_json(c)));
    QCOMPARE(back.model.n_layer, 5);
    QCOMPARE(back.model.n_embd, 384);
  }

  void badJsonIsAnError_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not json") << "{train:"
                              << "not valid JSON";
    QTest::newRow("unknown key") << R"({"train": {"stepz": 3}})"
                                 << "did you mean 'train.steps'";
    QTest::newRow("wrong type") << R"({"train": {"steps": "3"}})"
                                << "expects int";
    QTest::newRow("not an object") << "[1]"
                                   << "must be an object";
  }
  void badJsonIsAnError() {
    QFETCH(QString, json);
    QFETCH(QString, expected);
    QString message = error_of([&] { config_from_json(json.toStdString()); });
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void problemsAreFoundBeforeWork_data() {
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("expected");
    QTest::newRow("heads must divide width")
        << QStringList{"model.n_head=5"} << "model.n_head (5) must divide model.n_embd (128)";
    QTest::newRow("context longer than the model")
        << QStringList{"train.context=256"} << "train.context (256) is longer than model.context (128)";
    QTest::newRow("tf32 on cpu") << QStringList{"speed.precision=tf32"} << "speed.precision=tf32 needs a CUDA device";
    QTest::newRow("fp16 with the fused layers") << QStringList{"speed.precision=fp16", "speed.layers=fused"}
                                                << "speed.layers=fused has no fp16 kernels yet";
    QTest::newRow("cuda graphs on cpu") << QStringList{"speed.cuda_graphs=true"}
                                        << "speed.cuda_graphs=true needs a CUDA device";
    QTest::newRow("pinned memory on cpu")
        << QStringList{"speed.pin_memory=true"} << "speed.pin_memory=true needs a CUDA device";
    QTest::newRow("flash backend on cpu")
        << QStringList{"speed.sdpa_backend=flash"} << "speed.sdpa_backend=flash needs a CUDA device";
    QTest::newRow("cuda without a gpu") << QStringList{"device=cuda"} << "no CUDA GPU is visible";
    QTest::newRow("unknown attention") << QStringList{"speed.attention=flash"}
                                       << "speed.attention 'flash' is not one of";
    QTest::newRow("unknown sdpa backend")
        << QStringList{"speed.sdpa_backend=fast"} << "speed.sdpa_backend 'fast' is not one of";
    QTest::newRow("batch tokens not a multiple")
        << QStringList{"train.batch_tokens=1000"} << "train.batch_tokens (1000) must be a multiple";
    QTest::newRow("zero steps") << QStringList{"train.steps=0"} << "train.steps must be in [1, 1000000000000], got 0";
    QTest::newRow("eps zero") << QStringList{"optimizer.eps=0"} << "optimizer.eps must be in (0, 1], got 0";
    QTest::newRow("eps negative") << QStringList{"optimizer.eps=-1e-8"} << "optimizer.eps must be in (0, 1]";
    QTest::newRow("absurd threads") << QStringList{"threads=1000000"} << "threads must be in [0, 4096], got 1000000";
    QTest::newRow("absurd layers") << QStringList{"model.n_layer=1000000"} << "model.n_layer must be in [1, 100000]";
    QTest::newRow("dropout of one") << QStringList{"model.dropout=1"} << "model.dropout must be in [0, 1), got 1";
    QTest::newRow("huge learning rate") << QStringList{"optimizer.lr=1e300"}
                                        << "optimizer.lr must be in (0, 10], got 1e+300";
    QTest::newRow("negative bucket") << QStringList{"dist.bucket_mb=-1"} << "dist.bucket_mb must be in (0, 65536]";
    QTest::newRow("ZeRO stage 2") << QStringList{"dist.zero=2"} << "dist.zero must be in [0, 1], got 2";
    QTest::newRow("device index not a number")
        << QStringList{"device=cuda:abc"} << "device 'cuda:abc' is not cpu, cuda or cuda:N";
    QTest::newRow("device with no index") << QStringList{"device=cuda:"} << "device 'cuda:' is not cpu, cuda or cuda:N";
    QTest::newRow("device negative index")
        << QStringList{"device=cuda:-1"} << "device 'cuda:-1' is not cpu, cuda or cuda:N";
    QTest::newRow("device misnamed") << QStringList{"device=gpu"} << "device 'gpu' is not cpu, cuda or cuda:N";
  }
  void problemsAreFoundBeforeWork() {
    QFETCH(QStringList, sets);
    QFETCH(QString, expected);
    Config c;
    std::vector<std::string> s;
    for (const QString& x : sets) s.push_back(x.toStdString());
    // An unknown value is refused as it is set; the rest when the config is checked: both before any work.
    QString message = error_of([&] {
      apply_overrides(c, s);
      validate_config(c, /*cuda_devices=*/0);
    });
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void defaultsAreValid() { QVERIFY(config_problems(Config{}, 0).empty()); }

  // Flash and cuDNN attention take 16-bit inputs; with fp32 or tf32 the run would fail at its first
  // step on a GPU, so the config is refused in one line (on CUDA, where the backends exist).
  void sixteenBitBackendsRefuseFp32_data() {
    QTest::addColumn<QString>("precision");
    QTest::addColumn<QString>("backend");
    QTest::addColumn<bool>("refused");
    QTest::newRow("fp32 + flash") << "fp32"
                                  << "flash" << true;
    QTest::newRow("tf32 + flash") << "tf32"
                                  << "flash" << true;
    QTest::newRow("fp32 + cudnn") << "fp32"
                                  << "cudnn" << true;
    QTest::newRow("tf32 + cudnn") << "tf32"
                                  << "cudnn" << true;
    QTest::newRow("bf16 + flash") << "bf16"
                                  << "flash" << false;
    QTest::newRow("bf16-pure + cudnn") << "bf16-pure"
                                       << "cudnn" << false;
    QTest::newRow("fp32 + efficient") << "fp32"
                                      << "efficient" << false;
    QTest::newRow("fp32 + math") << "fp32"
                                 << "math" << false;
  }
  void sixteenBitBackendsRefuseFp32() {
    QFETCH(QString, precision);
    QFETCH(QString, backend);
    QFETCH(bool, refused);
    Config c;
    apply_overrides(c, {"device=cuda", "speed.precision=" + precision.toStdString(),
                        "speed.sdpa_backend=" + backend.toStdString()});
    const auto problems = config_problems(c, /*cuda_devices=*/1);
    QCOMPARE(int(problems.size()), refused ? 1 : 0);
    if (!refused) return;
    const QString line = QString::fromStdString(problems.front());
    QCOMPARE(line, "speed.sdpa_backend=" + backend + " needs 16-bit attention inputs, but speed.precision=" +
                       precision + " gives fp32 ones: set speed.precision=bf16 or speed.sdpa_backend=auto");
  }

  // A combination that does nothing yet is refused even where its device exists, saying what is missing and what
  // runs instead.
  void refusedSwitches_data() {
    QTest::addColumn<QString>("assignment");
    QTest::newRow("fp16 with CUDA graphs") << "speed.cuda_graphs=true";
  }
  void refusedSwitches() {
    QFETCH(QString, assignment);
    Config c;
    apply_overrides(c, {"device=cuda", "speed.precision=fp16", assignment.toStdString()});
    const auto problems = config_problems(c, /*cuda_devices=*/1);
    QCOMPARE(int(problems.size()), 1);
    const QString line = QString::fromStdString(problems.front());
    // It says what is missing, in words a user can read: never the tracker's issue number.
    QVERIFY2(line.startsWith("speed.cuda_graphs with speed.precision=fp16 is not implemented yet (") &&
                 line.contains("set speed.cuda_graphs=false"),
             qPrintable(line));
    QVERIFY2(!line.contains(kIssueNumber), qPrintable(line));
    QVERIFY(!line.contains("needs a CUDA device"));  // on CUDA the only reason is that it does not exist yet
    apply_overrides(c, {"device=cpu"});
    bool said = false;
    for (const std::string& p : config_problems(c, 0)) said = said || p.find("not implemented yet") != std::string::npos;
    QVERIFY2(said, problems.front().c_str());
  }

  // A CUDA graph replays one captured step: every setting that changes the step's shape, needs the host inside
  // the step or is not built for graphs yet is refused before the run, in one line naming the fix; the plain GPU
  // setup is accepted.
  void cudaGraphsAreRefusedWhereTheyCannotWork_data() {
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("expected");
    QTest::newRow("accepted") << QStringList{} << "";
    QTest::newRow("batch warm-up") << QStringList{"train.batch_warmup=10"} << "change the batch's shape";
    QTest::newRow("sequence warm-up") << QStringList{"train.seq_warmup=10"} << "change the batch's shape";
    QTest::newRow("accumulation") << QStringList{"train.grad_accum=2"}
                                  << "speed.cuda_graphs with gradient accumulation is not implemented yet";
    QTest::newRow("batch tokens of two micro-batches")
        << QStringList{"train.batch_size=2", "model.context=32", "train.batch_tokens=128"}
        << "speed.cuda_graphs with gradient accumulation is not implemented yet";
    QTest::newRow("batch tokens of one micro-batch")
        << QStringList{"train.batch_size=2", "model.context=32", "train.batch_tokens=64"} << "";
    QTest::newRow("loop AdamW") << QStringList{"speed.fused_adamw=false"} << "with speed.fused_adamw=false";
    QTest::newRow("muon") << QStringList{"optimizer.name=muon"} << "speed.cuda_graphs needs fused AdamW";
    QTest::newRow("dropout") << QStringList{"model.dropout=0.1"} << "model.dropout > 0 is not implemented yet";
    QTest::newRow("checkpointing") << QStringList{"speed.activation_checkpointing=true"}
                                   << "speed.cuda_graphs with speed.activation_checkpointing is not implemented yet";
  }
  void cudaGraphsAreRefusedWhereTheyCannotWork() {
    QFETCH(QStringList, sets);
    QFETCH(QString, expected);
    Config c;
    std::vector<std::string> all = {"device=cuda", "speed.cuda_graphs=true", "speed.precision=bf16"};
    for (const QString& s : sets) all.push_back(s.toStdString());
    apply_overrides(c, all);
    const auto problems = config_problems(c, /*cuda_devices=*/1);
    if (expected.isEmpty()) {
      QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
      return;
    }
    QCOMPARE(int(problems.size()), 1);
    const QString line = QString::fromStdString(problems.front());
    QVERIFY2(line.contains(expected) && line.contains("speed.cuda_graphs=false"), qPrintable(line));
  }

  // speed.fused_glue changes the fused layers' bf16 CUDA kernels: refused on a CPU and where there are none to
  // change (native or scratch layers, fp32), accepted with fused (or auto) layers in bf16 (or auto) on CUDA.
  void fusedGlueNeedsFusedBf16LayersOnCuda_data() {
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("expected");
    QTest::newRow("fused bf16 on cuda") << QStringList{"device=cuda", "speed.layers=fused", "speed.precision=bf16"}
                                        << "";
    QTest::newRow("auto on cuda") << QStringList{"device=cuda"} << "";
    QTest::newRow("on a cpu") << QStringList{"device=cpu", "speed.layers=fused", "speed.precision=bf16"}
                              << "speed.fused_glue=true needs a CUDA device";
    QTest::newRow("native layers") << QStringList{"device=cuda", "speed.layers=native", "speed.precision=bf16"}
                                   << "but speed.layers=native with speed.precision=bf16 has none to change";
    QTest::newRow("fp32") << QStringList{"device=cuda", "speed.layers=fused", "speed.precision=fp32"}
                          << "but speed.layers=fused with speed.precision=fp32 has none to change";
  }
  void fusedGlueNeedsFusedBf16LayersOnCuda() {
    QFETCH(QStringList, sets);
    QFETCH(QString, expected);
    Config c;
    std::vector<std::string> all = {"speed.fused_glue=true"};
    for (const QString& s : sets) all.push_back(s.toStdString());
    apply_overrides(c, all);
    const auto problems = config_problems(c, c.device == "cpu" ? 0 : 1);
    if (expected.isEmpty()) {
      QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
      return;
    }
    QString joined;
    for (const auto& p : problems) joined += QString::fromStdString(p) + "; ";
    QVERIFY2(joined.contains(expected), qPrintable(joined));
  }

  // Fused layers run on the CPU and, since their CUDA kernels passed on a GPU (test_kernels and
  // compute-sanitizer on an H200, 2026-11-26), on CUDA too.
  void fusedLayersRunOnCudaToo() {
    Config c;
    apply_overrides(c, {"speed.layers=fused"});
    QVERIFY(config_problems(c, 0).empty());
    apply_overrides(c, {"device=cuda"});
    const auto problems = config_problems(c, /*cuda_devices=*/1);
    QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
    QVERIFY(choices_of("speed.layers")[2].value == "fused" && choices_of("speed.layers")[2].missing_cuda.empty());
  }

  // Every row of every choice table: validation says exactly what the row says (implemented or not, which
  // device), so adding a row to a table is the whole change.
  void everyChoiceRowIsValidatedAsItsTableSays_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::addColumn<bool>("needsCuda");
    QTest::addColumn<bool>("implemented");
    QTest::addColumn<bool>("onCuda");
    for (const std::string& key : choice_keys())
      for (const ChoiceInfo& row : choices_of(key))
        QTest::newRow((key + "=" + row.value).c_str())
            << QString::fromStdString(key) << QString::fromStdString(row.value) << row.needs_cuda << row.missing.empty()
            << row.missing_cuda.empty();
    QVERIFY(choices_of("speed.precision").size() == 6 && choices_of("speed.layers").size() == 4);
  }
  void everyChoiceRowIsValidatedAsItsTableSays() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(bool, needsCuda);
    QFETCH(bool, implemented);
    QFETCH(bool, onCuda);
    const std::string assignment = key.toStdString() + "=" + value.toStdString();
    for (bool cuda : {false, true}) {
      Config c;
      if (cuda) c.device = "cuda";
      if (key == "optimizer.muon_ns") c.optimizer.name = OptimizerKind::kMuon;  // it chooses Muon's orthogonalisation: AdamW has none
      if (key == "health.spike_action") c.checkpoint.every = 10;  // a rollback goes back to a checkpoint
      set_key(c, key.toStdString(), value.toStdString());
      const auto problems = config_problems(c, cuda ? 1 : 0);
      const bool refused = !implemented || (needsCuda && !cuda) || (cuda && !onCuda);
      QString all;
      for (const auto& p : problems) all += QString::fromStdString(p) + "; ";
      QCOMPARE(all.contains(QString::fromStdString(assignment)), refused && key != "device");
      if (!implemented) QVERIFY2(all.contains("is not implemented yet"), qPrintable(all));
      if (refused && implemented && onCuda && key != "device")
        QVERIFY2(all.contains("needs a CUDA device"), qPrintable(all));
      if (refused && implemented && !onCuda) QVERIFY2(all.contains("not implemented yet on CUDA"), qPrintable(all));
    }
  }

  void unknownValuesNeverFallThrough_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::newRow("precision") << "speed.precision"
                               << "fp8";
    QTest::newRow("attention") << "speed.attention"
                               << "flash";
    QTest::newRow("layers") << "speed.layers"
                            << "triton";
    QTest::newRow("sdpa backend") << "speed.sdpa_backend"
                                  << "fa3";
  }
  void unknownValuesNeverFallThrough() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    // A choice is its enum in a Config, so an unknown value is refused as it is set (from --set or a file), in one
    // line that names the values, and the config keeps what it had: nothing downstream can fall back to a default.
    Config c;
    const std::string before = config_to_json(c);
    const QString set = error_of([&] { set_key(c, key.toStdString(), value.toStdString()); });
    QVERIFY2(set.startsWith(key + " '" + value + "' is not one of") && set.contains("hint:"), qPrintable(set));
    QCOMPARE(QString::fromStdString(config_to_json(c)), QString::fromStdString(before));
    const std::string dot = key.toStdString(), section = dot.substr(0, dot.find('.'));
    const std::string file = "{\"" + section + "\": {\"" + dot.substr(dot.find('.') + 1) + "\": \"" + value.toStdString() + "\"}}";
    const QString read = error_of([&] { config_from_json(file); });
    QVERIFY2(read.startsWith(key + " '" + value + "' is not one of"), qPrintable(read));
    QString parsed = error_of([&] { parse_choice(precision_choices(), "speed.precision", "fp8"); });
    QVERIFY2(parsed.contains("speed.precision 'fp8' is not one of auto | fp32 | tf32"), qPrintable(parsed));
  }

  // Every value of every table is held by its enum and written back as it was read, through --set and through a
  // file: the registry's two directions agree, and no row lacks its enum.
  void everyChoiceRoundTrips() {
    int rows = 0;
    for (const std::string& key : choice_keys()) {
      for (const ChoiceInfo& row : choices_of(key)) {
        Config c;
        set_key(c, key, row.value);
        for (const KeyDoc& k : config_keys(c))
          if (k.key == key) QCOMPARE(QString::fromStdString(k.value), QString::fromStdString(row.value));
        QCOMPARE(QString::fromStdString(config_to_json(config_from_json(config_to_json(c)))),
                 QString::fromStdString(config_to_json(c)));
        ++rows;
      }
    }
    QVERIFY2(rows >= 40, qPrintable(QString::number(rows)));
  }

  // speed.pin_memory became auto | true | false: configs stored with a bool still load, and auto pins on CUDA only.
  void pinMemoryIsAutoAndReadsOldConfigs() {
    QCOMPARE(Config{}.speed.pin_memory, PinMemory::kAuto);
    QVERIFY(pin_memory_on(PinMemory::kAuto, /*cuda=*/true) && !pin_memory_on(PinMemory::kAuto, false));
    QVERIFY(!pin_memory_on(PinMemory::kOff, true) && pin_memory_on(PinMemory::kOn, true));
    Config old = config_from_json(R"({"opt": {"pin_memory": true}})");
    QCOMPARE(old.speed.pin_memory, PinMemory::kOn);
    old = config_from_json(R"({"opt": {"pin_memory": false}})");
    QCOMPARE(old.speed.pin_memory, PinMemory::kOff);
    QVERIFY(error_of([] { config_from_json(R"({"opt": {"precision": true}})"); }).contains("expects string"));
  }

  void parsersReadTheTables() {
    QCOMPARE(int(parse_choice(precision_choices(), "speed.precision", "bf16-pure")), int(Precision::kBf16Pure));
    QCOMPARE(int(parse_choice(layers_choices(), "speed.layers", "scratch")), int(LayersKind::kScratch));
    QCOMPARE(int(parse_choice(layers_choices(), "speed.layers", "fused")), int(LayersKind::kFused));
    QCOMPARE(int(parse_choice(precision_choices(), "speed.precision", "fp16")), int(Precision::kFp16));
    QCOMPARE(portable_layers(LayersKind::kFused), LayersKind::kFused);  // every device has its kernels now
    QCOMPARE(portable_layers(LayersKind::kScratch), LayersKind::kScratch);
    int index = -1;
    QCOMPARE(int(parse_device_kind("cuda:3", &index)), int(DeviceKind::kCuda));
    QCOMPARE(index, 3);
  }

  // What a user reads — every key's help (the studio's tooltips, `config --keys`), every choice's help and
  // refusal, every ladder's and rung's text (`bench`, the studio's "Run ladder") — never cites an internal
  // issue number, which means nothing outside the tracker.
  void noUserTextCitesAnIssue() {
    QStringList texts;
    for (const KeyDoc& k : config_keys()) texts << QString::fromStdString(k.key + ": " + k.help);
    for (const std::string& key : choice_keys())
      for (const ChoiceInfo& row : choices_of(key))
        for (const std::string& text : {row.help, row.missing, row.missing_cuda})
          texts << QString::fromStdString(key + "=" + row.value + ": " + text);
    const QDir ladders(QStringLiteral(TOKAMAK_SOURCE_DIR "/resources/ladders"));
    const QStringList files = ladders.entryList({"*.json"}, QDir::Files);
    QVERIFY(files.size() >= 5);
    for (const QString& file : files)
      jsonStrings(nlohmann::json::parse(read_file(ladders.filePath(file).toStdString())), file, &texts);
    QVERIFY(texts.size() > 100);
    QStringList cited;
    for (const QString& text : texts)
      if (text.contains(kIssueNumber)) cited << text.left(160);
    QVERIFY2(cited.isEmpty(), qPrintable(cited.join("\n")));
  }

  void registryHelpListsTheTable() {
    for (const KeyDoc& k : config_keys()) {
      if (choices_of(k.key).empty()) continue;
      for (const ChoiceInfo& row : choices_of(k.key))
        QVERIFY2(QString::fromStdString(k.help).contains(QString::fromStdString(row.value)), k.key.c_str());
    }
  }

  // Every numeric key states its range in the registry, and the default lies inside it.
  void everyNumericKeyHasARange() {
    int numeric = 0;
    for (const KeyDoc& k : config_keys()) {
      if (k.type != "int" && k.type != "float") continue;
      ++numeric;
      QVERIFY2(k.ranged && k.min < k.max, k.key.c_str());
    }
    QVERIFY(numeric >= 30);
  }

  void jsonNumberOutOfRangeIsOneLine_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected");
    QTest::newRow("1e999") << R"({"train": {"lr": 1e999}})"
                           << "config is not valid JSON";
    QTest::newRow("-1e999") << R"({"train": {"eps": -1e999}})"
                            << "config is not valid JSON";
  }
  void jsonNumberOutOfRangeIsOneLine() {
    QFETCH(QString, json);
    QFETCH(QString, expected);
    QString message = error_of([&] { config_from_json(json.toStdString()); });
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
  }

  void derivedValues() {
    Config c;
    apply_overrides(c, {"train.batch_size=4", "train.batch_tokens=2048"});  // 4 × 128 per micro-step
    QCOMPARE(grad_accum_steps(c), 4);
    QCOMPARE(tokens_per_step(c), 2048);
    QCOMPARE(padded_vocab(c.model), 50304);  // 50257 → next multiple of 64
    c.model.vocab_pad_multiple = 1;
    QCOMPARE(padded_vocab(c.model), 50257);
  }
};

QTEST_GUILESS_MAIN(TestConfig)
#include "test_config.moc"
