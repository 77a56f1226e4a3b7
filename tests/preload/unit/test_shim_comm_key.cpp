// Communicator keys: the same inputs give the same key on every rank, and any difference in
// what NCCL would treat as another communicator gives another key.
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <vector>

#include "shim/core/comm_key.h"

using namespace hangshim::shim;

TEST_CASE("comm keys: unique ids") {
  unsigned char id[128];
  for (int i = 0; i < 128; ++i) id[i] = static_cast<unsigned char>(i * 7);
  uint64_t key = key_from_unique_id(id, sizeof id);
  CHECK(key != 0);
  CHECK(key == key_from_unique_id(id, sizeof id));
  std::set<uint64_t> keys{key};
  for (int byte = 0; byte < 128; ++byte) {  // every byte counts
    unsigned char other[128];
    std::memcpy(other, id, sizeof id);
    other[byte] ^= 1;
    keys.insert(key_from_unique_id(other, sizeof other));
  }
  CHECK(keys.size() == 129);
  unsigned char ids[3][128] = {};
  ids[1][0] = 1;
  CHECK(key_from_unique_ids(ids, 3, 128) != key_from_unique_ids(ids, 2, 128));
  CHECK(key_from_unique_ids(ids, 1, 128) != key_from_unique_id(ids[0], 128));  // kinds differ
}

TEST_CASE("comm keys: splits follow parent, split count and color") {
  uint64_t parent = 0x1234;
  uint64_t k = key_from_split(parent, 0, 1);
  CHECK(k == key_from_split(parent, 0, 1));
  CHECK(k != key_from_split(parent, 1, 1));
  CHECK(k != key_from_split(parent, 0, 2));
  CHECK(k != key_from_split(parent + 1, 0, 1));
  CHECK(key_from_split(parent, 0, 0) != key_from_split(parent, 0, 1));
}

TEST_CASE("comm keys: shrinks do not depend on the order of the excluded ranks") {
  std::vector<int> a{3, 1, 2};
  std::vector<int> b{1, 2, 3};
  std::vector<int> c{1, 2};
  CHECK(key_from_shrink(7, 0, a) == key_from_shrink(7, 0, b));
  CHECK(key_from_shrink(7, 0, a) != key_from_shrink(7, 0, c));
  CHECK(key_from_shrink(7, 0, a) != key_from_shrink(7, 1, a));
  CHECK(key_from_shrink(7, 0, c) != key_from_split(7, 0, 1));
}

TEST_CASE("comm keys: local keys name host, pid and call") {
  CHECK(key_from_init_all("node1", 10, 0) != key_from_init_all("node1", 10, 1));
  CHECK(key_from_init_all("node1", 10, 0) != key_from_init_all("node2", 10, 0));
  CHECK(key_from_unknown("node1", 10, 0xabc0) != key_from_unknown("node1", 11, 0xabc0));
}
