#include "report/outputs/flight_recorder/fr_export.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/inputs/flight_recorder/fr_names.h"
#include "report/inputs/flight_recorder/pickle_utf8.h"
#include "report/outputs/flight_recorder/pickle_writer.h"

namespace hangshim::report::flight_recorder {

using ledger::Op;
using pickle::PickleWriter;

namespace {

// PyTorch's default collective timeout (10 minutes), for a job whose ledger names no limit of
// its own: a dump must have timeout_ms, and no tool reads more into it.
constexpr int64_t kDefaultTimeoutMs = 600000;

// A communicator as a process group: the first world is PyTorch's default group ("0",
// "default_pg"); the others are named by their key, described by the report's name for them
// ("world/split1"). Ranks are global ranks in communicator-rank order.
struct Group {
  std::string name;
  std::string desc;
  std::vector<int> ranks;
};

// ncclGetVersion's code as NCCL spells the version: 22809 -> "2.28.9" (1000s before 2.9).
std::string nccl_version_text(int32_t code) {
  if (code <= 0) return "";
  int32_t major = code >= 10000 ? code / 10000 : code / 1000;
  int32_t minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return fmt::format("{}.{}.{}", major, minor, code % 100);
}

std::vector<Group> groups_of(const Analysis& a, std::vector<std::string>& warnings) {
  std::vector<Group> groups(a.groups.size());
  bool default_named = false;
  for (size_t i = 0; i < a.groups.size(); ++i) {
    const CommSummary& s = a.comms[i];
    Group& g = groups[i];
    bool is_default = !default_named && s.global_ranks;
    default_named = default_named || is_default;
    g.name = is_default ? "0" : fmt::format("{:016x}", a.groups[i].key);
    g.desc = is_default ? "default_pg" : s.name;
    std::vector<int> by_comm_rank(static_cast<size_t>(std::max(s.nranks, 0)), -1);
    for (const auto& m : a.groups[i].members) {
      if (m.info->rank >= 0 && m.info->rank < s.nranks) by_comm_rank[static_cast<size_t>(m.info->rank)] = a.rank(m.view);
    }
    if (s.global_ranks) {
      for (size_t r = 0; r < by_comm_rank.size(); ++r) by_comm_rank[r] = static_cast<int>(r);
    }
    size_t unknown = static_cast<size_t>(std::count(by_comm_rank.begin(), by_comm_rank.end(), -1));
    if (unknown > 0) {
      warnings.push_back(fmt::format("communicator {} ({} ranks): the global ranks of {} of its members are unknown (their "
                                     "ledgers are not among those read); its dumps list the {} known",
                                     s.name, s.nranks, unknown, by_comm_rank.size() - unknown));
    }
    for (int r : by_comm_rank) {
      if (r >= 0) g.ranks.push_back(r);
    }
  }
  return groups;
}

void write_sizes(PickleWriter& w, uint64_t elements) {
  w.begin_list();
  w.begin_list();
  w.integer(static_cast<int64_t>(std::min<uint64_t>(elements, INT64_MAX)));
  w.end();
  w.end();
}

void write_dtypes(PickleWriter& w, uint8_t dtype) {
  w.begin_list();
  if (*c10_dtype(dtype) != '\0') w.string(c10_dtype(dtype));
  w.end();
}

void write_frames(PickleWriter& w, const Inputs& in, const RankView& v, const ledger::CallRecord& r) {
  w.begin_list();
  const LocalSite* site = v.site(r.callsite);
  if (site != nullptr) {
    for (const SiteFrame& f : in.chains[site->chain].frames) {
      w.begin_dict();
      w.string("name");
      w.string(pickle::utf8_or_replaced(in.strings[f.function]));
      w.string("filename");
      w.string(pickle::utf8_or_replaced(in.strings[f.file]));
      w.string("line");
      w.integer(f.line);
      w.end();
    }
  }
  w.end();
}

struct Counters {
  uint64_t collectives = 0;  // the last collective seen on the communicator (collective_seq_id)
  uint64_t p2p = 0;          // the last send/recv (p2p_seq_id)
};

std::string dump_of(const Analysis& a, size_t view, const std::vector<Group>& groups, size_t& skipped) {
  const Inputs& in = a.in;
  const RankView& v = in.ranks[view];
  PickleWriter w;
  w.begin_dict();
  w.string("version");
  w.string(kDumpVersion);

  w.string("pg_config");
  w.begin_dict();
  for (const auto& c : v.comms) {
    int g = a.comm_of(view, c.id);
    if (g < 0) continue;
    const Group& group = groups[static_cast<size_t>(g)];
    w.string(group.name);
    w.begin_dict();
    w.string("name");
    w.string(group.name);
    w.string("desc");
    w.string(pickle::utf8_or_replaced(group.desc));
    w.string("ranks");
    w.string(fmt::format("[{}]", fmt::join(group.ranks, ", ")));
    w.end();
  }
  w.end();

  w.string("comm_lib_version");
  w.string(nccl_version_text(v.header.nccl_version));

  // By pg_id (this process's communicator slot, as PyTorch keys it by its process-group uid).
  w.string("pg_status");
  w.begin_dict();
  for (const auto& c : v.comms) {
    if (a.comm_of(view, c.id) < 0) continue;
    w.string(std::to_string(c.id - 1));
    w.begin_dict();
    w.string("last_enqueued_collective");
    w.integer(static_cast<int64_t>(c.coll_issued));
    w.string("last_started_collective");  // the ledger cannot tell started from pending: completed ones surely started
    w.integer(static_cast<int64_t>(c.coll_completed));
    w.string("last_completed_collective");
    w.integer(static_cast<int64_t>(c.coll_completed));
    w.end();
  }
  w.end();

  // Before the oldest call kept, each communicator had made (its first kept seq - 1) calls of
  // that kind, or all it ever made when none is kept.
  std::map<uint32_t, Counters> counters;
  for (const auto& c : v.comms) counters[c.id] = {c.coll_issued, c.p2p_issued};
  std::map<uint32_t, std::pair<bool, bool>> first_seen;
  for (const auto& r : v.records) {
    Op op = static_cast<Op>(r.op);
    auto& [coll, p2p] = first_seen[r.comm];
    if (ledger::is_collective(op) && !coll && r.seq > 0) {
      counters[r.comm].collectives = r.seq - 1;
      coll = true;
    } else if (ledger::is_p2p(op) && !p2p && r.seq > 0) {
      counters[r.comm].p2p = r.seq - 1;
      p2p = true;
    }
  }

  int64_t timeout_ms = v.header.stall_seconds != 0 ? int64_t{v.header.stall_seconds} * 1000 : kDefaultTimeoutMs;
  w.string("entries");
  w.begin_list();
  for (const auto& r : v.records) {
    Op op = static_cast<Op>(r.op);
    int g = a.comm_of(view, r.comm);
    const ledger::CommInfo* comm = v.comm(r.comm);
    std::string name = comm != nullptr ? profiling_name(op, r.flags, comm->rank, r.peer) : "";
    if (!ledger::is_counted(op) || g < 0 || name.empty()) {
      if (ledger::is_counted(op)) ++skipped;
      continue;
    }
    const Group& group = groups[static_cast<size_t>(g)];
    bool p2p = ledger::is_p2p(op);
    Counters& n = counters[r.comm];
    (p2p ? n.p2p : n.collectives) = r.seq;
    bool failed = ledger::is_failure(r.result);
    bool done = !failed && !a.pending(view, r);
    TensorElements elements = tensor_elements(op, r.count, comm->nranks);

    w.begin_dict();
    w.string("frames");
    write_frames(w, in, v, r);
    w.string("record_id");
    w.integer(static_cast<int64_t>(r.index - 1));
    w.string("pg_id");
    w.integer(static_cast<int64_t>(r.comm - 1));
    w.string("process_group");
    w.begin_tuple();
    w.string(group.name);
    w.string(pickle::utf8_or_replaced(group.desc));
    w.end();
    w.string("thread_name");
    w.string("");
    w.string("thread_id");
    w.string(std::to_string(r.thread));
    w.string("collective_seq_id");
    w.integer(static_cast<int64_t>(n.collectives));
    w.string("p2p_seq_id");
    w.integer(static_cast<int64_t>(n.p2p));
    w.string("op_id");
    w.integer(static_cast<int64_t>(n.collectives + n.p2p));
    w.string("profiling_name");
    w.string(name);
    w.string("time_created_ns");
    w.integer(static_cast<int64_t>(r.issued_ns));
    w.string("input_sizes");
    write_sizes(w, elements.input);
    w.string("input_dtypes");
    write_dtypes(w, r.dtype);
    w.string("output_sizes");
    write_sizes(w, elements.output);
    w.string("output_dtypes");
    write_dtypes(w, r.dtype);
    w.string("state");
    w.string(done ? "completed" : "scheduled");
    w.string("time_discovered_started_ns");
    w.none();
    w.string("time_discovered_completed_ns");
    if (done && r.completed_ns != 0) {
      w.integer(static_cast<int64_t>(r.completed_ns));
    } else {
      w.none();
    }
    w.string("retired");  // an errored call is retired without completing, as PyTorch retires a failed work
    w.boolean(done || failed);
    w.string("timeout_ms");
    w.integer(timeout_ms);
    w.string("is_p2p");
    w.boolean(p2p);
    w.end();
  }
  w.end();
  w.end();
  auto bytes = w.finish();
  return bytes ? std::move(bytes.value()) : std::string();
}

}  // namespace

DumpSet build_dumps(const Inputs& inputs, const DiagnoseOptions& options) {
  DumpSet out;
  Analysis a(inputs, options);
  std::vector<Group> groups = groups_of(a, out.warnings);
  size_t skipped = 0;
  for (size_t view = 0; view < inputs.ranks.size(); ++view) {
    const RankView& v = inputs.ranks[view];
    DumpFile f;
    f.rank = v.rank;
    f.name = fmt::format("{}{}", kDumpPrefix, v.rank);
    f.bytes = dump_of(a, view, groups, skipped);
    if (f.bytes.empty()) {
      out.warnings.push_back(fmt::format("rank {}: its dump could not be written", v.rank));
      continue;
    }
    out.files.push_back(std::move(f));
  }
  if (skipped > 0) {
    out.warnings.push_back(fmt::format("{} calls left out: on communicators of one process only (first seen in a "
                                       "collective), or operations Flight Recorder has no name for",
                                       skipped));
  }
  return out;
}

}  // namespace hangshim::report::flight_recorder
