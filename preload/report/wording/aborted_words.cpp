#include "report/wording/aborted_words.h"

#include <fmt/format.h>

#include "report/analysis/rank_ranges.h"
#include "report/wording/phrases.h"
#include "report/wording/state_words.h"

namespace hangshim::report {

namespace {

const char* verb(const std::vector<int>& ranks, const char* one, const char* many) {
  return ranks.size() == 1 ? one : many;
}

// "rank 3: count 12; ranks 0-2: count 16"
std::string values_phrase(const Finding& f) {
  std::string out;
  for (const auto& v : f.values) {
    if (!out.empty()) out += "; ";
    out += f.attribute == "line" || f.attribute.empty() ? fmt::format("{}: {}", ranks_phrase(v.ranks), v.value)
                                                        : fmt::format("{}: {} {}", ranks_phrase(v.ranks), f.attribute, v.value);
  }
  return out;
}

// The hang the abort ended, as the ledgers show it at the aborted collective.
std::string hang_clause(const Diagnosis& d, const Finding& f) {
  const Abort& x = *f.abort;
  if (!x.not_reached.empty()) {
    return fmt::format("{} never issued it: {}", ranks_phrase(x.not_reached), state_words::ranks_status(d, f, x.not_reached));
  }
  const std::vector<int>& absent = d.comms[static_cast<size_t>(x.comm)].absent;
  switch (x.hang) {
    case Kind::Transport:
    case Kind::MissingLedgers:
      if (!absent.empty()) {
        return fmt::format("{} had issued it and none completed it; the communicator's rank(s) {} have no ledger here: "
                           "collect them, the cause is probably there",
                           ranks_phrase(x.issued), format_ranks(absent));
      }
      if (!f.culprits.empty()) {
        return fmt::format("{} never completed it, which the other ranks completed: {} GPU or link is stuck",
                           ranks_phrase(f.culprits), verb(f.culprits, "its", "their"));
      }
      return "every rank had issued it and none completed it: stuck on the GPU or the network, not in the order of "
             "your collectives";
    case Kind::NcclError:
      return fmt::format("every rank had issued it; it failed on {} ({})", ranks_phrase(f.culprits), values_phrase(f));
    case Kind::RankExited:
    case Kind::HeartbeatLost:
      return fmt::format("{} ended inside it: {}", ranks_phrase(f.culprits), state_words::ranks_status(d, f, f.culprits));
    case Kind::OpMismatch:
    case Kind::DtypeMismatch:
    case Kind::CountMismatch:
    case Kind::RootMismatch:
    case Kind::ReduceOpMismatch:
      return fmt::format("every rank had issued it, not with the same {}: {}", f.attribute, values_phrase(f));
    default:
      break;
  }
  std::string values = values_phrase(f);
  return fmt::format("the hang it ended: {}{}{}", kind_name(x.hang), f.culprits.empty() ? "" : ", culprit(s) " + format_ranks(f.culprits),
                     values.empty() ? "" : " (" + values + ")");
}

std::string async_errors_phrase(const Abort& x) {
  std::string out;
  for (const auto& e : x.async_errors) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} on {}", e.value, ranks_phrase(e.ranks));
  }
  return out;
}

// "1.5 s" (a watchdog's timeout is often a few seconds: the tenth tells 1.5 from 1), else as
// durations are written elsewhere.
std::string pending_text(uint64_t ns) {
  if (ns >= 1'000'000'000ull && ns < 10'000'000'000ull) return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
  return duration_text(ns);
}

// "all_reduce #5 at train.py:88 (iteration 5)"
std::string collective_phrase(const Abort& x) {
  std::string op = x.op.empty() ? std::string("collective") : x.op;
  if (!x.call) return fmt::format("{} #{}", op, x.seq);
  return fmt::format("{} #{} at {}", op, x.seq, state_words::line_and_iteration(*x.call));
}

}  // namespace

std::string aborted_verdict(const Diagnosis& d, const Finding& f) {
  const Abort& x = *f.abort;
  const std::string comm = comm_label(d, x.comm);
  const std::string who = ranks_phrase(x.ranks);
  std::string aborted = x.inside.size() == x.ranks.size()
                            ? fmt::format("{} {} inside ncclCommAbort of comm {}", who, verb(x.ranks, "is still", "are still"), comm)
                            : fmt::format("{} aborted comm {} with ncclCommAbort (as a watchdog does on a timeout)",
                                          who, comm);
  std::string pending = x.pending_ns != 0 ? fmt::format(" had been pending for {}", pending_text(x.pending_ns)) : " was pending";
  std::string out = fmt::format("ABORTED: {} after {}{}; {}", aborted, collective_phrase(x), pending, hang_clause(d, f));
  if (!x.async_errors.empty()) out += fmt::format("; NCCL reported an asynchronous error: {}", async_errors_phrase(x));
  return out;
}

std::vector<std::string> aborted_lines(const Diagnosis& d, const Finding& f) {
  const Abort& x = *f.abort;
  std::vector<std::string> out;
  out.push_back(fmt::format("  aborted: comm {} by {}{} after {} #{} had been pending {}; the hang it ended: {}", comm_label(d, x.comm),
                            ranks_phrase(x.ranks),
                            x.inside.empty() ? "" : fmt::format(" ({} still inside ncclCommAbort)", ranks_phrase(x.inside)),
                            x.op.empty() ? "collective" : x.op, x.seq,
                            x.pending_ns != 0 ? pending_text(x.pending_ns) : std::string("(for how long: unknown)"),
                            kind_name(x.hang)));
  out.push_back(fmt::format("  had issued #{}: {}; had not: {}", x.seq, x.issued.empty() ? "none" : format_ranks(x.issued),
                            x.not_reached.empty() ? "none" : format_ranks(x.not_reached)));
  if (!x.async_errors.empty()) out.push_back(fmt::format("  NCCL's asynchronous errors: {}", async_errors_phrase(x)));
  return out;
}

std::string aborted_hint(const Finding& f) {
  const Abort& x = *f.abort;
  return fmt::format("the communicator was aborted while {} #{} was pending, as a watchdog does when a collective "
                     "outlives its timeout (PyTorch: the init_process_group timeout, TORCH_NCCL_ASYNC_ERROR_HANDLING); a "
                     "longer timeout only delays it: the hang it ended is the cause ({})",
                     x.op.empty() ? "collective" : x.op, x.seq, kind_name(x.hang));
}

std::vector<std::string> captured_lines(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const auto& c : d.comms) {
    if (!c.shown) continue;
    for (const auto& call : c.captured) {
      out.push_back(fmt::format(
          "{}'s {} on {} at {} was captured into a CUDA graph ({} record{}): each replay of the graph runs it on the GPU "
          "without calling NCCL, so no ledger sees the replays and the report cannot judge them (a replay that hangs "
          "shows only in the stacks); no captured call counts as pending",
          ranks_phrase(call.ranks), call.op, c.name, call.site ? short_site(*call.site) : std::string("an unknown line"),
          call.records, call.records == 1 ? "" : "s"));
    }
  }
  return out;
}

}  // namespace hangshim::report
