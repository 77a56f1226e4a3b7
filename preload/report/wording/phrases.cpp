#include "report/wording/phrases.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/analysis/rank_ranges.h"
#include "report/wording/aborted_words.h"
#include "report/wording/init_failure_words.h"
#include "report/wording/state_words.h"

namespace hangshim::report {

using state_words::comm_name;
using state_words::find;
using state_words::format_age;
using state_words::shim_root;
using state_words::state_with_chain;

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Healthy: return "healthy";
    case Kind::MissingRank: return "missing_rank";
    case Kind::StuckOutsideNccl: return "stuck_outside_nccl";
    case Kind::RankExited: return "rank_exited";
    case Kind::HeartbeatLost: return "heartbeat_lost";
    case Kind::SubgroupHang: return "subgroup_hang";
    case Kind::ExtraCollective: return "extra_collective";
    case Kind::IterationMismatch: return "iteration_mismatch";
    case Kind::OpMismatch: return "op_mismatch";
    case Kind::DtypeMismatch: return "dtype_mismatch";
    case Kind::CountMismatch: return "count_mismatch";
    case Kind::RootMismatch: return "root_mismatch";
    case Kind::ReduceOpMismatch: return "reduce_op_mismatch";
    case Kind::Transport: return "transport";
    case Kind::NcclError: return "nccl_error";
    case Kind::MissingLedgers: return "missing_ledgers";
    case Kind::InitHang: return "init_hang";
    case Kind::InitFailed: return "init_failed";
    case Kind::Aborted: return "aborted";
    case Kind::NoData: return "no_data";
  }
  return "unknown";
}

const char* rank_state_name(RankState state) {
  switch (state) {
    case RankState::InCollective: return "in_collective";
    case RankState::InP2P: return "in_p2p";
    case RankState::InCommInit: return "in_comm_init";
    case RankState::OutsideNccl: return "outside_nccl";
    case RankState::Exited: return "exited";
    case RankState::Dead: return "dead";
    case RankState::Unknown: break;
  }
  return "unknown";
}


std::string short_site(const Site& site) {
  size_t slash = site.file.rfind('/');
  std::string base = slash == std::string::npos ? site.file : site.file.substr(slash + 1);
  return site.line > 0 ? fmt::format("{}:{}", base, site.line) : base;
}

std::string duration_text(uint64_t ns) {
  if (ns < 1'000'000'000ull) return fmt::format("{} ms", ns / 1'000'000ull);
  uint64_t s = ns / 1'000'000'000ull;
  if (s < 120) return fmt::format("{} s", s);
  if (s < 7200) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, (s / 60) % 60);
}

std::string comm_label(const Diagnosis& d, int comm) {
  if (comm < 0 || static_cast<size_t>(comm) >= d.comms.size()) return "?";
  const CommSummary& c = d.comms[static_cast<size_t>(comm)];
  if (c.subgroup && !c.ranks.empty() && c.absent.empty()) return fmt::format("{} ({})", c.name, ranks_phrase(c.ranks));
  return fmt::format("{} ({} ranks)", c.name, c.nranks);
}


std::string verdict_line(const Diagnosis& d) {
  // A job that exited with nothing wrong says so itself ("all ranks finished").
  if (!d.ended() || (d.job.exited && !d.problem)) return state_with_chain(d);
  // Never a current hang: every process of the job is gone. When, and how it ended, first.
  uint64_t ago = d.now_ns > d.job.last_seen_ns && d.job.last_seen_ns != 0 ? d.now_ns - d.job.last_seen_ns : 0;
  return fmt::format("ENDED: {} {} {} ago (no process of it runs); its last state: {}", d.job.name,
                     d.job.exited ? "exited" : "was killed or crashed", format_age(ago), state_with_chain(d));
}

