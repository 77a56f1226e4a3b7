// Communicators across ranks: grouped by key (equal on every member), named the way people
// think of them ("world", "world/split1", a commName), with the global ranks of their members.
#include "report/analysis/analysis.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/analysis/captured_calls.h"
#include "report/analysis/stragglers.h"
#include "report/inputs/read_in_parallel.h"

namespace hangshim::report {

using namespace hangshim::ledger;

namespace {

bool shared_key(uint32_t kind) {
  return kind == static_cast<uint32_t>(KeyKind::UniqueId) || kind == static_cast<uint32_t>(KeyKind::UniqueIds) ||
         kind == static_cast<uint32_t>(KeyKind::Split) || kind == static_cast<uint32_t>(KeyKind::Shrink);
}

bool is_root_kind(uint32_t kind) {
  return kind == static_cast<uint32_t>(KeyKind::UniqueId) || kind == static_cast<uint32_t>(KeyKind::UniqueIds);
}

}  // namespace

Analysis::Analysis(const Inputs& inputs, const DiagnoseOptions& opts, std::vector<Straggler>* stragglers)
    : in(inputs), options(opts) {
  view_ranks_.reserve(in.ranks.size());
  for (const auto& v : in.ranks) view_ranks_.push_back(v.rank);
  group_comms();
  name_comms();
  trace_user_chains();
  if (stragglers != nullptr) *stragglers = find_stragglers(*this);  // it reads the communicators and the views only
  place_ranks();
  find_captured_calls(*this, comms);
}

size_t Analysis::threads_for(size_t items, size_t per_thread) const {
  return reading_threads(options.threads, items, per_thread);
}

void Analysis::group_comms() {
  comm_ids_start_.assign(in.ranks.size() + 1, 0);
  for (size_t v = 0; v < in.ranks.size(); ++v) {
    comm_ids_start_[v] = comm_ids_.size();
    for (const auto& c : in.ranks[v].comms) {
      // A communicator first seen in a collective has a key of this process only: nothing to
      // compare it with.
      if (!shared_key(c.key_kind) || c.key == 0) continue;
      auto key = std::make_pair(c.key_kind, c.key);
      auto it = by_key_.find(key);
      int index;
      if (it == by_key_.end()) {
        index = static_cast<int>(groups.size());
        by_key_.emplace(key, index);
        groups.push_back({c.key_kind, c.key, c.created_ns, 0, {}});
      } else {
        index = it->second;
      }
      CommGroup& g = groups[static_cast<size_t>(index)];
      g.created_ns = std::min(g.created_ns, c.created_ns);
      g.max_completed = std::max(g.max_completed, c.coll_completed);
      g.members.push_back({v, &c});
      comm_ids_.push_back({c.id, index, &c});
    }
  }
  comm_ids_start_[in.ranks.size()] = comm_ids_.size();
  for (auto& g : groups) {
    std::sort(g.members.begin(), g.members.end(),
              [&](const Member& a, const Member& b) { return rank(a.view) < rank(b.view); });
  }
}

void Analysis::name_comms() {
  comms.resize(groups.size());
  int world_size = 0;
  for (const auto& v : in.ranks) world_size = std::max(world_size, v.header.world_size);
  if (world_size <= 0) {  // no WORLD_SIZE anywhere: the largest root communicator is the world
    for (const auto& g : groups) {
      for (const auto& m : g.members) {
        if (is_root_kind(g.key_kind)) world_size = std::max(world_size, m.info->nranks);
      }
    }
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const CommGroup& g = groups[i];
    CommSummary& s = comms[i];
    s.key = g.key;
    s.key_kind = key_kind_name(g.key_kind);
    std::vector<bool> present;
    for (const auto& m : g.members) {
      s.nranks = std::max(s.nranks, m.info->nranks);
      s.ranks.push_back(rank(m.view));
      if (s.name.empty() && !m.info->name.empty()) s.name = m.info->name;
    }
    present.assign(static_cast<size_t>(std::max(s.nranks, 0)), false);
    for (const auto& m : g.members) {
      if (m.info->rank >= 0 && m.info->rank < s.nranks) present[static_cast<size_t>(m.info->rank)] = true;
    }
    for (int r = 0; r < s.nranks; ++r) {
      if (!present[static_cast<size_t>(r)]) s.absent.push_back(r);
    }
    s.issued_min = s.completed_min = UINT64_MAX;
    for (const auto& m : g.members) {
      s.issued_min = std::min(s.issued_min, m.info->coll_issued);
      s.issued_max = std::max(s.issued_max, m.info->coll_issued);
      s.completed_min = std::min(s.completed_min, m.info->coll_completed);
      s.completed_max = std::max(s.completed_max, m.info->coll_completed);
    }
    if (g.members.empty()) s.issued_min = s.completed_min = 0;
  }
  // Parents first (a child is made after its parent), so children can take their parent's name.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (groups[a].created_ns != groups[b].created_ns) return groups[a].created_ns < groups[b].created_ns;
    return a < b;
  });
  int worlds = 0;
  for (size_t i : order) {
    const CommGroup& g = groups[i];
    CommSummary& s = comms[i];
    const CommInfo* info = g.members.empty() ? nullptr : g.members.front().info;
    if (!is_root_kind(g.key_kind) && info != nullptr && info->parent_key != 0) {
      for (size_t p = 0; p < groups.size(); ++p) {
        if (groups[p].key == info->parent_key && p != i) s.parent = static_cast<int>(p);
      }
    }
    s.subgroup = s.parent >= 0 || (world_size > 0 && s.nranks < world_size);
    s.global_ranks = is_root_kind(g.key_kind) && s.nranks == world_size &&
                     std::all_of(g.members.begin(), g.members.end(),
                                 [&](const Member& m) { return m.info->rank == rank(m.view); });
    if (!s.name.empty()) continue;
    if (is_root_kind(g.key_kind) && s.nranks == world_size) {
      s.name = worlds++ == 0 ? "world" : fmt::format("world#{}", worlds);
    } else if (s.parent >= 0 && info != nullptr) {
      s.name = fmt::format("{}/split{}", comms[static_cast<size_t>(s.parent)].name, info->split_index + 1);
      if (info->color > 0) s.name += fmt::format(".color{}", info->color);
    } else {
      s.name = fmt::format("comm {:08x}", g.key >> 32);
    }
  }
}

