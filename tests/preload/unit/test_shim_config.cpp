// HANGSHIM_* settings and the rank identity, read through a lookup function (a map here).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "shim/core/config.h"

using namespace hangshim::shim;

namespace {
EnvLookup env(const std::map<std::string, std::string>& values) {
  return [values](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("shim config: defaults") {
  Config c = read_config(env({}), 1234);
  CHECK_FALSE(c.disabled);
  CHECK(c.dir == "/dev/shm/hangshim-1234");
  CHECK(c.stall_seconds == 0);  // no fixed limit: learned per call-site
  CHECK(c.callsites);
  CHECK(c.cuda_events);
  CHECK(c.watchdog);
  CHECK(c.warnings.empty());
  CHECK(c.library_paths.size() == 4);
}

TEST_CASE("shim config: every variable is read") {
  Config c = read_config(env({{"HANGSHIM_DISABLE", "1"},
                              {"HANGSHIM_DIR", "/tmp/x///"},
                              {"HANGSHIM_RING", "2000"},
                              {"HANGSHIM_STALL_SECONDS", "60"},
                              {"HANGSHIM_CALLSITES", "off"},
                              {"HANGSHIM_CALLSITE_DEPTH", "8"},
                              {"HANGSHIM_CUDA_EVENTS", "no"},
                              {"HANGSHIM_POLL_MS", "5"},
                              {"HANGSHIM_WATCHDOG", "false"},
                              {"HANGSHIM_KEEP_SECONDS", "0"},
                              {"HANGSHIM_LIBRARY_PATHS", "/megatron/::/apex/"}}),
                         0);
  CHECK(c.disabled);
  CHECK(c.dir == "/tmp/x");
  CHECK(c.ring == 2000);
  CHECK(c.stall_seconds == 60);
  CHECK_FALSE(c.callsites);
  CHECK(c.callsite_depth == 8);
  CHECK_FALSE(c.cuda_events);
  CHECK(c.poll_ms == 5);
  CHECK_FALSE(c.watchdog);
  CHECK(c.keep_seconds == 0);
  CHECK(c.library_paths == std::vector<std::string>{"/megatron/", "/apex/"});
  CHECK(c.warnings.empty());
}

TEST_CASE("shim config: bad values keep the default and say so") {
  Config c = read_config(env({{"HANGSHIM_RING", "lots"},
                              {"HANGSHIM_STALL_SECONDS", "0"},
                              {"HANGSHIM_CALLSITE_DEPTH", "65"},
                              {"HANGSHIM_DISABLE", "maybe"}}),
                         0);
  CHECK(c.ring == Config{}.ring);
  CHECK(c.stall_seconds == 0);
  CHECK(c.callsite_depth == Config{}.callsite_depth);
  CHECK_FALSE(c.disabled);
  REQUIRE(c.warnings.size() == 4);
  CHECK(c.warnings[0].find("HANGSHIM_DISABLE=maybe") != std::string::npos);
  CHECK(c.warnings[2].find("HANGSHIM_STALL_SECONDS=0 is not a number from 1 to 604800; using limits learned per call-site") !=
        std::string::npos);
}

TEST_CASE("shim config: rank identity from torchrun, then MPI, then Slurm") {
  RankIdentity torch = read_rank_identity(env({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                               {"SLURM_PROCID", "7"}, {"TORCHELASTIC_RUN_ID", "run-1"}}));
  CHECK(torch.rank == 3);
  CHECK(torch.world_size == 8);
  CHECK(torch.local_rank == 1);
  CHECK(torch.job == "run-1");
  RankIdentity mpi = read_rank_identity(env({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "6"}}));
  CHECK(mpi.rank == 5);
  CHECK(mpi.world_size == 6);
  CHECK(mpi.local_rank == -1);
  RankIdentity slurm = read_rank_identity(env({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "99"}}));
  CHECK(slurm.rank == 2);
  CHECK(slurm.job == "99");
  RankIdentity none = read_rank_identity(env({{"RANK", "-1"}}));
  CHECK(none.rank == -1);
}
