// Helpers shared by the ledger unit tests: a private temporary directory and a ledger in it.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "ledger/writer.h"

namespace ledger_test {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/hangshim-unit-XXXXXX";
    char* made = mkdtemp(pattern);
    path_ = made != nullptr ? made : "";
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline hangshim::ledger::Identity test_identity() {
  hangshim::ledger::Identity id;
  id.pid = getpid();
  id.ppid = getppid();
  id.uid = getuid();
  id.rank = 3;
  id.world_size = 8;
  id.local_rank = 3;
  id.start_ns = 1700000000000000000ull;
  id.stall_seconds = 300;
  id.host = "unit-host";
  id.job = "job-42";
  id.command = "python train.py --epochs 3";
  id.shim_version = "test";
  return id;
}

inline std::unique_ptr<hangshim::ledger::Writer> make_writer(const std::string& path,
                                                            hangshim::ledger::Geometry geometry = {}) {
  auto made = hangshim::ledger::Writer::create(path, geometry, test_identity());
  if (!made) return nullptr;
  return std::move(made.value());
}

}  // namespace ledger_test
