// The shim's settings, all from HANGSHIM_* environment variables (documented in one table,
// docs/shim.md). Read once, at the first NCCL call; a bad value is reported once and the default used.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hangshim::shim {

struct Config {
  bool disabled = false;             // HANGSHIM_DISABLE=1: forward only, record nothing
  std::string dir;                   // HANGSHIM_DIR, default /dev/shm/hangshim-$UID
  uint32_t ring = 8192;              // HANGSHIM_RING: calls kept in the ring (power of two)
  uint32_t stall_seconds = 0;        // HANGSHIM_STALL_SECONDS: pending this long = stalled (a fixed
                                     // limit); 0 (unset): the limit is learned (ledger/stall_model.h)
  bool callsites = true;             // HANGSHIM_CALLSITES=0: no Python call-site capture
  uint32_t callsite_depth = 16;      // HANGSHIM_CALLSITE_DEPTH: frames per call-site (1-64)
  bool cuda_events = true;           // HANGSHIM_CUDA_EVENTS=0: completion = return, never touch CUDA
  uint32_t poll_ms = 50;             // HANGSHIM_POLL_MS: watchdog tick (heartbeat, event polling)
  bool watchdog = true;              // HANGSHIM_WATCHDOG=0: no thread (no heartbeat, no stall detection)
  uint32_t keep_seconds = 3600;      // HANGSHIM_KEEP_SECONDS: dead processes' ledgers older than this are removed
  std::vector<std::string> library_paths = {"/torch/", "/deepspeed/", "/site-packages/", "/dist-packages/"};
                                     // HANGSHIM_LIBRARY_PATHS: path parts of library (not "your") frames
  std::vector<std::string> warnings; // problems found while reading (reported once)
};

using EnvLookup = std::function<const char*(const char* name)>;

// Reads the configuration through `lookup` (getenv in the shim, a map in tests).
Config read_config(const EnvLookup& lookup, uint32_t uid);

// Rank identity of this process from RANK / WORLD_SIZE / LOCAL_RANK (torchrun, DeepSpeed,
// mpirun -x), falling back to OMPI_COMM_WORLD_* and SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID.
struct RankIdentity {
  int32_t rank = -1;
  int32_t world_size = -1;
  int32_t local_rank = -1;
  std::string job;  // TORCHELASTIC_RUN_ID, else SLURM_JOB_ID, else empty
  std::string slurm_job;  // SLURM_JOB_ID[.SLURM_STEP_ID]
  std::string run_id;     // TORCHELASTIC_RUN_ID
  std::string master;     // MASTER_ADDR:MASTER_PORT
  std::string launcher;   // HANGSHIM_LAUNCHER
};
RankIdentity read_rank_identity(const EnvLookup& lookup);

}  // namespace hangshim::shim
