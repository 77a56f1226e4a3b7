// The seed makers' memory: it passes every read to the real one (a core, a live process) and
// remembers the range of each successful read, so the seed can keep exactly what the reader used.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pyframes/memory.h"

class RecordingMemory final : public pyframes::Memory {
 public:
  // grain: kept ranges are rounded out to multiples of it (a power of two; 1 keeps them exact).
  explicit RecordingMemory(const pyframes::Memory& inner, uint64_t grain = 1) : inner_(inner), grain_(grain) {}

  pyframes::ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override {
    pyframes::ReadStatus status = inner_.read(address, out, size);
    if (status == pyframes::ReadStatus::Ok && size > 0) keep(address, address + size);
    return status;
  }
  std::string describe() const override { return inner_.describe(); }

  // Keeps [start, end) as if it had been read.
  void keep(uint64_t start, uint64_t end) const {
    std::lock_guard<std::mutex> lock(mutex_);
    start &= ~(grain_ - 1);
    end = (end + grain_ - 1) & ~(grain_ - 1);
    uint64_t& kept_end = ranges_[start];
    kept_end = std::max(kept_end, end);
  }

  // The kept ranges, merged: touching or closer than `gap` bytes become one.
  std::vector<std::pair<uint64_t, uint64_t>> merged(uint64_t gap) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const auto& [start, end] : ranges_) {
      if (!out.empty() && start <= out.back().second + gap) {
        out.back().second = std::max(out.back().second, end);
      } else {
        out.emplace_back(start, end);
      }
    }
    return out;
  }

 private:
  const pyframes::Memory& inner_;
  uint64_t grain_;
  mutable std::mutex mutex_;
  mutable std::map<uint64_t, uint64_t> ranges_;
};
