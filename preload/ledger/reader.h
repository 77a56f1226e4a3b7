// Reads ledgers written by libhangshim.so — live (the writer still running), stopped, killed,
// or copied from another node — into a plain snapshot. Every byte is untrusted: a file that is
// truncated, corrupt, of a foreign version or not a ledger gives an Error naming the problem;
// a damaged or half-written entry is skipped with a warning instead of failing the whole read.
//
// A file is copied with pread in passes that keep the writer's publication order (snapshot.h),
// so no record in the snapshot is torn, and a file cut or replaced by someone else while being
// read is an error (never a SIGBUS). Files anyone else could have written are refused
// (trust.h).
#pragma once

#include <sys/stat.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ledger/format.h"
#include "ledger/identity.h"
#include "ledger/snapshot.h"
#include "pyframes/result.h"

namespace hangshim::ledger {

// The process's first failed NCCL call (Header::error_*), when its writer published one.
struct FirstError {
  bool present = false;
  uint64_t record = 0;  // the failed call's record index, 0 when it was not recorded
  int32_t result = 0;   // ncclResult_t
  uint8_t op = 0;       // Op
  uint32_t flags = 0;   // the call's RecordFlag bits (kRecordBcastForm: ncclBcast)
  std::string text;     // ncclGetLastError's words, "" when NCCL gave none
};

// The header as read: the writer's Identity (identity.h), then the fields that describe the file
// and the process's life since (Header in format.h).
struct LedgerHeader : Identity {
  uint32_t version = 0;
  int32_t nccl_version = 0;
  uint32_t features = 0;
  std::string python_version;
  uint32_t state = 0;  // ProcessState
  uint32_t stall_count = 0;
  uint64_t heartbeat_ns = 0;
  uint64_t ring_head = 0;
  uint32_t ring_capacity = 0;
  uint32_t comm_capacity = 0;
  uint32_t callsite_capacity = 0;
  uint32_t callsite_depth = 0;
  uint32_t dropped_comms = 0;
  uint32_t dropped_callsites = 0;
  uint64_t stall_record = 0;
  uint64_t stall_ns = 0;
  uint32_t stall_limit_ms = 0;
  uint64_t exit_ns = 0;
  uint64_t group_count = 0;
  std::string stacks_file;
  FirstError first_error;
  uint64_t file_size = 0;
};

// A communicator as read: its identity (identity.h), then what changed since (CommEntry in format.h).
struct CommInfo : CommIdentity {
  uint32_t id = 0;  // slot + 1, what RingEntry::comm names
  uint32_t state = 0;     // CommState
  uint32_t key_kind = 0;  // KeyKind
  uint32_t splits = 0;
  uint64_t ended_ns = 0;
  uint64_t coll_issued = 0;
  uint64_t coll_completed = 0;
  uint64_t p2p_issued = 0;
  uint64_t p2p_completed = 0;
  std::array<uint64_t, kCountedOps> op_counts{};
  std::string name;
  int32_t async_error = 0;
  uint64_t revoked_ns = 0;  // ncclCommRevoke: calls issued before this were cancelled
};

// One call. Fields as in RingEntry (format.h); `stamp` and the reserved fields are not kept.
using CallRecord = RingEntry;

struct FrameInfo {
  std::string file;
  std::string function;
  int32_t line = 0;
  bool library = false;  // under torch/, deepspeed/, site-packages/, dist-packages/
};

struct CallsiteInfo {
  uint32_t id = 0;
  uint32_t flags = 0;  // CallsiteFlag
  int16_t user_frame = -1;
  uint64_t hits = 0;
  uint64_t first_ns = 0;
  std::vector<FrameInfo> frames;  // innermost first
};

struct Ledger {
  std::string source;  // the path read, or what the caller named the buffer
  LedgerHeader header;
  std::vector<CommInfo> comms;
  std::vector<CallRecord> records;  // oldest first; only intact entries
  std::vector<CallsiteInfo> callsites;
  std::vector<std::string> warnings;  // entries skipped and why

