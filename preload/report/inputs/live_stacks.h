// Live Python stacks of the ranks that still run on this host, read through pyframes (no ptrace
// stop unless asked; process_vm_readv), several processes at once.
#pragma once

#include <cstdint>
#include <vector>

#include "pyframes/pyframes.h"
#include "report/inputs/inputs.h"

namespace hangshim::report {

// One result per pid, in order; with `locals`, each frame's variables too (the HTML report's).
std::vector<pyframes::Result<pyframes::Process>> read_live_stacks(const std::vector<int64_t>& pids, bool locals = false);

// Reads the stacks of every rank judged Alive here that has none yet (from an export).
void attach_live_stacks(Inputs& inputs, bool locals = false);

}  // namespace hangshim::report
