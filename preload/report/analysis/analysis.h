// The analysis' working state, shared by the classifiers: the inputs, the communicators as seen
// across ranks (grouped by key), each rank's situation, and lookups into the ledgers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "report/inputs/inputs.h"
#include "report/analysis/model.h"
#include "report/analysis/source_loops.h"

namespace hangshim::report {

struct DiagnoseOptions {
  uint64_t heartbeat_timeout_ns = 10'000'000'000ull;  // older heartbeat: the process died or froze
  LibraryPatterns patterns = LibraryPatterns::from_env(nullptr);
  std::vector<int> only_ranks;        // --rank: show these ranks only (empty: all)
  std::vector<std::string> only_comms;  // --comm: names or key prefixes (empty: all)
  bool timelines = false;             // build Diagnosis::timelines (the HTML report draws them)
  // A stall limit the caller decided (`hangshim watch --stall S` ended on it): a pending call
  // this old is no longer in flight, whatever limit its ledger would learn. 0: the ledgers'.
  uint64_t stall_limit_ns = 0;
  // Threads for the analysis's long passes over ranks and members (0: one per CPU this process
  // may use, at most 8, and only where there are thousands of ranks; the report is the same).
  size_t threads = 0;
};

// "Your line" of a call, as interned ids (cheap to compare across ranks), with the chain of
// your frames that leads to it (user_chain.cpp): two calls through the same wrapper line from
// different loop lines are different call-sites.
struct SiteKey {
  uint32_t file = UINT32_MAX;
  int32_t line = 0;
  uint32_t path = UINT32_MAX;  // the user chain's id (Analysis::chain_paths), UINT32_MAX: that line alone
  bool known() const { return file != UINT32_MAX; }
  bool operator==(const SiteKey& o) const { return file == o.file && line == o.line && path == o.path; }
  bool operator<(const SiteKey& o) const {
    if (file != o.file) return file < o.file;
    return line != o.line ? line < o.line : path < o.path;
  }
};

struct Member {
  size_t view = 0;                          // index into Inputs::ranks
  const ledger::CommInfo* info = nullptr;   // its entry for this communicator
};

struct CommGroup {
  uint32_t key_kind = 0;
  uint64_t key = 0;
  uint64_t created_ns = 0;
  uint64_t max_completed = 0;   // the highest collective any member saw complete
  std::vector<Member> members;  // by global rank
};

class Analysis {
 public:
  // With `stragglers`, finds them too (stragglers.h), before the situations are placed: the
  // stragglers' table of arrivals (a kilobyte per rank) and the situations (as much again) are
  // the analysis' largest allocations, and need not be held at once.
  Analysis(const Inputs& inputs, const DiagnoseOptions& options, std::vector<Straggler>* stragglers = nullptr);

  const Inputs& in;
  const DiagnoseOptions& options;
  std::vector<CommGroup> groups;          // parallel to comms
  std::vector<CommSummary> comms;
  std::vector<RankSituation> situations;  // parallel to in.ranks

