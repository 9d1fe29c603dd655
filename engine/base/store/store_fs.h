// Which journal the run store keeps on the file system it lies on. SQLite's WAL keeps its index in memory
// shared through a -shm file, which works only among processes of one machine: on a network file system (NFS,
// Lustre, SMB, …), where a Slurm sweep's store must be for its batch hosts to reach it, WAL readers on two
// hosts can see a torn database. There the store keeps a rollback journal (journal_mode=DELETE), which needs
// only the file locks these file systems provide.
#pragma once
#include <string>

namespace tokamak {

// The name of the network file system whose statfs f_type is MAGIC ("NFS", "Lustre", …), or "" for a local one.
std::string network_file_system_name(long magic);

// The network file system FOLDER lies on ("" when local, or when it cannot be told).
std::string network_file_system_of(const std::string& folder);

}  // namespace tokamak
