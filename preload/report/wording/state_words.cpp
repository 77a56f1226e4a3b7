// The verdict's state sentence and its parts (see state_words.h).
#include "report/wording/state_words.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "report/analysis/rank_ranges.h"
#include "report/wording/aborted_words.h"
#include "report/wording/init_failure_words.h"
#include "report/wording/phrases.h"
#include "report/wording/straggler_words.h"

namespace hangshim::report::state_words {

// Situations are sorted by rank.
const RankSituation* find(const Diagnosis& d, int rank) {
  auto it = std::lower_bound(d.situations.begin(), d.situations.end(), rank,
                             [](const RankSituation& s, int r) { return s.rank < r; });
  return it != d.situations.end() && it->rank == rank ? &*it : nullptr;
}

std::string comm_name(const Diagnosis& d, int comm) {
  return comm >= 0 && static_cast<size_t>(comm) < d.comms.size() ? d.comms[static_cast<size_t>(comm)].name : "?";
}

std::string verb(const std::vector<int>& ranks, const char* one, const char* many) { return ranks.size() == 1 ? one : many; }

// "train.py:88", or through helpers of the job's own "train (job.py:78) -> Comm.all_reduce (job.py:54)":
// the loop line first; a deep stack of the job's own layers shows the loop line and the two
// frames nearest NCCL (the JSON chain has them all).
std::string site_phrase(const Call& c) {
  if (!c.site) return "an unknown line";
  if (c.chain.size() < 2) return short_site(*c.site);
  constexpr size_t kShown = 4;
  std::string out;
  for (size_t i = 0; i < c.chain.size(); ++i) {
    if (c.chain.size() > kShown && i > 0 && i + 2 < c.chain.size()) {
      if (i == 1) out += " -> ...";
      continue;
    }
    if (!out.empty()) out += " -> ";
    out += fmt::format("{} ({})", c.chain[i].function, short_site(c.chain[i]));
  }
  return out;
}

// "train.py:88 (iteration 3)"
std::string line_and_iteration(const Call& c) {
  if (!c.site) return "an unknown line";
  if (c.iteration == 0) return site_phrase(c);
  return fmt::format("{} (iteration {})", site_phrase(c), c.iteration);
}

// "all_reduce #3 on world at train.py:88 (iteration 3)"
std::string call_phrase(const Diagnosis& d, const Call& c, bool with_comm) {
  std::string out = c.seq != 0 ? fmt::format("{} #{}", c.op, c.seq) : c.op;
  if (with_comm && c.comm >= 0) out += fmt::format(" on {}", comm_name(d, c.comm));
  return out + " at " + line_and_iteration(c);
}

// Where a set of ranks wait: "wait in it at train.py:88 (iteration 3)" when they agree, else each
// group's line.
std::string where_they_wait(const Diagnosis& d, const std::vector<int>& ranks) {
  if (ranks.empty()) return "no rank waits in it";
  std::map<std::string, std::vector<int>> by_line;
  for (int r : ranks) {
    const RankSituation* s = find(d, r);
    by_line[s != nullptr && s->current ? line_and_iteration(*s->current) : std::string("an unknown line")].push_back(r);
  }
  std::string who = ranks_phrase(ranks);
  if (by_line.size() == 1) return fmt::format("{} {} in it at {}", who, verb(ranks, "waits", "wait"), by_line.begin()->first);
  std::string out = fmt::format("{} {} in it", who, verb(ranks, "waits", "wait"));
  for (const auto& [line, members] : by_line) out += fmt::format(", {} at {}", ranks_phrase(members), line);
  return out;
}

// What each group of ranks is doing instead: "rank 3 is at loader.py:54 (outside NCCL)",
// "rank 3 exited after all_reduce #2 at train.py:88 (iteration 2)".
std::string ranks_status(const Diagnosis& d, const Finding& f, const std::vector<int>& ranks) {
  std::map<std::string, std::vector<int>> by_text;  // text after the rank list, with its verb
  for (int r : ranks) {
    const RankSituation* s = find(d, r);
    std::string text;
    if (s == nullptr) {
      text = "|not shown";
    } else if (s->state == RankState::Exited) {
      text = s->last ? fmt::format("exited after {}", call_phrase(d, *s->last, s->last->comm != f.comm)) : "exited";
    } else if (s->state == RankState::Dead) {
      text = fmt::format("|dead: {}", s->why_dead);
    } else if (s->state == RankState::OutsideNccl) {
      if (s->now_at) {
        text = fmt::format("|at {} (outside NCCL)", short_site(*s->now_at));
      } else if (s->last) {
        text = fmt::format("|outside NCCL since {}", call_phrase(d, *s->last, s->last->comm != f.comm));
      } else {
        text = "|outside NCCL";
      }
    } else if (s->state == RankState::InCommInit && s->current) {
      text = fmt::format("|joining a communicator ({})", call_phrase(d, *s->current, false));
    } else if (s->current) {
      text = fmt::format("|in {}", call_phrase(d, *s->current, s->current->comm != f.comm));
    } else {
      text = "|in an unknown place";
    }
    by_text[text].push_back(r);
  }
  std::string out;
  for (const auto& [text, members] : by_text) {
    if (!out.empty()) out += "; ";
    bool with_be = !text.empty() && text[0] == '|';  // "is"/"are" goes before it
    out += with_be ? fmt::format("{} {} {}", ranks_phrase(members), verb(members, "is", "are"), text.substr(1))
                   : fmt::format("{} {}", ranks_phrase(members), text);
  }
  return out;
}

std::string culprit_status(const Diagnosis& d, const Finding& f) { return ranks_status(d, f, f.culprits); }

// The call most of these ranks are in (for the mismatch and divergence lines).
std::optional<Call> common_call(const Diagnosis& d, const std::vector<int>& ranks) {
  for (int r : ranks) {
    const RankSituation* s = find(d, r);
    if (s != nullptr && s->current) return s->current;
  }
  return std::nullopt;
}

std::string value_of(const Finding& f, const std::vector<int>& ranks) {
  std::vector<std::string> values;
  for (const auto& g : f.values) {
    if (std::any_of(g.ranks.begin(), g.ranks.end(),
                    [&](int r) { return std::find(ranks.begin(), ranks.end(), r) != ranks.end(); })) {
      values.push_back(g.value.empty() ? "none" : g.value);
    }
  }
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : " or ") + v;
  return out;
}