std::vector<std::string> finding_lines(const Diagnosis& d, const Finding& f) {
  if (f.kind == Kind::InitFailed) return init_failed_lines(d, f);
  std::vector<std::string> out;
  out.push_back(fmt::format("{} on comm {}, {}: culprit(s) {}, waiting {}", kind_name(f.kind), comm_label(d, f.comm),
                            f.seq != 0 ? fmt::format("collective #{} ({})", f.seq, f.op.empty() ? "?" : f.op) : f.op,
                            f.culprits.empty() ? "none" : format_ranks(f.culprits),
                            f.waiting.empty() ? "none" : format_ranks(f.waiting)));
  for (const auto& v : f.values) {
    out.push_back(f.attribute == "line" ? fmt::format("  {}: {}", ranks_phrase(v.ranks), v.value)
                                        : fmt::format("  {}: {} {}", ranks_phrase(v.ranks), f.attribute, v.value));
  }
  if (!f.reason.empty()) out.push_back(fmt::format("  reasoning: {}", f.reason));
  if (f.blocked_by >= 0) {
    const Finding& b = d.findings[static_cast<size_t>(f.blocked_by)];
    out.push_back(fmt::format("  caused by: {} #{} on comm {} (its culprits wait there)", b.op, b.seq, comm_name(d, b.comm)));
  }
  if (f.abort) {
    for (auto& line : aborted_lines(d, f)) out.push_back(std::move(line));
  }
  return out;
}

std::string situation_text(const Diagnosis& d, const RankSituation& s) {
  auto full_call = [&](const Call& c) {
    std::string args;
    if (!c.dtype.empty()) args += fmt::format("{} x {}", c.dtype, c.count);
    if (c.root >= 0) args += fmt::format("{}{} {}", args.empty() ? "" : ", ", c.op == "send" || c.op == "recv" ? "peer" : "root", c.root);
    if (!c.red_op.empty()) args += fmt::format("{}{}", args.empty() ? "" : ", ", c.red_op);
    std::string where = c.site ? fmt::format("{}:{} in {}", c.site->file, c.site->line, c.site->function) : "an unknown line";
    std::string iteration = c.iteration != 0 ? fmt::format(", iteration {}", c.iteration) : "";
    return fmt::format("{} #{} on {}{} at {}{}", c.op, c.seq, comm_name(d, c.comm), args.empty() ? "" : " (" + args + ")",
                       where, iteration);
  };
  std::string out;
  switch (s.state) {
    case RankState::InCollective:
    case RankState::InP2P:
    case RankState::InCommInit:
      out = fmt::format("in {}", s.current ? full_call(*s.current) : "?");
      if (s.waiting_ns > 0) out += fmt::format(", for {}", duration_text(s.waiting_ns));
      break;
    case RankState::OutsideNccl: out = "outside NCCL"; break;
    case RankState::Exited: out = "exited"; break;
    case RankState::Dead:
      out = fmt::format("dead ({})", s.why_dead);
      if (s.current) out += fmt::format(", inside {}", full_call(*s.current));
      break;
    case RankState::Unknown: out = "unknown"; break;
  }
  if (s.state != RankState::InCollective && s.last) out += fmt::format("; last completed {}", full_call(*s.last));
  bool same_line = s.now_at && s.current && s.current->site && s.current->site->file == s.now_at->file &&
                   s.current->site->line == s.now_at->line;
  if (s.now_at && !same_line) out += fmt::format("; now at {}:{} in {}", s.now_at->file, s.now_at->line, s.now_at->function);
  if (s.state != RankState::Dead && !s.why_dead.empty()) out += fmt::format("; {}", s.why_dead);
  return out;
}

