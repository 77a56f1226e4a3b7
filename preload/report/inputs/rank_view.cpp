#include <algorithm>
#include <cstring>

#include "report/inputs/inputs.h"

namespace hangshim::report {

const char* liveness_name(Liveness liveness) {
  switch (liveness) {
    case Liveness::Unknown: return "unknown";
    case Liveness::Alive: return "alive";
    case Liveness::Gone: return "gone";
    case Liveness::Recycled: return "recycled";
  }
  return "unknown";
}

bool parse_liveness(std::string_view name, Liveness& out) {
  for (Liveness l : {Liveness::Unknown, Liveness::Alive, Liveness::Gone, Liveness::Recycled}) {
    if (name == liveness_name(l)) {
      out = l;
      return true;
    }
  }
  return false;
}

uint32_t StringPool::intern(std::string_view text) {
  auto it = index_.find(text);
  if (it != index_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(text);
  index_.emplace(std::string_view(strings_.back()), id);
  return id;
}

uint32_t ChainPool::intern(const Chain& chain) {
  std::string key;
  key.resize(chain.frames.size() * sizeof(SiteFrame) + 1);
  for (size_t i = 0; i < chain.frames.size(); ++i) {
    SiteFrame f = chain.frames[i];
    std::memcpy(&key[i * sizeof(SiteFrame)], &f, sizeof(SiteFrame));
  }
  key.back() = chain.barrier ? 'b' : '-';
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(chains_.size());
  chains_.push_back(chain);
  index_.emplace(std::move(key), id);
  return id;
}

const ledger::CommInfo* RankView::comm(uint32_t id) const {
  for (const auto& c : comms) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

const LocalSite* RankView::site(uint32_t id) const {
  if (id == 0 || id > sites.size() || sites[id - 1].chain == kNoChain) return nullptr;
  return &sites[id - 1];
}

namespace {

int rank_of(const ledger::Ledger& l) {
  if (l.header.rank >= 0) return l.header.rank;
  for (const auto& c : l.comms) {
    if (c.nranks > 0 && c.rank >= 0 && c.key_kind != static_cast<uint32_t>(ledger::KeyKind::Unknown)) return c.rank;
  }
  return -1;
}

// Keeps what the analysis looks at: every pending call (a stuck call stays relevant however
// many calls came after it), the newest `max_records`, and the newest call of each call-site on
// each communicator (the previous iteration of a line, for "this rank changed what it passes
// here"), in their order. Memory then grows with ranks, not with how long they ran. Copied into
// `out` (PreparedRank::records), so that the ledger's own records can be read into again
// (LedgerReader::recycle).
void keep_records(const ledger::Ledger& l, const ViewOptions& options, std::vector<ledger::CallRecord>& out) {
  size_t n = l.records.size();
  if (n <= options.max_records) {
    out.assign(l.records.begin(), l.records.end());
    return;
  }
  thread_local std::vector<size_t> kept;                          // indices of the records kept, newest first
  thread_local std::vector<std::pair<uint32_t, uint32_t>> seen;  // (call-site, comm) pairs met, newest first
  kept.clear();
  seen.clear();
  std::pair<uint32_t, uint32_t> newer{0, 0};  // the pair of the newer record with a call-site: met already
  for (size_t i = n; i-- > 0;) {
    const ledger::CallRecord& r = l.records[i];
    bool first_of_site = false;
    if (r.callsite != 0) {
      auto site = std::make_pair(r.callsite, r.comm);
      // A training loop calls from the same line over and over: most records are of the site
      // of the one after them, which needs no search.
      if (site != newer) {
        first_of_site = std::find(seen.begin(), seen.end(), site) == seen.end();
        if (first_of_site) seen.push_back(site);
        newer = site;
      }
    }
    if (i + options.max_records >= n || r.completed_ns == 0 || first_of_site) kept.push_back(i);
  }
  out.clear();
  out.reserve(kept.size());
  for (size_t k = kept.size(); k-- > 0;) out.push_back(l.records[kept[k]]);
}

// The newest completed calls that ran (not failed, not captured into a CUDA graph: those say
// nothing about when the rank arrived), as timings only: a few bytes each, so many can stay.
void keep_history(const ledger::Ledger& l, const ViewOptions& options, std::vector<CallTiming>& out) {
  size_t begin = out.size();
  for (size_t i = l.records.size(); i-- > 0 && out.size() - begin < options.history;) {
    const ledger::CallRecord& r = l.records[i];
    bool ok = r.result == 0 || r.result == 7;  // ncclSuccess, or ncclInProgress later settled
    if (r.completed_ns == 0 || r.completed_ns < r.issued_ns || !ok || (r.flags & ledger::kRecordCaptured) != 0) continue;
    uint64_t wait_us = (r.completed_ns - r.issued_ns) / 1000;
    out.push_back({r.seq, r.issued_ns, static_cast<uint32_t>(std::min<uint64_t>(wait_us, UINT32_MAX)), r.comm, r.callsite, r.op,
                   r.flags});
  }
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(begin), out.end());
}

}  // namespace

void prepare_rank_view(ledger::Ledger&& l, const ViewOptions& options, RankView& v, PreparedRank& prepared) {
  v.source = std::move(l.source);
  v.rank = rank_of(l);
  v.header = std::move(l.header);
  v.comms = std::move(l.comms);
  v.warnings = std::move(l.warnings);

  // Calls of a group ended with ncclGroupSimulateEnd never ran and gave their sequence numbers
  // back: the next real call has the same number, so they take no part in the diagnosis.
  std::erase_if(l.records, [](const ledger::CallRecord& r) { return (r.flags & ledger::kRecordSimulated) != 0; });
  thread_local std::vector<CallTiming> history;  // unpacked, reused from one rank to the next
  history.clear();
  keep_history(l, options, history);
  prepared.history.assign(history);
  keep_records(l, options, prepared.records);
  prepared.callsites = std::move(l.callsites);
}

void finish_rank_view(RankView& v, const PreparedRank& prepared, Inputs& inputs, const LibraryPatterns& patterns) {
  v.records = prepared.records;  // exactly as many as there are
  v.history = prepared.history;
  const auto& callsites = prepared.callsites;
  uint32_t max_id = 0;
  for (const auto& site : callsites) max_id = std::max(max_id, site.id);
  v.sites.resize(max_id);
  for (const auto& site : callsites) {
    Chain chain;
    chain.barrier = (site.flags & ledger::kCallsiteBarrier) != 0;
    chain.frames.reserve(site.frames.size());
    for (const auto& f : site.frames) {
      SiteFrame frame;
      frame.file = inputs.strings.intern(f.file);
      frame.function = inputs.strings.intern(f.function);
      frame.line = f.line;
      frame.library = f.library || patterns.is_library(f.file);
      if (!frame.library && chain.user < 0) chain.user = static_cast<int>(chain.frames.size());
      chain.frames.push_back(frame);
    }
    v.sites[site.id - 1] = {inputs.chains.intern(chain), site.hits};
  }
}

RankView make_rank_view(ledger::Ledger&& l, Inputs& inputs, const LibraryPatterns& patterns, const ViewOptions& options) {
  RankView v;
  PreparedRank prepared;
  prepare_rank_view(std::move(l), options, v, prepared);
  finish_rank_view(v, prepared, inputs, patterns);
  return v;
}

const pyframes::Frame* user_frame(const pyframes::Thread& thread, const LibraryPatterns& patterns) {
  for (const auto& f : thread.frames) {
    if (f.kind == pyframes::Frame::Kind::Python && !patterns.is_library(f.file)) return &f;
  }
  return nullptr;
}

const pyframes::Thread* main_thread(const pyframes::Process& process) {
  for (const auto& t : process.threads) {
    if (process.pid > 0 && t.native_id == process.pid) return &t;
  }
  for (const auto& t : process.threads) {
    if (t.name == "MainThread") return &t;
  }
  return process.threads.empty() ? nullptr : &process.threads.front();
}

}  // namespace hangshim::report
