// The timelines of the HTML report: per communicator, a column per collective number (the newest
// ones) and a row per group of members whose marks read the same. A cell says what the members
// did with that number: completed, waiting in it (where they stopped), failed, issued (its record
// no longer kept) or never issued (who is missing). Values that differ from the other members'
// are outlined; rows holding a culprit of the verdict are marked.
#include <fmt/format.h>

#include <algorithm>

#include "report/analysis/rank_ranges.h"
#include "report/wording/html_parts.h"
#include "report/wording/phrases.h"

namespace hangshim::report::html {

namespace {

const char* state_class(TimelineMark::State state) {
  switch (state) {
    case TimelineMark::State::Completed: return "completed";
    case TimelineMark::State::Pending: return "pending";
    case TimelineMark::State::Failed: return "failed";
    case TimelineMark::State::Issued: return "issued";
    case TimelineMark::State::Missing: return "missing";
  }
  return "missing";
}

const char* state_words(TimelineMark::State state) {
  switch (state) {
    case TimelineMark::State::Completed: return "completed";
    case TimelineMark::State::Pending: return "waiting in it";
    case TimelineMark::State::Failed: return "returned an error";
    case TimelineMark::State::Issued: return "issued (its record is no longer kept)";
    case TimelineMark::State::Missing: return "never issued";
  }
  return "";
}

std::string cell(const TimelineMark& m, uint64_t seq) {
  std::string cls = state_class(m.state);
  if (m.differs) cls += " differs";
  std::string title = fmt::format("#{}: {}", seq, state_words(m.state));
  std::string text;
  if (!m.op.empty()) {
    title += fmt::format(" - {} {} x {}", m.op, m.dtype, m.count);
    text = m.op;
    // The values people compare when sizes disagree: shown in the cell where they differ.
    if (m.differs) text += fmt::format(" {}x{}", m.dtype, m.count);
  } else {
    text = m.state == TimelineMark::State::Missing ? "-" : "...";
  }
  if (m.state == TimelineMark::State::Pending) text = "&#9646; " + escape(text);
  else text = escape(text);
  return fmt::format("<td class=\"cell {}\" title=\"{}\">{}</td>", cls, escape(title), text);
}

bool holds_any(const std::vector<int>& ranks, const std::vector<int>& wanted) {
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](int r) { return std::binary_search(ranks.begin(), ranks.end(), r); });
}

}  // namespace

void timelines(std::string& out, const Diagnosis& d) {
  if (d.timelines.empty()) return;
  std::vector<int> culprits;
  if (d.primary >= 0) culprits = d.findings[static_cast<size_t>(d.primary)].culprits;
  out += "<h2>Collectives, rank by rank</h2>\n";
  out += "<p class=\"legend\"><span class=\"completed\">completed</span><span class=\"pending\">&#9646; waiting in "
         "it</span><span class=\"failed\">error</span><span class=\"issued\">issued, record gone</span><span "
         "class=\"missing\">never issued</span><span class=\"differs\">differs from the others</span></p>\n";
  for (const Timeline& t : d.timelines) {
    out += fmt::format("<h3>{}</h3>\n<table class=\"timeline\" data-comm=\"{}\">\n<tr><th class=\"ranks\">ranks</th>",
                       escape(comm_label(d, t.comm)), escape(d.comms[static_cast<size_t>(t.comm)].name));
    for (uint64_t seq = t.first_seq; seq <= t.last_seq; ++seq) out += fmt::format("<th>#{}</th>", seq);
    out += "</tr>\n";
    for (const TimelineRow& row : t.rows) {
      bool culprit = holds_any(row.ranks, culprits);
      std::string ranks = format_ranks(row.ranks);
      out += fmt::format("<tr class=\"row{}\" data-ranks=\"{}\"><td class=\"ranks\">{}</td>", culprit ? " culprit" : "",
                         escape(ranks), escape(ranks_phrase(row.ranks)));
      for (size_t k = 0; k < row.marks.size(); ++k) out += cell(row.marks[k], t.first_seq + k);
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
}

}  // namespace hangshim::report::html
