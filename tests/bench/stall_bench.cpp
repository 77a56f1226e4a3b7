// Time to verdict: the stall model over the time-scaled jobs of tests/preload/unit/stall_simulation.h,
// each replayed with 20 seeds, beside fixed timeouts (300 s, the earlier default; 10 s, what the
// detection target would need without learning). Prints a Markdown table for docs/benchmarks.md: the
// detection time of the hang (median and worst over the seeds) and the false alarms (healthy
// calls declared stalled, summed over the seeds).
//
//   stall_bench [SEEDS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "stall_simulation.h"

namespace {

struct Column {
  std::string name;
  std::vector<double> detections;
  size_t false_alarms = 0;
  size_t calls = 0;
  double hours = 0;
};

std::string detection_text(std::vector<double> d) {
  d.erase(std::remove_if(d.begin(), d.end(), [](double x) { return x < 0; }), d.end());
  if (d.empty()) return "-";
  std::sort(d.begin(), d.end());
  double median = d[d.size() / 2], worst = d.back();
  return median == worst ? fmt::format("{:.1f} s", median) : fmt::format("{:.1f} s (worst {:.1f})", median, worst);
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = argc > 1 ? std::atoi(argv[1]) : 20;
  if (seeds <= 0) {
    std::fprintf(stderr, "usage: stall_bench [SEEDS]   (SEEDS: a positive number of seeds per job)\n");
    return 2;
  }
  using Job = hangshim::sim::Job;
  std::vector<Job (*)(uint64_t)> makers = {
      [](uint64_t s) { return hangshim::sim::hang_after_checkpoints(s); },
      [](uint64_t s) { return hangshim::sim::healthy_hour(s); },
      [](uint64_t s) { return hangshim::sim::checkpoint_at_same_site(s); },
      [](uint64_t s) { return hangshim::sim::hang_at_new_site(s); },
      [](uint64_t s) { return hangshim::sim::hang_at_slow_site(s); },
  };
  fmt::print("| job ({} seeds each) | learned: detection | learned: false alarms | fixed 300 s: detection | fixed 10 s: false alarms |\n",
             seeds);
  fmt::print("|---|---|---:|---|---:|\n");
  for (auto make : makers) {
    Column learned, fixed300, fixed10;
    std::string name;
    for (int s = 1; s <= seeds; ++s) {
      Job job = make(static_cast<uint64_t>(s));
      name = job.name;
      auto a = hangshim::sim::replay_learned(job);
      auto b = hangshim::sim::replay_fixed(job, 300);
      auto c = hangshim::sim::replay_fixed(job, 10);
      learned.detections.push_back(a.detection_s);
      learned.false_alarms += a.false_alarms;
      learned.calls += a.calls;
      learned.hours += a.simulated_s / 3600;
      fixed300.detections.push_back(b.detection_s);
      fixed10.false_alarms += c.false_alarms;
    }
    fmt::print("| {} ({:.1f} h, {} calls) | {} | {} | {} | {} |\n", name, learned.hours, learned.calls,
               detection_text(learned.detections), learned.false_alarms, detection_text(fixed300.detections),
               fixed10.false_alarms);
  }
  return 0;
}
