// Versions that mean something, and migrations that leave older readers working (docs/RELIABILITY.md,
// "Versions and migrations"): the version is raised with the formats it names; a store is never migrated under a
// queue worker of an older schema, and its stored text is never rewritten; a store of a newer schema is read,
// not written; a worker leaves a newer store's queue alone.
//
// The "older program" is the store of tests/data/config_v1/store.sql (schema 6, written by the release before the
// key renames) and a queue lock held with that release's note (its pid alone). What that release reads is what it
// wrote: the test holds the stored text to its bytes, which that release's reader read before.
#include <QtTest>

#include <sstream>

#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/fleet/queue/queue_worker.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/store/queue_lock.h"
#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/version.h"
#include "tests/support/test_support.h"

using namespace tokamak;
using tokamak::test::error_of;

namespace {

// Every release's formats, oldest first. A change of a format adds a row with a new minor version (and the
// version in CMakeLists.txt): the last row is this build.
struct Release {
  const char* version;
  Formats formats;
};
const std::vector<Release> kReleases = {
    {"0.2.0", {8, 2, 1}},  // runs record their Tokamak; store_info; stored text no longer rewritten
    {"0.3.0", {8, 3, 1}},  // the health section (an older build refuses its keys); spike events in the journal
    {"0.4.0", {9, 3, 1}},  // the playground's prompts and text kept with the run (a table added: 0.3 reads it)
    {"0.5.0", {10, 4, 1}},  // a queue row counts its stall requeues (a column added: 0.4 reads it); fp16's loss-scale keys
    {"0.6.0", {10, 5, 1}},  // the metrics section (metrics.layers_every); a spike's line may name its layer (0.5 ignores it)
};

std::string fixture_store(QTemporaryDir& dir) {
  const std::string path = dir.filePath("runs.db").toStdString();
  Db(path).exec(read_file(std::string(TOKAMAK_SOURCE_DIR) + "/tests/data/config_v1/store.sql"));
  return path;
}

// What the old release wrote, byte for byte: runs, queue rows, sweeps.
std::map<std::string, std::string> stored_text(const std::string& path) {
  Db db(path, Db::Mode::read_only);
  std::map<std::string, std::string> out;
  for (const char* q : {"SELECT 'run' || id, config_json FROM runs", "SELECT 'queue' || id, config_json FROM queue",
                        "SELECT 'sweep' || id, spec_json FROM sweeps"}) {
    Stmt s(db, q);
    while (s.step()) out[s.text(0)] = s.text(1);
  }
  return out;
}

// Holds the store's queue lock as a worker of the release before 0.2 did: the lock, and a note of its pid alone.
struct OldWorker {
  int fd = -1;
  explicit OldWorker(const std::string& db) {
    fd = take_queue_lock(db);
    write_file_atomically(queue_lock_path(db) + ".pid", std::to_string(::getpid()) + "\n");
  }
  ~OldWorker() { release(); }
  void release() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

}  // namespace

class TestStoreVersions : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The build's version is the last release's, and that release names this build's formats: a format changed
  // without a new release row (and version) fails here.
  void theVersionNamesTheFormats() {
    const Release& last = kReleases.back();
    QCOMPARE(QString(TOKAMAK_VERSION), QString(last.version));
    QVERIFY2(last.formats == kFormats, "a format changed: add a release row with a new minor version");
    QCOMPARE(kSchemaVersion, kFormats.store_schema);
    for (size_t i = 1; i < kReleases.size(); ++i) {
      const OtherBuild a = parse_version_line(kReleases[i - 1].version), b = parse_version_line(kReleases[i].version);
      QVERIFY2(a.version != b.version, kReleases[i].version);
    }
    QCOMPARE(QString::fromStdString(version_line()),
             QString("%1 (store schema %2, config keys %3, journal %4)")
                 .arg(TOKAMAK_VERSION)
                 .arg(kFormats.store_schema)
                 .arg(kFormats.config_keys)
                 .arg(kFormats.journal));
  }

  // What another build's --version says decides whether the two work together: the formats, not the patch number.
  void anotherBuildIsJudgedByItsFormats() {
    const OtherBuild same = parse_version_line(version_line());
    QCOMPARE(QString::fromStdString(format_mismatch(same)), QString());
    const OtherBuild patch = parse_version_line("0.6.7 (store schema 10, config keys 5, journal 1)");
    QCOMPARE(QString::fromStdString(patch.version), QString("0.6.7"));
    QCOMPARE(QString::fromStdString(format_mismatch(patch)), QString());
    const OtherBuild old = parse_version_line("0.1.0");
    QVERIFY(!old.known());
    QVERIFY(QString::fromStdString(format_mismatch(old)).contains("an older build"));
    const OtherBuild newer = parse_version_line("0.9.0 (store schema 11, config keys 6, journal 1)");
    QCOMPARE(QString::fromStdString(format_mismatch(newer)),
             QString("store schema 11 there, 10 here, config keys 6 there, 5 here"));
  }

