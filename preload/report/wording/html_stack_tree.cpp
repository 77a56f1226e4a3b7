// The HTML report's stack tree: the live main-thread stacks of the job's ranks merged by
// pyframes into a prefix tree, as STAT draws MPI jobs. Each branch is a <details> labelled by
// the ranks that took it (outliers first, as pyframes orders them); where stacks end, the ranks
// that end there; each frame's variables, when they were read, behind a "variables" toggle, each
// value with the ranks that hold it.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "pyframes/merge.h"
#include "report/wording/html_parts.h"

namespace hangshim::report::html {

namespace {

struct TreeContext {
  const pyframes::MergedStacks& merged;
  std::vector<int> culprits;  // sorted
};

// A member's RANK as a number, -1 when it has none (or not a number).
int member_rank(const pyframes::MergedStacks& merged, uint32_t id) {
  const std::string& text = merged.members[id].rank;
  int rank = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rank);
  return error == std::errc() && end == text.data() + text.size() && rank >= 0 ? rank : -1;
}

// The numeric ranks of members ("0-3,7"), for the page's rank search and the tests.
std::string rank_list(const pyframes::MergedStacks& merged, const std::vector<uint32_t>& members) {
  std::vector<int64_t> ranks;
  for (uint32_t id : members) {
    if (int rank = member_rank(merged, id); rank >= 0) ranks.push_back(rank);
  }
  return pyframes::compress_numbers(std::move(ranks));
}

bool has_culprit(const TreeContext& c, const std::vector<uint32_t>& members) {
  return std::any_of(members.begin(), members.end(), [&](uint32_t id) {
    int rank = member_rank(c.merged, id);
    return rank >= 0 && std::binary_search(c.culprits.begin(), c.culprits.end(), rank);
  });
}

std::string frame_text(const pyframes::Frame& f) {
  const std::string& name = f.qualname.empty() ? f.function : f.qualname;
  if (f.kind == pyframes::Frame::Kind::Native) {
    return fmt::format("{} <span class=\"file\">({})</span>", escape(name.empty() ? "??" : name), escape(f.module));
  }
  return fmt::format("{} <span class=\"file\">({}:{})</span>", escape(name), escape(f.file), f.line);
}

void variables(std::string& out, const TreeContext& c, const pyframes::MergedFrame& frame) {
  if (frame.locals.empty()) return;
  out += fmt::format("<details class=\"locals\"><summary>variables ({})</summary><table>\n", frame.locals.size());
  for (const auto& local : frame.locals) {
    for (size_t v = 0; v < local.values.size(); ++v) {
      const auto& value = local.values[v];
      out += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td class=\"ranks\">{}</td></tr>\n",
                         v == 0 ? escape(local.name) : "", escape(value.repr),
                         escape(pyframes::describe_members(c.merged, value.members)));
    }
  }
  out += "</table></details>\n";
}

void branch(std::string& out, const TreeContext& c, const pyframes::MergeBranch& b) {
  bool culprit = has_culprit(c, b.members);
  out += fmt::format("<details class=\"branch{}\" open data-ranks=\"{}\"><summary><span class=\"ranks\">{}</span>",
                     culprit ? " culprit" : "", rank_list(c.merged, b.members),
                     escape(pyframes::describe_members(c.merged, b.members)));
  if (!b.frames.empty()) out += frame_text(b.frames.front().frame);
  out += "</summary>\n";
  for (size_t i = 0; i < b.frames.size(); ++i) {
    if (i > 0) out += fmt::format("<span class=\"frame\">{}</span>\n", frame_text(b.frames[i].frame));
    variables(out, c, b.frames[i]);
  }
  if (!b.ended.empty()) {
    out += fmt::format("<div class=\"ended\" data-stack-ranks=\"{}\">{}: the stack ends here</div>\n",
                       rank_list(c.merged, b.ended), escape(pyframes::describe_members(c.merged, b.ended)));
  }
  for (const auto& child : b.children) branch(out, c, child);
  out += "</details>\n";
}

}  // namespace

void stack_tree(std::string& out, const Diagnosis& d) {
  if (d.processes.empty()) return;
  pyframes::MergedStacks merged = pyframes::merge_stacks(d.processes);
  TreeContext c{merged, {}};
  if (d.primary >= 0) c.culprits = d.findings[static_cast<size_t>(d.primary)].culprits;
  std::sort(c.culprits.begin(), c.culprits.end());
  out += "<h2>Live stacks (Python, merged)</h2>\n<p class=\"note\">The main thread of each rank running on this host (or "
         "exported with its node), merged from the outermost frame: each branch names the ranks that took it, the "
         "fewest first.</p>\n";
  out += "<p class=\"tools\"><button id=\"expand-all\">open all</button> <button id=\"collapse-all\">close "
         "all</button></p>\n<div id=\"stacks\">\n";
  for (const auto& root : merged.roots) branch(out, c, root);
  for (const auto& left : merged.left_out) {
    out += fmt::format("<p class=\"note\">left out: {} {} ({})</p>\n",
                       left.rank.empty() ? "pid" : "rank", escape(left.rank.empty() ? std::to_string(left.pid) : left.rank),
                       escape(left.reason));
  }
  out += "</div>\n";
}

}  // namespace hangshim::report::html
