// The diagnosis: a plain model that the analysis builds from the ledgers and the renderers
// (text for people, JSON for machines) only read. Ranks are global ranks (RANK); communicators
// are indexes into Diagnosis::comms; call-sites are "your line" (the first frame outside the
// libraries) with the iteration hint (how many times that call-site issued a call).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pyframes/model.h"
#include "report/inputs/inputs.h"
#include "report/inputs/shim_processes.h"

namespace hangshim::report {

enum class Kind {
  Healthy,            // every collective issued was completed: the hang, if any, is not in NCCL
  MissingRank,        // some ranks never issued collective #k (they are elsewhere in NCCL)
  StuckOutsideNccl,   // ... because they are alive but not in NCCL at all
  RankExited,         // ... because they exited
  HeartbeatLost,      // ... because they died or froze (their ledger stopped its heartbeat)
  SubgroupHang,       // a sub-group's collective is missing ranks that wait elsewhere
  ExtraCollective,    // some ranks issued a collective the others never issue
  IterationMismatch,  // ranks in different iterations of the same call-site
  OpMismatch,         // collective #k is a different operation on some ranks
  DtypeMismatch,
  CountMismatch,
  RootMismatch,
  ReduceOpMismatch,
  Transport,          // every rank issued #k, none completed it: network / GPU, not the program
  NcclError,          // collective #k returned an error
  MissingLedgers,     // ranks of the communicator have no ledger here; they may be the cause
  InitHang,           // ranks wait in ncclCommInit*/Split for members that never joined
  InitFailed,         // communicator init (ncclCommInitRank*, InitAll, Split, Shrink) returned an error
  Aborted,            // members that waited in #k aborted the communicator (ncclCommAbort: a watchdog's timeout,
                      // PyTorch's among them); Finding::abort holds who, when, and the hang it ended
  NoData,             // no ledger could be used: nothing is known about NCCL (never "healthy")
};
const char* kind_name(Kind kind);  // "missing_rank", ...

// A line of Python: "your line" of a call-site, or of a live stack.
struct Site {
  std::string file;
  std::string function;
  int line = 0;
};

// One rank's collective (or the one call it is in).
struct Call {
  int comm = -1;            // index into Diagnosis::comms, -1 when unknown
  std::string op;           // "all_reduce", "barrier", "send", "comm_init_rank", ...
  uint64_t seq = 0;         // collective (or p2p) number on the communicator, 0 for life cycle
  std::optional<Site> site;
  std::vector<Site> chain;  // your frames leading to `site`, outermost first (empty: `site` alone names it)
  uint64_t iteration = 0;   // the nth call from that call-site; 0 when unknown
  uint64_t count = 0;
  std::string dtype;
  int root = -1;            // rooted collectives: root rank in the communicator; send/recv: peer
  std::string red_op;
  uint64_t issued_ns = 0;
  uint64_t completed_ns = 0;
  int32_t result = -1;      // ncclResult_t, -1 while inside
};

enum class RankState {
  InCollective,   // waiting in a collective (its oldest pending one)
  InP2P,          // waiting in a send/recv
  InCommInit,     // inside ncclCommInit*/Split: waiting for the other ranks to join
  OutsideNccl,    // alive, no call pending
  Exited,         // the process ran its exit handlers
  Dead,           // gone without exiting normally (killed, crashed), or heartbeat stopped
  Unknown,
};
const char* rank_state_name(RankState state);

struct RankSituation {
  int rank = -1;
  RankState state = RankState::Unknown;
  std::optional<Call> current;        // the call it waits in
  std::optional<Call> last;           // the last collective it completed
  std::optional<Site> now_at;         // its live stack's user line (main thread)
  std::string now_function;           // the innermost function of that stack
  int64_t pid = 0;
  std::string host;
  Liveness liveness = Liveness::Unknown;
  uint64_t heartbeat_age_ns = 0;      // 0 when fresh or unknown
  std::string why_dead;               // Dead: "no heartbeat for 42 s", "pid 1234 is gone"
  uint64_t waiting_ns = 0;            // how long its current call has been pending
  bool shown = true;                  // selected by --rank / --comm
};

// Ranks whose situations read the same (pid, host and times aside).
struct RankGroup {
  std::vector<int> ranks;
  size_t example = 0;  // index into Diagnosis::situations of one member
};

// A call captured into a CUDA graph (issued during stream capture): NCCL saw it once, at the
// capture; every replay of the graph runs it on the GPU without calling NCCL, so no ledger records
// the replays and none of them can be judged stuck or done (captured_calls.cpp).
struct CapturedCall {
  std::vector<int> ranks;   // the ranks that captured it
  std::string op;           // "all_reduce"
  std::optional<Site> site; // your line of the capture
  uint64_t records = 0;     // captured records at this line, the ranks together
};

struct CommSummary {
  std::string name;        // "world", "world/split1", a commName, or "comm 3439b24d"
  uint64_t key = 0;
  std::string key_kind;    // "unique_id", "split", ...
  int nranks = 0;
  std::vector<int> ranks;  // global ranks of its members (those with a ledger)
  std::vector<int> absent; // ranks in the communicator with no ledger here (communicator ranks)
  int parent = -1;         // index of the communicator it was split from
  bool subgroup = false;   // smaller than the world, or split from another communicator
  bool global_ranks = false;  // its ranks are the global ranks (a world made with a unique id)
  bool shown = true;          // selected by --comm
  uint64_t issued_min = 0, issued_max = 0, completed_min = 0, completed_max = 0;
  std::vector<CapturedCall> captured;  // its calls captured into CUDA graphs, by line
};

// One value of a mismatched attribute and the ranks that used it.
struct ValueGroup {
  std::string value;
  std::vector<int> ranks;
};

// Ranks whose communicator init failed the same way (InitFailed): the call, NCCL's error and its
// own words about it (ncclGetLastError, as the shim recorded them).
struct InitFailure {
  std::vector<int> ranks;
  int comm = -1;          // the communicator they were making, -1 when unknown (ncclCommInitAll)
  std::string call;       // "ncclCommInitRank" (also ncclCommInitRankConfig), "ncclCommSplit", ...
  int32_t result = 0;     // ncclResult_t
  std::string error;      // "ncclUnhandledCudaError"
  std::string text;       // ncclGetLastError's text, "" when none was recorded
};

// One step of a chain of waits across communicators: `waiting` wait in collective #seq of
// `comm` for `for_ranks`, who wait further down the chain (or are the cause).
struct WaitLink {
  std::vector<int> waiting;
  std::vector<int> for_ranks;
  int comm = -1;
  uint64_t seq = 0;
  std::string op;
  int finding = -1;  // index into Diagnosis::findings
};

// Aborted (classify_abort.cpp): the members that aborted a communicator while they waited in
// its collective #seq, and the hang that made them: what the finding was before the abort.
struct Abort {
  int comm = -1;                    // the communicator aborted (the finding's, or one down its chain)
  uint64_t seq = 0;                 // the collective pending there when it was aborted
  std::string op;
  std::optional<Call> call;         // an aborting rank's record of it: the line and iteration
  std::vector<int> ranks;           // the members that aborted it (ncclCommAbort)
  std::vector<int> inside;          // ... of which the ledger shows still inside ncclCommAbort
  std::vector<int> issued;          // members that had issued #seq
  std::vector<int> not_reached;     // members that had not
  uint64_t pending_ns = 0;          // how long #seq had been pending when the first abort came, 0: unknown
  Kind hang = Kind::Healthy;        // the finding's kind before the abort: the hang the abort ended
  std::vector<ValueGroup> async_errors;  // NCCL's asynchronous errors on the communicator, by rank
};

struct Finding {
  Kind kind = Kind::Healthy;
  int comm = -1;
  uint64_t seq = 0;
  std::string op;                 // the collective at seq (the one the waiting ranks are in)
  std::vector<int> culprits;      // the ranks that cause it
  std::vector<int> waiting;       // ranks blocked in collective #seq because of it
  std::string attribute;          // mismatches: "op", "dtype", "count", "root", "reduce op"
  std::vector<ValueGroup> values; // mismatches and call-site divergences: who did what
  std::string reason;             // how the culprits were told apart from the others
  uint64_t others_ran = 0;        // iteration mismatch: how often the others ran the culprits' line
  bool fewer = false;             // iteration mismatch by steps: the culprits ran one iteration fewer (else more)
  bool ambiguous = false;         // the evidence cannot tell which side is wrong: culprits holds both sides
  std::vector<WaitLink> chain;    // the verdict's: who waits for its culprits, across communicators, nearest first
  bool never_issued = false;      // the culprits never issued collective #seq (vs. issued it wrong)
  int blocked_by = -1;            // the finding that holds this one's culprits (they wait there)
  bool root_cause = true;
  bool shown = true;              // selected by --rank / --comm (the verdict's is always shown)
  std::vector<InitFailure> failures;  // InitFailed: one group per (call, error, text)
  std::optional<Abort> abort;         // Aborted: who aborted which communicator, after what
};

// A rank that arrives last at a communicator's collectives most of the time: slow, not stopped.
// The job runs at its speed. Found from when each member issued each collective (stragglers.cpp).
struct Straggler {
  int rank = -1;
  int comm = -1;                 // index into Diagnosis::comms
  std::string op;                // the collective it is most often last at ("all_reduce")
  std::optional<Site> site;      // ... and its line on the straggler
  uint64_t compared = 0;         // collectives every member completed (the newest, up to the history kept)
  uint64_t last = 0;             // ... of which this rank was the last to arrive at
  uint64_t since_seq = 0;        // the first collective of its current run of lateness
  uint64_t since_ns = 0;         // when the straggler issued it
  bool since_oldest = false;     // ... which is the oldest collective compared: it may go back further
  uint64_t median_late_ns = 0;   // how much later than the median member it arrived, since then
  uint64_t p95_late_ns = 0;
  bool by_timestamps = false;    // compared by issue times (all members on one host), else by wait times
  // Where it spends the extra time: its main thread's line outside NCCL, most often seen in
  // samples of its live stack (only for a straggler running on this host; the CLI fills it).
  std::optional<Site> spends_at;
  size_t spends_samples = 0;     // samples at that line
  size_t samples = 0;            // samples taken outside NCCL
};

// A communicator's newest collectives, rank by rank (timelines.cpp): what the HTML report draws.
struct TimelineMark {
  enum class State : uint8_t {
    Completed,
    Pending,    // issued, not completed: where the rank stopped
    Failed,     // returned an error
    Issued,     // issued (its counters say so) but no longer among the calls its ledger keeps
    Missing,    // not issued, though another member issued it
  };
  State state = State::Missing;
  std::string op;        // empty for Issued / Missing
  uint64_t count = 0;
  std::string dtype;
  bool differs = false;  // its op, count or dtype is not what most members issued at this number
};

// Members whose marks read the same share a row: 8192 ranks make a few rows.
struct TimelineRow {
  std::vector<int> ranks;
  std::vector<TimelineMark> marks;  // one per collective number, first_seq..last_seq
};

struct Timeline {
  int comm = -1;  // index into Diagnosis::comms
  uint64_t first_seq = 0, last_seq = 0;  // the collective numbers shown (0, 0: none issued)
  std::vector<TimelineRow> rows;
};

// Ranks with the same live main-thread stack.
struct StackGroup {
  std::vector<int> ranks;
  int stacks = -1;  // index into Diagnosis::processes of one of them
};

struct Diagnosis {
  Kind verdict = Kind::Healthy;
  bool problem = false;
  int primary = -1;                         // the finding the verdict is about
  std::vector<Finding> findings;
  std::vector<CommSummary> comms;
  std::vector<RankSituation> situations;    // one per rank, by rank (all: the verdict reads them)
  std::vector<RankGroup> groups;            // shown situations merged
  std::vector<StackGroup> stack_groups;
  std::vector<Timeline> timelines;          // shown communicators' newest collectives, rank by rank
  std::vector<Straggler> stragglers;        // slow ranks, found whether or not anything hangs
  // A running job caught while its ranks arrive at a collective: every rank alive, every pending
  // call younger than its limit (as the shim's watchdog judges it, overdue_calls.h). The finding
  // that would have been the verdict stays in `findings`, not as the verdict.
  bool in_flight = false;
  uint64_t longest_pending_ns = 0;          // in flight: the longest a rank's call has been pending
  uint64_t longest_pending_limit_ns = 0;    // ... and its limit
  std::vector<pyframes::Process> processes; // live stacks of the shown ranks, in rank order
  std::vector<std::string> hints;           // what to do next
  std::vector<InputError> errors;           // files that could not be used
  std::vector<InputError> damaged;          // files used, with damaged entries skipped
  std::vector<std::string> warnings;
  size_t ledgers = 0;
  size_t threads = 0;                       // threads the report may use (--threads; 0: one per CPU)
  uint64_t now_ns = 0;
  std::vector<ShimProcess> shim_processes;  // no data: processes here with the shim loaded (the CLI fills it)
  JobSummary job;                      // the job diagnosed
  std::vector<JobSummary> other_jobs;  // other jobs whose ledgers were read, newest first
  // No process of the job runs any more: the verdict is its last state, not a current hang.
  bool ended() const { return job.ledgers > 0 && job.running == 0; }
};

}  // namespace hangshim::report
