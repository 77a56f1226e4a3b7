#include "report/inputs/flight_recorder/fr_ledger.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace hangshim::report::flight_recorder {

using ledger::Op;

namespace {

// FNV-1a: the communicator key of a process group, the same in every rank's dump.
uint64_t group_key(const ProcessGroup& g) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  mix("flight-recorder process group");
  mix(g.name);
  for (int32_t r : g.ranks) mix(std::to_string(r));
  return h != 0 ? h : 1;
}

// PyTorch's own frames are Python; the C++ frames TORCH_NCCL_TRACE_CPP_STACK adds
// (ProcessGroupNCCL.cpp, libtorch_cuda.so) are the library's, never "your line".
bool python_source(std::string_view file) {
  return file.starts_with("<") || (file.size() >= 3 && file.substr(file.size() - 3) == ".py");
}

// "default_pg" and "undefined" name nothing: the report calls the default group "world" (and
// another without a description by its name in the dump).
std::string comm_name(const ProcessGroup& g) {
  if (g.desc == "default_pg") return "";
  std::string name = g.desc.empty() || g.desc == "undefined" ? "pg " + g.name : g.desc;
  if (name.size() <= 64) return name;
  size_t cut = 64;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return name.substr(0, cut);
}

}  // namespace

int rank_from_file_name(std::string_view path) {
  size_t end = path.size();
  size_t begin = end;
  while (begin > 0 && path[begin - 1] >= '0' && path[begin - 1] <= '9') --begin;
  if (begin == end || end - begin > 7) return -1;
  int rank = 0;
  for (size_t i = begin; i < end; ++i) rank = rank * 10 + (path[i] - '0');
  return rank < ledger::kMaxRanks ? rank : -1;
}

