// One communicator's shared-memory segment: joining it (the first rank to arrive creates it),
// typed access to its regions, waking waiters, and releasing it.
#pragma once

#include "layout.h"
#include "wait.h"

#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <string>

namespace fakenccl {

class Segment {
 public:
  Segment() = default;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment() { release(); }

  // Maps the segment `name` (creating it if this rank is first) and claims slot `rank`.
  // Does not wait for the other ranks (see all_joined()); `abort` lets a caller give up.
  ncclResult_t join(const std::string& name, int nranks, int rank, const Deadline& deadline,
                    const std::atomic<bool>* abort);
  // Unmaps; removes the name too if not every rank had joined (nobody else will need it).
  void release();

  bool mapped() const { return base_ != nullptr; }
  const std::string& name() const { return name_; }
  int nranks() const { return static_cast<int>(header().nranks); }
  bool all_joined() const { return load_acquire(header().joined) == header().nranks; }

  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(base_); }
  RankSlot& slot(int rank) const {
    return reinterpret_cast<RankSlot*>(base_ + geometry_.slots)[rank];
  }
  std::byte* staging(int rank) const {
    return base_ + geometry_.staging + static_cast<std::uint64_t>(rank) * coll_chunk_bytes();
  }
  Channel& channel(int src, int dst) const {
    return reinterpret_cast<Channel*>(base_ + geometry_.channels)[channel_index(src, dst)];
  }
  std::byte* channel_data(int src, int dst) const {
    return base_ + geometry_.channel_data + channel_index(src, dst) * p2p_chunk_bytes();
  }
  std::uint64_t coll_chunk_bytes() const { return header().coll_chunk_bytes; }
  std::uint64_t p2p_chunk_bytes() const { return header().p2p_chunk_bytes; }

  std::uint32_t* wake_word() const { return &header().wake_gen; }
  // Publishes a state change to every rank waiting on this segment.
  void wake_all() const { futex_bump_and_wake(wake_word()); }

 private:
  std::uint64_t channel_index(int src, int dst) const {
    return static_cast<std::uint64_t>(src) * header().nranks + static_cast<std::uint64_t>(dst);
  }
  ncclResult_t create(int fd, int nranks);
  ncclResult_t map_existing(int fd, int nranks, const Deadline& deadline,
                            const std::atomic<bool>* abort);

  std::string name_;
  std::byte* base_ = nullptr;
  std::uint64_t size_ = 0;
  SegmentGeometry geometry_;
  bool counted_join_ = false;
};

// Removes segments of this stand-in that no live process belongs to: left behind when every
// process that had joined was killed before the last rank arrived. Called by ncclGetUniqueId.
void remove_stale_segments();

}  // namespace fakenccl