  int rank(size_t view) const { return in.ranks[view].rank; }
  // The communicator index of a view's comm id, -1 when unknown.
  int comm_of(size_t view, uint32_t comm_id) const;
  // A view's record of collective #seq on communicator `comm`, nullptr when not in its ring.
  const ledger::CallRecord* collective_at(size_t view, int comm, uint64_t seq) const;
  SiteKey site_key(size_t view, const ledger::CallRecord& record) const;
  std::optional<Site> site(size_t view, const ledger::CallRecord& record) const;
  // The record's user chain, outermost first, when it is longer than "your line" alone.
  std::vector<Site> user_chain(size_t view, const ledger::CallRecord& record) const;
  // How many calls this rank issued from call-sites whose user line (and chain) is `key`.
  uint64_t line_hits(size_t view, SiteKey key) const;
  Call call(size_t view, const ledger::CallRecord& record) const;
  // Whether the record's operation is still pending. A collective completes on all members or
  // on none: once any member saw #k complete, every member's #k is done, even where the ledger
  // could not mark it (a process that exited before its watchdog polled the last CUDA event).
  bool pending(size_t view, const ledger::CallRecord& record) const;
  // Whether ncclCommRevoke cancelled the record's operation (issued before the revoke returned):
  // neither pending nor an error, whatever it returned.
  bool cancelled(size_t view, const ledger::CallRecord& record) const;
  // A member's completed count with that rule applied.
  uint64_t completed(const CommGroup& group, const Member& member) const;
  Site site_text(SiteKey key, uint32_t function) const;
  // A view's entry for communicator `comm`, nullptr when it is not a member.
  const ledger::CommInfo* member_info(size_t view, int comm) const;
  // The user frames a call-site chain names, innermost first (indexes into its frames): the
  // first frame outside the libraries and, when that frame is a helper the job calls from
  // several lines, the frames that call it (user_chain.cpp). Empty when the chain has no user
  // frame.
  const std::vector<int>& user_frames(uint32_t chain) const;
  // The outermost frame of the record's call-site whose line sits inside a loop (yours or a
  // library's: the function that runs the loop), nullopt when the source tells none.
  std::optional<Site> loop_holder(size_t view, const ledger::CallRecord& record) const;
  // The nth call this rank issued through the record's call-site key (your frames up to the loop
  // line; library frames never split it), counting the record itself.
  uint64_t iteration_of(size_t view, const ledger::CallRecord& record) const;
  // The loops of the job's source files (the evidence for loop lines).
  const SourceLoops& loops() const { return loops_; }
  // What a view's records hold, marked in one pass over them (place_ranks): the passes that
  // look for rare records (captured, failed init, abort) skip the views without any, and
  // iteration_of() scans only the records after its own when they are in ring order.
  enum RecordMark : uint8_t {
    kHasCaptured = 1,    // a call captured into a CUDA graph
    kHasFailedInit = 2,  // a communicator init that returned an error
    kHasAbort = 4,       // an ncclCommAbort
    kInRingOrder = 8,    // record indexes ascend (the reader's order; a damaged source may differ)
  };
  bool has_records(size_t view, RecordMark mark) const { return (record_marks_[view] & mark) != 0; }
  // How many threads a pass over `items` (ranks, members) uses: one per `per_thread` at least.
  size_t threads_for(size_t items, size_t per_thread) const;
  // The situation of a global rank, nullptr when no ledger has it.
  const RankSituation* situation_of(int rank) const;
  // The view of a global rank, SIZE_MAX when no ledger has it.
  size_t view_of(int rank) const;

 private:
  void group_comms();
  void name_comms();
  void place_ranks();
  void place_rank(size_t view, uint64_t newest_heartbeat, size_t alive_ranks);  // situations[view]
  void trace_user_chains();
  std::vector<std::vector<int>> user_frames_;  // per ChainPool id
  std::vector<uint32_t> chain_paths_;          // per ChainPool id: SiteKey::path
  std::vector<SiteKey> chain_keys_;            // per ChainPool id: its site_key (unknown: no frames)
  std::vector<uint8_t> record_marks_;          // per view: RecordMark bits
  std::vector<int> view_ranks_;                // per view: its rank (views are sorted by rank)
  std::vector<int> loop_holders_;              // per ChainPool id: frame index of the loop holder, -1 none
  SourceLoops loops_;
  std::map<std::pair<uint32_t, uint64_t>, int> by_key_;
  // Each view's communicators: its ledger's comm id -> communicator index, and its entry; the
  // views' runs one after another (view v's from comm_ids_start_[v] to comm_ids_start_[v + 1]),
  // one table for all rather than a map per view.
  struct ViewComm {
    uint32_t id = 0;
    int comm = -1;
    const ledger::CommInfo* info = nullptr;
  };
  std::vector<ViewComm> comm_ids_;
  std::vector<size_t> comm_ids_start_;
};

}  // namespace hangshim::report