int Analysis::comm_of(size_t view, uint32_t comm_id) const {
  // A view names a few communicators; should a damaged one name an id twice, the last holds.
  for (size_t i = comm_ids_start_[view + 1]; i-- > comm_ids_start_[view];) {
    if (comm_ids_[i].id == comm_id) return comm_ids_[i].comm;
  }
  return -1;
}

const CallRecord* Analysis::collective_at(size_t view, int comm, uint64_t seq) const {
  const auto& records = in.ranks[view].records;
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (it->seq == seq && is_collective(static_cast<Op>(it->op)) && comm_of(view, it->comm) == comm) return &*it;
  }
  return nullptr;
}

SiteKey Analysis::site_key(size_t view, const CallRecord& record) const {
  const LocalSite* local = in.ranks[view].site(record.callsite);
  if (local == nullptr || local->chain == kNoChain) return {};
  return chain_keys_[local->chain];
}

std::optional<Site> Analysis::site(size_t view, const CallRecord& record) const {
  const LocalSite* local = in.ranks[view].site(record.callsite);
  if (local == nullptr || local->chain == kNoChain) return std::nullopt;
  const Chain& chain = in.chains[local->chain];
  if (chain.frames.empty()) return std::nullopt;
  const SiteFrame& f = chain.frames[static_cast<size_t>(chain.user >= 0 ? chain.user : 0)];
  return Site{in.strings[f.file], in.strings[f.function], f.line};
}

std::vector<Site> Analysis::user_chain(size_t view, const CallRecord& record) const {
  std::vector<Site> out;
  const LocalSite* local = in.ranks[view].site(record.callsite);
  if (local == nullptr || local->chain == kNoChain) return out;
  const Chain& chain = in.chains[local->chain];
  const std::vector<int>& shown = user_frames(local->chain);
  if (shown.size() < 2) return out;
  for (auto it = shown.rbegin(); it != shown.rend(); ++it) {  // outermost first, as people read a call path
    const SiteFrame& f = chain.frames[static_cast<size_t>(*it)];
    out.push_back(Site{in.strings[f.file], in.strings[f.function], f.line});
  }
  return out;
}

Site Analysis::site_text(SiteKey key, uint32_t function) const {
  return Site{in.strings[key.file], function == UINT32_MAX ? std::string() : in.strings[function], key.line};
}

uint64_t Analysis::line_hits(size_t view, SiteKey key) const {
  uint64_t hits = 0;
  for (const auto& local : in.ranks[view].sites) {
    if (local.chain == kNoChain) continue;
    const SiteKey& k = chain_keys_[local.chain];
    if (k.known() && k == key) hits += local.hits;
  }
  return hits;
}

const CommInfo* Analysis::member_info(size_t view, int comm) const {
  // The view's own entries, not the communicator's members: a few against thousands.
  for (size_t i = comm_ids_start_[view]; i < comm_ids_start_[view + 1]; ++i) {
    if (comm_ids_[i].comm == comm) return comm_ids_[i].info;
  }
  return nullptr;
}

bool Analysis::cancelled(size_t view, const CallRecord& record) const {
  const CommInfo* c = in.ranks[view].comm(record.comm);
  return c != nullptr && c->revoked_ns != 0 && record.issued_ns <= c->revoked_ns &&
         static_cast<Op>(record.op) != Op::CommRevoke;
}

bool Analysis::pending(size_t view, const CallRecord& record) const {
  if (record.completed_ns != 0 || cancelled(view, record)) return false;
  // Captured into a CUDA graph: it runs at each replay, which NCCL and the ledger never see;
  // nothing about it can be stuck here.
  if ((record.flags & kRecordCaptured) != 0) return false;
  const CommInfo* c = in.ranks[view].comm(record.comm);
  if (c != nullptr && record.seq != 0) {
    bool p2p = is_p2p(static_cast<Op>(record.op));
    uint64_t done = p2p ? c->p2p_completed : c->coll_completed;
    if (!p2p) {
      int group = comm_of(view, record.comm);
      if (group >= 0) done = std::max(done, groups[static_cast<size_t>(group)].max_completed);
    }
    if (done >= record.seq) return false;
  }
  return true;
}

uint64_t Analysis::completed(const CommGroup& group, const Member& member) const {
  return std::max(member.info->coll_completed, std::min(member.info->coll_issued, group.max_completed));
}

Call Analysis::call(size_t view, const CallRecord& r) const {
  Call c;
  c.comm = comm_of(view, r.comm);
  c.op = display_op(r);
  c.seq = r.seq;
  c.site = site(view, r);
  c.chain = user_chain(view, r);
  c.iteration = iteration_of(view, r);
  c.count = r.count;
  c.dtype = dtype_name(r.dtype);
  Op op = static_cast<Op>(r.op);
  c.root = has_root(op) || is_p2p(op) ? r.peer : -1;
  c.red_op = red_op_name(r.red_op);
  c.issued_ns = r.issued_ns;
  c.completed_ns = r.completed_ns;
  c.result = r.result;
  return c;
}

}  // namespace hangshim::report
