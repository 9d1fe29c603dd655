// A run's speed-of-light table in the store (see run_store.h): one row per kind of work and the limits beside it.
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"

namespace tokamak {

static void insert_limits(Db& db, int64_t run_id, const SpeedOfLightRecord& r) {
  Stmt l(db,
         "INSERT OR REPLACE INTO machine_limits (run_id, matmul_flops, matmul_source, memory_bytes_per_s, "
         "memory_source) VALUES (?, ?, ?, ?, ?)");
  l.bind(1, run_id).bind(2, r.matmul_flops).bind(3, r.matmul_source).bind(4, r.memory_bytes_per_s);
  l.bind(5, r.memory_source).run();
}

void RunStore::set_machine_limits(int64_t run_id, const SpeedOfLightRecord& limits) {
  if (limits.matmul_flops <= 0 && limits.memory_bytes_per_s <= 0) return;
  transaction([&] {
    // A profiled run's floors were computed under the limits stored beside them: a resumed segment's start
    // does not put other limits under them.
    Stmt k(*db_, "SELECT count(*) FROM kind_floors WHERE run_id = ?");
    k.bind(1, run_id);
    if (k.step() && k.int64(0) > 0) return;
    insert_limits(*db_, run_id, limits);
  });
}

void RunStore::set_speed_of_light(int64_t run_id, const SpeedOfLightRecord& r) {
  transaction([&] {
    for (const char* table : {"kind_floors", "machine_limits"}) {
      Stmt d(*db_, (std::string("DELETE FROM ") + table + " WHERE run_id = ?").c_str());
      d.bind(1, run_id).run();
    }
    if (r.kinds.empty() && r.matmul_flops <= 0 && r.memory_bytes_per_s <= 0) return;
    insert_limits(*db_, run_id, r);
    int64_t position = 0;
    for (const KindFloorRow& k : r.kinds) {
      Stmt s(*db_,
             "INSERT INTO kind_floors (run_id, position, kind, ms, calls, flops, bytes, floor_ms, bound) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
      s.bind(1, run_id).bind(2, position++).bind(3, k.kind).bind(4, k.ms).bind(5, k.calls).bind(6, k.flops);
      s.bind(7, k.bytes).bind(8, k.floor_ms).bind(9, k.bound).run();
    }
  });
}

std::vector<int64_t> RunStore::profiled_runs() {
  std::vector<int64_t> ids;
  Stmt s(*db_, "SELECT DISTINCT run_id FROM kind_floors ORDER BY run_id");
  while (s.step()) ids.push_back(s.int64(0));
  return ids;
}

SpeedOfLightRecord RunStore::speed_of_light(int64_t run_id) {
  SpeedOfLightRecord r;
  Stmt l(*db_,
         "SELECT matmul_flops, matmul_source, memory_bytes_per_s, memory_source FROM machine_limits WHERE run_id = ?");
  l.bind(1, run_id);
  if (!l.step()) return r;
  r.matmul_flops = l.real(0), r.matmul_source = l.text(1), r.memory_bytes_per_s = l.real(2),
  r.memory_source = l.text(3);
  Stmt s(*db_,
         "SELECT kind, ms, calls, flops, bytes, floor_ms, bound FROM kind_floors WHERE run_id = ? ORDER BY position");
  s.bind(1, run_id);
  while (s.step()) r.kinds.push_back({s.text(0), s.real(1), s.real(2), s.real(3), s.real(4), s.real(5), s.text(6)});
  return r;
}

std::string store_speed_of_light(const std::string& db, int64_t run_id, const SpeedOfLightRecord& record) {
  try {
    RunStore(db).set_speed_of_light(run_id, record);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace tokamak
