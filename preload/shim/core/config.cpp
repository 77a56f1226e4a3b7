#include "shim/core/config.h"

#include <fmt/format.h>

#include <charconv>
#include <string>
#include <string_view>

#include "ledger/directory.h"

namespace hangshim::shim {

namespace {

bool parse_uint(std::string_view text, uint64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

// A boolean switch: 1/true/yes/on or 0/false/no/off.
void read_bool(const EnvLookup& lookup, const char* name, bool& value, Config& config) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') return;
  std::string_view v = text;
  if (v == "1" || v == "true" || v == "yes" || v == "on") {
    value = true;
  } else if (v == "0" || v == "false" || v == "no" || v == "off") {
    value = false;
  } else {
    config.warnings.push_back(fmt::format("{}={} is not 0 or 1; using {}", name, v, value ? 1 : 0));
  }
}

// `unset`: what the default means when it is no number of the range (0: "limits learned").
void read_uint(const EnvLookup& lookup, const char* name, uint32_t& value, uint32_t low, uint32_t high,
               Config& config, const char* unset = nullptr) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') return;
  uint64_t parsed = 0;
  if (!parse_uint(text, parsed) || parsed < low || parsed > high) {
    config.warnings.push_back(fmt::format("{}={} is not a number from {} to {}; using {}", name, text, low, high,
                                          unset != nullptr && value < low ? std::string(unset) : std::to_string(value)));
    return;
  }
  value = static_cast<uint32_t>(parsed);
}

int32_t read_int(const EnvLookup& lookup, const char* name) {
  const char* text = lookup(name);
  uint64_t parsed = 0;
  if (text == nullptr || !parse_uint(text, parsed) || parsed > INT32_MAX) return -1;
  return static_cast<int32_t>(parsed);
}

}  // namespace

Config read_config(const EnvLookup& lookup, uint32_t uid) {
  Config config;
  read_bool(lookup, "HANGSHIM_DISABLE", config.disabled, config);
  config.dir = ledger::ledger_directory(lookup("HANGSHIM_DIR"), uid);
  read_uint(lookup, "HANGSHIM_RING", config.ring, 16, 1u << 22, config);
  read_uint(lookup, "HANGSHIM_STALL_SECONDS", config.stall_seconds, 1, 7 * 24 * 3600, config,
            "limits learned per call-site");
  read_bool(lookup, "HANGSHIM_CALLSITES", config.callsites, config);
  read_uint(lookup, "HANGSHIM_CALLSITE_DEPTH", config.callsite_depth, 1, 64, config);
  read_bool(lookup, "HANGSHIM_CUDA_EVENTS", config.cuda_events, config);
  read_uint(lookup, "HANGSHIM_POLL_MS", config.poll_ms, 1, 10000, config);
  read_bool(lookup, "HANGSHIM_WATCHDOG", config.watchdog, config);
  read_uint(lookup, "HANGSHIM_KEEP_SECONDS", config.keep_seconds, 0, UINT32_MAX, config);
  if (const char* paths = lookup("HANGSHIM_LIBRARY_PATHS"); paths != nullptr) {
    config.library_paths.clear();
    std::string_view rest = paths;
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view part = rest.substr(0, colon);
      if (!part.empty()) config.library_paths.emplace_back(part);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  return config;
}

RankIdentity read_rank_identity(const EnvLookup& lookup) {
  RankIdentity id;
  id.rank = read_int(lookup, "RANK");
  id.world_size = read_int(lookup, "WORLD_SIZE");
  id.local_rank = read_int(lookup, "LOCAL_RANK");
  if (id.rank < 0) id.rank = read_int(lookup, "OMPI_COMM_WORLD_RANK");
  if (id.world_size < 0) id.world_size = read_int(lookup, "OMPI_COMM_WORLD_SIZE");
  if (id.local_rank < 0) id.local_rank = read_int(lookup, "OMPI_COMM_WORLD_LOCAL_RANK");
  if (id.rank < 0) id.rank = read_int(lookup, "SLURM_PROCID");
  if (id.world_size < 0) id.world_size = read_int(lookup, "SLURM_NTASKS");
  if (id.local_rank < 0) id.local_rank = read_int(lookup, "SLURM_LOCALID");
  for (const char* name : {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"}) {
    const char* value = lookup(name);
    if (value != nullptr && *value != '\0') {
      id.job = value;
      break;
    }
  }
  auto text = [&](const char* name) {
    const char* value = lookup(name);
    return std::string(value != nullptr ? value : "");
  };
  id.slurm_job = text("SLURM_JOB_ID");
  if (!id.slurm_job.empty() && !text("SLURM_STEP_ID").empty()) id.slurm_job += "." + text("SLURM_STEP_ID");
  id.run_id = text("TORCHELASTIC_RUN_ID");
  if (!text("MASTER_ADDR").empty() || !text("MASTER_PORT").empty()) id.master = text("MASTER_ADDR") + ":" + text("MASTER_PORT");
  id.launcher = text("HANGSHIM_LAUNCHER");
  return id;
}

}  // namespace hangshim::shim
