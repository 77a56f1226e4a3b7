// Processes on this host that have libhangshim.so loaded, whatever they have recorded. The shim
// writes a ledger only at a process's first NCCL call, so a job on gloo or the CPU (or one that
// reaches NCCL some other way) has none: "no ledger" must then say that the shim is there and
// saw no NCCL call, not that the job was started without it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hangshim::report {

struct ShimProcess {
  int64_t pid = 0;
  int64_t ppid = 0;
  std::string command;     // /proc/PID/cmdline, spaces between arguments, cut at 200 bytes
  std::string ledger_dir;  // its HANGSHIM_DIR ("" when unset: the default)
  std::string rank;        // its RANK ("" when unset: a launcher, a plain process)
  int64_t worker_of = 0;   // the pid of the rank it works for (a DataLoader worker inherits RANK); 0: none
};

// "pid 12 (rank 1)", "pid 13 (worker of rank 1 pid 12)", "pid 10": how a process is named.
std::string shim_process_name(const ShimProcess& process);

// Processes of this user with libhangshim.so in their mappings, oldest first (by pid order of
// /proc; the launcher usually comes first). `dirs`: keep only those writing to one of these
// directories (compared as given and with the default for an unset HANGSHIM_DIR); empty: all.
std::vector<ShimProcess> find_shim_processes(const std::vector<std::string>& dirs, const std::string& default_dir);

}  // namespace hangshim::report
