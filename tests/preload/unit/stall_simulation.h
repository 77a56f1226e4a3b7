// Time-scaled jobs for the stall model: what one rank's watchdog sees of an hour of training, in
// microseconds of computing. Shared by the unit tests (no false alarm, detection within the
// targets) and tests/bench/stall_bench.cpp (time-to-detection and false alarms, docs/benchmarks.md).
//
// A rank's calls are sequential (the next is issued after the last completed), so the watchdog's
// model cannot change while a call is pending: it learns a call's wait when the call completes
// (the watchdog's cursor passes it), and a pending call is declared stalled when its wait reaches
// the limit the model gives at that moment, found at the watchdog's next tick. This replays that
// exactly, without sleeping.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ledger/stall_model.h"

namespace hangshim::sim {

struct Call {
  uint64_t key = 0;
  double gap_s = 0;   // time outside NCCL before it (computing, loading, checkpointing)
  double wait_s = 0;  // how long it stays pending
  bool hang = false;  // never completes: the stall to detect
};

struct Job {
  std::string name;
  std::string story;
  std::vector<Call> calls;
};

struct Outcome {
  size_t calls = 0;
  size_t false_alarms = 0;   // healthy calls declared stalled
  double detection_s = -1;   // the hang: pending this long when declared (-1: none, or never)
  double simulated_s = 0;    // the job's length up to the hang (or its end)
};

// The watchdog over `job`: limit(key) before each call, learn(key, wait) after it completes.
inline Outcome replay(const Job& job, const std::function<uint64_t(uint64_t)>& limit,
                      const std::function<void(uint64_t, uint64_t)>& learn, double tick_s = 0.05) {
  Outcome out;
  for (const Call& c : job.calls) {
    ++out.calls;
    out.simulated_s += c.gap_s;
    double limit_s = static_cast<double>(limit(c.key)) / 1e9;
    double noticed_s = std::ceil(limit_s / tick_s) * tick_s;  // the first tick at or after the limit
    if (c.hang) {
      out.detection_s = noticed_s;
      return out;
    }
    if (c.wait_s >= noticed_s) ++out.false_alarms;
    out.simulated_s += c.wait_s;
    learn(c.key, static_cast<uint64_t>(c.wait_s * 1e9));
  }
  return out;
}

inline Outcome replay_learned(const Job& job, ledger::StallModelSettings settings = {}) {
  ledger::StallModel model(settings);
  return replay(
      job, [&](uint64_t key) { return model.limit_ns(key); }, [&](uint64_t key, uint64_t ns) { model.learn(key, ns); });
}

inline Outcome replay_fixed(const Job& job, double seconds) {
  return replay(
      job, [&](uint64_t) { return static_cast<uint64_t>(seconds * 1e9); }, [](uint64_t, uint64_t) {});
}

// Deterministic draws (the standard distributions differ between libraries).
class Draws {
 public:
  explicit Draws(uint64_t seed) : rng_(seed) {}
  double uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  double normal() {  // Box-Muller
    double u = uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u > 0 ? u : 1e-300)) * std::cos(6.283185307179586 * v);
  }
  double lognormal(double median, double sigma) { return median * std::exp(sigma * normal()); }
  bool chance(double p) { return uniform() < p; }

 private:
  std::mt19937_64 rng_;
};

// Keys as the watchdog makes them: communicator entry 0, call-sites 1.. (StallModel::key).
inline uint64_t site(uint32_t id) { return ledger::StallModel::key(0, id, 1); }
constexpr uint32_t kGradSync = 1, kCheckpointBarrier = 2, kEvalBarrier = 3, kLossReport = 4, kNewBarrier = 5;

// The first target: steps whose gradient all_reduce waits milliseconds, a first step that
// waits 40 s for another rank's compilation, a checkpoint every 50 steps that makes this rank
// wait 12 s at the barrier after it, then a hang at the gradient all_reduce.
inline Job hang_after_checkpoints(uint64_t seed = 1, int steps = 600) {
  Draws d(seed);
  Job job{"hang at a fast call-site after checkpoints",
          "ms waits at the gradient all_reduce, 40 s first step, a 12 s checkpoint barrier every 50 steps, "
          "then the all_reduce hangs",
          {}};
  for (int step = 0; step < steps; ++step) {
    double wait = step == 0 ? 40.0 : d.lognormal(0.02, 0.7);
    job.calls.push_back({site(kGradSync), d.lognormal(0.3, 0.3), wait, false});
    if (step % 50 == 49) job.calls.push_back({site(kCheckpointBarrier), 0.01, 12.0, false});
  }
  job.calls.push_back({site(kGradSync), 0.3, 0, true});
  return job;
}

