// Synthetic ledgers written with the real ledger writer (preload/ledger/writer.h), for the
// classifier unit tests, the report benchmark and the collector tests: a rank's communicators,
// call-sites and the calls it made, in order, each completed or left pending. Sequence numbers,
// call-site hits and communicator counters follow the rules libhangshim.so follows
// (preload/shim/core/record_calls.cpp), so the report cannot tell these from a real job's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ledger/access.h"
#include "ledger/names.h"
#include "ledger/writer.h"

namespace synth {

using hangshim::ledger::Op;

struct Comm {
  hangshim::ledger::KeyKind kind = hangshim::ledger::KeyKind::UniqueId;
  hangshim::ledger::CommState state = hangshim::ledger::CommState::Active;
  uint64_t key = 0x5eed000000000001ull;
  int rank = 0;  // in the communicator
  int nranks = 1;
  uint64_t parent_key = 0;
  uint32_t split_index = 0;
  int color = -1;
  int32_t async_error = 0;  // what ncclCommGetAsyncError reported (0: none)
};

struct Frame {
  std::string file;
  std::string function;
  int line = 0;
  bool library = false;
};

struct Call {
  int comm = 0;  // index into Rank::comms
  Op op = Op::AllReduce;
  int site = 0;  // index into Rank::sites, -1 none
  uint64_t count = 16;
  uint8_t dtype = 7;  // float32
  int peer = -1;
  int red_op = 0;
  bool complete = true;
  bool barrier = false;
  bool captured = false;   // issued during CUDA graph capture (kRecordCaptured): done at return, as the shim has it
  int32_t result = 0;
  std::string error_text;  // a failed call's ncclGetLastError text for the first-error area
  uint64_t issued_ns = 0;  // when it was issued (0: 1 us after the previous call)
  uint64_t wait_ns = 0;    // issue to completion (0: 1 us)
};

struct Rank {
  int rank = 0;
  int world_size = 1;
  std::string host = "synth-node";
  int64_t pid = 0;
  uint64_t start_ns = 0;
  std::vector<Comm> comms;
  std::vector<std::vector<Frame>> sites;  // innermost first
  std::vector<Call> calls;
  hangshim::ledger::ProcessState state = hangshim::ledger::ProcessState::Running;
  bool watchdog = true;
  uint64_t heartbeat_ns = 0;
  // The job it belongs to (Header's job block): empty/0 as written by a plain LD_PRELOAD run.
  int64_t ppid = 0;
  uint64_t parent_start = 0;
  std::string slurm_job;
  std::string launcher;
};

struct Geometry {
  uint32_t ring = 256;
  uint32_t comms = 8;
  uint32_t callsites = 32;
  uint32_t depth = 8;
  uint32_t strings = 8192;
};

// Writes the ledger of `r` into `dir` under its standard name; returns the path.
inline hangshim::ledger::Writer* write_rank(const std::string& dir, const Rank& r, const Geometry& g, std::string* path_out,
                                            std::unique_ptr<hangshim::ledger::Writer>* keep) {
  using namespace hangshim::ledger;
  ::hangshim::ledger::Geometry geometry;
  geometry.ring_capacity = g.ring;
  geometry.comm_capacity = g.comms;
  geometry.callsite_capacity = g.callsites;
  geometry.callsite_depth = g.depth;
  geometry.strings_size = g.strings;
  Identity id;
  id.pid = r.pid != 0 ? r.pid : 100000 + r.rank;
  id.rank = r.rank;
  id.world_size = r.world_size;
  id.local_rank = r.rank % 8;
  id.start_ns = r.start_ns;
  id.stall_seconds = 300;
  id.host = r.host;
  id.command = "python train.py";
  id.shim_version = "synthetic";
  id.ppid = r.ppid;
  id.parent_start = r.parent_start;
  id.slurm_job = r.slurm_job;
  id.launcher = r.launcher;
  std::string path = dir + "/" + ledger_file_name(r.host, id.pid, r.rank);
  auto made = Writer::create(path, geometry, id);
  if (!made) return nullptr;
  Writer& w = *made.value();
  std::vector<uint32_t> comm_ids;
  for (const auto& c : r.comms) {
    CommInit init;
    init.key_kind = c.kind;
    init.state = c.state;
    init.key = c.key;
    init.parent_key = c.parent_key;
    init.rank = c.rank;
    init.nranks = c.nranks;
    init.device = c.rank % 8;
    init.color = c.color;
    init.split_index = c.split_index;
    init.created_ns = r.start_ns + comm_ids.size();
    comm_ids.push_back(w.add_comm(init));
    if (CommEntry* entry = w.comm(comm_ids.back()); entry != nullptr && c.async_error != 0) {
      store_relaxed(entry->async_error, c.async_error);
    }
  }
  std::vector<uint32_t> site_ids;
  for (const auto& frames : r.sites) {
    std::vector<FrameText> texts;
    int16_t user = -1;
    for (size_t i = 0; i < frames.size(); ++i) {
      texts.push_back({frames[i].file, frames[i].function, frames[i].line, frames[i].library ? uint32_t{kFrameLibrary} : 0u});
      if (!frames[i].library && user < 0) user = static_cast<int16_t>(i);
    }
    uint32_t flags = !frames.empty() && frames[0].function == "barrier" ? uint32_t{kCallsiteBarrier} : 0u;
    site_ids.push_back(w.add_callsite(texts, user, flags, r.start_ns));
  }
  uint64_t t = r.start_ns + 1000;
  for (const auto& call : r.calls) {
    CommEntry* c = w.comm(comm_ids.at(static_cast<size_t>(call.comm)));
    if (c == nullptr) return nullptr;  // the table is full: the geometry is too small
    bool p2p = is_p2p(call.op);
    bool counted = is_counted(call.op);
    RecordStart s;
    s.op = call.op;
    s.dtype = call.dtype;
    s.peer = call.peer;
    s.red_op = call.red_op;
    s.comm = comm_ids[static_cast<size_t>(call.comm)];
    s.comm_key = c->key;
    if (counted) {
      s.seq = fetch_add_relaxed(p2p ? c->p2p_issued : c->coll_issued, uint64_t{1}) + 1;
      if (has_op_count(call.op)) fetch_add_relaxed(c->op_counts[static_cast<int>(call.op) - 1], uint64_t{1});
    }
    s.count = call.count;
    if (call.issued_ns != 0) t = call.issued_ns;
    s.issued_ns = t;
    s.thread = static_cast<uint32_t>(id.pid);
    if (call.site >= 0) {
      s.callsite = site_ids.at(static_cast<size_t>(call.site));
      s.callsite_hit = w.hit_callsite(s.callsite);
    }
    if (call.barrier) s.flags |= kRecordBarrier;
    uint16_t returned_flags = call.captured ? uint16_t{kRecordCaptured} : uint16_t{0};
    uint64_t index = w.begin_record(s);
    t += call.wait_ns != 0 ? call.wait_ns : 1000;
    if (call.complete || call.result != 0) {
      w.record_returned(index, t, call.result, returned_flags, t);
      if (is_failure(call.result) && !call.error_text.empty()) w.set_first_error(index, call.result, call.op, call.error_text.c_str());
      if (call.result == 0 && counted) store_max_relaxed(p2p ? c->p2p_completed : c->coll_completed, s.seq);
    } else if (counted) {
      w.record_returned(index, t, 0, returned_flags, 0);  // returned, still pending (asynchronous)
    }  // else: still inside the call (communicator init)
    t += 1000;
  }
  w.add_features(kFeatureCallsites | (r.watchdog ? uint32_t{kFeatureWatchdog} : 0u));
  if (r.watchdog) w.heartbeat(r.heartbeat_ns != 0 ? r.heartbeat_ns : t);
  w.set_state(r.state);
  if (r.state == ProcessState::Exited) store_relaxed(w.header().exit_ns, t);
  if (path_out != nullptr) *path_out = path;
  Writer* raw = made.value().get();
  *keep = std::move(made.value());
  return raw;
}

// Writes and closes; false on failure.
inline bool write(const std::string& dir, const Rank& r, const Geometry& g = {}, std::string* path = nullptr) {
  std::unique_ptr<hangshim::ledger::Writer> keep;
  return write_rank(dir, r, g, path, &keep) != nullptr;
}

// A training step's call-site: the user's line in train.py calling a library's all_reduce.
inline std::vector<Frame> site(const std::string& file, const std::string& function, int line,
                               const std::string& collective = "all_reduce") {
  return {{"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", collective, 2050, true},
          {file, function, line, false},
          {file, "main", 200, false}};
}

}  // namespace synth
