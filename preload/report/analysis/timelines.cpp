#include "report/analysis/timelines.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "ledger/reader.h"

namespace hangshim::report {

namespace {

using ledger::CallRecord;

TimelineMark mark_of(const Analysis& a, const CommGroup& group, const Member& member, int comm, uint64_t seq) {
  TimelineMark m;
  if (const CallRecord* r = a.collective_at(member.view, comm, seq)) {
    m.op = ledger::display_op(*r);
    m.count = r->count;
    m.dtype = ledger::dtype_name(r->dtype);
    m.state = a.pending(member.view, *r)    ? TimelineMark::State::Pending
              : r->result > 0 && !a.cancelled(member.view, *r) ? TimelineMark::State::Failed
                                                                : TimelineMark::State::Completed;
  } else if (member.info != nullptr && seq <= member.info->coll_issued) {
    // Issued, but its record left the ring: its counters still say how far it got.
    m.state = seq <= a.completed(group, member) ? TimelineMark::State::Completed : TimelineMark::State::Issued;
  }
  return m;
}

// Marks whose op, count or dtype is not the most common among the members' records at the
// same number. With one value (or none) nothing differs.
void mark_differences(std::vector<std::vector<TimelineMark>>& rows, size_t column) {
  std::map<std::string, size_t> votes;
  auto key = [](const TimelineMark& m) { return fmt::format("{}|{}|{}", m.op, m.count, m.dtype); };
  for (const auto& row : rows) {
    if (!row[column].op.empty()) ++votes[key(row[column])];
  }
  if (votes.size() < 2) return;
  auto common = std::max_element(votes.begin(), votes.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  for (auto& row : rows) {
    if (!row[column].op.empty() && key(row[column]) != common->first) row[column].differs = true;
  }
}

std::string row_key(const std::vector<TimelineMark>& marks) {
  std::string key;
  for (const auto& m : marks) {
    key += fmt::format("{}:{}:{}:{}:{};", static_cast<int>(m.state), m.op, m.count, m.dtype, m.differs ? 1 : 0);
  }
  return key;
}

}  // namespace

std::vector<Timeline> build_timelines(const Analysis& a, const std::vector<CommSummary>& comms, size_t columns) {
  std::vector<Timeline> out;
  for (size_t c = 0; c < a.groups.size() && c < comms.size(); ++c) {
    if (!comms[c].shown || columns == 0) continue;
    const CommGroup& group = a.groups[c];
    Timeline t;
    t.comm = static_cast<int>(c);
    for (const auto& member : group.members) {
      if (member.info != nullptr) t.last_seq = std::max(t.last_seq, member.info->coll_issued);
    }
    if (t.last_seq == 0) continue;  // no collective on it yet: nothing to draw
    t.first_seq = t.last_seq >= columns ? t.last_seq - columns + 1 : 1;
    size_t width = static_cast<size_t>(t.last_seq - t.first_seq + 1);
    std::vector<std::vector<TimelineMark>> marks(group.members.size(), std::vector<TimelineMark>(width));
    for (size_t m = 0; m < group.members.size(); ++m) {
      for (size_t k = 0; k < width; ++k) {
        marks[m][k] = mark_of(a, group, group.members[m], static_cast<int>(c), t.first_seq + k);
      }
    }
    for (size_t k = 0; k < width; ++k) mark_differences(marks, k);
    std::map<std::string, size_t> row_of;
    for (size_t m = 0; m < group.members.size(); ++m) {
      int rank = a.rank(group.members[m].view);
      auto [it, added] = row_of.emplace(row_key(marks[m]), t.rows.size());
      if (added) t.rows.push_back({{}, std::move(marks[m])});
      t.rows[it->second].ranks.push_back(rank);
    }
    for (auto& row : t.rows) std::sort(row.ranks.begin(), row.ranks.end());
    std::sort(t.rows.begin(), t.rows.end(), [](const TimelineRow& x, const TimelineRow& y) { return x.ranks < y.ranks; });
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace hangshim::report
