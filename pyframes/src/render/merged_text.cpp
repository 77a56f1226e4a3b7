// The merged view as text. First the answer (how many distinct stacks, who is where: outliers
// first), then the tree from the outermost frame down: a branch names who took it, lists the
// frames its members share, and splits where they part:
//
//   ranks 0-7:
//       main (train.py:40)
//   ├─ rank 7 (idle):
//   │      step (train.py:21)
//   └─ ranks 0-6 (idle):
//          step (train.py:18)
#include <algorithm>
#include <fmt/format.h>

#include <map>

#include "merge/labels.h"
#include "pyframes/merge.h"
#include "render/text_parts.h"

namespace pyframes {

namespace {

using render::Palette;
using render::safe;

constexpr size_t kMaxSummaryRows = 20;
constexpr size_t kMaxValuesShown = 6;
constexpr size_t kMaxDistinctShown = 3;

// "idle", or "idle: ranks 0-5; running: rank 6" when the members differ.
std::string states_of(const MergedStacks& merged, const std::vector<uint32_t>& members) {
  std::map<std::string, std::vector<uint32_t>> by_state;
  for (uint32_t id : members) {
    const MergeMember& member = merged.members[id];
    std::string state = render::thread_state_text(member.state, member.gil);
    by_state[state.empty() ? "state unknown" : state].push_back(id);
  }
  if (by_state.size() == 1) return by_state.begin()->first;
  std::string out;
  for (const auto& [state, ids] : by_state) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", state, describe_members(merged, ids));
  }
  return out;
}

std::string truncation_of(const MergedStacks& merged, const std::vector<uint32_t>& members) {
  for (uint32_t id : members) {
    const MergeMember& member = merged.members[id];
    if (member.truncated) {
      return fmt::format(", stack truncated: {}",
                         member.truncation_reason.empty() ? "frame chain cut" : safe(member.truncation_reason));
    }
  }
  return {};
}

class MergedTextRenderer {
 public:
  MergedTextRenderer(const MergedStacks& merged, const TextOptions& options, SourceCache* sources)
      : merged_(merged), options_(options), sources_(sources), colors_(render::palette_for(options.color)) {}

  std::string render() {
    header();
    summary();
    if (merged_.roots.size() == 1) {
      branch(merged_.roots.front(), "", "", "");
    } else {
      for (size_t i = 0; i < merged_.roots.size(); ++i) {
        const bool last = i + 1 == merged_.roots.size();
        branch(merged_.roots[i], "", last ? "└─ " : "├─ ", last ? "   " : "│  ");
      }
    }
    return std::move(out_);
  }

 private:
  void header() {
    std::vector<uint32_t> everyone(merged_.members.size());
    for (uint32_t i = 0; i < everyone.size(); ++i) everyone[i] = i;
    const std::string who = everyone.empty() ? std::string("none") : safe(describe_members(merged_, everyone, false));
    std::string threads = !merged_.all_threads ? std::string("main threads")
                          : everyone.size() == 1 ? std::string("its one thread")
                                                 : fmt::format("all {} threads", everyone.size());
    if (!merged_.all_threads && merged_.native_only > 0) {
      threads += fmt::format(" and {} {} without Python (--native-all)", merged_.native_only,
                             merged_.native_only == 1 ? "thread" : "threads");
    }
    out_ += fmt::format("{}{} {} ({}): {} merged, outermost frame first{}\n", colors_.header, merged_.processes,
                        merged_.processes == 1 ? "process" : "processes", who, threads, colors_.reset);
    if (merged_.hidden_idle > 0) {
      out_ += fmt::format("{} idle {} hidden (--hide-idle; main threads and threads in a collective stay)\n",
                          merged_.hidden_idle, merged_.hidden_idle == 1 ? "thread" : "threads");
    }
    for (const MergedStacks::LeftOut& gone : merged_.left_out) {
      out_ += fmt::format("left out: pid {}{}: {}\n", gone.pid, gone.rank.empty() ? "" : fmt::format(" (rank {})", safe(gone.rank)),
                          safe(gone.reason));
    }
  }

