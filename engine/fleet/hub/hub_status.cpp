// hub_catalog_status (see hub_status.h).
#include "engine/fleet/hub/hub_status.h"

#include <dirent.h>
#include <sys/stat.h>

#include "engine/fleet/hub/hub_fetch.h"

namespace tokamak {

std::vector<HubCatalogStatus> hub_catalog_status() {
  std::vector<HubCatalogStatus> out;
  for (const HubCatalogEntry& e : hub_catalog()) {
    HubCatalogStatus s;
    s.entry = e;
    s.dir = hub_dataset_dir(e.name);
    if (DIR* d = ::opendir(s.dir.c_str())) {
      while (const dirent* f = ::readdir(d)) {
        const std::string name = f->d_name;
        struct stat st {};
        if (::stat((s.dir + "/" + name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (name.size() > 5 && name[0] == '.' && name.compare(name.size() - 5, 5, ".part") == 0) ++s.partial;
        else if (name == e.val_file) s.val_present = true, s.bytes_present += static_cast<uint64_t>(st.st_size);
        else if (name.rfind(e.train_prefix, 0) == 0)
          ++s.train_present, s.bytes_present += static_cast<uint64_t>(st.st_size);
      }
      ::closedir(d);
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace tokamak
