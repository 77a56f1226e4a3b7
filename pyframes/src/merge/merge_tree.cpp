// merge_stacks: a trie of frames (outermost first, one node per distinct frame at each depth),
// then runs of nodes that every member passes through together become one branch.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <unordered_map>

#include "merge/merged_locals.h"
#include "pyframes/merge.h"

namespace pyframes {

namespace {

// What makes two frames the same place: kind, function, file and line for Python code, and from
// 3.11 the instruction's columns (ranks hung in different calls of `reduce(a) + reduce(b)` part
// there); for native code the symbol and module (addresses differ between processes).
std::string frame_key(const Frame& frame) {
  if (frame.kind == Frame::Kind::Native) {
    if (!frame.function.empty()) return fmt::format("n\x1f{}\x1f{}", frame.function, frame.module);
    return fmt::format("n\x1f{}\x1f{:x}", frame.module, frame.offset);
  }
  const std::string& name = frame.qualname.empty() ? frame.function : frame.qualname;
  return fmt::format("p\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", name, frame.file, frame.line, frame.column, frame.end_column);
}

struct TrieNode {
  uint32_t frame = 0;                 // interned frame key
  std::vector<uint32_t> members;      // in insertion order = member id order
  std::vector<uint32_t> ended;
  std::vector<uint32_t> children;     // node indices
};

class Trie {
 public:
  Trie() { nodes_.emplace_back(); }  // the root holds no frame

  uint32_t child(uint32_t parent, uint32_t frame) {
    auto [it, added] = edges_.try_emplace(edge(parent, frame), static_cast<uint32_t>(nodes_.size()));
    if (added) {
      nodes_.emplace_back();
      nodes_.back().frame = frame;
      nodes_[parent].children.push_back(it->second);
    }
    return it->second;
  }
  TrieNode& node(uint32_t index) { return nodes_[index]; }

 private:
  static uint64_t edge(uint32_t parent, uint32_t frame) { return (static_cast<uint64_t>(parent) << 32) | frame; }
  std::vector<TrieNode> nodes_;
  std::unordered_map<uint64_t, uint32_t> edges_;
};

// Sort key of a process's rank: numeric ranks in order, then other ranks, then none.
std::pair<int64_t, std::string> rank_order(const Process& process) {
  const std::string& rank = process.rank;
  if (rank.empty()) return {std::numeric_limits<int64_t>::max(), {}};
  int64_t value = 0;
  auto [end, ec] = std::from_chars(rank.data(), rank.data() + rank.size(), value);
  if (ec == std::errc() && end == rank.data() + rank.size() && rank.size() <= 18) return {value, {}};
  return {std::numeric_limits<int64_t>::max() - 1, rank};
}

bool runs_no_python(const Thread& thread) {
  return thread.thread_id == 0 && std::none_of(thread.frames.begin(), thread.frames.end(), [](const Frame& f) {
           return f.kind == Frame::Kind::Python;
         });
}

// Why a process has no member: said in the view, never dropped silently.
std::string left_out_reason(const Process& process, size_t hidden_idle) {
  if (process.threads.empty()) return "no threads read";
  if (hidden_idle > 0) return fmt::format("every thread idle, {} hidden (--hide-idle)", hidden_idle);
  return "no thread picked";
}

std::vector<MergeMember> pick_members(const std::vector<Process>& processes, const MergeOptions& options,
                                      MergedStacks& merged) {
  std::vector<size_t> order(processes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    auto ka = rank_order(processes[a]);
    auto kb = rank_order(processes[b]);
    if (ka != kb) return ka < kb;
    return processes[a].pid < processes[b].pid;
  });
  std::vector<MergeMember> members;
  for (size_t p : order) {
    const Process& process = processes[p];
    const size_t main = main_thread_index(process);
    const size_t before = members.size();
    size_t hidden_here = 0;
    for (size_t t = 0; t < process.threads.size(); ++t) {
      const Thread& thread = process.threads[t];
      const bool native_only = runs_no_python(thread);
      if (!options.all_threads && t != main && !(options.native_threads && native_only)) continue;
      if (options.hide_idle && !kept_when_hiding_idle(process, t)) {
        ++hidden_here;
        continue;
      }
      if (options.native_threads && native_only) ++merged.native_only;
      MergeMember member;
      member.process = p;
      member.thread = t;
      member.pid = process.pid;
      member.source = process.source;
      member.rank = process.rank;
      member.local_rank = process.local_rank;
      member.executable = process.executable;
      member.worker_of = process.worker_of;
      member.thread_id = thread.thread_id;
      member.native_id = thread.native_id;
      member.thread_name = thread.name;
      member.state = thread.state;
      member.gil = thread.gil;
      member.truncated = thread.truncated;
      member.truncation_reason = thread.truncation_reason;
      members.push_back(std::move(member));
    }
    merged.hidden_idle += hidden_here;
    if (members.size() == before) {
      merged.left_out.push_back(MergedStacks::LeftOut{process.pid, process.rank, left_out_reason(process, hidden_here)});
    }
  }
  return members;
}

bool fewer_members_first(const MergeBranch& a, const MergeBranch& b) {
  if (a.members.size() != b.members.size()) return a.members.size() < b.members.size();
  return a.members.front() < b.members.front();
}

class BranchBuilder {
 public:
  BranchBuilder(Trie& trie, const std::vector<const Frame*>& frames, const MergedLocalsBuilder& locals)
      : trie_(trie), frames_(frames), locals_(locals) {}

