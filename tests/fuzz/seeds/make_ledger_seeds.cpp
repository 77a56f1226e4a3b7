// Writes ledger seeds with the shim's own writer (preload/ledger/writer.h), in small
// geometries so that the fuzzer's mutations land on meaningful bytes: a healthy job whose ring
// wrapped, a stalled rank with pending calls and a stack dump name, a rank killed while writing
// a record (an odd stamp left behind), a rank that exited, and communicator splits.
//   make_ledger_seeds OUTDIR
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../../preload/unit/ledger_test_util.h"
#include "ledger/writer.h"

using namespace hangshim::ledger;

namespace {

// The ledger unit tests' identity (host, job, command line, start time), as rank `rank` of 4.
Identity identity(int rank) {
  Identity id = ledger_test::test_identity();
  id.pid = 1000 + rank;
  id.rank = rank;
  id.world_size = 4;
  id.local_rank = rank;
  return id;
}

Geometry small() {
  Geometry g;
  g.ring_capacity = 16;
  g.comm_capacity = 4;
  g.callsite_capacity = 4;
  g.callsite_depth = 4;
  g.strings_size = 4096;
  return g;
}

struct Job {
  std::unique_ptr<Writer> w;
  uint32_t world = 0, split = 0;
  uint32_t step = 0, reduce = 0;
};

Job start(const std::string& path, int rank) {
  auto made = Writer::create(path, small(), identity(rank));
  if (!made) {
    std::fprintf(stderr, "make_ledger_seeds: %s\n", made.error().message.c_str());
    std::exit(1);
  }
  Job job;
  job.w = std::move(made.value());
  CommInit world;
  world.key_kind = KeyKind::UniqueId;
  world.state = CommState::Active;
  world.key = 0x1234abcd5678ef01ull;
  world.handle = 0x5500;
  world.rank = rank;
  world.nranks = 4;
  world.device = rank;
  world.created_ns = 1700000000100000000ull;
  world.name = "world";
  job.world = job.w->add_comm(world);
  CommInit split = world;
  split.key_kind = KeyKind::Split;
  split.key = 0x99;
  split.parent_key = world.key;
  split.nranks = 2;
  split.rank = rank % 2;
  split.color = rank / 2;
  split.name = "";
  job.split = job.w->add_comm(split);
  FrameText step[] = {{"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", "all_reduce", 2050,
                       kFrameLibrary},
                      {"/job/train.py", "train_step", 88, 0},
                      {"/job/train.py", "main", 120, 0}};
  job.step = job.w->add_callsite(step, 1, 0, 1700000000200000000ull);
  FrameText reduce[] = {{"/job/train.py", "barrier", 40, 0}, {"/job/train.py", "<module>", 130, 0}};
  job.reduce = job.w->add_callsite(reduce, 0, kCallsiteBarrier, 1700000000300000000ull);
  return job;
}

void record(Job& job, int n, bool complete_last) {
  for (int i = 1; i <= n; ++i) {
    RecordStart s;
    s.op = i % 5 == 0 ? Op::Broadcast : Op::AllReduce;
    s.dtype = 7;
    s.red_op = s.op == Op::AllReduce ? 0 : -1;
    s.peer = s.op == Op::Broadcast ? 0 : -1;
    s.comm = i % 7 == 0 ? job.split : job.world;
    s.comm_key = i % 7 == 0 ? 0x99 : 0x1234abcd5678ef01ull;
    s.callsite = i % 9 == 0 ? job.reduce : job.step;
    s.callsite_hit = job.w->hit_callsite(s.callsite);
    s.seq = static_cast<uint64_t>(i);
    s.count = 1u << 20;
    s.thread = 4242;
    s.issued_ns = 1700000001000000000ull + static_cast<uint64_t>(i) * 1000000;
    uint64_t index = job.w->begin_record(s);
    if (i < n || complete_last) job.w->record_returned(index, s.issued_ns + 500, 0, 0, s.issued_ns + 900);
  }
  job.w->heartbeat(1700000002000000000ull);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_ledger_seeds OUTDIR\n");
    return 2;
  }
  std::string dir = argv[1];
  ::mkdir(dir.c_str(), 0700);
  {
    Job job = start(dir + "/healthy-wrapped.ledger", 0);
    record(job, 40, true);  // 40 calls through a ring of 16
  }
  {
    Job job = start(dir + "/stalled.ledger", 1);
    record(job, 9, false);
    Header& h = job.w->header();
    store_relaxed(h.stall_record, job.w->ring_head());
    store_relaxed(h.stall_ns, uint64_t{1700000003000000000ull});
    job.w->set_text(h.stacks_file, sizeof h.stacks_file, "hangshim-r00001-seed-node-1001.stacks.txt");
    job.w->set_state(ProcessState::Stalled);
  }
  {
    Job job = start(dir + "/killed-mid-write.ledger", 2);
    record(job, 5, true);
    RecordStart s;
    s.op = Op::AllGather;
    s.comm = job.world;
    uint64_t index = job.w->begin_record(s);
    // What SIGKILL between the two stamp stores leaves: an odd stamp, forever.
    RingEntry& e = *reinterpret_cast<RingEntry*>(
        reinterpret_cast<unsigned char*>(&job.w->header()) + job.w->header().ring_offset +
        ((index - 1) & (job.w->ring_capacity() - 1)) * sizeof(RingEntry));
    stamp_lock(e.stamp);
  }
  {
    Job job = start(dir + "/exited.ledger", 3);
    record(job, 3, true);
    store_relaxed(job.w->header().exit_ns, uint64_t{1700000004000000000ull});
    job.w->set_state(ProcessState::Exited);
  }
  return 0;
}