ledger::Ledger dump_to_ledger(const Dump& dump, const DumpOrigin& origin) {
  ledger::Ledger l;
  l.source = origin.source;
  l.warnings = dump.warnings;
  ledger::LedgerHeader& h = l.header;
  h.rank = origin.rank;
  h.job = origin.job;
  h.state = static_cast<uint32_t>(ledger::ProcessState::Running);  // a dump says nothing of an exit
  h.version = ledger::kVersion;
  h.start_ns = origin.time_ns;

  // Communicators: the process groups this rank is in, its rank in each the place of its global
  // rank in the group's list.
  std::map<std::string, uint32_t> comm_of_group;  // pg name -> CommInfo id
  for (const auto& g : dump.groups) {
    auto at = std::find(g.ranks.begin(), g.ranks.end(), origin.rank);
    if (g.desc == "default_pg") h.world_size = static_cast<int32_t>(g.ranks.size());
    if (at == g.ranks.end()) continue;  // a group of other ranks: nothing of this rank's on it
    ledger::CommInfo c;
    c.id = static_cast<uint32_t>(l.comms.size() + 1);
    c.key = group_key(g);
    c.key_kind = static_cast<uint32_t>(ledger::KeyKind::UniqueId);
    c.state = static_cast<uint32_t>(ledger::CommState::Active);
    c.rank = static_cast<int32_t>(at - g.ranks.begin());
    c.nranks = static_cast<int32_t>(g.ranks.size());
    c.name = comm_name(g);
    c.created_ns = UINT64_MAX;
    comm_of_group.emplace(g.name, c.id);
    l.comms.push_back(std::move(c));
  }

  // Calls, in the dump's order (the order they were recorded).
  std::map<std::string, uint32_t> sites;  // frames -> call-site id
  std::map<int64_t, uint32_t> comm_of_pg_id;
  size_t unknown_group = 0;
  uint64_t index = 0;
  uint64_t earliest = UINT64_MAX;
  for (const auto& e : dump.entries) {
    if (e.op.coalesced_end || e.op.op == Op::None) continue;  // its calls carry its sequence number
    auto group = comm_of_group.find(e.pg_name);
    if (group == comm_of_group.end()) {
      ++unknown_group;
      continue;
    }
    ledger::CommInfo& c = l.comms[group->second - 1];
    if (e.pg_id >= 0) comm_of_pg_id[e.pg_id] = c.id;
    Op op = e.op.op;
    bool p2p = ledger::is_p2p(op);
    ledger::CallRecord r{};
    r.index = ++index;
    r.seq = p2p ? e.p2p_seq_id : e.collective_seq_id;
    r.count = nccl_count(op, e.input_elements, e.output_elements, c.nranks);
    r.issued_ns = std::max<uint64_t>(e.time_created_ns, 1);
    r.returned_ns = r.issued_ns;  // recorded when enqueued: the call had returned
    bool completed = e.state == EntryState::Completed;
    r.completed_ns = completed ? std::max(e.time_discovered_completed_ns, r.issued_ns) : 0;
    r.comm = c.id;
    r.comm_key = c.key;
    r.peer = p2p ? e.op.peer : -1;
    r.red_op = -1;
    r.result = 0;
    r.op = static_cast<uint8_t>(op);
    r.dtype = nccl_dtype(e.dtype);
    r.flags = e.op.barrier ? ledger::kRecordBarrier : 0;
    earliest = std::min(earliest, r.issued_ns);
    c.created_ns = std::min(c.created_ns, r.issued_ns);
    if (ledger::has_op_count(op)) ++c.op_counts[static_cast<size_t>(op) - static_cast<size_t>(Op::AllReduce)];
    if (p2p) {
      c.p2p_issued = std::max(c.p2p_issued, r.seq);
      if (completed) c.p2p_completed = std::max(c.p2p_completed, r.seq);
    } else {
      c.coll_issued = std::max(c.coll_issued, r.seq);
      if (completed) c.coll_completed = std::max(c.coll_completed, r.seq);
    }
    if (!e.frames.empty()) {
      std::string key = e.op.barrier ? "b" : "-";
      for (const auto& f : e.frames) key += fmt::format("{}\n{}\n{}\n", f.file, f.function, f.line);
      auto [it, fresh] = sites.emplace(std::move(key), static_cast<uint32_t>(l.callsites.size() + 1));
      if (fresh) {
        ledger::CallsiteInfo site;
        site.id = it->second;
        site.flags = (e.op.barrier ? ledger::kCallsiteBarrier : 0u) | (e.frames_cut ? ledger::kCallsiteTruncated : 0u);
        site.first_ns = r.issued_ns;
        for (const auto& f : e.frames) site.frames.push_back({f.file, f.function, f.line, !python_source(f.file)});
        l.callsites.push_back(std::move(site));
      }
      ledger::CallsiteInfo& site = l.callsites[it->second - 1];
      r.callsite = site.id;
      r.callsite_hit = ++site.hits;
    }
    l.records.push_back(r);
  }
  if (unknown_group > 0) {
    l.warnings.push_back(fmt::format("{} entries on process groups its \"pg_config\" does not list (or lists without rank {})",
                                     unknown_group, origin.rank));
  }
  // A collective that completed the watchdog may not have seen yet: PyTorch's own count of
  // the group's completed collectives (pg_status, by pg_id), where it stays within what the
  // dump shows was issued.
  for (const auto& [pg_id, status] : dump.status) {
    auto it = comm_of_pg_id.find(pg_id);
    if (it == comm_of_pg_id.end() || status.last_completed < 0) continue;
    ledger::CommInfo& c = l.comms[it->second - 1];
    c.coll_completed = std::max(c.coll_completed, std::min(static_cast<uint64_t>(status.last_completed), c.coll_issued));
  }
  for (auto& c : l.comms) {
    if (c.created_ns == UINT64_MAX) c.created_ns = 0;
  }
  if (earliest != UINT64_MAX) h.start_ns = std::min(h.start_ns != 0 ? h.start_ns : earliest, earliest);
  h.ring_head = index;
  h.ring_capacity = static_cast<uint32_t>(std::min<uint64_t>(index, UINT32_MAX));
  h.comm_capacity = static_cast<uint32_t>(l.comms.size());
  h.callsite_capacity = static_cast<uint32_t>(l.callsites.size());
  h.callsite_depth = static_cast<uint32_t>(kMaxFrames);
  return l;
}

}  // namespace hangshim::report::flight_recorder