// A healthy hour with irregular steps: data-dependent step times, heavy-tailed waits, a rare
// 1-3 s hiccup of some rank (a GC or I/O pause) at the all_reduce itself, a 50 s first step,
// an evaluation barrier every 10 minutes (45 s), a checkpoint barrier every 15 minutes (60 s)
// and a loss all_reduce every 10 steps. Nothing hangs: any alarm is false.
inline Job healthy_hour(uint64_t seed = 2, double seconds = 3600) {
  Draws d(seed);
  Job job{"healthy irregular hour",
          "steps 0.25 s +-50 %, waits 30 ms heavy-tailed, 0.3 % hiccups of 1-3 s, 50 s first step, "
          "45 s evaluation barrier every 10 min, 60 s checkpoint barrier every 15 min",
          {}};
  double now = 0, next_eval = 600, next_checkpoint = 900;
  auto add = [&](uint64_t key, double gap, double wait) {
    job.calls.push_back({key, gap, wait, false});
    now += gap + wait;
  };
  for (int step = 0; now < seconds; ++step) {
    double gap = d.lognormal(0.25, 0.5);
    add(site(kGradSync), gap, step == 0 ? 50.0 : d.chance(0.003) ? 1.0 + 2.0 * d.uniform() : d.lognormal(0.03, 1.0));
    if (step % 10 == 9) add(site(kLossReport), 0.001, d.lognormal(0.005, 1.0));
    if (now >= next_eval) {
      add(site(kEvalBarrier), 0.01, 45.0 * (0.8 + 0.4 * d.uniform()));
      next_eval += 600;
    }
    if (now >= next_checkpoint) {
      add(site(kCheckpointBarrier), 0.01, 60.0 * (0.9 + 0.2 * d.uniform()));
      next_checkpoint += 900;
    }
  }
  return job;
}

// Rank 0 checkpoints for 12 s every 100 steps between two gradient all_reduces: the others wait
// at the all_reduce itself, the call-site whose waits are otherwise milliseconds. Its first
// checkpoint cannot be told from a hang there (one alarm); from the second on it is normal.
inline Job checkpoint_at_same_site(uint64_t seed = 3, int steps = 1000) {
  Draws d(seed);
  Job job{"checkpoint waits at the same call-site",
          "the others wait 12 s at the gradient all_reduce itself every 100 steps", {}};
  for (int step = 0; step < steps; ++step) {
    double wait = step % 100 == 99 ? 12.0 : d.lognormal(0.02, 0.7);
    job.calls.push_back({site(kGradSync), d.lognormal(0.3, 0.3), wait, false});
  }
  job.calls.push_back({site(kGradSync), 0.3, 0, true});
  return job;
}

// A hang at a collective this rank never reached before (a barrier only the last epoch has).
inline Job hang_at_new_site(uint64_t seed = 4, int steps = 300) {
  Draws d(seed);
  Job job{"hang at a call-site never seen",
          "300 steps waiting ~20 ms at the all_reduce, then a barrier seen for the first time hangs", {}};
  for (int step = 0; step < steps; ++step) job.calls.push_back({site(kGradSync), 0.3, d.lognormal(0.02, 0.7), false});
  job.calls.push_back({site(kNewBarrier), 0.3, 0, true});
  return job;
}

// A pipeline stage whose waits are seconds (bubbles): a hang there takes longer to tell.
inline Job hang_at_slow_site(uint64_t seed = 5, int steps = 400) {
  Draws d(seed);
  Job job{"hang at a call-site whose waits are seconds", "waits 1.5 s +-30 %, then a hang there", {}};
  for (int step = 0; step < steps; ++step) job.calls.push_back({site(kGradSync), 0.1, d.lognormal(1.5, 0.3), false});
  job.calls.push_back({site(kGradSync), 0.1, 0, true});
  return job;
}

inline std::vector<Job> all_jobs() {
  return {hang_after_checkpoints(), healthy_hour(), checkpoint_at_same_site(), hang_at_new_site(), hang_at_slow_site()};
}

}  // namespace hangshim::sim