// The first shim process whose parent has no shim: the job's launcher (pyframes --children root).
int64_t shim_root(const std::vector<ShimProcess>& processes) {
  for (const auto& p : processes) {
    bool parent_has_shim = std::any_of(processes.begin(), processes.end(), [&](const ShimProcess& q) { return q.pid == p.ppid; });
    if (!parent_has_shim) return p.pid;
  }
  return processes.empty() ? 0 : processes.front().pid;
}

// "pid 10 `torchrun ...`, pid 11 (rank 0), pid 12 (rank 1), pid 13 (worker of rank 1 pid 12)"
// (the first command only: the rest repeat it).
std::string shim_process_list(const std::vector<ShimProcess>& processes) {
  std::string out;
  for (size_t i = 0; i < processes.size() && i < 8; ++i) {
    if (i > 0) out += ", ";
    out += shim_process_name(processes[i]);
    if (i == 0 && !processes[i].command.empty()) out += fmt::format(" `{}`", processes[i].command);
  }
  if (processes.size() > 8) out += fmt::format(", and {} more", processes.size() - 8);
  return out;
}

// Uneven steps with one side out of the loop (classify_uneven.cpp): the side whose step count
// differs, or that nobody can tell which.
std::string uneven_steps_line(const Diagnosis& d, const Finding& f) {
  const std::string comm = comm_label(d, f.comm);
  uint64_t ran = f.others_ran;
  std::string times = ran == 1 ? "once" : fmt::format("{} times", ran);
  if (f.ambiguous && f.values.size() == 2) {
    const auto& in_call = f.values[0].ranks;
    const auto& out = f.values[1].ranks;
    auto call = common_call(d, in_call);
    return fmt::format("HANG: cannot tell which side is wrong: {} {} in {} #{} on comm {} at {} while {} ran it {} and left "
                       "the loop ({}): as many ranks on each side, so either {} ran one iteration more or {} one fewer",
                       ranks_phrase(in_call), verb(in_call, "waits", "wait"), f.op, f.seq, comm,
                       call ? line_and_iteration(*call) : "?", ranks_phrase(out), times, ranks_status(d, f, out),
                       ranks_phrase(in_call), ranks_phrase(out));
  }
  const std::string culprits = ranks_phrase(f.culprits);
  const std::string others = ranks_phrase(f.waiting);
  if (!f.fewer) {
    auto call = common_call(d, f.culprits);
    return fmt::format("HANG: {} ran one more iteration of {} than {}: {} {} in {} #{} on comm {} there (iteration {}); {} "
                       "ran it {}, completed {} #{} and left the loop: {}",
                       culprits, call ? site_phrase(*call) : "its line", others, verb(f.culprits, "it waits", "they wait"),
                       f.culprits.size() == 1 ? "alone" : "by themselves", f.op, f.seq, comm, ran + 1, others, times, f.op,
                       f.seq - 1, ranks_status(d, f, f.waiting));
  }
  auto call = common_call(d, f.waiting);
  return fmt::format("HANG: {} ran one iteration fewer of {} than the other ranks: {} ran it {}, completed {} #{} and left "
                     "the loop ({}); {} {} in {} #{} on comm {} at {}",
                     culprits, call ? site_phrase(*call) : "its line", verb(f.culprits, "it", "they"), times, f.op,
                     f.seq - 1, culprit_status(d, f), others, verb(f.waiting, "waits", "wait"), f.op, f.seq, comm,
                     call ? line_and_iteration(*call) : "?");
}

