// A Flight Recorder dump's fields in ledger terms (preload/report/inputs/flight_recorder/fr_*):
// profiling names and dtypes both ways, NCCL's count from tensor sizes and back for every op,
// the dump's schema read from a pickle (versions, groups, entries, what is skipped and why), a
// dump as the ledger the analysis reads, and the work over shared values bounded.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "report/inputs/flight_recorder/fr_dump.h"
#include "report/inputs/flight_recorder/fr_ledger.h"
#include "report/inputs/flight_recorder/fr_names.h"
#include "report/inputs/flight_recorder/pickle_reader.h"
#include "report/outputs/flight_recorder/pickle_writer.h"

using namespace hangshim::report::flight_recorder;
using hangshim::ledger::Op;
namespace pickle = hangshim::report::pickle;

namespace {

struct EntrySpec {
  std::string profiling = "nccl:all_reduce";
  std::string pg = "0";
  int64_t seq = 1;
  int64_t p2p_seq = 0;
  bool is_p2p = false;
  std::vector<std::vector<int64_t>> in = {{3, 4}};
  std::vector<std::vector<int64_t>> out = {{3, 4}};
  std::string dtype = "Float";
  std::string state = "completed";
  int frames = 2;
};

void sizes(pickle::PickleWriter& w, const std::vector<std::vector<int64_t>>& tensors) {
  w.begin_list();
  for (const auto& t : tensors) {
    w.begin_list();
    for (int64_t d : t) w.integer(d);
    w.end();
  }
  w.end();
}

void entry(pickle::PickleWriter& w, const EntrySpec& e, int64_t record_id) {
  w.begin_dict();
  w.string("frames");
  w.begin_list();
  for (int i = 0; i < e.frames; ++i) {
    w.begin_dict();
    w.string("name");
    w.string(i == 0 ? "all_reduce" : "train");
    w.string("filename");
    w.string(i == 0 ? "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py" : "/job/train.py");
    w.string("line");
    w.integer(i == 0 ? 2501 : 80 + i);
    w.end();
  }
  w.end();
  w.string("record_id");
  w.integer(record_id);
  w.string("pg_id");
  w.integer(e.pg == "0" ? 0 : 1);
  w.string("process_group");
  w.begin_tuple();
  w.string(e.pg);
  w.string(e.pg == "0" ? "default_pg" : "undefined");
  w.end();
  w.string("collective_seq_id");
  w.integer(e.seq);
  w.string("p2p_seq_id");
  w.integer(e.p2p_seq);
  w.string("profiling_name");
  w.string(e.profiling);
  w.string("time_created_ns");
  w.integer(1000 + record_id);
  for (const auto& [side, shapes] : {std::pair{"input", &e.in}, std::pair{"output", &e.out}}) {
    w.string(std::string(side) + "_sizes");
    sizes(w, *shapes);
    w.string(std::string(side) + "_dtypes");
    w.begin_list();
    w.string(e.dtype);
    w.end();
  }
  w.string("state");
  w.string(e.state);
  w.string("time_discovered_completed_ns");
  if (e.state == "completed") {
    w.integer(2000 + record_id);
  } else {
    w.none();
  }
  w.string("is_p2p");
  w.boolean(e.is_p2p);
  w.end();
}

// A dump of rank `rank` in a world of 4, with a second group "1" of ranks 1-3.
std::string make_dump(const std::vector<EntrySpec>& entries, const std::string& version = "2.10") {
  pickle::PickleWriter w;
  w.begin_dict();
  w.string("version");
  w.string(version);
  w.string("pg_config");
  w.begin_dict();
  for (auto [name, ranks] : {std::pair{"0", "[0, 1, 2, 3]"}, std::pair{"1", "[1,2,3]"}}) {
    w.string(name);
    w.begin_dict();
    w.string("name");
    w.string(name);
    w.string("desc");
    w.string(std::string(name) == "0" ? "default_pg" : "undefined");
    w.string("ranks");
    w.string(ranks);
    w.end();
  }
  w.end();
  w.string("pg_status");
  w.begin_dict();
  w.string("0");
  w.begin_dict();
  w.string("last_enqueued_collective");
  w.integer(9);
  w.string("last_completed_collective");
  w.integer(7);
  w.end();
  w.end();
  w.string("entries");
  w.begin_list();
  for (size_t i = 0; i < entries.size(); ++i) entry(w, entries[i], static_cast<int64_t>(i));
  w.end();
  w.end();
  auto bytes = w.finish();
  REQUIRE(bytes);
  return *bytes;
}

pyframes::Result<Dump> read(const std::string& bytes) {
  auto doc = pickle::read_pickle(bytes);
  REQUIRE(doc);
  return read_dump(*doc, bytes.size());
}

}  // namespace