  void summary() {
    const auto stacks = distinct_stacks(merged_);
    if (stacks.empty()) {
      out_ += "\n(no stacks to merge)\n";
      return;
    }
    out_ += fmt::format("{} distinct {}:\n", stacks.size(), stacks.size() == 1 ? "stack" : "stacks");
    std::vector<std::string> labels;
    size_t width = 0;
    for (size_t i = 0; i < stacks.size() && i < kMaxSummaryRows; ++i) {
      labels.push_back(safe(describe_members(merged_, stacks[i].members)));
      width = std::max(width, labels.back().size());
    }
    // Stacks that part only in the columns of one line (3.11+: different calls of one line)
    // would read the same: those rows name the columns of the frame where they part.
    std::vector<std::string> places;
    for (size_t i = 0; i < labels.size(); ++i) places.push_back(where(stacks[i], false));
    const std::vector<std::string> plain = places;
    for (size_t i = 0; i < labels.size(); ++i) {
      if (std::count(plain.begin(), plain.end(), plain[i]) > 1) places[i] = where(stacks[i], true);
    }
    for (size_t i = 0; i < labels.size(); ++i) {
      out_ += fmt::format("  {:<{}}  {}  [{}]\n", labels[i], width, places[i], states_of(merged_, stacks[i].members));
    }
    if (stacks.size() > kMaxSummaryRows) {
      out_ += fmt::format("  ... {} more distinct stacks in the tree below\n", stacks.size() - kMaxSummaryRows);
    }
    out_ += '\n';
  }

  // Where a distinct stack parts from the others and where it ends: "f (a.py:3) → g (b.py:9)",
  // then, with native frames, the innermost one that is not plumbing: "→ [native] c10d::...".
  // With `columns`, the frame where it parts carries its column range (3.11+), 1-based and
  // inclusive as editors count them: "train (a.py:3, columns 9-23)".
  std::string where(const DistinctStack& stack, bool columns) const {
    const std::vector<const Frame*> inner_first = stack.frames_inner_first();
    if (inner_first.empty()) return "(no Python frames)";
    const MergeMember& first = merged_.members[stack.members.front()];
    const SummaryFrames names = summary_frames(inner_first, first.executable);
    const Frame* parted = nullptr;  // the first Python frame of the last branch that has frames
    for (auto branch = stack.path.rbegin(); branch != stack.path.rend() && parted == nullptr; ++branch) {
      if ((*branch)->frames.empty()) continue;
      for (const MergedFrame& frame : (*branch)->frames) {
        if (frame.frame.kind == Frame::Kind::Python) {
          parted = &frame.frame;
          break;
        }
      }
      break;
    }
    std::vector<const Frame*> shown;
    if (names.python != nullptr) {
      if (parted != nullptr && parted != names.python && stack.path.size() > 1) {
        shown.push_back(parted);
      }
      shown.push_back(names.python);
    }
    if (names.native != nullptr) shown.push_back(names.native);
    std::string out;
    for (const Frame* frame : shown) {
      std::string text = render::frame_text(*frame, colors_);
      if (columns && frame == parted && frame->column >= 0 && !text.empty() && text.back() == ')') {
        text.insert(text.size() - 1, fmt::format(", columns {}-{}", frame->column + 1, frame->end_column));
      }
      out += (out.empty() ? "" : " → ") + text;
    }
    return out;
  }

