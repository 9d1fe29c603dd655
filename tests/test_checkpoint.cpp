// Checkpoints: safetensors only (a TorchScript archive is refused and none of its code runs), each kind of
// damage named in one line, save → load → the same next losses, checkpoints from a GPU load on the CPU,
// durable writes. The header parser's bounds, on bytes alone, are test_safetensors_header's (a unit suite).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>

#include <QtTest>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/config/config.h"
#include "engine/base/util/files.h"
#include "engine/base/util/safetensors.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/train/step.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;
using test::error_of;

namespace {

GPTOptions tiny() {
  ModelConfig m = test::tiny_model();
  m.dropout = 0.1;  // the RNG state must come back too for the next losses to match
  return GPTOptions::from_config(m, SpeedConfig{});
}

std::unique_ptr<AdamW> adamw(GPTImpl& m) {
  std::vector<std::pair<std::string, at::Tensor>> params;
  for (const auto& p : m.named_parameters()) params.emplace_back(p.key(), p.value());
  return std::make_unique<AdamW>(params, AdamWOptions{});
}

// One training step on batch `i` of a fixed token stream; returns the loss.
double step(GPTImpl& m, AdamW& opt, int i) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(1000 + i);
  auto tokens = at::randint(64, {4, 17}, gen, at::kLong);
  Batch b{tokens.narrow(1, 0, 16).contiguous(), tokens.narrow(1, 1, 16).contiguous()};
  opt.zero_grad();
  auto out = forward_backward(
      m, [&](int64_t) { return b; }, 1, Precision::kFp32, c10::kCPU);
  opt.step(1e-3);
  return out.loss.item<double>();
}

// A file's parts, to write damaged variants of a good checkpoint.
struct Parts {
  std::vector<SafetensorsTensor> tensors;
  std::vector<std::string> bytes;
  std::map<std::string, std::string> metadata;
};

Parts read_parts(const std::string& path) {
  Parts p;
  SafetensorsHeader h = read_safetensors_header(path);
  p.tensors = h.tensors, p.metadata = h.metadata;
  for (const auto& t : h.tensors) {
    std::string b(t.end - t.begin, '\0');
    read_safetensors_bytes(path, h, t, b.data());
    p.bytes.push_back(b);
  }
  return p;
}

// Writes the parts with fresh checksums (as a writer that meant it would), so only the intended fault shows.
void write_parts(const std::string& path, Parts p) {
  nlohmann::json crcs = nlohmann::json::object();
  std::vector<SafetensorsBlob> blobs;
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    crcs[p.tensors[i].name] = crc32_hex(p.bytes[i].data(), p.bytes[i].size());
    blobs.push_back({p.tensors[i].name, p.tensors[i].dtype, p.tensors[i].shape, p.bytes[i].data(), p.bytes[i].size()});
  }
  p.metadata.erase("crc32");
  const std::string meta = nlohmann::json(p.metadata).dump();
  crcs["__metadata__"] = crc32_hex(meta.data(), meta.size());
  p.metadata["crc32"] = crcs.dump();
  write_safetensors(path, blobs, p.metadata);
}

SafetensorsTensor& tensor(Parts& p, const std::string& name) {
  for (auto& t : p.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no " + name);
}

std::string bytes_of(const std::string& path) { return read_file(path); }

}  // namespace