TEST_CASE("flight recorder: profiling names both ways") {
  struct Case {
    const char* name;
    Op op;
    bool barrier;
  };
  for (auto c : {Case{"nccl:all_reduce", Op::AllReduce, false}, Case{"nccl:all_reduce_barrier", Op::AllReduce, true},
                 Case{"nccl:barrier", Op::AllReduce, true}, Case{"nccl:_allgather_base", Op::AllGather, false},
                 Case{"nccl:reduce_scatter_tensor_coalesced", Op::ReduceScatter, false},
                 Case{"xccl:broadcast", Op::Broadcast, false}, Case{"nccl:all_to_all", Op::AlltoAll, false},
                 Case{"nccl:gather", Op::Gather, false}, Case{"nccl:scatter", Op::Scatter, false},
                 Case{"nccl:_reduce_oop", Op::Reduce, false}}) {
    CAPTURE(std::string(c.name));
    auto parsed = parse_profiling_name(c.name);
    REQUIRE(parsed);
    CHECK(parsed->op == c.op);
    CHECK(parsed->barrier == c.barrier);
  }
  auto send = parse_profiling_name("nccl:send 1->3");
  REQUIRE(send);
  CHECK((send->op == Op::Send && send->self == 1 && send->peer == 3));
  auto recv = parse_profiling_name("nccl:recv 3<-1");
  REQUIRE(recv);
  CHECK((recv->op == Op::Recv && recv->self == 3 && recv->peer == 1));
  CHECK(parse_profiling_name("nccl:coalesced")->coalesced_end);
  for (const char* bad : {"all_reduce", "nccl:split", "nccl:send 1-3", "nccl:send x->1", "nccl:recv 1<-99999999"}) {
    CAPTURE(std::string(bad));
    CHECK(!parse_profiling_name(bad));
  }
  // What the export writes, the reader reads back as the same op and peers.
  for (Op op : {Op::AllReduce, Op::Broadcast, Op::Reduce, Op::AllGather, Op::ReduceScatter, Op::AlltoAll, Op::Gather,
                Op::Scatter, Op::Send, Op::Recv, Op::WindowRegister}) {
    std::string name = profiling_name(op, 0, 2, 5);
    CAPTURE(name);
    auto back = parse_profiling_name(name);
    REQUIRE(back);
    CHECK(back->op == op);
    if (op == Op::Send || op == Op::Recv) CHECK((back->self == 2 && back->peer == 5));
  }
  CHECK(parse_profiling_name(profiling_name(Op::AllReduce, hangshim::ledger::kRecordBarrier, 0, -1))->barrier);
  CHECK(profiling_name(Op::CommInitRank, 0, 0, -1).empty());
}

TEST_CASE("flight recorder: dtypes and element counts both ways") {
  for (uint8_t dtype = 0; dtype < 12; ++dtype) {
    CAPTURE(int{dtype});
    CHECK(nccl_dtype(c10_dtype(dtype)) == dtype);
  }
  CHECK(nccl_dtype("Bool") == 1);
  CHECK(nccl_dtype("ComplexFloat") == 255);
  CHECK(std::string(c10_dtype(255)).empty());
  for (Op op : {Op::AllReduce, Op::Broadcast, Op::Reduce, Op::AllGather, Op::ReduceScatter, Op::AlltoAll, Op::Gather,
                Op::Scatter, Op::Send, Op::Recv}) {
    TensorElements t = tensor_elements(op, 12, 4);
    CAPTURE(hangshim::ledger::op_name(static_cast<uint8_t>(op)));
    CHECK(nccl_count(op, t.input, t.output, 4) == 12);
  }
  CHECK(tensor_elements(Op::AllGather, 12, 4).output == 48);
  CHECK(tensor_elements(Op::ReduceScatter, 12, 4).input == 48);
  CHECK(tensor_elements(Op::AllGather, UINT64_MAX / 2, 4).output == UINT64_MAX);  // saturates
}

