// The stand-in's ncclUniqueId: a magic, the creating pid and 16 random bytes. It names the
// shared-memory segment of the communicator, so every rank given the same id meets in one place;
// a fresh random id per run means segments left by killed runs never collide with later ones.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>

namespace fakenccl {

inline constexpr char kUniqueIdMagic[8] = {'H', 'S', 'F', 'A', 'K', 'E', 'I', 'D'};

ncclResult_t make_unique_id(ncclUniqueId* id);
// The shared-memory name for a communicator created from `id`; fails for ids this stand-in did
// not produce (e.g. zero-filled or from a real NCCL).
ncclResult_t segment_name_for_id(const ncclUniqueId& id, std::string& name);
// The name of the child communicator of ncclCommSplit: the same on every rank of the child,
// derived from the parent's name, how many splits the parent has done, and the color.
std::string segment_name_for_split(const std::string& parent, std::uint64_t split_index, int color);

}  // namespace fakenccl