class TestCheckpoint : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string good_;  // a checkpoint of tiny() with its optimizer, after two steps

  std::string path(const std::string& name) const { return dir_.path().toStdString() + "/" + name; }

  QString load_error(const std::string& file) {
    GPT m(tiny());
    auto opt = adamw(*m);
    return error_of([&] { load_checkpoint(file, *m, opt.get(), true, c10::kCPU); });
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    torch::manual_seed(3);
    GPT m(tiny());
    auto opt = adamw(*m);
    step(*m, *opt, 0), step(*m, *opt, 1);
    good_ = checkpoint_path(path("good"), 2);
    save_checkpoint(good_, *m, opt.get(), {"uid-1", R"({"name":"tiny"})", 2, 128, ""}, c10::kCPU);
  }

  void saveLoadGivesTheSameNextLosses() {
    torch::manual_seed(5);
    GPT a(tiny());
    auto opt_a = adamw(*a);
    for (int i = 0; i < 3; ++i) step(*a, *opt_a, i);
    const std::string file = path("resume.safetensors");
    save_checkpoint(file, *a, opt_a.get(), {"uid-2", "{}", 3, 0, ""}, c10::kCPU);
    std::vector<double> expected;
    for (int i = 3; i < 6; ++i) expected.push_back(step(*a, *opt_a, i));

    torch::manual_seed(99);  // other weights and another RNG stream, which the load must replace
    GPT b(tiny());
    auto opt_b = adamw(*b);
    CheckpointInfo info = load_checkpoint(file, *b, opt_b.get(), /*restore_rng=*/true, c10::kCPU);
    QCOMPARE(info.step, int64_t{3});
    QCOMPARE(QString::fromStdString(info.run_uid), QString("uid-2"));
    QCOMPARE(opt_b->steps_taken(), int64_t{3});
    for (int i = 3; i < 6; ++i) QVERIFY(step(*b, *opt_b, i) == expected[i - 3]);  // bit for bit
    for (const auto& p : a->named_parameters())
      QVERIFY2(at::equal(p.value(), b->named_parameters()[p.key()]), p.key().c_str());
  }

  void torchScriptArchiveIsRefusedAndNothingRuns() {
    QVERIFY2(QFile::exists(QString::fromStdString(test::python())),
             "the set-up's venv is missing: run scripts/setup.sh");
    const std::string archive = path("evil.pt"), marker = path("side-effect");
    std::string out;
    const int code =
        test::run(test::python() + " " + TOKAMAK_SOURCE_DIR "/tests/reference/torchscript_side_effect.py " + archive +
                      " " + marker + " 2>/dev/null",
                  &out);
    // The script proves the archive writes the marker when LibTorch loads it, then removes the marker.
    QVERIFY2(code == 0 && out.find("armed") != std::string::npos, out.c_str());
    QVERIFY(!path_exists(marker));
    QString info_error = error_of([&] { read_checkpoint_info(archive); });
    QString load = load_error(archive);
    for (const QString& e : {info_error, load}) {
      QVERIFY2(e.contains("TorchScript") && e.contains("refused") && e.contains("retrain"), qPrintable(e));
      QVERIFY(!e.contains('\n'));
    }
    QVERIFY2(!path_exists(marker), "the archive's code ran");
  }

  void eachDamageHasItsOwnError_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected");
    QTest::newRow("truncated") << "truncated"
                               << "truncated";
    QTest::newRow("cut in the length") << "tiny"
                                       << "fewer than the 8";
    QTest::newRow("bit flipped") << "flipped"
                                 << "model.wte.weight in '%1' fails its checksum";
    QTest::newRow("metadata edited") << "metadata"
                                     << "fails the checksum of its metadata";
    QTest::newRow("wrong dtype") << "dtype"
                                 << "model.wpe.weight in '%1' is F16 but the model needs F32";
    QTest::newRow("wrong shape")
        << "shape"
        << "model.blocks.0.attn.c_attn.weight in '%1' has shape [32, 96] but the model needs [96, 32]";
    QTest::newRow("wrong optimizer shape")
        << "optimizer"
        << "optimizer.exp_avg.blocks.1.c_fc.weight in '%1' has shape [4096] but the model needs [128, 32]";
    QTest::newRow("missing tensor") << "missing"
                                    << "has no model.ln_f.bias";
    QTest::newRow("extra tensor") << "extra"
                                  << "holds model.blocks.2.ln_1.weight, which the model does not have";
    QTest::newRow("newer format") << "newer"
                                  << "written by a newer Tokamak (format 3";
    QTest::newRow("not Tokamak's") << "foreign"
                                   << "not a Tokamak checkpoint";
    // Sealed with a matching checksum, so only the number is wrong: std::stoll said the bare "stoll".
    QTest::newRow("step not a number") << "step"
                                       << "checkpoint '%1' has step 'two' in its metadata, not a count";
    QTest::newRow("tokens past int64")
        << "tokens"
        << "checkpoint '%1' has tokens '99999999999999999999' in its metadata, not a count";
    QTest::newRow("optimizer steps not a number")
        << "optsteps"
        << "checkpoint '%1' has optimizer_steps '3x' in its metadata, not a count";
  }
  void eachDamageHasItsOwnError() {
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    const std::string file = path("damaged-" + kind.toStdString() + ".safetensors");
    std::string raw = bytes_of(good_);
    Parts p = read_parts(good_);
    if (kind == "truncated" || kind == "tiny" || kind == "flipped") {
      if (kind == "truncated") raw.resize(raw.size() - 100);
      if (kind == "tiny") raw.resize(5);
      if (kind == "flipped") {
        const SafetensorsHeader h = read_safetensors_header(good_);
        raw[h.data_start + h.find("model.wte.weight")->begin + 77] ^= 0x10;
      }
      write_file_atomically(file, raw);
    } else {
      if (kind == "metadata") {
        // A changed step without a matching checksum: written past write_parts, which would reseal it.
        const size_t at = raw.find("\"step\":\"2\"");
        QVERIFY(at != std::string::npos);
        raw[at + 8] = '7';
        write_file_atomically(file, raw);
      } else {
        if (kind == "dtype") {
          auto& t = tensor(p, "model.wpe.weight");
          t.dtype = "F16";
          auto& b = p.bytes[&t - p.tensors.data()];
          b.resize(b.size() / 2);
        }
        if (kind == "shape") tensor(p, "model.blocks.0.attn.c_attn.weight").shape = {32, 96};
        if (kind == "optimizer") tensor(p, "optimizer.exp_avg.blocks.1.c_fc.weight").shape = {4096};
        if (kind == "missing") {
          auto& t = tensor(p, "model.ln_f.bias");
          const size_t i = &t - p.tensors.data();
          p.tensors.erase(p.tensors.begin() + i), p.bytes.erase(p.bytes.begin() + i);
        }
        if (kind == "extra") {
          p.tensors.push_back({"model.blocks.2.ln_1.weight", "F32", {32}, 0, 0});
          p.bytes.push_back(std::string(128, '\0'));
        }
        if (kind == "newer") p.metadata["format_version"] = "3";
        if (kind == "foreign") p.metadata.erase("format");
        if (kind == "step") p.metadata["step"] = "two";
        if (kind == "tokens") p.metadata["tokens"] = "99999999999999999999";
        if (kind == "optsteps") p.metadata["optimizer_steps"] = "3x";
        write_parts(file, p);
      }
    }
    const QString e = load_error(file);
    const QString want = expected.contains("%1") ? expected.arg(QString::fromStdString(file)) : expected;
    QVERIFY2(e.contains(want), qPrintable(e));
    QVERIFY2(!e.contains('\n'), qPrintable(e));
  }

  void weightsOnlyLoadsConvertFloatsButResumeDoesNot() {
    Parts p = read_parts(good_);
    for (size_t i = 0; i < p.tensors.size(); ++i) {
      if (p.tensors[i].name.rfind("model.", 0) != 0) continue;
      auto f32 = at::from_blob(p.bytes[i].data(), p.tensors[i].shape, at::kFloat);
      auto f64 = f32.to(at::kDouble).contiguous();
      p.bytes[i].assign(static_cast<const char*>(f64.data_ptr()), f64.nbytes());
      p.tensors[i].dtype = "F64";
    }
    const std::string file = path("f64.safetensors");
    write_parts(file, p);
    GPT m(tiny()), ref(tiny());
    load_checkpoint(file, *m, nullptr, false, c10::kCPU);
    load_checkpoint(good_, *ref, nullptr, false, c10::kCPU);
    for (const auto& q : ref->named_parameters()) QVERIFY(at::equal(q.value(), m->named_parameters()[q.key()]));
    QVERIFY(load_error(file).contains("is F64 but the model needs F32"));
  }

  void checkpointFromAnotherDeviceLoadsOnTheCpu() {
    // As a GPU run writes it: the device in the metadata and a CUDA generator state beside the CPU one.
    Parts p = read_parts(good_);
    p.metadata["device"] = "cuda:3";
    p.tensors.push_back({"rng.cuda", "U8", {16}, 0, 0});
    p.bytes.push_back(std::string(16, '\x07'));
    const std::string file = path("from-gpu.safetensors");
    write_parts(file, p);
    GPT m(tiny()), ref(tiny());
    auto opt = adamw(*m);
    CheckpointInfo info = load_checkpoint(file, *m, opt.get(), /*restore_rng=*/true, c10::kCPU);
    QCOMPARE(QString::fromStdString(info.device), QString("cuda:3"));
    load_checkpoint(good_, *ref, nullptr, false, c10::kCPU);
    for (const auto& q : ref->named_parameters()) {
      QCOMPARE(m->named_parameters()[q.key()].device().type(), c10::kCPU);
      QVERIFY(at::equal(q.value(), m->named_parameters()[q.key()]));
    }
  }

  void infoReadsTheHeaderOnly() {
    // Zeroing every tensor byte breaks every checksum, yet the info (header only) still reads.
    std::string raw = bytes_of(good_);
    const SafetensorsHeader h = read_safetensors_header(good_);
    std::fill(raw.begin() + static_cast<std::ptrdiff_t>(h.data_start), raw.end(), '\0');
    const std::string file = path("zeroed.safetensors");
    write_file_atomically(file, raw);
    CheckpointInfo info = read_checkpoint_info(file);
    QCOMPARE(info.step, int64_t{2});
    QCOMPARE(info.tokens, int64_t{128});
    QCOMPARE(QString::fromStdString(info.config_json), QString(R"({"name":"tiny"})"));
    QVERIFY(load_error(file).contains("fails its checksum"));
  }

  void writesAreDurableAndStaleTemporariesGo() {
    const std::string dir = path("durable");
    make_dirs(dir);
    // A temporary of a process that is gone, and one of a live process (our parent), which must stay.
    std::string dead_pid = "999999999";
    const std::string dead = dir + "/step_1.safetensors.tmp-" + dead_pid + "-0000abcd";
    const std::string live = dir + "/step_1.safetensors.tmp-" + std::to_string(::getppid()) + "-0000abcd";
    write_file_atomically(dead, "x");
    write_file_atomically(live, "x");
    prepare_checkpoint_dir(dir, 1024);
    QVERIFY(!path_exists(dead));
    QVERIFY(path_exists(live));
    QVERIFY(error_of([&] {
              prepare_checkpoint_dir(dir, ~uint64_t{0} >> 2);
            }).contains(QRegularExpression(" has [0-9.]+ [kMGTP]?B free but a checkpoint needs [0-9.]+ [kMGTP]?B")));
    GPT m(tiny());
    for (int64_t s : {9, 10, 1, 11})
      save_checkpoint(checkpoint_path(dir, s), *m, nullptr, {"u", "{}", s, 0, ""}, c10::kCPU);
    std::vector<std::string> names;
    for (const auto& f : list_checkpoints(dir)) names.push_back(std::filesystem::path(f).filename().string());
    QCOMPARE(names, (std::vector<std::string>{"step_1.safetensors", "step_9.safetensors", "step_10.safetensors",
                                              "step_11.safetensors"}));
    save_checkpoint(checkpoint_path(dir, 5), *m, nullptr, {"another run", "{}", 5, 0, ""}, c10::kCPU);
    prune_checkpoints(dir, 2, "u");
    QCOMPARE(list_checkpoints(dir),
             (std::vector<std::string>{checkpoint_path(dir, 5), checkpoint_path(dir, 10), checkpoint_path(dir, 11)}));
    int temporaries = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      temporaries += e.path().filename().string().find(".tmp-") != std::string::npos;
    QCOMPARE(temporaries, 1);  // only the live process's
  }

  void periodicCheckpointsByTimeKeepTheLastK() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    QVERIFY(Config{}.checkpoint.minutes > 0 && Config{}.checkpoint.keep > 0);  // on by default
    Config c;
    const std::string dir = env.path("periodic");
    apply_overrides(
        c, test::tiny_run_overrides({"data.path=" + env.corpus_excerpt(60000), "train.batch_size=2", "eval.every=0",
                                     "sample.every=-1", "threads=1", "train.steps=6", "checkpoint.every=0",
                                     "checkpoint.minutes=0.000001", "checkpoint.keep=2", "checkpoint.dir=" + dir}));
    test::RecordingSink sink;
    QCOMPARE(QString::fromStdString(train(c, sink).status), QString("finished"));
    // A checkpoint after every step (the interval is far shorter than a step), the newest two kept.
    QCOMPARE(sink.checkpoint_steps(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
    QCOMPARE(list_checkpoints(dir), (std::vector<std::string>{checkpoint_path(dir, 5), checkpoint_path(dir, 6)}));
  }

  // Checkpoint files are named by step alone: two runs given one checkpoint.dir both wrote step_N, the
  // later one's weights replaced the earlier's, and resuming the earlier run trained the later one's weights
  // under its uid. Now the second run is refused before its first step, naming the folder and the run that
  // holds it; a file of another run is never written over; and a resume names its run, so another run's
  // checkpoint is refused rather than continued.
  void runsNeverShareCheckpoints() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    const std::string dir = env.path("shared");
    Config c;
    apply_overrides(
        c, test::tiny_run_overrides({"data.path=" + env.corpus_excerpt(60000), "train.batch_size=2", "eval.every=0",
                                     "sample.every=-1", "threads=1", "train.steps=2", "checkpoint.dir=" + dir}));
    test::RecordingSink first, second, again, other;
    QCOMPARE(QString::fromStdString(train(c, first).status), QString("finished"));
    const std::string file = checkpoint_path(dir, 2), bytes = read_file(file);
    QCOMPARE(read_checkpoint_info(file).run_uid, first.start.run_uid);

    const QString refused = error_of([&] { train(c, second); });
    QVERIFY2(refused.contains(
                 QString::fromStdString("'" + dir + "' holds checkpoints of another run (" + first.start.run_uid)) &&
                 refused.contains("hint:") && !refused.contains('\n'),
             qPrintable(refused));
    QVERIFY(second.checkpoints.empty());
    QVERIFY(read_file(file) == bytes);

    // A run that came into the folder after that look still cannot write over the file.
    const QString over = error_of([&] { test::save_tiny_checkpoint(dir, 2, "0123456789abcdef"); });
    QVERIFY2(over.contains(QString::fromStdString("is run " + first.start.run_uid + "'s")), qPrintable(over));
    QVERIFY(read_file(file) == bytes);

    // The run itself resumes in its folder (the CLI names it by the checkpoint)…
    Config resumed = c;
    resumed.checkpoint.resume = file;
    TrainControl own;
    own.run_uid = first.start.run_uid;
    QCOMPARE(QString::fromStdString(train(resumed, again, &own).status), QString("finished"));
    QCOMPARE(again.start.run_uid, first.start.run_uid);
    // …but a run named otherwise (a queue's trial, a Slurm task) is not continued from it.
    TrainControl named;
    named.run_uid = "0123456789abcdef";
    const QString taken = error_of([&] { train(resumed, other, &named); });
    QVERIFY2(taken.contains(
                 QString::fromStdString("belongs to run " + first.start.run_uid + ", not to run 0123456789abcdef")),
             qPrintable(taken));
    QVERIFY(other.start.run_uid.empty() && other.checkpoints.empty());
  }

  // checkpoint.dir goes through the rule every output does (engine/base/util/output_path.h): a folder holding a
  // user's file got step_N.safetensors beside it, a user's own step_N.safetensors was replaced and a link there
  // became a plain file. Now each is refused before step 1, in one line, and left as it was.
  void aCheckpointFolderHoldsOnlyTheRunsCheckpoints() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    const std::string data = env.corpus_excerpt(60000);
    const auto refused = [&](const std::string& dir, const char* why) {
      Config c;
      apply_overrides(c, test::tiny_run_overrides({"data.path=" + data, "train.batch_size=2", "eval.every=0",
                                                   "sample.every=-1", "threads=1", "train.steps=2",
                                                   "checkpoint.dir=" + dir}));
      test::RecordingSink sink;
      const QString e = error_of([&] { train(c, sink); });
      QVERIFY2(e.contains(why) && e.contains("hint:") && !e.contains('\n'), qPrintable(e));
      QVERIFY(sink.steps.empty() && sink.checkpoints.empty());
    };
    const std::string a = env.path("ckA"), b = env.path("ckB"), c = env.path("ckC");
    make_dirs(a), make_dirs(b), make_dirs(c);
    write_file_atomically(a + "/chapter1.tex", "years of work");
    refused(a, "holds files Tokamak did not make ('chapter1.tex')");
    QVERIFY(list_checkpoints(a).empty() && read_file(a + "/chapter1.tex") == "years of work");
    write_file_atomically(checkpoint_path(b, 2), "my own notes");
    refused(b, "is not a Tokamak checkpoint");
    QCOMPARE(read_file(checkpoint_path(b, 2)), std::string("my own notes"));
    QCOMPARE(::symlink((a + "/chapter1.tex").c_str(), checkpoint_path(c, 2).c_str()), 0);
    refused(c, "is a symbolic link");
    QVERIFY(std::filesystem::is_symlink(checkpoint_path(c, 2)));

    // A file that came after the folder was looked at is refused where the checkpoint is written.
    const std::string d = env.path("ckD");
    test::save_tiny_checkpoint(d, 1, "0123456789abcdef");
    write_file_atomically(checkpoint_path(d, 3), "my own notes");
    GPT m(tiny());
    QVERIFY(error_of([&] {
              save_checkpoint(checkpoint_path(d, 3), *m, nullptr, {"0123456789abcdef", "{}", 3, 0, ""}, c10::kCPU);
            }).contains("is not a Tokamak checkpoint"));
    QCOMPARE(read_file(checkpoint_path(d, 3)), std::string("my own notes"));
    QCOMPARE(::unlink(checkpoint_path(d, 3).c_str()), 0);
    // The run's own checkpoints and the temporaries a dead process left are the run's; a user's file whose name
    // merely looks like a temporary is neither removed nor written beside.
    const std::string stale = checkpoint_path(d, 2) + ".tmp-999999999-0000abcd";
    write_file_atomically(stale, "x");
    prepare_checkpoint_dir(d, 1024, "0123456789abcdef", true);
    QVERIFY(!path_exists(stale) && path_exists(checkpoint_path(d, 1)));
    write_file_atomically(d + "/draft.tmp-999999999-0000abcd", "mine");
    QVERIFY(error_of([&] { prepare_checkpoint_dir(d, 1024, "0123456789abcdef", true); })
                .contains("('draft.tmp-999999999-0000abcd')"));
    QVERIFY(path_exists(d + "/draft.tmp-999999999-0000abcd"));
  }

  void writtenFileIsPlainSafetensors() {
    // The header parses, its tensors tile the data section, and the model tensors carry Tokamak's names.
    const std::string raw = bytes_of(good_);
    const SafetensorsHeader h = parse_safetensors_header(raw.data(), raw.size());
    QCOMPARE(h.data_start % 8, uint64_t{0});
    uint64_t at = 0;
    for (const auto& t : h.tensors) {
      QCOMPARE(t.begin, at);
      at = t.end;
    }
    QCOMPARE(h.data_start + at, uint64_t(raw.size()));
    QVERIFY(h.find("model.blocks.1.attn.c_attn.weight") && h.find("optimizer.exp_avg_sq.wte.weight") &&
            h.find("rng.cpu"));
  }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
