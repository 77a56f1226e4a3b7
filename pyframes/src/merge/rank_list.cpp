// Labels for groups of merged stacks: compressed rank and pid lists ("ranks 0-6,8").
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "merge/labels.h"
#include "pyframes/merge.h"

namespace pyframes {

namespace {

// RANK as a number when it is one (launchers write decimal integers); nullopt otherwise.
std::optional<int64_t> numeric(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::string plural(size_t count, std::string_view one, std::string_view many) {
  return std::string(count == 1 ? one : many);
}

// Ranks as a list: numbers compressed ("0-6,8"), then the values that are not numbers.
struct RankSet {
  std::vector<int64_t> numbers;
  std::set<std::string> others;

  void add(const std::string& rank) {
    if (auto value = numeric(rank)) {
      numbers.push_back(*value);
    } else {
      others.insert(rank);
    }
  }
  size_t distinct() const { return std::set<int64_t>(numbers.begin(), numbers.end()).size() + others.size(); }
  std::string text() const {
    std::string list = compress_numbers(numbers);
    for (const std::string& other : others) list += (list.empty() ? "" : ",") + other;
    return plural(distinct(), "rank ", "ranks ") + list;
  }
};

}  // namespace

std::string compress_numbers(std::vector<int64_t> numbers) {
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  std::string out;
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", numbers[i]) : fmt::format("{}-{}", numbers[i], numbers[j]);
    i = j + 1;
  }
  return out;
}

std::string describe_members(const MergedStacks& merged, const std::vector<uint32_t>& members) {
  return describe_members(merged, members, true);
}

std::string describe_members(const MergedStacks& merged, const std::vector<uint32_t>& members, bool counts) {
  RankSet ranks;
  RankSet worker_ranks;         // the ranks whose workers (Process::worker_of) are among the members
  std::vector<int64_t> worker_pids;
  std::vector<int64_t> pids;
  std::set<size_t> processes;
  std::set<std::string> identities;  // rank or pid: more processes than identities is worth saying
  std::set<std::string> names;
  for (uint32_t id : members) {
    if (id >= merged.members.size()) continue;
    const MergeMember& member = merged.members[id];
    processes.insert(member.process);
    names.insert(member.thread_name);
    if (member.rank.empty()) {
      pids.push_back(member.pid);
      identities.insert(fmt::format("pid {}", member.pid));
    } else if (member.worker_of != 0) {
      worker_ranks.add(member.rank);
      worker_pids.push_back(member.pid);
      identities.insert(fmt::format("worker pid {}", member.pid));
    } else {
      ranks.add(member.rank);
      identities.insert("rank " + member.rank);
    }
  }
  std::string label;
  if (ranks.distinct() > 0) label = ranks.text();
  if (!worker_pids.empty()) {  // "rank 1 worker pid 4321", "ranks 0-1 workers pids 4321,4400"
    const size_t distinct_workers = std::set<int64_t>(worker_pids.begin(), worker_pids.end()).size();
    label += (label.empty() ? "" : ", ") + worker_ranks.text() + plural(distinct_workers, " worker pid ", " workers pids ") +
             compress_numbers(worker_pids);
  }
  if (!pids.empty()) {
    const size_t distinct_pids = std::set<int64_t>(pids.begin(), pids.end()).size();
    label += (label.empty() ? "" : ", ") + plural(distinct_pids, "pid ", "pids ") + compress_numbers(pids);
  }
  if (label.empty()) label = "nobody";
  if (!counts) return label;
  if ((merged.all_threads || merged.native_only > 0) && names.size() == 1 && !names.begin()->empty()) {
    label += fmt::format(" \"{}\"", *names.begin());
  }
  if (members.size() > processes.size()) {
    label += fmt::format(" ({} threads)", members.size());
  } else if (processes.size() > identities.size()) {
    label += fmt::format(" ({} processes)", processes.size());
  }
  return label;
}

}  // namespace pyframes
