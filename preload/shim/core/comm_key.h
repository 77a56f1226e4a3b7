// Communicator keys: equal on every rank of a communicator, derived without any communication
// from what every rank passes to NCCL (see ARCHITECTURE.md, "Communicator key").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace hangshim::shim {

// ncclCommInitRank / ncclCommInitRankConfig: the 128-byte ncclUniqueId every rank received.
uint64_t key_from_unique_id(const void* id, size_t size) noexcept;
// ncclCommInitRankScalable: all the ids, in order.
uint64_t key_from_unique_ids(const void* ids, size_t count, size_t id_size) noexcept;
// ncclCommSplit: the parent's key, how many splits the parent made before this one (the same
// on every rank: ncclCommSplit is collective over the parent) and the color.
uint64_t key_from_split(uint64_t parent_key, uint32_t split_index, int32_t color) noexcept;
// ncclCommShrink: like a split, with the excluded ranks in place of the color.
uint64_t key_from_shrink(uint64_t parent_key, uint32_t split_index, std::span<const int> excluded) noexcept;
// ncclCommInitAll (one process drives every device): host, pid and the call's number.
uint64_t key_from_init_all(std::string_view host, int64_t pid, uint32_t call) noexcept;
// A communicator first seen in a collective (created before the shim could see it): local only.
uint64_t key_from_unknown(std::string_view host, int64_t pid, uint64_t handle) noexcept;

}  // namespace hangshim::shim
