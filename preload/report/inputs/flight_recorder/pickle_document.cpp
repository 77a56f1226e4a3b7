#include "report/inputs/flight_recorder/pickle_document.h"

#include <bit>
#include <unordered_map>

#include <fmt/format.h>

namespace hangshim::report::pickle {

const char* kind_name(Kind kind) noexcept {
  switch (kind) {
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
  }
  return "?";
}

bool Document::boolean(ValueId v) const { return nodes_[v].kind == Kind::Bool && nodes_[v].bits != 0; }

int64_t Document::integer(ValueId v) const {
  return nodes_[v].kind == Kind::Int ? static_cast<int64_t>(nodes_[v].bits) : 0;
}

double Document::real(ValueId v) const { return nodes_[v].kind == Kind::Float ? std::bit_cast<double>(nodes_[v].bits) : 0.0; }

std::string_view Document::string(ValueId v) const {
  const Node& n = nodes_[v];
  if (n.kind != Kind::String) return {};
  return std::string_view(text_).substr(static_cast<size_t>(n.bits >> 32), static_cast<size_t>(n.bits & 0xffffffffu));
}

std::span<const ValueId> Document::items(ValueId v) const {
  const Node& n = nodes_[v];
  if (n.kind != Kind::List && n.kind != Kind::Tuple && n.kind != Kind::Dict) return {};
  return containers_[n.container];
}

std::optional<ValueId> Document::find(ValueId dict, std::string_view key) const {
  if (nodes_[dict].kind != Kind::Dict) return std::nullopt;
  const auto& pairs = containers_[nodes_[dict].container];
  for (size_t i = pairs.size(); i >= 2; i -= 2) {  // the last one set wins, as in Python
    ValueId k = pairs[i - 2];
    if (nodes_[k].kind == Kind::String && string(k) == key) return pairs[i - 1];
  }
  return std::nullopt;
}

ValueId Document::add_none() {
  nodes_.push_back(Node{});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId Document::add_bool(bool value) {
  nodes_.push_back(Node{Kind::Bool, true, 0, value ? 1u : 0u});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId Document::add_int(int64_t value) {
  nodes_.push_back(Node{Kind::Int, true, 0, static_cast<uint64_t>(value)});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId Document::add_float(double value) {
  nodes_.push_back(Node{Kind::Float, true, 0, std::bit_cast<uint64_t>(value)});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId Document::add_string(std::string_view utf8) {
  uint64_t offset = text_.size();
  text_.append(utf8);
  nodes_.push_back(Node{Kind::String, true, 0, offset << 32 | utf8.size()});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId Document::add_container(Kind kind) {
  containers_.emplace_back();
  nodes_.push_back(Node{kind, kind == Kind::Tuple, static_cast<uint32_t>(containers_.size() - 1), 0});
  return static_cast<ValueId>(nodes_.size() - 1);
}

ValueId Document::add_tuple(std::span<const ValueId> items) {
  bool all_hashable = true;
  for (ValueId item : items) all_hashable = all_hashable && nodes_[item].hashable;
  containers_.emplace_back(items.begin(), items.end());
  nodes_.push_back(Node{Kind::Tuple, all_hashable, static_cast<uint32_t>(containers_.size() - 1), 0});
  return static_cast<ValueId>(nodes_.size() - 1);
}

void Document::append(ValueId list, ValueId item) { containers_[nodes_[list].container].push_back(item); }

void Document::set_item(ValueId dict, ValueId key, ValueId value) {
  auto& pairs = containers_[nodes_[dict].container];
  pairs.push_back(key);
  pairs.push_back(value);
}

bool Document::hashable(ValueId v) const {
  Kind k = nodes_[v].kind;
  return k != Kind::List && k != Kind::Dict && nodes_[v].hashable;
}

namespace {

class Canonical {
 public:
  Canonical(const Document& doc, size_t max_depth, size_t max_chars) : doc_(doc), max_depth_(max_depth), max_chars_(max_chars) {}

  bool write(ValueId v, size_t depth, std::string& out) {
    if (depth > max_depth_ || out.size() > max_chars_) return false;
    switch (doc_.kind(v)) {
      case Kind::None: out += 'N'; return true;
      case Kind::Bool: out += doc_.boolean(v) ? 'T' : 'F'; return true;
      case Kind::Int: out += fmt::format("I{}", doc_.integer(v)); return true;
      case Kind::Float: out += fmt::format("D{:016x}", std::bit_cast<uint64_t>(doc_.real(v))); return true;
      case Kind::String: {
        out += 'S';
        for (unsigned char c : doc_.string(v)) out += fmt::format("{:02x}", c);
        out += ';';
        return out.size() <= max_chars_;
      }
      case Kind::List:
      case Kind::Tuple: {
        bool list = doc_.kind(v) == Kind::List;
        out += list ? "L[" : "U(";
        bool first = true;
        for (ValueId item : doc_.items(v)) {
          if (!first) out += ',';
          first = false;
          if (!write(item, depth + 1, out)) return false;
        }
        out += list ? ']' : ')';
        return true;
      }
      case Kind::Dict: return write_dict(v, depth, out);
    }
    return false;
  }

 private:
  // Python's dict: a key keeps the place it was first set at and the value it was last set to.
  bool write_dict(ValueId v, size_t depth, std::string& out) {
    auto pairs = doc_.items(v);
    size_t n = pairs.size() / 2;
    std::vector<std::string> keys(n);
    std::unordered_map<std::string, size_t> last;  // key text -> the pair that set it last
    size_t key_chars = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!write(pairs[2 * i], depth + 1, keys[i])) return false;
      key_chars += keys[i].size();
      if (key_chars > max_chars_) return false;
      last[keys[i]] = i;
    }
    out += "M{";
    bool first = true;
    for (size_t i = 0; i < n; ++i) {
      auto it = last.find(keys[i]);
      if (it == last.end()) continue;  // written already, at the place it was first set
      size_t value = it->second;
      last.erase(it);
      if (!first) out += ',';
      first = false;
      out += keys[i];
      out += ':';
      if (!write(pairs[2 * value + 1], depth + 1, out)) return false;
    }
    out += '}';
    return true;
  }

  const Document& doc_;
  size_t max_depth_;
  size_t max_chars_;
};

}  // namespace

std::optional<std::string> canonical_text(const Document& doc, ValueId v, size_t max_depth, size_t max_chars) {
  std::string out;
  Canonical canonical(doc, max_depth, max_chars);
  if (!canonical.write(v, 0, out) || out.size() > max_chars) return std::nullopt;
  return out;
}

}  // namespace hangshim::report::pickle