  // A store of the release before, while that release's worker holds its queue: opened read-only at its own
  // schema, every row as the worker wrote it; reads work, in today's key names; a write is refused with the
  // reason and the fix. When the worker ends, the next open migrates, and still rewrites no stored text.
  void anOlderWorkersStoreIsLeftAsItIs() {
    QTemporaryDir dir;
    const std::string path = fixture_store(dir);
    const auto before = stored_text(path);
    QCOMPARE(before.size(), size_t{11});  // 1 run, 9 queued rows, 1 sweep
    OldWorker worker(path);
    QCOMPARE(queue_holder(path).schema, 0);
    QCOMPARE(queue_holder(path).pid, static_cast<long>(::getpid()));
    {
      RunStore store(path);
      QVERIFY(store.read_only());
      QCOMPARE(store.schema(), 6);
      QVERIFY2(QString::fromStdString(store.read_only_note()).contains("worked by an older Tokamak"),
               store.read_only_note().c_str());
      const auto runs = store.list_runs();
      QCOMPARE(runs.size(), size_t{1});
      QCOMPARE(QString::fromStdString(runs[0].run.tokamak_version), QString());
      const Config c = config_from_json(store.run(runs[0].run.id).config_json);
      QCOMPARE(c.optimizer.lr, 0.003);
      QVERIFY(store.run(runs[0].run.id).config_json.find("\"optimizer\"") != std::string::npos);
      RunQueue queue(store);
      QCOMPARE(queue.list().size(), size_t{9});
      QVERIFY(queue.list().front().config_json.find("\"opt\"") == std::string::npos);  // read in today's names
      QCOMPARE(queue.list().front().requeues, int64_t{0});  // no such column before schema 10
      // The tables an older schema lacks read as empty: the run shows and exports, with no playground tries.
      QVERIFY(store.plays(runs[0].run.id).empty());
      std::ostringstream json;
      export_runs(store, {runs[0].run.id}, ExportFormat::json, json);
      QVERIFY(json.str().find("\"uid\"") != std::string::npos && json.str().find("\"playground\"") == std::string::npos);
      const QString refused = error_of([&] { store.set_tags(runs[0].run.id, "[\"x\"]", ""); });
      QVERIFY2(refused.contains("cannot be written now") && refused.contains("older Tokamak") &&
                   refused.contains("kill " + QString::number(::getpid())) && refused.contains("hint:"),
               qPrintable(refused));
    }
    {
      Db raw(path, Db::Mode::read_only);
      QCOMPARE(raw.query_int("PRAGMA user_version"), int64_t{6});
    }
    QVERIFY(stored_text(path) == before);

    worker.release();
    RunStore store(path);
    QVERIFY(!store.read_only());
    QCOMPARE(store.schema(), kSchemaVersion);
    QVERIFY(stored_text(path) == before);  // the migration rewrote nothing an older reader reads
    RunStart start;
    start.name = "after", start.config_json = "{}", start.tokamak_version = TOKAMAK_VERSION;
    const int64_t id = store.begin_run(start, now_seconds(), ::getpid());
    QCOMPARE(QString::fromStdString(store.run(id).tokamak_version), QString(TOKAMAK_VERSION));
  }

  // A worker of this build notes its schema beside the lock: a newer program knows it from an older one.
  void thisBuildsWorkerNotesItsSchema() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("runs.db").toStdString();
    { RunStore s(path); }
    const int fd = take_queue_lock(path);
    QVERIFY(fd >= 0);
    write_queue_holder(path);
    const QueueHolder h = queue_holder(path);
    QCOMPARE(h.pid, static_cast<long>(::getpid()));
    QCOMPARE(h.schema, kSchemaVersion);
    QCOMPARE(QString::fromStdString(h.version), QString(TOKAMAK_VERSION));
    RunStore store(path);
    QVERIFY(!store.read_only());  // the same schema: nothing to leave alone
    ::close(fd);
  }

  // A store a newer build migrated: read as it is when it says this build can read it, never written; refused in
  // one line when it says it cannot. Either way the file is left as it was.
  void aNewerStoreIsReadNotWritten() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("runs.db").toStdString();
    {
      RunStore s(path);
      RunStart start;
      start.name = "kept", start.config_json = "{}";
      s.begin_run(start, now_seconds(), ::getpid());
      Db db(path);
      db.exec("PRAGMA user_version = 11");
      db.exec("UPDATE store_info SET value = '0.9.0' WHERE key = 'written_by'");
    }
    const std::string bytes = read_file(path);
    {
      RunStore store(path);
      QVERIFY(store.read_only());
      QVERIFY2(QString::fromStdString(store.read_only_note()).contains("newer Tokamak (0.9.0, schema 11"),
               store.read_only_note().c_str());
      QCOMPARE(store.list_runs().size(), size_t{1});
      const QString refused = error_of([&] { store.set_tags(1, "[]", ""); });
      QVERIFY2(refused.contains("cannot be written now") && refused.contains("update Tokamak"), qPrintable(refused));
      // Its queue is the newer worker's: this build's worker leaves at once and starts nothing.
      std::vector<std::string> notes;
      QueueWorkerOptions o;
      o.db = path, o.note = [&](const std::string& s) { notes.push_back(s); };
      QVERIFY(work_queue(o));
      QCOMPARE(notes.size(), size_t{1});
      QVERIFY2(QString::fromStdString(notes[0]).contains("to a newer one"), notes[0].c_str());
    }
    QVERIFY(read_file(path) == bytes);
    Db(path).exec("UPDATE store_info SET value = '11' WHERE key = 'min_reader'");
    const std::string unreadable = read_file(path);
    const QString err = error_of([&] { RunStore store(path); });
    QVERIFY2(err.contains("written by a newer Tokamak") && err.contains("cannot read") && err.contains("hint:"),
             qPrintable(err));
    QVERIFY(read_file(path) == unreadable);
  }
};

QTEST_GUILESS_MAIN(TestStoreVersions)
#include "test_store_versions.moc"
