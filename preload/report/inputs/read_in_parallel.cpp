#include "report/inputs/read_in_parallel.h"

#include <sched.h>

namespace hangshim::report {

size_t reading_threads(size_t requested, size_t count, size_t per_thread) {
  if (requested > 0) return requested;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  int cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
  size_t by_cpus = static_cast<size_t>(std::clamp(cpus, 1, 8));
  return std::max<size_t>(1, std::min(by_cpus, count / std::max<size_t>(per_thread, 1)));
}

}  // namespace hangshim::report
