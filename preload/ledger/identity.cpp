#include "ledger/identity.h"

#include <unistd.h>

#include "pyframes/proc_stat.h"

namespace hangshim::ledger {

uint64_t process_start_ticks(int64_t pid) noexcept {
  pyframes::ProcStat stat;
  return pyframes::read_proc_stat(pid, stat) ? stat.start_ticks : 0;
}

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

}  // namespace hangshim::ledger