  // `lead` + `connector` start the branch's header; `body` prefixes the lines inside it.
  void branch(const MergeBranch& node, const std::string& lead, const std::string& connector,
              const std::string& connector_body) {
    const std::string body = lead + connector_body;
    std::string title = safe(describe_members(merged_, node.members));
    if (node.children.empty()) {
      title += fmt::format(" ({}{})", states_of(merged_, node.members), truncation_of(merged_, node.members));
    }
    out_ += fmt::format("{}{}{}{}:{}\n", lead, connector, colors_.header, title, colors_.reset);
    if (node.frames.empty()) out_ += body + "    (no Python frames)\n";
    for (const MergedFrame& frame : node.frames) this->frame(frame, node.members, body);
    if (node.children.empty()) return;
    std::vector<const MergeBranch*> parts;
    MergeBranch ended;  // members whose stacks end here while others go on: shown as a part
    if (!node.ended.empty()) {
      ended.members = node.ended;
      ended.ended = node.ended;
      parts.push_back(&ended);
    }
    for (const MergeBranch& child : node.children) parts.push_back(&child);
    for (size_t i = 0; i < parts.size(); ++i) {
      const bool last = i + 1 == parts.size();
      if (parts[i] == &ended) {
        out_ += fmt::format("{}{}{}: (stack ends here) ({}{})\n", body, last ? "└─ " : "├─ ",
                            safe(describe_members(merged_, ended.members)), states_of(merged_, ended.members),
                            truncation_of(merged_, ended.members));
        continue;
      }
      branch(*parts[i], body, last ? "└─ " : "├─ ", last ? "   " : "│  ");
    }
  }

  void frame(const MergedFrame& merged_frame, const std::vector<uint32_t>& members, const std::string& body) {
    const Frame& frame = merged_frame.frame;
    out_ += fmt::format("{}    {}\n", body, render::frame_text(frame, colors_));
    if (options_.source_lines && sources_ != nullptr && frame.kind == Frame::Kind::Python && !members.empty()) {
      const MergeMember& first = merged_.members[members.front()];
      auto line = render::source_line(first.pid, render::is_live(first.pid, first.source), frame, *sources_);
      if (line && !line->empty()) {
        out_ += fmt::format("{}        {}\n", body, *line);
        auto carets = render::source_carets(first.pid, render::is_live(first.pid, first.source), frame, *sources_);
        if (carets) out_ += fmt::format("{}        {}\n", body, *carets);
      }
    }
    for (const MergedLocal& local : merged_frame.locals) variable(local, members, body);
  }

  // "i = 1005" when everyone agrees; "i = 1004 (rank 7) | 1005 (ranks 0-6)" otherwise.
  void variable(const MergedLocal& local, const std::vector<uint32_t>& members, const std::string& body) {
    std::string line = fmt::format("{}        {}{} = ", body, local.is_argument ? "(arg) " : "", safe(local.name));
    size_t holders = 0;
    for (const auto& value : local.values) holders += value.members.size();
    if (local.values.size() == 1 && holders == members.size()) {
      out_ += line + safe(local.values.front().repr) + "\n";
      return;
    }
    // A value per member (a rank number, a timestamp) says little each: show a few.
    const bool all_distinct = local.values.size() == holders && holders > 3;
    const size_t shown = std::min(local.values.size(), all_distinct ? kMaxDistinctShown : kMaxValuesShown);
    for (size_t i = 0; i < shown; ++i) {
      const auto& value = local.values[i];
      line += fmt::format("{}{} ({})", i > 0 ? " | " : "", safe(value.repr), safe(describe_members(merged_, value.members)));
    }
    if (all_distinct) {
      line += fmt::format(" | ... ({} values, one each)", local.values.size());
    } else if (local.values.size() > shown) {
      const size_t more = local.values.size() - shown;
      line += fmt::format(" | ... {} more {}", more, more == 1 ? "value" : "values");
    }
    out_ += line + "\n";
  }

  const MergedStacks& merged_;
  const TextOptions& options_;
  SourceCache* sources_;
  Palette colors_;
  std::string out_;
};

}  // namespace

std::string render_merged_text(const MergedStacks& merged, const TextOptions& options, SourceCache* sources) {
  return MergedTextRenderer(merged, options, sources).render();
}

}  // namespace pyframes