// The chain of waits behind the verdict's culprits: "rank 1 waits for it in all_reduce #3 on
// world/split1 at ...; ranks 0,2 wait for ranks 1,3 in all_reduce #3 on world at ...".
std::string chain_phrase(const Diagnosis& d, const Finding& f) {
  std::string out;
  for (const auto& link : f.chain) {
    if (link.waiting.empty()) continue;
    std::string whom = link.for_ranks == f.culprits ? std::string(verb(f.culprits, "it", "them")) : ranks_phrase(link.for_ranks);
    std::optional<Call> where;
    for (int r : link.waiting) {
      const RankSituation* s = find(d, r);
      if (s != nullptr && s->current && s->current->comm == link.comm) {
        where = s->current;
        break;
      }
    }
    out += fmt::format("; {} {} for {} in {} #{} on {} at {}", ranks_phrase(link.waiting), verb(link.waiting, "waits", "wait"),
                       whom, link.op, link.seq, comm_name(d, link.comm), where ? line_and_iteration(*where) : "?");
  }
  return out;
}

std::string healthy_line(const Diagnosis& d) {
  if (d.ledgers == 0 && !d.shim_processes.empty()) {
    size_t n = d.shim_processes.size();
    return fmt::format("NO NCCL CALLS: the shim is loaded in {} process{} here ({}) and none has called NCCL: the job runs "
                       "on gloo or the CPU, or reaches NCCL some other way; its Python stacks are the diagnosis",
                       n, n == 1 ? "" : "es", shim_process_list(d.shim_processes));
  }
  if (d.ledgers == 0) return "NO DATA: no ledger could be read (see the errors below)";
  std::string counts;
  for (const auto& c : d.comms) {
    if (!counts.empty()) counts += ", ";
    counts += fmt::format("{}: {}", c.name, c.issued_max);
  }
  if (counts.empty()) counts = "no communicator";
  size_t exited = 0, dead = 0;
  for (const auto& s : d.situations) {
    exited += s.state == RankState::Exited ? 1 : 0;
    dead += s.state == RankState::Dead ? 1 : 0;
  }
  std::string slow = d.stragglers.empty() ? "" : "; " + straggler_clause(d, d.stragglers.front());
  if (!d.situations.empty() && exited == d.situations.size()) {
    return fmt::format("OK: all {} ranks finished; every collective issued was completed ({}){}", d.situations.size(), counts,
                       slow);
  }
  if (!d.situations.empty() && exited + dead == d.situations.size()) {
    return fmt::format("NO HANG: no rank runs any more ({} exited, {} died); every collective issued was completed ({}){}",
                       exited, dead, counts, slow);
  }
  if (d.in_flight) {
    std::string running = fmt::format("{} {} running, collectives in flight: none pending past its limit (the longest {} of {})",
                                      d.situations.size(), d.situations.size() == 1 ? "rank" : "ranks",
                                      duration_text(d.longest_pending_ns), duration_text(d.longest_pending_limit_ns));
    return d.stragglers.empty() ? "NO HANG: " + running
                                : fmt::format("NO HANG; {} ({})", straggler_clause(d, d.stragglers.front()), running);
  }
  if (!d.stragglers.empty()) {
    return fmt::format("NO HANG; {} ({} {}, every collective issued was completed: {})",
                       straggler_clause(d, d.stragglers.front()), d.situations.size(),
                       d.situations.size() == 1 ? "rank" : "ranks", counts);
  }
  return fmt::format("NO HANG IN NCCL: {} {}, every collective issued was completed ({}); if the job is stuck, it is "
                     "stuck outside NCCL: see where each rank is below",
                     d.situations.size(), d.situations.size() == 1 ? "rank" : "ranks", counts);
}