  // The branch starting at trie node `start` (at `depth` frames from the outermost): it runs
  // on while every member goes on to the same single next frame.
  MergeBranch build(uint32_t start, size_t depth) {
    MergeBranch branch;
    branch.members = trie_.node(start).members;
    uint32_t index = start;
    for (;;) {
      TrieNode& node = trie_.node(index);
      branch.frames.push_back(locals_.merged_frame(*frames_[node.frame], branch.members, depth++));
      if (node.children.size() != 1 || !node.ended.empty()) break;
      index = node.children.front();
    }
    TrieNode& last = trie_.node(index);
    branch.ended = last.ended;
    for (uint32_t child : last.children) branch.children.push_back(build(child, depth));
    std::sort(branch.children.begin(), branch.children.end(), fewer_members_first);
    return branch;
  }

 private:
  Trie& trie_;
  const std::vector<const Frame*>& frames_;
  const MergedLocalsBuilder& locals_;
};

}  // namespace

size_t main_thread_index(const Process& process) {
  const auto& threads = process.threads;
  for (size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].native_id != 0 && threads[i].native_id == process.pid) return i;
  }
  for (size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].name == "MainThread") return i;
  }
  return threads.empty() ? static_cast<size_t>(-1) : 0;  // the engine lists the oldest first
}

MergedStacks merge_stacks(const std::vector<Process>& processes, const MergeOptions& options) {
  MergedStacks merged;
  merged.all_threads = options.all_threads;
  merged.native_threads = options.native_threads;
  merged.members = pick_members(processes, options, merged);

  std::vector<const Frame*> frames;  // interned frame id -> a representative frame
  std::unordered_map<std::string, uint32_t> interned;
  Trie trie;
  std::vector<uint32_t> empty_stacks;
  std::vector<size_t> distinct_processes;
  for (uint32_t id = 0; id < merged.members.size(); ++id) {
    const MergeMember& member = merged.members[id];
    distinct_processes.push_back(member.process);
    const auto& stack = processes[member.process].threads[member.thread].frames;
    if (stack.empty()) {
      empty_stacks.push_back(id);
      continue;
    }
    uint32_t node = 0;
    for (auto frame = stack.rbegin(); frame != stack.rend(); ++frame) {  // outermost first
      auto [it, added] = interned.try_emplace(frame_key(*frame), static_cast<uint32_t>(frames.size()));
      if (added) frames.push_back(&*frame);
      node = trie.child(node, it->second);
      trie.node(node).members.push_back(id);
    }
    trie.node(node).ended.push_back(id);
  }
  std::sort(distinct_processes.begin(), distinct_processes.end());
  merged.processes = static_cast<size_t>(
      std::unique(distinct_processes.begin(), distinct_processes.end()) - distinct_processes.begin());

  MergedLocalsBuilder locals(processes, merged.members);
  BranchBuilder builder(trie, frames, locals);
  for (uint32_t root : trie.node(0).children) merged.roots.push_back(builder.build(root, 0));
  if (!empty_stacks.empty()) {
    MergeBranch nothing;  // threads without Python frames: a root of their own
    nothing.members = empty_stacks;
    nothing.ended = empty_stacks;
    merged.roots.push_back(std::move(nothing));
  }
  std::sort(merged.roots.begin(), merged.roots.end(), fewer_members_first);
  return merged;
}

const Frame* DistinctStack::innermost() const {
  for (auto branch = path.rbegin(); branch != path.rend(); ++branch) {
    if (!(*branch)->frames.empty()) return &(*branch)->frames.back().frame;
  }
  return nullptr;
}

std::vector<const Frame*> DistinctStack::frames_inner_first() const {
  std::vector<const Frame*> frames;
  for (auto branch = path.rbegin(); branch != path.rend(); ++branch) {
    for (auto frame = (*branch)->frames.rbegin(); frame != (*branch)->frames.rend(); ++frame) {
      frames.push_back(&frame->frame);
    }
  }
  return frames;
}

std::vector<DistinctStack> distinct_stacks(const MergedStacks& merged) {
  std::vector<DistinctStack> out;
  std::vector<const MergeBranch*> path;
  auto visit = [&](const MergeBranch& branch, auto& self) -> void {
    path.push_back(&branch);
    if (!branch.ended.empty()) out.push_back(DistinctStack{branch.ended, path});
    for (const MergeBranch& child : branch.children) self(child, self);
    path.pop_back();
  };
  for (const MergeBranch& root : merged.roots) visit(root, visit);
  std::stable_sort(out.begin(), out.end(), [](const DistinctStack& a, const DistinctStack& b) {
    if (a.members.size() != b.members.size()) return a.members.size() < b.members.size();
    return a.members.front() < b.members.front();
  });
  return out;
}

}  // namespace pyframes
