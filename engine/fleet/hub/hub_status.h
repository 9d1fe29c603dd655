// How much of each catalog dataset this machine has (for a picker: present, partly present "n of m", absent,
// with sizes): read from the folder only, no request and no checksum. `tokamak datasets catalog --json`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/data/hub_catalog.h"

namespace tokamak {

struct HubCatalogStatus {
  HubCatalogEntry entry;
  std::string dir;             // where it is (or would be): data_dir()/datasets/NAME
  bool val_present = false;    // its validation shard is in place
  int train_present = 0;       // train shards in place (any of them, not only a prefix)
  int partial = 0;             // .part files waiting for a resume
  uint64_t bytes_present = 0;  // of the files in place
  // 1024-byte header + 2 bytes a token: every shard but possibly the last one is this long.
  uint64_t shard_bytes() const { return 1024 + 2 * entry.shard_tokens; }
};

std::vector<HubCatalogStatus> hub_catalog_status();

}  // namespace tokamak