namespace {

// What to do about a verdict of this kind (an aborted job's: about the hang behind the abort).
std::vector<std::string> hints_for_kind(const Diagnosis& d, Kind kind) {
  std::vector<std::string> out;
  switch (kind) {
    case Kind::IterationMismatch:
      out.push_back("ranks run different numbers of loop iterations: give every rank the same number of batches — "
                    "DistributedSampler(dataset, drop_last=True) (or pad the last batch), call sampler.set_epoch(epoch) "
                    "every epoch, no shuffle=True in a DataLoader that has a sampler, and never skip a batch on one rank "
                    "(a collate_fn returning None, a filter that drops samples)");
      break;
    case Kind::ExtraCollective:
    case Kind::MissingRank:
    case Kind::SubgroupHang:
      out.push_back("every rank of a communicator must issue the same collectives in the same order: look for a "
                    "collective (or barrier) inside an `if rank == ...` or a data-dependent branch at the lines above");
      break;
    case Kind::OpMismatch:
    case Kind::DtypeMismatch:
    case Kind::CountMismatch:
    case Kind::RootMismatch:
    case Kind::ReduceOpMismatch:
      out.push_back("NCCL needs the same operation, data type, element count, root and reduction on every rank: look "
                    "at what differs on the culprit rank (unused parameters, autocast on one rank, a stale config)");
      break;
    case Kind::StuckOutsideNccl: {
      const Finding& f = d.findings[static_cast<size_t>(d.primary)];
      bool seen = std::all_of(f.culprits.begin(), f.culprits.end(), [&](int r) {
        const RankSituation* s = find(d, r);
        return s != nullptr && s->now_at;
      });
      out.push_back(seen ? "the culprit is alive but not in NCCL: its stack (under \"live stacks\") shows where it waits — "
                           "data loading, I/O, a lock, a slow step; `pyframes PID` reads it again"
                         : "the culprit is alive but not in NCCL: run `hangshim export` (or `pyframes PID`) on its node to "
                           "see where it waits — data loading, I/O, a lock, a slow step");
      break;
    }
    case Kind::RankExited:
      out.push_back("a rank exited while the others still needed it: read its log for the traceback or exit status "
                    "(out of memory, an exception, a sys.exit on one rank)");
      break;
    case Kind::HeartbeatLost:
      out.push_back("a rank died without exiting (SIGKILL, the OOM killer, a segfault) or froze: check `dmesg` and the "
                    "node's logs for that pid");
      break;
    case Kind::Transport:
      out.push_back("the program agrees with itself; the data does not arrive: run with NCCL_DEBUG=INFO and check the "
                    "interface NCCL picked (NCCL_SOCKET_IFNAME=..., try NCCL_SOCKET_IFNAME=lo on one node), then test GPU "
                    "pairs (CUDA_VISIBLE_DEVICES=0,1 ..., then 2,3) to find a bad GPU or link");
      break;
    case Kind::NcclError:
      out.push_back("NCCL reported an error: run with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=ALL) to see why");
      break;
    case Kind::InitHang:
      out.push_back("a communicator is set up only when every member calls ncclCommInitRank (init_process_group, "
                    "new_group, ncclCommSplit): look at why the missing ranks never got there (their logs; a rank that "
                    "crashed at start-up, a new_group called on some ranks only); if every rank joined, check the "
                    "network with NCCL_DEBUG=INFO and NCCL_SOCKET_IFNAME");
      break;
    case Kind::MissingLedgers:
      if (d.job.from_dumps()) {
        out.push_back("collect every rank's Flight Recorder dump into one directory (PyTorch writes one file per rank, "
                      "<TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank>, on a timeout with TORCH_NCCL_DUMP_ON_TIMEOUT=1), then "
                      "`hangshim report DIR`");
      } else {
        out.push_back("collect the ledgers of every node: `hangshim export` on each (scripts/hang-dump-slurm or "
                      "scripts/hang-dump-pdsh), then `hangshim report DIR`");
      }
      break;
    case Kind::InitFailed: out = init_failed_hints(d.findings[static_cast<size_t>(d.primary)]); break;
    case Kind::Aborted: {
      const Finding& f = d.findings[static_cast<size_t>(d.primary)];
      if (!f.abort) break;
      out.push_back(aborted_hint(f));
      if (f.abort->hang != Kind::Aborted) {
        for (auto& hint : hints_for_kind(d, f.abort->hang)) out.push_back(std::move(hint));
      }
      break;
    }
    case Kind::Healthy:
      if (d.in_flight) {
        out.push_back("the job is running: run hangshim report again later, or hangshim watch, which ends with the "
                      "report when a call is pending past its limit");
      } else if (d.ledgers > 0) {
        out.push_back("no collective is pending: if the job is stuck, the stacks show where");
      }
      if (!d.stragglers.empty()) {
        const RankSituation* slow = state_words::find(d, d.stragglers.front().rank);
        out.push_back(fmt::format("rank {} makes the others wait at every collective: the stragglers section says where "
                                  "it spends the time{}", d.stragglers.front().rank,
                                  slow != nullptr && slow->pid > 0 ? fmt::format(" (its stack: pyframes {})", slow->pid) : ""));
      }
      break;
    case Kind::NoData:
      if (!d.shim_processes.empty()) {
        out.push_back(fmt::format("the shim is loaded but saw no NCCL call: read the stacks with `pyframes --children {}` "
                                  "(the job's processes and their children) or `pyframes PID`",
                                  shim_root(d.shim_processes)));
      }
      break;
  }
  return out;
}

}  // namespace

std::vector<std::string> hints_for(const Diagnosis& d) { return hints_for_kind(d, d.verdict); }

}  // namespace hangshim::report
