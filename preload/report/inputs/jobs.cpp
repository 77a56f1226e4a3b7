#include "report/inputs/jobs.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace hangshim::report {

namespace {

// Union-find over ledger indices.
struct Groups {
  std::vector<size_t> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t find(size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

bool starts_with(const std::string& text, const std::string& prefix) { return text.compare(0, prefix.size(), prefix) == 0; }

bool running(const RankView& v) { return v.liveness == Liveness::Alive || v.liveness == Liveness::Unknown; }

JobSummary summarize(const std::vector<RankView>& ranks, const std::vector<size_t>& members, const std::string& key) {
  JobSummary s;
  s.key = key;
  s.name = job_name(key);
  s.ledgers = members.size();
  s.exited = true;
  s.started_ns = UINT64_MAX;
  for (size_t i : members) {
    const RankView& v = ranks[i];
    s.running += running(v) ? 1 : 0;
    s.exited = s.exited && v.header.state == static_cast<uint32_t>(ledger::ProcessState::Exited);
    s.started_ns = std::min(s.started_ns, v.header.start_ns);
    s.last_seen_ns = std::max({s.last_seen_ns, v.header.heartbeat_ns, v.header.exit_ns, v.header.start_ns});
  }
  return s;
}

bool matches(const JobSummary& job, const std::vector<size_t>& members, const std::vector<RankView>& ranks,
             const JobSelection& selection, const std::string& here) {
  if (!selection.job.empty()) {
    const std::string& want = selection.job;
    bool by_key = job.key == want || job.key == "slurm:" + want || starts_with(job.key, "slurm:" + want + ".") ||
                  (starts_with(want, "slurm:") && starts_with(job.key, want + "."));
    if (!by_key) return false;
  }
  if (!selection.pids.empty()) {
    bool found = std::any_of(members.begin(), members.end(), [&](size_t i) {
      const ledger::LedgerHeader& h = ranks[i].header;
      if (h.host != here) return false;
      for (int64_t pid : selection.pids) {
        // The process itself, its parent (the launcher that forked it), or the `hangshim run`
        // that started the job.
        if (h.pid == pid || h.ppid == pid || starts_with(h.launcher, fmt::format("{}:{}:", here, pid))) return true;
      }
      return false;
    });
    if (!found) return false;
  }
  return true;
}

// For each ledger, the first ledger whose key is the same string as its own. A job whose ranks
// carry no job id (no SLURM, torchrun or `hangshim run`) has a key per process: a map of 131072
// such keys (long, alike for their first 25 bytes) cost a tenth of a second. So the keys are
// sorted by hash instead, and only keys of equal hashes are compared.
std::vector<size_t> same_keys(const std::vector<std::string>& keys) {
  std::vector<std::pair<size_t, size_t>> hashed(keys.size());  // (hash, ledger), sorted
  for (size_t i = 0; i < keys.size(); ++i) hashed[i] = {std::hash<std::string>{}(keys[i]), i};
  std::sort(hashed.begin(), hashed.end());
  std::vector<size_t> first(keys.size());
  std::vector<size_t> distinct;  // the different keys of one hash: one, but for a collision
  for (size_t a = 0; a < hashed.size();) {
    size_t b = a;
    distinct.clear();
    for (; b < hashed.size() && hashed[b].first == hashed[a].first; ++b) {
      size_t i = hashed[b].second;  // in order of ledgers within a hash: the first is the smallest
      auto same = std::find_if(distinct.begin(), distinct.end(), [&](size_t j) { return keys[j] == keys[i]; });
      if (same == distinct.end()) {
        distinct.push_back(i);
        first[i] = i;
      } else {
        first[i] = *same;
      }
    }
    a = b;
  }
  return first;
}

}  // namespace

std::string job_key(const ledger::LedgerHeader& h) {
  // Flight Recorder dumps name no process: the directory they were read from is their job
  // (dumps of one job in several directories are joined by their process groups).
  if (h.pid <= 0 && h.job.starts_with("dumps:")) return h.job;
  if (!h.slurm_job.empty()) return "slurm:" + h.slurm_job;
  if (!h.launcher.empty()) return "launcher:" + h.launcher;
  if (!h.run_id.empty() && h.run_id != "none") return "torchrun:" + h.run_id;
  if (h.ppid > 1) return fmt::format("parent:{}:{}:{}", h.host, h.ppid, h.parent_start);
  return fmt::format("process:{}:{}:{}", h.host, h.pid, h.start_ns);
}

std::string job_name(const std::string& key) {
  auto rest = [&](size_t n) { return key.substr(n); };
  auto pid_on = [](const std::string& host_pid_start) {
    // "host:pid:start" -> "pid P on HOST"
    size_t last = host_pid_start.rfind(':');
    size_t mid = last == std::string::npos || last == 0 ? std::string::npos : host_pid_start.rfind(':', last - 1);
    if (mid == std::string::npos) return host_pid_start;
    return fmt::format("pid {} on {}", host_pid_start.substr(mid + 1, last - mid - 1), host_pid_start.substr(0, mid));
  };
  if (starts_with(key, "slurm:")) return "SLURM job " + rest(6);
  if (starts_with(key, "launcher:")) return "the job hangshim run started as " + pid_on(rest(9));
  if (starts_with(key, "torchrun:")) return "torchrun run " + rest(9);
  if (starts_with(key, "parent:")) return "the job launched by " + pid_on(rest(7));
  if (starts_with(key, "process:")) return "the single process " + pid_on(rest(8));
  if (starts_with(key, "dumps:")) return "the Flight Recorder dumps in " + rest(6);
  return key;
}

bool select_job(std::vector<RankView>& ranks, const JobSelection& selection, const std::string& here,
                JobSummary& chosen, std::vector<JobSummary>& others, std::string& error) {
  others.clear();
  chosen = JobSummary{};
  if (ranks.empty()) return true;
  Groups groups(ranks.size());
  std::vector<std::string> keys(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) keys[i] = job_key(ranks[i].header);
  std::vector<size_t> key_of = same_keys(keys);
  // try_emplace: emplace would make (and free) a node for every ledger of a key already met.
  std::map<uint64_t, size_t> by_comm;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (key_of[i] != i) groups.join(i, key_of[i]);
    for (const auto& c : ranks[i].comms) {
      if (c.key == 0) continue;
      if (auto [it, fresh] = by_comm.try_emplace(c.key, i); !fresh) groups.join(i, it->second);
    }
  }
  std::map<size_t, std::vector<size_t>> members;
  for (size_t i = 0; i < ranks.size(); ++i) members[groups.find(i)].push_back(i);
  struct Job {
    JobSummary summary;
    std::vector<size_t> members;
  };
  std::vector<Job> jobs;
  std::vector<size_t> votes(ranks.size(), 0);  // per key (its first ledger), for the job being named
  for (auto& [root, list] : members) {
    // The job's name: the key most of its ledgers carry (the others joined by a communicator),
    // the first in byte order of those carried equally often.
    for (size_t i : list) ++votes[key_of[i]];
    size_t best = key_of[list.front()];
    for (size_t i : list) {
      size_t k = key_of[i];
      if (votes[k] > votes[best] || (votes[k] == votes[best] && keys[k] < keys[best])) best = k;
    }
    jobs.push_back({summarize(ranks, list, keys[best]), list});
    for (size_t i : list) votes[key_of[i]] = 0;
  }
  // Newest first: the order the other jobs are listed in, and the default's tie-break.
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.summary.started_ns > b.summary.started_ns; });
  size_t pick = jobs.size();
  bool asked = !selection.job.empty() || !selection.pids.empty();
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (asked ? matches(jobs[j].summary, jobs[j].members, ranks, selection, here) : jobs[j].summary.running > 0) {
      pick = j;
      break;
    }
  }
  if (pick == jobs.size() && !asked) pick = 0;  // none runs: the newest
  if (pick == jobs.size()) {
    std::vector<std::string> listed;
    for (const auto& j : jobs) listed.push_back(j.summary.key);
    error = fmt::format("no job {}{}{} among the ledgers read (they hold: {}; pass one of these to --job)",
                        selection.job.empty() ? "" : selection.job, !selection.job.empty() && !selection.pids.empty() ? " with " : "",
                        selection.pids.empty() ? "" : fmt::format("a process pid {}", fmt::join(selection.pids, "/")),
                        fmt::join(listed, ", "));
    ranks.clear();
    return false;
  }
  chosen = jobs[pick].summary;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (j != pick) others.push_back(jobs[j].summary);
  }
  if (jobs.size() > 1) {
    std::vector<RankView> kept;
    for (size_t i : jobs[pick].members) kept.push_back(std::move(ranks[i]));
    ranks = std::move(kept);
  }
  return true;
}

}  // namespace hangshim::report
