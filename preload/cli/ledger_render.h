// Renders one ledger for `hangshim ledger`: text for people, JSON for machines. Both show the
// raw record of one process; the cross-rank diagnosis is `hangshim report`'s.
#pragma once

#include <cstdint>
#include <string>

#include "ledger/reader.h"

namespace hangshim::cli {

struct LedgerRenderOptions {
  size_t max_records = 32;  // text: the newest N records (0 = all); JSON always has all
  uint64_t now_ns = 0;      // CLOCK_REALTIME "now" for ages ("3.2 s ago")
};

std::string render_ledger_text(const ledger::Ledger& ledger, const LedgerRenderOptions& options);
std::string render_ledger_json(const ledger::Ledger& ledger);

// Shared formatting helpers (also for other subcommands).
std::string format_key(uint64_t key);                 // 16 hex digits
std::string format_wall_time(uint64_t realtime_ns);   // "2024-05-01 12:34:56.789" local time, "-" for 0
std::string format_duration(uint64_t ns);             // "850 ns", "1.2 ms", "3.4 s", "2 min 5 s"
std::string format_frame(const ledger::FrameInfo& frame);  // "train.py:88 in train_step"

}  // namespace hangshim::cli