TEST_CASE("flight recorder: a dump's fields, and what is skipped") {
  EntrySpec gather;
  gather.profiling = "nccl:all_gather";
  gather.seq = 2;
  gather.in = {{3, 4}};
  gather.out = {{12, 4}};
  EntrySpec send;
  send.profiling = "nccl:send 0->2";
  send.pg = "1";
  send.is_p2p = true;
  send.seq = 0;
  send.p2p_seq = 1;
  send.state = "scheduled";
  EntrySpec split;
  split.profiling = "nccl:split";
  EntrySpec bad_state;
  bad_state.state = "lost";
  EntrySpec deep;
  deep.seq = 3;
  deep.frames = 100;
  deep.state = "started";
  auto dump = read(make_dump({EntrySpec{}, gather, send, split, bad_state, split, deep}));
  REQUIRE(dump);
  CHECK(dump->version == "2.10");
  CHECK((dump->major == 2 && dump->minor == 10));
  REQUIRE(dump->groups.size() == 2);
  CHECK(dump->groups[0].ranks == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(dump->groups[1].ranks == std::vector<int32_t>{1, 2, 3});
  REQUIRE(dump->entries.size() == 4);
  CHECK(dump->entries[0].input_elements == 12);
  CHECK(dump->entries[1].output_elements == 48);
  CHECK(dump->entries[2].op.op == Op::Send);
  CHECK(dump->entries[3].frames.size() == kMaxFrames);
  CHECK(dump->entries[3].frames_cut);
  CHECK(dump->entries[3].state == EntryState::Started);
  REQUIRE(dump->warnings.size() == 2);
  CHECK(dump->warnings[0] == "2 entries (the first: entry 3): \"nccl:split\" is no operation hangshim follows");
  CHECK(dump->warnings[1] == "entry 4: state \"lost\" (scheduled, started or completed expected)");
  CHECK(dump->status.at(0).last_completed == 7);

  // As rank 2's ledger: both groups, its rank in each, the calls with their ops and counts.
  DumpOrigin origin{"/dumps/trace_2", "dumps:/dumps", 2, 5000};
  auto l = dump_to_ledger(*dump, origin);
  CHECK(l.header.rank == 2);
  CHECK(l.header.world_size == 4);
  REQUIRE(l.comms.size() == 2);
  CHECK((l.comms[0].rank == 2 && l.comms[0].nranks == 4 && l.comms[0].name.empty()));
  CHECK((l.comms[1].rank == 1 && l.comms[1].nranks == 3 && l.comms[1].name == "pg 1"));
  CHECK(l.comms[0].coll_issued == 3);
  CHECK(l.comms[0].coll_completed == 3);  // pg_status says 7, but nothing past #3 was issued
  CHECK((l.comms[1].p2p_issued == 1 && l.comms[1].p2p_completed == 0));
  REQUIRE(l.records.size() == 4);
  CHECK((l.records[0].op == static_cast<uint8_t>(Op::AllReduce) && l.records[0].count == 12 && l.records[0].dtype == 7));
  CHECK((l.records[1].op == static_cast<uint8_t>(Op::AllGather) && l.records[1].count == 12));
  CHECK((l.records[2].op == static_cast<uint8_t>(Op::Send) && l.records[2].seq == 1 && l.records[2].peer == 2 &&
         l.records[2].completed_ns == 0 && l.records[2].returned_ns != 0));
  CHECK(l.records[3].completed_ns == 0);  // "started" is still pending
  CHECK(l.records[0].completed_ns == 2000);
  // Call-sites: the same frames are one call-site, its iterations counted; C++ frames are not yours.
  CHECK(l.records[0].callsite == l.records[1].callsite);
  CHECK(l.records[1].callsite_hit == 2);
  REQUIRE(!l.callsites.empty());
  CHECK(!l.callsites[0].frames[0].library);  // a .py file: the report's patterns decide (torch/ is a library)
  // The same group has the same key in every rank's dump, and another group another key.
  origin.rank = 3;
  auto l3 = dump_to_ledger(*dump, origin);
  CHECK(l3.comms[0].key == l.comms[0].key);
  CHECK(l3.comms[1].key == l.comms[1].key);
  CHECK(l.comms[0].key != l.comms[1].key);
  // Rank 0 is not in group 1: one communicator, and the send (on group 1) left out with a warning.
  origin.rank = 0;
  auto l0 = dump_to_ledger(*dump, origin);
  CHECK(l0.comms.size() == 1);
  CHECK(l0.records.size() == 3);
}

TEST_CASE("flight recorder: dumps refused, with what is wrong") {
  auto refused = [](const std::string& bytes) {
    auto doc = pickle::read_pickle(bytes);
    REQUIRE(doc);
    auto d = read_dump(*doc, bytes.size());
    REQUIRE(!d);
    return d.error().message;
  };
  CHECK(refused(make_dump({}, "3.0")) == "Flight Recorder dump version \"3.0\"; hangshim reads versions 2.x");
  CHECK(refused(make_dump({}, "2")) == "Flight Recorder dump version \"2\"; hangshim reads versions 2.x");
  pickle::PickleWriter list;
  list.begin_list();
  list.end();
  CHECK(refused(*list.finish()) == "a pickle of a list, not a Flight Recorder dump");
  pickle::PickleWriter no_entries;
  no_entries.begin_dict();
  no_entries.string("version");
  no_entries.string("2.5");
  no_entries.end();
  CHECK(refused(*no_entries.finish()) == "a pickled dict without \"entries\", not a Flight Recorder dump");
}

TEST_CASE("flight recorder: ranks from file names") {
  CHECK(rank_from_file_name("/tmp/nccl_trace_rank_0") == 0);
  CHECK(rank_from_file_name("dumps/trace_17") == 17);
  CHECK(rank_from_file_name("trace_") == -1);
  CHECK(rank_from_file_name("trace_12345678") == -1);  // beyond any rank count
  CHECK(rank_from_file_name("trace_3.pkl") == -1);
}

TEST_CASE("flight recorder: one entry shared by every place in the list costs work, not time") {
  // 200000 references to one entry dict of 400 keys: 2 bytes each in the file, hundreds of key
  // comparisons each to read. Refused as a dump no writer makes, after bounded work.
  pickle::PickleWriter w;
  w.begin_dict();
  w.string("version");
  w.string("2.5");
  w.string("pg_config");
  w.begin_dict();
  w.end();
  w.string("entries");
  w.begin_list();
  w.end();
  w.end();
  std::string bytes = *w.finish();
  // The same with "entries" a list of one dict of 400 keys, memoized once and fetched again and again.
  auto binunicode = [](const std::string& text) {
    std::string out = "X";
    for (int i = 0; i < 4; ++i) out += static_cast<char>(text.size() >> (8 * i));
    return out + text;
  };
  std::string hostile = std::string("\x80\x02}(", 4) + binunicode("version") + binunicode("2.5") + binunicode("pg_config") +
                        "}" + binunicode("entries") + "](}(";
  for (int k = 0; k < 400; ++k) hostile += binunicode(std::to_string(100 + k)) + "N";
  hostile += std::string("uq\x00", 3);
  for (int i = 0; i < 200000; ++i) hostile += std::string("h\x00", 2);
  hostile += "eu.";
  auto doc = pickle::read_pickle(hostile);
  REQUIRE_MESSAGE(doc, (doc ? std::string() : doc.error().message));
  auto d = read_dump(*doc, hostile.size());
  REQUIRE(!d);
  CHECK(d.error().message.find("values shared or repeated far more than a Flight Recorder dump's") != std::string::npos);
  CHECK(read_dump(*pickle::read_pickle(bytes), bytes.size()));
}
