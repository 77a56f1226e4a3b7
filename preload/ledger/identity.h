// Who wrote a ledger: the process identity in the header's "Identity" block (format.h), written
// once by the writer before it publishes the header. One definition serves both sides: the
// writer takes an Identity (writer.h), and the reader's LedgerHeader (reader.h) is an Identity
// plus what the header says about the file and the process's life since.
#pragma once

#include <cstdint>
#include <string>

namespace hangshim::ledger {

struct Identity {
  int64_t pid = 0;
  int64_t ppid = 0;
  uint32_t uid = 0;
  int32_t rank = -1;        // RANK, -1 when not set
  int32_t world_size = -1;  // WORLD_SIZE, -1 when not set
  int32_t local_rank = -1;  // LOCAL_RANK, -1 when not set
  uint64_t start_ns = 0;    // CLOCK_REALTIME when the ledger was created
  uint32_t stall_seconds = 0;
  std::string host;
  std::string job;
  std::string command;
  std::string shim_version;
};

}  // namespace hangshim::ledger
