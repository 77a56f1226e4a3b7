#include "report/diagnose.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/analysis/classify.h"
#include "report/analysis/overdue_calls.h"
#include "report/wording/phrases.h"
#include "report/analysis/rank_ranges.h"
#include "report/analysis/situation_groups.h"
#include "report/analysis/stack_groups.h"
#include "report/analysis/timelines.h"

namespace hangshim::report {

namespace {

bool comm_selected(const CommSummary& c, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  std::string key = fmt::format("{:016x}", c.key);
  for (const auto& want : only) {
    if (want == c.name || (want.size() >= 4 && key.compare(0, want.size(), want) == 0)) return true;
  }
  return false;
}

bool intersects(const std::vector<int>& a, const std::set<int>& b) {
  return std::any_of(a.begin(), a.end(), [&](int r) { return b.count(r) != 0; });
}

// A snapshot of a running job finds ranks in a collective that others have not reached yet,
// which is a hang only once it lasts: with every rank alive and every pending call younger than
// its limit (the limit the shim's watchdog itself applies: learned from the call-site's waits,
// the new-site allowance during its warm-up, or the job's fixed limit), the collectives are in
// flight, whatever shape the snapshot has. Only findings about ranks not there yet qualify (a
// rank outside NCCL or elsewhere, including one side of uneven steps: a rank saving a checkpoint
// looks exactly like one that ran out of batches until its wait outlasts the limit); different
// arguments or lines at the same collective, errors, exits and deaths are wrong however young.
bool in_flight(const Inputs& inputs, const DiagnoseOptions& options, const Diagnosis& d, uint64_t& longest,
               uint64_t& limit) {
  const Finding& f = d.findings[static_cast<size_t>(d.primary)];
  Kind kind = f.kind;
  bool not_there_yet = kind == Kind::Transport || kind == Kind::MissingRank || kind == Kind::StuckOutsideNccl ||
                       kind == Kind::SubgroupHang || (kind == Kind::IterationMismatch && f.attribute == "steps");
  if (!not_there_yet) return false;
  for (const auto& s : d.situations) {
    if (s.liveness != Liveness::Alive || s.state == RankState::Dead || s.state == RankState::Exited ||
        s.state == RankState::Unknown) {
      return false;
    }
  }
  for (const auto& v : inputs.ranks) {
    if (v.header.state == static_cast<uint32_t>(ledger::ProcessState::Stalled)) return false;
  }
  for (PendingCall p : pending_calls(inputs, inputs.now_ns)) {
    if (options.stall_limit_ns != 0) p.limit_ns = std::min(p.limit_ns, options.stall_limit_ns);
    if (p.overdue()) return false;
    if (p.pending_ns >= longest) {
      longest = p.pending_ns;
      limit = p.limit_ns;
    }
  }
  return true;
}

}  // namespace

Diagnosis diagnose(const Inputs& inputs, const DiagnoseOptions& options) {
  Diagnosis d;
  Analysis a(inputs, options, &d.stragglers);
  d.now_ns = inputs.now_ns;
  d.ledgers = inputs.ranks.size();
  d.threads = options.threads;
  d.job = inputs.job;
  d.other_jobs = inputs.other_jobs;
  d.errors = inputs.errors;
  d.warnings = inputs.warnings;
  for (const auto& v : inputs.ranks) {
    if (v.warnings.empty()) continue;
    std::string joined;
    for (const auto& w : v.warnings) joined += (joined.empty() ? "" : "; ") + w;
    d.damaged.push_back({v.source, fmt::format("{}: damaged entries skipped: {}", v.source, joined)});
  }
  d.comms = a.comms;

  std::vector<Finding> findings;
  for (size_t c = 0; c < a.comms.size(); ++c) {
    if (auto f = classify_comm(a, static_cast<int>(c))) findings.push_back(std::move(*f));
  }
  int primary = resolve_findings(a, findings);
  // A rank whose communicator init failed is the verdict: it has no communicator, so whatever
  // else pends (the other ranks waiting in init for it) follows from that.
  if (auto failed = classify_init_failure(a)) {
    int index = static_cast<int>(findings.size());
    for (auto& other : findings) {
      if (other.kind == Kind::InitHang && (failed->comm < 0 || other.comm == failed->comm)) {
        other.blocked_by = index;
        other.root_cause = false;
      }
    }
    findings.push_back(std::move(*failed));
    primary = index;
  }
  for (auto& f : findings) {
    // Nobody completes #k, but some members' ledgers are not here: they may well be the cause.
    if (f.kind == Kind::Transport && !a.comms[static_cast<size_t>(f.comm)].absent.empty()) f.kind = Kind::MissingLedgers;
  }
  for (const auto& c : a.comms) {
    if (!c.absent.empty() && inputs.job.from_dumps()) {
      d.warnings.push_back(fmt::format("communicator {} has {} ranks but no Flight Recorder dump here for its rank(s) {}: "
                                       "collect every rank's dump",
                                       c.name, c.nranks, format_ranks(c.absent)));
    } else if (!c.absent.empty()) {
      d.warnings.push_back(fmt::format("communicator {} has {} ranks but no ledger here for its rank(s) {}: collect every "
                                       "node's ledgers (hangshim export on each node, or scripts/hang-dump-slurm)",
                                       c.name, c.nranks, format_ranks(c.absent)));
    }
  }

  d.findings = std::move(findings);
  d.primary = primary;
  // The classifiers are done with the situations (build_timelines does not read them): moved,
  // not copied, as they are the largest part of the diagnosis per rank.
  d.situations = std::move(a.situations);
  if (d.primary >= 0 && in_flight(inputs, options, d, d.longest_pending_ns, d.longest_pending_limit_ns)) {
    d.in_flight = true;
    d.findings[static_cast<size_t>(d.primary)].root_cause = false;
    d.primary = -1;
  }
  d.problem = d.primary >= 0;
  d.verdict = d.problem ? d.findings[static_cast<size_t>(d.primary)].kind : Kind::Healthy;
  if (inputs.ranks.empty()) d.verdict = Kind::NoData;  // nothing is known: never "healthy"

  // Filters (--comm, --rank) choose what the detail shows; the verdict is always the whole job's.
  std::set<int> comm_keep;
  for (size_t c = 0; c < d.comms.size(); ++c) {
    d.comms[c].shown = comm_selected(d.comms[c], options.only_comms);
    if (d.comms[c].shown) comm_keep.insert(static_cast<int>(c));
  }
  std::set<int> rank_keep;
  for (auto& s : d.situations) {
    bool in_comm = options.only_comms.empty();
    for (int c : comm_keep) {
      const auto& ranks = d.comms[static_cast<size_t>(c)].ranks;
      in_comm = in_comm || std::find(ranks.begin(), ranks.end(), s.rank) != ranks.end();
    }
    bool wanted = options.only_ranks.empty() ||
                  std::find(options.only_ranks.begin(), options.only_ranks.end(), s.rank) != options.only_ranks.end();
    s.shown = in_comm && wanted;
    if (s.shown) rank_keep.insert(s.rank);
  }
  for (auto& f : d.findings) {
    f.shown = (comm_keep.count(f.comm) != 0 || (f.comm < 0 && options.only_comms.empty())) &&
              (options.only_ranks.empty() || intersects(f.culprits, rank_keep) || intersects(f.waiting, rank_keep));
  }
  d.groups = group_situations(d.situations);
  group_stacks(inputs, rank_keep, d);
  if (options.timelines) d.timelines = build_timelines(a, d.comms);
  d.hints = hints_for(d);
  return d;
}

}  // namespace hangshim::report
