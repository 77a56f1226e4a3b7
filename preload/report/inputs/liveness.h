// Whether the process that wrote a ledger still runs. Only answerable on the ledger's own host,
// and only with care: pids are recycled, so a running pid counts as the writer only when that
// process started no later than the ledger was created.
#pragma once

#include <cstdint>
#include <string>

#include "ledger/identity.h"
#include "report/inputs/inputs.h"

namespace hangshim::report {

using ledger::this_host;       // gethostname() (ledger/identity.h)
uint64_t realtime_now_ns();    // CLOCK_REALTIME

// CLOCK_REALTIME nanoseconds at which process `pid` started, 0 when unknown (no such process);
// `zombie` is set for a process that has ended but not been reaped.
uint64_t process_start_ns(int64_t pid, bool* zombie);

// The writer of a ledger with this identity, judged here. Unknown when `host` is not this host.
Liveness judge_liveness(const std::string& host, int64_t pid, uint64_t ledger_start_ns, const std::string& here);

}  // namespace hangshim::report
