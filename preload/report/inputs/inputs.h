// What the report reads, in the form the analysis uses: one RankView per ledger (the process's
// identity, communicators, newest calls and call-sites), whether that process still runs, and
// its live Python stacks where they could be read. Call-site frames are interned in pools
// shared by all ranks: 8192 ranks repeat the same few file names and functions.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ledger/reader.h"
#include "pyframes/model.h"
#include "report/inputs/library_frames.h"
#include "report/inputs/timing_history.h"

namespace hangshim::report {

// Whether the process that wrote a ledger still runs, as judged on its own host.
enum class Liveness : uint8_t {
  Unknown,   // judged nowhere: another host's ledger, copied without an export
  Alive,     // it runs (same host, a process that started no later than its ledger)
  Gone,      // no such process, or a zombie: it ended (the ledger says how, if it could)
  Recycled,  // the pid now belongs to a newer process: the writer ended
};
const char* liveness_name(Liveness liveness);
bool parse_liveness(std::string_view name, Liveness& out);

class StringPool {
 public:
  uint32_t intern(std::string_view text);
  const std::string& operator[](uint32_t id) const { return strings_[id]; }

 private:
  std::deque<std::string> strings_;  // stable addresses: the index keys point into it
  std::unordered_map<std::string_view, uint32_t> index_;
};

struct SiteFrame {
  uint32_t file = 0;      // StringPool ids
  uint32_t function = 0;
  int32_t line = 0;
  bool library = false;   // the shim flagged it, or the report's patterns match its file
};

struct Chain {
  std::vector<SiteFrame> frames;  // innermost first
  int user = -1;                  // "your line": first frame outside the libraries; -1 when none
  bool barrier = false;           // the innermost frame is a function named barrier
};

// Call-site chains shared by all ranks, keyed by their frames.
class ChainPool {
 public:
  uint32_t intern(const Chain& chain);
  const Chain& operator[](uint32_t id) const { return chains_[id]; }
  size_t size() const { return chains_.size(); }

 private:
  std::vector<Chain> chains_;
  std::unordered_map<std::string, uint32_t> index_;
};

inline constexpr uint32_t kNoChain = UINT32_MAX;

struct LocalSite {
  uint32_t chain = kNoChain;  // ChainPool id
  uint64_t hits = 0;          // how often this process issued a call from it
};

struct RankView {
  std::string source;              // the ledger file, or "EXPORT.json: file"
  ledger::LedgerHeader header;
  std::vector<ledger::CommInfo> comms;
  std::vector<ledger::CallRecord> records;  // the newest calls, oldest first
  std::vector<LocalSite> sites;             // by ledger call-site id - 1
  TimingHistory history;                    // the newest calls that ran and completed, oldest first
  std::vector<std::string> warnings;        // entries the reader skipped
  int rank = -1;                   // the rank shown: RANK, else its rank in its first communicator
  Liveness liveness = Liveness::Unknown;
  std::string judged_on;           // host where liveness was judged; "" when not judged
  uint64_t observed_ns = 0;        // when it was read (the report's or the export's clock)
  int stacks = -1;                 // index into Inputs::stacks; -1 when none
  std::string stack_error;         // why an alive process has no stacks

  const ledger::CommInfo* comm(uint32_t id) const;
  const LocalSite* site(uint32_t id) const;
};

// The job key of Flight Recorder dumps: "dumps:" and the directory they were read from.
inline constexpr std::string_view kDumpsJobPrefix = "dumps:";

// One job among the ledgers read (jobs.h says how ledgers are grouped).
struct JobSummary {
  std::string key;            // "slurm:123.0", "launcher:host:pid:start", "parent:host:pid:start", ...
  std::string name;           // in words: "SLURM job 123.0", "the job started by pid 42 on node1"
  size_t ledgers = 0;
  size_t running = 0;         // processes alive (or not judged: another host's)
  bool exited = false;        // every process recorded its exit (else: killed or crashed)
  uint64_t started_ns = 0;    // its earliest ledger
  uint64_t last_seen_ns = 0;  // its latest heartbeat or exit
  // Read from PyTorch Flight Recorder dumps: what is missing is a dump, not a ledger.
  bool from_dumps() const { return key.starts_with(kDumpsJobPrefix); }
};

struct InputError {
  std::string source;
  std::string message;  // one line: what is wrong and what to do
};

struct Inputs {
  StringPool strings;
  ChainPool chains;
  std::vector<RankView> ranks;
  std::vector<pyframes::Process> stacks;
  std::vector<InputError> errors;
  std::vector<std::string> warnings;
  uint64_t now_ns = 0;
  JobSummary job;                      // the job `ranks` belong to
  std::vector<JobSummary> other_jobs;  // the others found, newest first (not analysed)
};

struct ViewOptions {
  size_t max_records = 16;  // newest calls kept per ledger, besides pending ones and each call-site's newest
  size_t history = 128;     // newest completed calls kept as CallTiming (stragglers, learned limits)
};

// Turns a parsed ledger into a RankView, interning its call-sites into `inputs`' pools.
RankView make_rank_view(ledger::Ledger&& ledger, Inputs& inputs, const LibraryPatterns& patterns,
                        const ViewOptions& options);
// What prepare_rank_view hands to finish_rank_view besides the view: the ledger's call-sites,
// to intern, and the records and timings the view keeps, which finish_rank_view copies into the
// view. Copies, so that what the report keeps is allocated by the thread that finishes views
// (the calling thread, whose memory the huge pages of cli/huge_pages.h cover when
// HANGSHIM_HUGE_PAGES=1 asks for them: the reading threads' arenas are not), while a reading
// thread only refills the memory of the PreparedRank it is given (callers reuse them; their
// capacity is kept).
struct PreparedRank {
  std::vector<ledger::CallsiteInfo> callsites;
  std::vector<ledger::CallRecord> records;  // the newest calls kept, oldest first
  TimingHistory history;
};

// make_rank_view in its two steps, for reading ledgers on several threads: the first looks at
// the ledger only (any thread, the costly part: trimming, the timings), filling a fresh `view`
// with all but its `sites`, `records` and `history`, and `prepared` with those (it leaves the
// ledger's records, whose memory a reader may fill again); the second, on one thread in the
// ledgers' order, interns the call-sites into `inputs`' pools, so that the pools' ids, and with
// them the report, do not depend on which thread finished first, and copies the rest. Both
// work in place: a view is 856 bytes of strings and vectors, and moving it about cost a tenth of
// a second over 131 072 ranks.
void prepare_rank_view(ledger::Ledger&& ledger, const ViewOptions& options, RankView& view, PreparedRank& prepared);
void finish_rank_view(RankView& view, const PreparedRank& prepared, Inputs& inputs, const LibraryPatterns& patterns);

// The user frame of a live thread: first Python frame outside the libraries, else nullptr.
const pyframes::Frame* user_frame(const pyframes::Thread& thread, const LibraryPatterns& patterns);
// The thread a rank's position is read from: the main thread (native id = pid, or the one
// named MainThread), else the first one; nullptr when the process has none.
const pyframes::Thread* main_thread(const pyframes::Process& process);

}  // namespace hangshim::report