  const CommInfo* comm(uint32_t id) const;          // nullptr when unknown
  const CallsiteInfo* callsite(uint32_t id) const;  // nullptr when unknown
  // Records issued but not completed, oldest first.
  std::vector<const CallRecord*> pending() const;
};

// "Your line": the first frame outside torch/deepspeed/site-packages, else the innermost one;
// nullptr when the call-site has no frames.
const FrameInfo* your_line(const CallsiteInfo& callsite);
// What a record is called in reports: "barrier" for a one-element all_reduce issued by a
// function named barrier, else op_name ("all_reduce", "send", ...).
const char* display_op(const CallRecord& record);

// Reads a ledger file: opened O_NOFOLLOW, checked against trust.h (owner and mode of the file and
// of its directory), copied with snapshot_ledger, parsed.
// What the bytes are: a ledger file as the shim wrote it, or a copy of the memory a process
// mapped it at (what a debugger reads out of a process or a core: `hangshim ledger --image`),
// which ends at a page boundary, so bytes past the header's file size are the mapping's tail.
enum class LedgerBytes { File, MappingImage };

pyframes::Result<Ledger> read_ledger_file(const std::string& path, LedgerBytes kind = LedgerBytes::File);

// read_ledger_file for many ledgers: keeps the directory of the last one open with what its
// owner and mode were then (each file is still checked against them, trust.h) and reuses the
// memory of its copy, and of the records of a ledger handed back with recycle(). What a report
// over tens of thousands of ledgers reads them with.
class LedgerReader {
 public:
  LedgerReader();
  LedgerReader(const LedgerReader&) = delete;
  LedgerReader& operator=(const LedgerReader&) = delete;
  ~LedgerReader();
  pyframes::Result<Ledger> read(const std::string& path, LedgerBytes kind = LedgerBytes::File);
  // The same, and the consistent copy the ledger was parsed from into `copy` (snapshot.h: each
  // ring slot stable or marked busy, the parts not in use zero): what `hangshim export` ships,
  // so the other side parses the very bytes this side judged.
  pyframes::Result<Ledger> read(const std::string& path, std::vector<unsigned char>& copy);
  // Takes back the records of a ledger read here once the caller kept what it needs of them:
  // the next read fills the same memory (a ring's records are the largest thing a read
  // allocates; fresh memory for each ledger was most of a large report's page faults).
  void recycle(std::vector<CallRecord>&& records);

 private:
  pyframes::Result<Ledger> read_copy(const std::string& path, LedgerBytes kind, std::vector<unsigned char>* copy);

  std::string dir_;
  int dir_fd_ = -1;
  struct stat dir_st_ {};   // the directory's owner and mode, from when it was opened
  int dir_stat_errno_ = 0;  // why that fstat failed, 0 if it did not
  uint32_t euid_;  // who may have written a trusted ledger (trust.h); one system call, not one a file
  std::vector<unsigned char> bytes_;
  SnapshotScratch scratch_;
  std::vector<CallRecord> spare_records_;
};

// Reads a ledger from memory (`size` bytes at `data`, e.g. a mapping or a copy). `source`
// names it in messages.
pyframes::Result<Ledger> parse_ledger(const void* data, size_t size, const std::string& source,
                                      LedgerBytes kind = LedgerBytes::File);
// parse_ledger for a copy that nothing writes and whose ring slots are each stable or marked
// odd, as a snapshot makes them (an export carries one): each slot is read as plain memory,
// without the seqlock a live mapping needs. `records`, when given, is memory to read the records
// into (its capacity is what is reused; see LedgerReader::recycle).
pyframes::Result<Ledger> parse_ledger_copy(const void* data, size_t size, const std::string& source,
                                           std::vector<CallRecord>* records = nullptr);

}  // namespace hangshim::ledger
