// A run's own plan, for its first report (see run_prediction.h).
#include "engine/torch/plan/run_prediction.h"

#include <memory>

#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "engine/torch/device/device.h"
#include "engine/base/plan/plan.h"
#include "engine/base/plan/plan_rates.h"
#include "engine/torch/plan/this_machine.h"

namespace tokamak {

Metrics run_prediction(const Config& c, int world, const std::string& db, std::string* why_not) {
  Metrics m;
  try {
    DeviceCatalog catalog = load_device_catalog();
    const c10::Device device = parse_device(c.device);
    Precision precision = c.speed.precision;
    CatalogDevice here;
    const CatalogDevice* d = nullptr;
    if (device.is_cuda()) {
      d = device_for_gpu_name(catalog, device_name(device));
      if (!d) {
        *why_not = "no plan for " + device_name(device) + ": it is not in the device catalog";
        return m;
      }
    } else {
      here = this_machine_device(c.threads, &precision, true);
      d = &here;
    }
    std::unique_ptr<RunStore> store;
    if (!db.empty() && path_exists(db)) store = std::make_unique<RunStore>(db);
    PlanRequest r;
    r.gpus = world;
    const PlanRow row = plan_for(c, *d, r, plan_rates(*d, catalog, store.get(), c.speed.fused_glue),
                                 c.speed.precision == Precision::kAuto ? precision : c.speed.precision);
    if (row.tok_s > 0) m.add("plan_tok_s", row.tok_s), m.add("plan_step_ms", row.step_ms);
  } catch (const std::exception& e) {
    *why_not = std::string("no plan for this run: ") + e.what();
  }
  return m;
}

}  // namespace tokamak