// "4 s", "3 min 5 s", "2 h 10 min".
std::string format_age(uint64_t ns) {
  uint64_t s = ns / 1000000000ull;
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, s / 60 % 60);
}

// What the ledgers say the job's state is (verdict_line says whether it is current).
std::string state_line(const Diagnosis& d) {
  if (d.primary < 0) return healthy_line(d);
  const Finding& f = d.findings[static_cast<size_t>(d.primary)];
  const std::string comm = comm_label(d, f.comm);
  const std::string culprits = ranks_phrase(f.culprits);
  const std::string waiting = ranks_phrase(f.waiting);
  switch (f.kind) {
    case Kind::MissingRank:
    case Kind::StuckOutsideNccl:
    case Kind::RankExited:
    case Kind::HeartbeatLost:
    case Kind::SubgroupHang:
      if (f.never_issued) {
        return fmt::format("HANG: {} never issued {} #{} on comm {}; {}; {}", culprits, f.op, f.seq, comm,
                           where_they_wait(d, f.waiting), culprit_status(d, f));
      }
      if (f.kind == Kind::MissingRank) {  // a barrier some ranks skipped
        return fmt::format("HANG: {} never entered {} #{} on comm {}; {}; {}", culprits, f.op, f.seq, comm,
                           where_they_wait(d, f.waiting), culprit_status(d, f));
      }
      return fmt::format("HANG: {} ended inside {} #{} on comm {}: {}; {}", culprits, f.op, f.seq, comm,
                         culprit_status(d, f), where_they_wait(d, f.waiting));
    case Kind::IterationMismatch: {
      if (f.attribute == "steps") return uneven_steps_line(d, f);
      if (f.ambiguous) {  // one side a call short of the other's line, and no source to tell why
        std::vector<int> behind;
        for (int r : f.culprits) {
          if (std::find(f.waiting.begin(), f.waiting.end(), r) == f.waiting.end()) behind.push_back(r);
        }
        auto ahead_call = common_call(d, f.waiting);
        auto behind_call = common_call(d, behind);
        return fmt::format("HANG: cannot tell which side is wrong at {} #{} on comm {}: {} {} at {} while {} {} at {}: "
                           "either {} ran one more iteration, or {} issued an extra collective in that loop",
                           f.op, f.seq, comm, waiting, verb(f.waiting, "is", "are"),
                           ahead_call ? line_and_iteration(*ahead_call) : "?", ranks_phrase(behind),
                           verb(behind, "is", "are"), behind_call ? line_and_iteration(*behind_call) : "?", waiting,
                           ranks_phrase(behind));
      }
      auto mine = common_call(d, f.culprits);
      auto theirs = common_call(d, f.waiting);
      if (f.attribute == "line" && mine && mine->site) {
        uint64_t more = mine->iteration > f.others_ran ? mine->iteration - f.others_ran : 1;
        std::string how_many = more == 1 ? "one more iteration" : fmt::format("{} more iterations", more);
        return fmt::format("HANG: {} ran {} of {} than {}: {} {} #{} on comm {} there (iteration {}; the others ran it "
                           "{} times) while {} {} {} #{} at {}",
                           culprits, how_many, site_phrase(*mine), waiting, verb(f.culprits, "it is in", "they are in"),
                           mine->op, f.seq, comm, mine->iteration, f.others_ran, waiting,
                           verb(f.waiting, "waits in", "wait in"), theirs ? theirs->op : "?", f.seq,
                           theirs ? line_and_iteration(*theirs) : "?");
      }
      return fmt::format("HANG: at {} #{} on comm {} {} {} in iteration {} of {} and {} in iteration {}", f.op, f.seq, comm,
                         culprits, verb(f.culprits, "is", "are"), value_of(f, f.culprits),
                         mine && mine->site ? site_phrase(*mine) : "its line", waiting, value_of(f, f.waiting));
    }
    case Kind::ExtraCollective: {
      auto mine = common_call(d, f.culprits);
      auto theirs = common_call(d, f.waiting);
      return fmt::format("HANG: {} issued an extra {} #{} on comm {} at {} that {} never {}; {} {} {} #{} at {}", culprits,
                         mine ? mine->op : f.op, f.seq, comm, mine ? line_and_iteration(*mine) : "?", waiting,
                         verb(f.waiting, "issues", "issue"), verb(f.waiting, "it", "they"), verb(f.waiting, "waits in", "wait in"),
                         theirs ? theirs->op : "?", f.seq, theirs ? line_and_iteration(*theirs) : "?");
    }
    case Kind::OpMismatch:
    case Kind::DtypeMismatch:
    case Kind::CountMismatch:
    case Kind::RootMismatch:
    case Kind::ReduceOpMismatch: {
      auto mine = common_call(d, f.culprits);
      std::string what = f.attribute == "count" ? "elements" : f.attribute;
      std::string mine_v = value_of(f, f.culprits), theirs_v = value_of(f, f.waiting);
      std::string values = f.attribute == "count" ? fmt::format("{} {}, {} with {} {}", mine_v, what, waiting, theirs_v, what)
                                                  : fmt::format("{} {}, {} with {} {}", what, mine_v, waiting, what, theirs_v);
      if (f.kind == Kind::OpMismatch) {
        return fmt::format("HANG: collective #{} on comm {} is {} on {} but {} on {}, at {}", f.seq, comm, mine_v, culprits,
                           theirs_v, waiting, mine ? line_and_iteration(*mine) : "?");
      }
      return fmt::format("HANG: {} {} {} #{} on comm {} with {}, at {}", culprits, verb(f.culprits, "calls", "call"), f.op,
                         f.seq, comm, values, mine ? line_and_iteration(*mine) : "?");
    }
    case Kind::Transport: {
      auto call = common_call(d, f.waiting);
      if (!f.culprits.empty()) {
        return fmt::format("HANG: {} never completed {} #{} on comm {} at {}, which the other ranks completed: their GPU or "
                           "link is stuck",
                           culprits, f.op, f.seq, comm, call ? line_and_iteration(*call) : "?");
      }
      return fmt::format("HANG: every rank of comm {} issued {} #{} at {} and none completed it: a network or GPU problem, "
                         "not your code",
                         comm, f.op, f.seq, call ? line_and_iteration(*call) : "?");
    }
    case Kind::NcclError:
      return fmt::format("ERROR: {} #{} on comm {} failed on {} with {}; {}", f.op, f.seq, comm, culprits,
                         value_of(f, f.culprits), where_they_wait(d, f.waiting));
    case Kind::MissingLedgers: {
      const CommSummary& c = d.comms[static_cast<size_t>(f.comm)];
      auto call = common_call(d, f.waiting);
      return fmt::format("HANG: {} of comm {} {} in {} #{} at {}; its rank(s) {} have no {} here: collect them, the "
                         "cause is probably there",
                         waiting, comm, verb(f.waiting, "waits", "wait"), f.op, f.seq,
                         call ? line_and_iteration(*call) : "?", format_ranks(c.absent), d.job.from_dumps() ? "dump" : "ledger");
    }
    case Kind::InitHang: {
      const CommSummary& c = d.comms[static_cast<size_t>(f.comm)];
      auto call = common_call(d, f.waiting);
      std::string where = call ? line_and_iteration(*call) : "?";
      if (c.absent.empty()) {
        return fmt::format("HANG: every rank of comm {} is inside {} at {} and it does not complete: the ranks cannot "
                           "connect (network), not your code",
                           comm, f.op, where);
      }
      std::string who = f.culprits.empty() ? fmt::format("its rank(s) {}", format_ranks(c.absent)) : culprits;
      return fmt::format("HANG: {} never joined comm {}; {} {} in {} at {} ({} no ledger: never called NCCL, or not "
                         "collected)",
                         who, comm, waiting, verb(f.waiting, "waits", "wait"), f.op, where,
                         c.absent.size() == 1 ? "it has" : "they have");
    }
    case Kind::InitFailed: return init_failed_verdict(d, f);
    case Kind::Aborted: return aborted_verdict(d, f);
    case Kind::Healthy:
    case Kind::NoData: break;
  }
  return healthy_line(d);
}

// The state line, with the chain of waits behind the cause after it.
std::string state_with_chain(const Diagnosis& d) {
  std::string line = state_line(d);
  if (d.primary >= 0) line += chain_phrase(d, d.findings[static_cast<size_t>(d.primary)]);
  return line;
}

}  // namespace hangshim::report::state_words
