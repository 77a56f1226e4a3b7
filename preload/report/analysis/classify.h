// The classifiers. Each communicator is examined at its first collective that not every member
// completed (#k); one concept per file decides whether that collective is the problem, and how:
//   classify_init        members wait in communicator init for ranks that never joined
//   classify_missing     some members never issued #k
//   classify_divergence  members issued #k from different lines (barrier skipped, one more
//                        loop iteration, an extra collective, a swapped order); also when
//                        others have not issued #k, if the evidence decides it
//   classify_mismatch    same line, different op / dtype / count / root / reduce op / iteration
//   classify_dead        a member died or exited while inside #k
//   classify_error       #k returned an NCCL error on some members
//   classify_stall       everything agrees and nobody completes it: transport or GPU
// then, on the verdict only (resolve_findings):
//   classify_abort       members waiting in the verdict's collective aborted its communicator
//                        (a watchdog's timeout): the job was aborted, after that hang
// and, across the whole job rather than per collective:
//   classify_init_failure  communicator init returned an error on some ranks (no GPU, old
//                          driver, no network): nothing else NCCL did matters then
// resolve_findings (verdict.cpp) then links findings across communicators and picks the cause.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/analysis/analysis.h"

namespace hangshim::report {

// The members of one communicator at collective #seq.
struct AtSeq {
  int comm = -1;
  uint64_t seq = 0;
  std::vector<size_t> issued;                        // views that issued #seq
  std::vector<const ledger::CallRecord*> records;    // their record of it (nullptr: out of the ring)
  std::vector<size_t> missing;                       // views that did not issue it
};

std::optional<Finding> classify_comm(const Analysis& a, int comm);

std::optional<Finding> classify_init(const Analysis& a, int comm);
std::optional<Finding> classify_missing(const Analysis& a, const AtSeq& at);
std::optional<Finding> classify_dead(const Analysis& a, const AtSeq& at);
std::optional<Finding> classify_error(const Analysis& a, const AtSeq& at);
std::optional<Finding> classify_divergence(const Analysis& a, const AtSeq& at);
// The same, only where the evidence decides the shape (no fallback to the smaller side, no
// "cannot tell"): for a collective some members have not issued yet.
std::optional<Finding> classify_divergence_by_evidence(const Analysis& a, const AtSeq& at);
std::optional<Finding> classify_mismatch(const Analysis& a, const AtSeq& at);
std::optional<Finding> classify_stall(const Analysis& a, const AtSeq& at);
std::optional<Finding> classify_init_failure(const Analysis& a);
// Rewrites the verdict `f` into Kind::Aborted (keeping what it found as Abort::hang) when members
// that had issued its collective aborted the communicator while it was pending; false leaves it.
bool decide_aborted(const Analysis& a, Finding& f);

// A never-issued finding whose missing ranks ran the waiting ranks' call-site one time fewer
// and are outside NCCL, out of the loop: uneven steps (classify_uneven.cpp). Rewrites `f` into
// an iteration mismatch naming the smaller side and returns true; false leaves it as it was.
bool decide_uneven_steps(const Analysis& a, Finding& f);

// Links findings across communicators (a rank missing here because it waits there), decides
// the kinds that depend on where culprits are, and returns the index of the root cause.
int resolve_findings(const Analysis& a, std::vector<Finding>& findings);

// --- shared helpers ------------------------------------------------------------------------
std::vector<int> ranks_of(const Analysis& a, const std::vector<size_t>& views);
// The op most of `at`'s records name ("all_reduce", "barrier"), "" when none is known.
std::string majority_op(const AtSeq& at);
// A finding of `kind` at `at`'s collective: its communicator, sequence number and majority op.
Finding finding_at(Kind kind, const AtSeq& at);
// Given values and who holds them, the ranks that deviate from the reference: the largest group,
// or on a tie the group holding the lowest rank. Sets `reason`.
std::vector<int> deviating_ranks(const std::vector<ValueGroup>& values, std::string* reason);
// The ranks of `values` that are not among `culprits` (sorted): the ones left waiting on them.
std::vector<int> ranks_besides(const std::vector<ValueGroup>& values, const std::vector<int>& culprits);

}  // namespace hangshim::report
