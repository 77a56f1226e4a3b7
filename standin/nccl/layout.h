// The shared-memory layout of one communicator of the NCCL stand-in.
//
// One POSIX shared-memory segment per communicator holds everything the ranks exchange:
//   header | nranks rank slots | nranks staging areas | nranks^2 p2p channels | channel data
// Every field that another process reads while it changes is accessed through std::atomic_ref;
// there are no locks, so a rank that dies at any instruction cannot leave the segment in a state
// that breaks the others: they simply keep waiting for it, which is exactly a hang.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace fakenccl {

inline constexpr std::uint64_t kSegmentMagic = 0x68616e677368696dULL;  // "hangshim"
inline constexpr std::uint32_t kLayoutVersion = 1;
inline constexpr std::uint32_t kSegmentReady = 0x52454459;  // written last by the creator
inline constexpr int kMaxRanks = 64;

// Default staging sizes; HANGSHIM_FAKE_CHUNK_BYTES overrides both (tests force chunking with it).
inline constexpr std::uint64_t kDefaultCollChunkBytes = 128 * 1024;
inline constexpr std::uint64_t kDefaultP2pChunkBytes = 32 * 1024;
// One round must carry at least one element of the widest type for every rank.
inline constexpr std::uint64_t kMinChunkBytes = 8 * kMaxRanks;

enum class OpKind : std::uint32_t {
  kAllReduce = 1,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAlltoAll,
  kGather,
  kScatter,
  kSplit,  // ncclCommSplit's exchange of (color, key); not a collective in NCCL's count
  kSend,
  kRecv,
  kWindow,  // ncclCommWindowRegister/Deregister's exchange of sizes: a collective in NCCL's count
};

// What a rank posted for one round of a collective. Ranks that issued the same call post equal
// descriptors; any difference (count, type, root, reduction, op) keeps every rank waiting.
struct CollDesc {
  std::uint64_t seq;          // 1-based collective number on the communicator
  std::uint64_t count;        // the call's count argument
  std::uint32_t kind;         // OpKind
  std::int32_t datatype;      // ncclDataType_t
  std::int32_t redop;         // ncclRedOp_t, -1 where the op does not reduce
  std::int32_t root;          // -1 where the op has no root
  std::uint32_t round_index;  // chunk j ...
  std::uint32_t round_count;  // ... of n
};

inline bool operator==(const CollDesc& a, const CollDesc& b) {
  return a.seq == b.seq && a.count == b.count && a.kind == b.kind && a.datatype == b.datatype &&
         a.redop == b.redop && a.root == b.root && a.round_index == b.round_index &&
         a.round_count == b.round_count;
}

// What a sender posted for one chunk on a (src, dst) channel.
struct P2pDesc {
  std::uint64_t message;  // 1-based message number on the channel
  std::uint64_t count;
  std::int32_t datatype;
  std::uint32_t chunk_index;
  std::uint32_t chunk_count;
  std::uint32_t reserved;
};

// Per-rank state of the round protocol. Round k: a rank may post (copy its data into its staging
// area, then publish `posted = k`) once every rank has `consumed >= k - 1`; it may read once every
// rank has `posted >= k` with an equal descriptor; after reading it publishes `consumed = k`.
struct alignas(64) RankSlot {
  std::uint64_t posted;
  std::uint64_t consumed;
  CollDesc desc;
  std::int32_t pid;
  std::uint32_t joined;  // 1 once the rank has attached
};

// One direction between two ranks. Chunk c may be posted when `posted == acked == c`; the
// receiver reads it when `posted > c` and then publishes `acked = c + 1`.
struct alignas(64) Channel {
  std::uint64_t posted;
  std::uint64_t acked;
  P2pDesc desc;
};

struct alignas(64) SegmentHeader {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t nranks;
  std::uint64_t coll_chunk_bytes;
  std::uint64_t p2p_chunk_bytes;
  std::uint64_t total_bytes;
  std::int32_t creator_pid;
  std::uint32_t ready;     // kSegmentReady once the fields above are valid
  std::uint32_t joined;    // number of ranks attached
  std::uint32_t wake_gen;  // futex word: bumped after every state change anyone may wait for
};

// Byte offsets of the regions for a given rank count and chunk sizes.
struct SegmentGeometry {
  std::uint64_t slots = 0;
  std::uint64_t staging = 0;
  std::uint64_t channels = 0;
  std::uint64_t channel_data = 0;
  std::uint64_t total = 0;
};

inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

inline SegmentGeometry segment_geometry(std::uint32_t nranks, std::uint64_t coll_chunk,
                                        std::uint64_t p2p_chunk) {
  SegmentGeometry g;
  g.slots = align_up(sizeof(SegmentHeader), 4096);
  g.staging = align_up(g.slots + nranks * sizeof(RankSlot), 4096);
  g.channels = align_up(g.staging + nranks * coll_chunk, 4096);
  g.channel_data = align_up(g.channels + std::uint64_t{nranks} * nranks * sizeof(Channel), 4096);
  g.total = align_up(g.channel_data + std::uint64_t{nranks} * nranks * p2p_chunk, 4096);
  return g;
}

// Atomic access to a plain field of the segment (another process may write it concurrently).
template <typename T>
T load_acquire(T& field) {
  return std::atomic_ref<T>(field).load(std::memory_order_acquire);
}
template <typename T>
void store_release(T& field, T value) {
  std::atomic_ref<T>(field).store(value, std::memory_order_release);
}

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free,
              "the segment protocol needs lock-free 64-bit atomics (address-free across processes)");
static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free);

}  // namespace fakenccl
