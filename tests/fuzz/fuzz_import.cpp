// Fuzz target: `tokamak runs import FILE` into an in-memory run store. A damaged or hostile export must be
// refused with a tokamak::Error and leave the store as it was (the import is one transaction).
#include <cstdint>
#include <memory>

#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static RunStore store(":memory:");
  const std::string& path = fuzz::write_input(data, size, ".export.json");
  const size_t before = store.run_ids().size();
  try {
    ImportResult r = import_runs(store, path, /*skip_existing=*/true);
    for (int64_t id : r.imported) {
      (void)store.list_runs();
      (void)store.metrics(id);
      store.transaction([&] { store.delete_run(id); });
    }
  } catch (const Error&) {
    fuzz::require(store.run_ids().size() == before, "a failed import left runs behind");
  }
  return 0;
}
