// The parts of a ledger written once and never changed, defined once for both sides:
//  - Identity: who wrote the ledger, the header's "Identity" block (format.h), written before
//    the header is published. The writer takes one (writer.h); the reader's LedgerHeader
//    (reader.h) is an Identity plus what the header says about the file and the process's life.
//  - CommIdentity: a communicator as this process joined it, the CommEntry fields written when
//    the entry is made. The writer's CommInit and the reader's CommInfo extend it.
//  - process_start_ticks: how a ledger names a process for good, with its pid and host (pids
//    are reused, (pid, start) are not). The shim records its parent's (the job's launcher),
//    `hangshim run` its own (HANGSHIM_LAUNCHER); the report judges liveness the same way.
//  - this_host: the host name a writer puts into Identity::host, for telling ledgers of this host.
#pragma once

#include <cstdint>
#include <string>

namespace hangshim::ledger {

struct Identity {
  int64_t pid = 0;
  int64_t ppid = 0;
  uint32_t uid = 0;
  int32_t rank = -1;        // RANK, -1 when not set
  int32_t world_size = -1;  // WORLD_SIZE, -1 when not set
  int32_t local_rank = -1;  // LOCAL_RANK, -1 when not set
  uint64_t start_ns = 0;    // CLOCK_REALTIME when the ledger was created
  uint32_t stall_seconds = 0;
  std::string host;
  std::string job;
  std::string command;
  std::string shim_version;
  // The job, as the environment and the parent say (Header's job block).
  uint64_t parent_start = 0;  // the parent's start time in clock ticks since boot, 0 unknown
  std::string slurm_job;      // SLURM_JOB_ID[.SLURM_STEP_ID]
  std::string run_id;         // TORCHELASTIC_RUN_ID
  std::string master;         // MASTER_ADDR:MASTER_PORT
  std::string launcher;       // HANGSHIM_LAUNCHER ("host:pid:start" of `hangshim run`)
};

struct CommIdentity {
  uint64_t key = 0;         // equal on every rank of the communicator
  uint64_t parent_key = 0;  // Split/Shrink: the parent's key, else 0
  uint64_t handle = 0;      // the ncclComm_t in this process (for correlation only)
  int32_t rank = -1;        // this process's rank in the communicator
  int32_t nranks = 0;
  int32_t device = -1;      // CUDA device, -1 until known
  int32_t color = -1;       // Split: the color, else -1
  uint32_t split_index = 0; // Split/Shrink: the parent's split count when this child was made
  uint64_t created_ns = 0;
};

// A process's start time (/proc/PID/stat field 22, clock ticks since boot), 0 when unknown.
// Allocation-free; never on the shim's hot path.
uint64_t process_start_ticks(int64_t pid) noexcept;

// gethostname(), "" when it fails.
std::string this_host();

}  // namespace hangshim::ledger
