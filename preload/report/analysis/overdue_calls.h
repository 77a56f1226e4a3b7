// Each rank's oldest pending call against its limit, judged from the ledgers as the shim's
// watchdog judges it in the process (ledger/stall_model.h: the same model, learned from the
// newest completed calls of each ledger's history; a job run with HANGSHIM_STALL_SECONDS keeps its
// fixed limit). `hangshim watch` ends when a call is overdue; the report tells a job whose
// collectives are merely in flight from a hang.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/inputs/inputs.h"

namespace hangshim::report {

struct PendingCall {
  int rank = -1;
  std::string op;          // "all_reduce", "barrier", ...
  uint64_t seq = 0;
  uint64_t pending_ns = 0;
  uint64_t limit_ns = 0;
  bool learned = true;     // false: the ledger's fixed HANGSHIM_STALL_SECONDS
  bool warm = false;       // learned from a call-site past its warm-up (its limit is its own)
  bool overdue() const { return pending_ns >= limit_ns; }
};

// The oldest pending call of every rank that has one, at `now_ns`.
std::vector<PendingCall> pending_calls(const Inputs& inputs, uint64_t now_ns);
// Those pending at least their limit.
std::vector<PendingCall> overdue_calls(const Inputs& inputs, uint64_t now_ns);

}  // namespace hangshim::report
