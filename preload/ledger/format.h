// The ledger file format, shared by the writer (libhangshim.so) and every reader (hangshim
// ledger / report / export). Documented in preload/ledger/FORMAT.md; change both together and
// bump kVersion on any change of meaning or layout.
//
// One file per process: a 4 KiB header, then four sections at offsets the header names:
// communicators, the ring of recent calls, call-sites, and a string pool. All integers are
// little-endian, fixed width, naturally aligned. Fields that change after the file is published
// are read and written only with atomic operations (see access.h); the ring and call-site
// entries carry a stamp that makes every read of them torn-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hangshim::ledger {

inline constexpr char kMagic[8] = {'H', 'N', 'G', 'S', 'H', 'I', 'M', '1'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kHeaderSize = 4096;

// Calls recorded in the ring. Values are part of the format: append only.
enum class Op : uint8_t {
  None = 0,
  AllReduce = 1,
  Broadcast = 2,  // ncclBroadcast and ncclBcast
  Reduce = 3,
  AllGather = 4,
  ReduceScatter = 5,
  AlltoAll = 6,
  Gather = 7,
  Scatter = 8,
  Send = 9,
  Recv = 10,
  CommInitRank = 11,  // ncclCommInitRank and ncclCommInitRankConfig
  CommInitAll = 12,
  CommInitRankScalable = 13,
  CommSplit = 14,
  CommShrink = 15,
  CommFinalize = 16,
  CommDestroy = 17,
  CommAbort = 18,
  // NCCL 2.27+: registering a memory window is collective (every rank of the communicator
  // must call it; a rank that skips one leaves the others waiting), so it takes a collective
  // sequence number like an all_reduce. It runs on the host: done when it returns.
  WindowRegister = 19,
  WindowDeregister = 20,
  CommRevoke = 21,  // ncclCommRevoke: cancels the communicator's in-flight operations
};
inline constexpr int kOpCount = 22;
// Ops with a per-communicator counter in CommEntry::op_counts (AllReduce..Recv).
inline constexpr int kCountedOps = 10;
inline constexpr bool is_window(Op op) { return op == Op::WindowRegister || op == Op::WindowDeregister; }
inline constexpr bool is_collective(Op op) { return (op >= Op::AllReduce && op <= Op::Scatter) || is_window(op); }
inline constexpr bool is_p2p(Op op) { return op == Op::Send || op == Op::Recv; }
// Takes a sequence number (collective or point-to-point) on its communicator.
inline constexpr bool is_counted(Op op) { return is_collective(op) || is_p2p(op); }
// Has a slot in CommEntry::op_counts.
inline constexpr bool has_op_count(Op op) { return op >= Op::AllReduce && op <= Op::Recv; }
inline constexpr bool has_root(Op op) {
  return op == Op::Broadcast || op == Op::Reduce || op == Op::Gather || op == Op::Scatter;
}

enum class ProcessState : uint32_t {
  Starting = 0,  // header not complete yet
  Running = 1,
  Stalled = 2,   // the watchdog saw a call pending longer than the stall timeout
  Exited = 3,    // the process ran its exit handlers
};

enum class CommState : uint32_t {
  Empty = 0,
  Initializing = 1,  // inside ncclCommInit*/Split/Shrink (a hang here: a rank that never joined)
  Active = 2,
  Failed = 3,        // the init call returned an error
  Finalized = 4,
  Destroyed = 5,
  Aborted = 6,
};

// How a communicator's key was derived: only keys of the same kind match across ranks.
enum class KeyKind : uint32_t {
  None = 0,
  UniqueId = 1,     // hash of the ncclUniqueId (ncclCommInitRank, ncclCommInitRankConfig)
  UniqueIds = 2,    // hash of all ids (ncclCommInitRankScalable)
  Split = 3,        // hash(parent key, parent's split count, color)
  Shrink = 4,       // hash(parent key, parent's split count, excluded ranks)
  InitAll = 5,      // one process, several devices: hash(host, pid, ncclCommInitAll count)
  Unknown = 6,      // a communicator first seen in a collective: hash(host, pid, handle), this rank only
};

enum ProcessFeature : uint32_t {
  kFeatureCallsites = 1u << 0,       // Python call-site capture is on
  kFeatureCudaCompletion = 1u << 1,  // completion from CUDA events (else completion = return)
  kFeatureWatchdog = 1u << 2,        // the watchdog thread runs (heartbeat, stall detection)
  kFeatureLearnedStall = 1u << 3,    // stall limits learned per communicator and call-site (no fixed limit)
  kFeatureWriterLock = 1u << 4,      // the writer holds writer_lock.h's lock while it may write (set at creation)
};

// RingEntry::flags
enum RecordFlag : uint16_t {
  kRecordInGroup = 1u << 0,        // issued between ncclGroupStart and ncclGroupEnd
  kRecordBarrier = 1u << 1,        // a one-element all_reduce from a function named barrier
  kRecordEventTracked = 1u << 2,   // completion comes from a CUDA event polled by the watchdog
  kRecordCaptured = 1u << 3,       // issued during CUDA graph capture: runs later, not tracked
  kRecordUntracked = 1u << 4,      // completion could not be tracked (no event): completed = returned
  kRecordBorrowedStack = 1u << 5,  // the caller had no Python frames: call-site of the main thread
  kRecordSimulated = 1u << 6,      // its group ended with ncclGroupSimulateEnd: never ran, and its
                                   // sequence number and call-site hit were given back
  kRecordInProgress = 1u << 7,     // returned ncclInProgress (a nonblocking communicator): launched
                                   // only once ncclCommGetAsyncError says ncclSuccess; until then
                                   // neither done nor failed
  kRecordBcastForm = 1u << 8,      // a broadcast made with ncclBcast (the in-place form), not
                                   // ncclBroadcast: the same collective, named as the caller wrote it
};

// CallsiteEntry::flags
enum CallsiteFlag : uint32_t {
  kCallsiteBarrier = 1u << 0,    // the innermost Python frame is a function named `barrier`
  kCallsiteBorrowed = 1u << 1,   // frames of the main thread (the calling thread had none)
  kCallsiteTruncated = 1u << 2,  // the stack was deeper than the ledger's call-site depth
};

// CallsiteFrame::flags
enum FrameFlag : uint32_t {
  kFrameLibrary = 1u << 0,  // file under torch/, deepspeed/, site-packages/ or dist-packages/
};

struct Header {
  char magic[8];                // kMagic; written last, with release, when the header is complete
  uint32_t version;             // kVersion
  uint32_t header_size;         // kHeaderSize
  uint64_t file_size;           // total bytes; the file is never resized after creation

  uint64_t comm_offset;         // section: CommEntry[comm_capacity]
  uint32_t comm_capacity;
  uint32_t comm_entry_size;     // sizeof(CommEntry)
  uint64_t ring_offset;         // section: RingEntry[ring_capacity]
  uint32_t ring_capacity;
  uint32_t ring_entry_size;     // sizeof(RingEntry)
  uint64_t callsite_offset;     // section: call-site entries of callsite_entry_size bytes
  uint32_t callsite_capacity;
  uint32_t callsite_entry_size; // sizeof(CallsiteEntry) + callsite_depth * sizeof(CallsiteFrame), 8-aligned
  uint32_t callsite_depth;      // frames stored per call-site
  uint32_t reserved0;
  uint64_t strings_offset;      // section: string pool (see StringRef)
  uint32_t strings_size;
  uint32_t reserved1;

  // Identity (written once, before the magic).
  int64_t pid;
  int64_t ppid;
  uint32_t uid;
  int32_t rank;                 // RANK, -1 when not set
  int32_t world_size;           // WORLD_SIZE, -1 when not set
  int32_t local_rank;           // LOCAL_RANK, -1 when not set
  uint64_t start_ns;            // CLOCK_REALTIME when the ledger was created
  int32_t nccl_version;         // ncclGetVersion of the real library, 0 when unknown
  uint32_t features;            // ProcessFeature bits (updated atomically)
  uint32_t stall_seconds;       // HANGSHIM_STALL_SECONDS in effect; 0: limits learned (kFeatureLearnedStall)
  uint32_t stall_limit_ms;      // live: the limit the reported stalled call had passed, 0 unknown
  char host[64];                // gethostname, NUL-terminated
  char job[64];                 // TORCHELASTIC_RUN_ID, SLURM_JOB_ID or empty
  char command[256];            // /proc/self/cmdline, arguments separated by spaces, cut
  char python_version[16];      // "3.11.7" once call-site capture found Python
  char shim_version[16];        // hangshim version that wrote this file

  // Live fields (atomic).
  uint32_t state;               // ProcessState
  uint32_t stall_count;         // stalls seen so far
  uint64_t heartbeat_ns;        // CLOCK_REALTIME of the watchdog's last tick, 0 before it runs
  uint64_t ring_head;           // records claimed so far; record i (1-based) is in slot (i-1) % capacity
  uint32_t comm_count;          // comm entries claimed
  uint32_t callsite_count;      // call-site entries claimed
  uint32_t strings_used;        // bytes of the string pool used
  uint32_t dropped_comms;       // communicators not recorded: table full
  uint32_t dropped_callsites;   // call-sites not recorded: table or pool full
  uint32_t reserved3;
  uint64_t stall_record;        // record index the watchdog reported as stalled, 0 if none
  uint64_t stall_ns;            // when it did
  uint64_t exit_ns;             // when the process exited normally, 0 while alive or if killed
  uint64_t group_count;         // ncclGroupEnd calls completed
  char stacks_file[256];        // file name (in the ledger's directory) of the stall stack dump

  // The process's first failed NCCL call and NCCL's own words about it (ncclGetLastError). Written
  // once: a writer takes the area by moving error_state 0 -> 1 (CAS), fills it, and publishes it
  // with error_state = 2 (release); it never changes after that. Zero in files of writers that
  // predate it (read as: no error text). Why the first: later failures are usually its echoes.
  uint32_t error_state;         // ErrorState
  uint32_t error_op;            // Op of the failed call
  uint64_t error_record;        // the failed call's record index (RingEntry::index), 0 if not recorded
  int32_t error_result;         // the ncclResult_t it returned
  uint32_t error_flags;         // the failed call's RecordFlag bits (which function: ncclBcast)
  char error_text[256];         // ncclGetLastError's text, NUL-terminated, cut at kErrorTextMax bytes

  // The job this process belongs to, as its environment and parent say (written once with the
  // Identity block; zero in files of earlier writers). Readers group ledgers into jobs by it.
  uint64_t parent_start;        // the parent's start time (/proc/PPID/stat: clock ticks since boot), 0 unknown
  char slurm_job[32];           // SLURM_JOB_ID, ".SLURM_STEP_ID" when set
  char run_id[64];              // TORCHELASTIC_RUN_ID (torchrun's rendezvous id)
  char master[80];              // MASTER_ADDR:MASTER_PORT
  char launcher[80];            // HANGSHIM_LAUNCHER: "host:pid:start" of the `hangshim run` that started it
};

enum class ErrorState : uint32_t {
  None = 0,
  Writing = 1,    // taken by a writer, not complete: readers ignore it
  Published = 2,
};
// The longest ncclGetLastError text kept (NCCL's own buffer is 1024 bytes; the first line is the
// part people need, and a bound keeps the failure path's work small).
inline constexpr size_t kErrorTextMax = 200;

struct CommEntry {
  uint32_t state;               // CommState (atomic; Empty until the entry is published)
  uint32_t key_kind;            // KeyKind
  uint64_t key;                 // equal on every rank of the communicator
  uint64_t parent_key;          // Split/Shrink: the parent's key, else 0
  uint64_t handle;              // the ncclComm_t in this process (for correlation only)
  int32_t rank;                 // this process's rank in the communicator
  int32_t nranks;
  int32_t device;               // CUDA device, -1 until known (atomic)
  int32_t color;                // Split: the color, else -1
  uint32_t split_index;         // Split/Shrink: the parent's split count when this child was made
  uint32_t splits;              // splits/shrinks made from this communicator (atomic)
  uint64_t created_ns;
  uint64_t ended_ns;            // finalize/destroy/abort time (atomic), 0 while alive
  uint64_t coll_issued;         // sequence number of the last collective issued (atomic)
  uint64_t coll_completed;      // highest completed collective sequence number (atomic)
  uint64_t p2p_issued;          // same for send/recv, counted together
  uint64_t p2p_completed;
  uint64_t op_counts[kCountedOps];  // calls per Op, AllReduce..Recv (atomic)
  char name[32];                // config->commName when given, NUL-terminated
  int32_t async_error;          // last error ncclCommGetAsyncError reported (0: none) (atomic)
  uint32_t in_progress;          // calls that returned ncclInProgress and await ncclCommGetAsyncError (atomic)
  uint64_t revoked_ns;          // when ncclCommRevoke returned (atomic), 0 if never: the calls
                                // issued before it were cancelled, not stuck
  uint8_t reserved[24];
};

struct RingEntry {
  uint64_t stamp;               // even: stable; odd: being written. 0: never written
  uint64_t index;               // record number, 1-based; ring slot = (index - 1) % capacity
  uint64_t seq;                 // per-comm sequence: collective number, or p2p number; 0 for life cycle
  uint64_t count;               // elements (per rank for AllGather/ReduceScatter/AlltoAll as NCCL counts them)
  uint64_t stream;              // cudaStream_t
  uint64_t issued_ns;           // CLOCK_REALTIME at entry to the wrapper
  uint64_t returned_ns;         // when the real call returned, 0 while inside
  uint64_t completed_ns;        // when the operation completed, 0 while pending
  uint64_t callsite_hit;        // the nth time its call-site was seen (the iteration hint), 0: none
  uint64_t group;               // ncclGroupStart..End group number (per process, 1-based), 0: none
  uint64_t comm_key;            // the communicator's key (0 for ncclCommInitAll before it returns)
  uint32_t comm;                // comm slot + 1, 0 when none
  uint32_t callsite;            // call-site id (slot + 1), 0 when none
  int32_t peer;                 // root (rooted collectives), peer (send/recv), else -1
  int32_t red_op;               // ncclRedOp_t, -1 when the op has none
  int32_t result;               // ncclResult_t returned, -1 while inside the call
  uint32_t thread;              // Linux thread id of the caller
  uint8_t op;                   // Op
  uint8_t dtype;                // ncclDataType_t, 255 when the op has none
  uint16_t flags;               // RecordFlag bits
  uint32_t reserved0;
  uint64_t reserved1;
};

struct CallsiteFrame {
  uint32_t file;                // StringRef: co_filename
  uint32_t function;            // StringRef: co_qualname (3.11+) or co_name
  int32_t line;                 // 0 when unknown
  uint32_t flags;               // FrameFlag bits
};

struct CallsiteEntry {
  uint32_t state;               // 1 once published (release); frames are immutable after that
  uint32_t id;                  // slot + 1
  uint16_t depth;               // frames stored, innermost first
  int16_t user_frame;           // index of the first frame outside the libraries ("your line"), -1 none
  uint32_t flags;               // CallsiteFlag bits
  uint64_t hits;                // times seen (atomic)
  uint64_t first_ns;            // first sighting
  // followed by CallsiteFrame frames[callsite_depth]
};

// A string in the pool: a 32-bit offset from strings_offset to { uint16_t length; char bytes[length]; '\0' }.
// Offset 0 is the empty string. Strings are written before the entry that names them is published.
using StringRef = uint32_t;

static_assert(sizeof(Header) <= kHeaderSize);
static_assert(offsetof(Header, error_record) % 8 == 0 && sizeof(Header::error_text) > kErrorTextMax);
static_assert(sizeof(CommEntry) == 256);
static_assert(sizeof(RingEntry) == 128);
static_assert(sizeof(CallsiteFrame) == 16);
static_assert(sizeof(CallsiteEntry) == 32);
static_assert(offsetof(Header, state) % 8 == 0 && offsetof(Header, ring_head) % 8 == 0);
static_assert(offsetof(Header, parent_start) == 1184 && offsetof(Header, launcher) == 1368);  // FORMAT.md
static_assert(offsetof(RingEntry, stamp) == 0 && offsetof(RingEntry, op) == 112);

// Bounds a reader accepts (a writer never exceeds them).
inline constexpr uint32_t kMaxCommCapacity = 1u << 16;
inline constexpr uint32_t kMaxRingCapacity = 1u << 22;
inline constexpr uint32_t kMaxCallsiteCapacity = 1u << 16;
inline constexpr uint32_t kMaxCallsiteDepth = 64;
inline constexpr uint32_t kMaxStringsSize = 64u << 20;
// Ranks of one communicator: 10x the largest jobs run today. A reader takes a larger count as
// damage: the report walks every rank number of a communicator (who is absent), so a damaged
// count of 2^31 would cost it minutes and gigabytes.
inline constexpr int32_t kMaxRanks = 1 << 20;

inline constexpr size_t callsite_entry_size(uint32_t depth) {
  return (sizeof(CallsiteEntry) + depth * sizeof(CallsiteFrame) + 7) & ~size_t{7};
}

// Names used by every renderer (text and JSON), e.g. "all_reduce", "float32", "sum".
const char* op_name(uint8_t op) noexcept;
const char* dtype_name(uint8_t dtype) noexcept;         // "?" outside NCCL's types
const char* red_op_name(int32_t red_op) noexcept;       // "premulsum" for dynamic ops, "" for -1
const char* process_state_name(uint32_t state) noexcept;
const char* comm_state_name(uint32_t state) noexcept;
const char* key_kind_name(uint32_t kind) noexcept;
// ncclResult_t as NCCL spells it: "ncclUnhandledCudaError"; "ncclResult 42" outside the known ones.
std::string result_name(int32_t result);
// A recorded init/life-cycle call by its NCCL function: "ncclCommInitRank" (also covers
// ncclCommInitRankConfig: one Op), "ncclCommSplit"; collectives give "ncclAllReduce" etc.
const char* nccl_function_name(uint8_t op) noexcept;
// The same for one call, from its record flags: ncclBcast for a broadcast made with it.
const char* nccl_function_name(uint8_t op, uint32_t record_flags) noexcept;
// ncclInProgress: a nonblocking communicator's call that NCCL has not launched yet.
inline constexpr int32_t kInProgressResult = 7;
// An error the ledger records: not success, not ncclInProgress (7), not "still inside" (-1).
inline constexpr bool is_failure(int32_t result) { return result != -1 && result != 0 && result != kInProgressResult; }
// A result a ledger can hold: -1 (inside the call) or an ncclResult_t. NCCL's are 0..8 (2.28);
// room is left for later ones, but nothing real is negative or in the millions, which is what
// overwritten bytes read as: such a record is damage, not an error NCCL returned.
inline constexpr bool is_plausible_result(int32_t result) { return result >= -1 && result <= 255; }
// The ops that make a communicator (init by id, ids, all, split, shrink).
inline constexpr bool is_comm_init(Op op) { return op >= Op::CommInitRank && op <= Op::CommShrink; }
size_t dtype_size(uint8_t dtype) noexcept;              // bytes per element, 0 if unknown

}  // namespace hangshim::ledger
