// Stacks of many processes merged into one prefix tree, in the spirit of STAT: from the
// outermost frame down, every branch names the ranks (or pids) that took it, and where the ranks
// part ways the smallest groups (the outliers) come first. Works on the plain model only, so
// live processes, cores, saved --json dumps and the hangshim report's exports merge alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pyframes/model.h"
#include "pyframes/render.h"

namespace pyframes {

struct MergeOptions {
  bool all_threads = false;  // every thread; otherwise each process's main thread only
  bool hide_idle = false;    // leave out idle threads, but never those kept_when_hiding_idle keeps
  bool native_threads = false;  // also every thread that runs no Python (--native-all's threads)
};

// One merged stack: a thread of one of the processes given to merge_stacks.
struct MergeMember {
  size_t process = 0;  // index into the processes given to merge_stacks
  size_t thread = 0;   // index into that process's threads
  int64_t pid = 0;
  std::string source;  // Process::source ("pid 1234", a core's path, a dump file)
  std::string rank;    // RANK of the process, empty when it has none
  std::string local_rank;
  std::string executable;  // Process::executable: the interpreter, for is_native_plumbing
  int64_t worker_of = 0;  // Process::worker_of: the pid of the rank this worker belongs to, else 0
  uint64_t thread_id = 0;
  int64_t native_id = 0;
  std::string thread_name;
  ThreadState state = ThreadState::Unknown;
  bool gil = false;
  bool truncated = false;
  std::string truncation_reason;
};

// A variable of a merged frame: each distinct value with the members that hold it. This is where
// "rank 7 is in iteration 1004, ranks 0-6 in 1005" shows. Reprs that differ only in object
// addresses ("<Sampler object at 0x...>") count as one value, shown without the addresses.
struct MergedLocal {
  struct Value {
    std::string repr;
    std::vector<uint32_t> members;
  };
  std::string name;
  bool is_argument = false;
  std::vector<Value> values;  // fewest members first
};

struct MergedFrame {
  Frame frame;                      // as the branch's first member has it, locals cleared
  std::vector<MergedLocal> locals;  // filled when the frames carried locals (--locals)
};

// A run of frames shared by the same members, then the places where they part.
struct MergeBranch {
  std::vector<uint32_t> members;      // member ids, ascending (rank order)
  std::vector<MergedFrame> frames;    // outermost first, following the parent's frames
  std::vector<uint32_t> ended;        // members whose stack ends with the last of `frames`
  std::vector<MergeBranch> children;  // fewest members (the outliers) first
};

struct MergedStacks {
  std::vector<MergeMember> members;  // ordered by rank (numeric), then pid, then thread
  std::vector<MergeBranch> roots;    // one per distinct outermost frame, fewest members first
  size_t processes = 0;              // processes that contributed at least one member
  size_t hidden_idle = 0;            // threads left out by hide_idle
  bool all_threads = false;
  bool native_threads = false;       // MergeOptions::native_threads
  size_t native_only = 0;            // with native_threads: members that run no Python
  // Processes that contributed no member, and why: a view never drops a rank silently.
  struct LeftOut {
    int64_t pid = 0;
    std::string rank;
    std::string reason;
  };
  std::vector<LeftOut> left_out;
};

MergedStacks merge_stacks(const std::vector<Process>& processes, const MergeOptions& options = {});

// The thread of `process` that runs the main interpreter loop: the one whose native id is the
// pid, else the one named MainThread, else the oldest. Index into threads; npos when none.
size_t main_thread_index(const Process& process);

// --hide-idle: whether `process.threads[thread]` stays. Threads that are not idle stay, and so
// does the thread a process waits in even when it is idle: the main thread, the only thread that
// runs Python, a thread inside a collective (in_collective).
bool kept_when_hiding_idle(const Process& process, size_t thread);
// A frame of torch.distributed or deepspeed.comm, or a native c10d/NCCL frame.
bool in_collective(const Thread& thread);
// Leaves out of each process the threads kept_when_hiding_idle does not keep; how many.
size_t hide_idle_threads(std::vector<Process>& processes);

// Native frames every wait goes through: libc, libpthread, the dynamic loader, libpython or the
// interpreter executable (`executable`, or any module named python*), told by the module; by
// libc's and CPython's name patterns (__*, pthread_*, _Py*, Py*, ...) only when the module is
// unknown. Python frames are never plumbing.
bool is_native_plumbing(const Frame& frame, std::string_view executable);
// The frames a summary line names, from a stack innermost first: the innermost Python frame and
// the innermost native frame inside it that is not plumbing (nullptr when none). A stack without
// Python frames: its innermost non-plumbing native frame, else its innermost frame.
struct SummaryFrames {
  const Frame* python = nullptr;
  const Frame* native = nullptr;
};
SummaryFrames summary_frames(const std::vector<const Frame*>& inner_first, std::string_view executable);

// Sorted, de-duplicated numbers with runs compressed: {0,1,2,3,4,5,6,8,10,11,12} -> "0-6,8,10-12".
std::string compress_numbers(std::vector<int64_t> numbers);

// Who took a branch: "rank 7", "ranks 0-6", "pids 123,456" for processes without RANK,
// "ranks 0-3, pid 99" for a mix, "rank 1 worker pid 4321" / "ranks 0-1 workers pids 4321,4400"
// for processes a rank started (MergeMember::worker_of); "(16 threads)" or "(9 processes)" is added when there are more
// stacks than ranks; with all_threads, the thread name when the members share one.
std::string describe_members(const MergedStacks& merged, const std::vector<uint32_t>& members);

// Each distinct stack (a leaf of the tree) with its members, fewest members first. `path` runs
// from a root to the branch where the stack ends.
struct DistinctStack {
  std::vector<uint32_t> members;
  std::vector<const MergeBranch*> path;
  const Frame* innermost() const;  // nullptr for stacks without frames
  std::vector<const Frame*> frames_inner_first() const;
};
std::vector<DistinctStack> distinct_stacks(const MergedStacks& merged);

// Text: a summary (how many distinct stacks, who is where), then the tree with the source line
// under each frame and, for --locals, each variable's values with the ranks that hold them.
std::string render_merged_text(const MergedStacks& merged, const TextOptions& options, SourceCache* sources);

// The --json document with the merged tree: {"processes": [...] (when include_processes),
// "merged": {...}, "errors": [...]}.
std::string render_merged_json(const std::vector<Process>& processes, const MergedStacks& merged,
                               const std::vector<FailedTarget>& failures, bool include_processes,
                               const JsonOptions& options = {});

}  // namespace pyframes
