// Network file systems by their statfs magic (see store_fs.h). The numbers are Linux's (linux/magic.h and the
// file systems' own headers for those out of tree).
#include "engine/base/store/store_fs.h"

#include <sys/vfs.h>

namespace tokamak {

std::string network_file_system_name(long magic) {
  switch (static_cast<unsigned long>(magic) & 0xFFFFFFFFUL) {
    case 0x6969UL:
      return "NFS";
    case 0x517BUL:
      return "SMB";
    case 0xFF534D42UL:
      return "CIFS";
    case 0xFE534D42UL:
      return "SMB2";
    case 0x0BD00BD0UL:
      return "Lustre";
    case 0x47504653UL:
      return "GPFS";
    case 0x00C36400UL:
      return "CephFS";
    case 0x19830326UL:
      return "BeeGFS";
    case 0x5346414FUL:
      return "AFS";
    case 0x01021997UL:
      return "9p";
    case 0x65735546UL:
      return "FUSE (sshfs and the like)";
    default:
      return {};
  }
}

std::string network_file_system_of(const std::string& folder) {
  struct statfs fs {};
  if (::statfs(folder.c_str(), &fs) != 0) return {};
  return network_file_system_name(static_cast<long>(fs.f_type));
}

}  // namespace tokamak
