#include "shim/core/comm_key.h"

#include "shim/core/hash.h"

namespace hangshim::shim {

// Each kind has its own seed, so keys of different kinds never coincide by construction.
uint64_t key_from_unique_id(const void* id, size_t size) noexcept {
  return Hasher(0x756e697175656964ull).add_bytes(id, size).value();
}

uint64_t key_from_unique_ids(const void* ids, size_t count, size_t id_size) noexcept {
  Hasher h(0x6d756c7469696473ull);
  h.add(count);
  h.add_bytes(ids, count * id_size);
  return h.value();
}

uint64_t key_from_split(uint64_t parent_key, uint32_t split_index, int32_t color) noexcept {
  return Hasher(0x73706c6974636f6cull).add(parent_key).add(split_index).add(static_cast<uint32_t>(color)).value();
}

uint64_t key_from_shrink(uint64_t parent_key, uint32_t split_index, std::span<const int> excluded) noexcept {
  // Order-independent over the excluded ranks: every rank lists the same set, maybe not in the
  // same order.
  uint64_t set = 0;
  for (int rank : excluded) set += mix64(static_cast<uint32_t>(rank) + 1);
  return Hasher(0x736872696e6b6578ull).add(parent_key).add(split_index).add(excluded.size()).add(set).value();
}

uint64_t key_from_init_all(std::string_view host, int64_t pid, uint32_t call) noexcept {
  return Hasher(0x696e6974616c6c73ull).add_bytes(host.data(), host.size()).add(static_cast<uint64_t>(pid)).add(call).value();
}

uint64_t key_from_unknown(std::string_view host, int64_t pid, uint64_t handle) noexcept {
  return Hasher(0x756e6b6e6f776e63ull).add_bytes(host.data(), host.size()).add(static_cast<uint64_t>(pid)).add(handle).value();
}

}  // namespace hangshim::shim
