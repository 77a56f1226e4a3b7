#include "report/inputs/flight_recorder/pickle_reader.h"

#include <bit>
#include <cstring>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "report/inputs/flight_recorder/pickle_opcodes.h"
#include "report/inputs/flight_recorder/pickle_utf8.h"

namespace hangshim::report::pickle {

namespace {

std::string opcode_text(uint8_t code) {
  const char* name = opcode_name(code);
  return name != nullptr ? fmt::format("opcode 0x{:02x} ({})", code, name) : fmt::format("byte 0x{:02x} (no pickle opcode)", code);
}

class Reader {
 public:
  Reader(std::string_view bytes, const Limits& limits) : in_(bytes), limits_(limits) {}

  pyframes::Result<Document> run() {
    if (in_.size() > limits_.max_bytes) {
      return fail(0, fmt::format("{} bytes, more than the {} a Flight Recorder dump is read up to", in_.size(), limits_.max_bytes));
    }
    while (pos_ < in_.size()) {
      size_t at = pos_;
      uint8_t code = static_cast<uint8_t>(in_[pos_++]);
      if (!is_accepted_opcode(code)) {
        return fail(at, fmt::format("{} is not one a Flight Recorder dump uses", opcode_text(code)));
      }
      if (code == op::kStop) {
        if (frame_size() < 1) return fail(at, "STOP with nothing to return (stack underflow)");
        doc_.set_root(stack_.back());
        return std::move(doc_);
      }
      if (!step(code, at)) return std::move(error_);
    }
    return cut(fmt::format("the file ends at byte {} before its STOP", in_.size()));
  }

 private:
  pyframes::Error fail(size_t at, std::string what) {
    return pyframes::make_error(pyframes::ErrorKind::Corrupt, fmt::format("{} at byte {}", what, at));
  }
  bool stop(size_t at, std::string what) {
    error_ = fail(at, std::move(what));
    return false;
  }
  // A file that ends too early: the most common damage (a dump cut by a full disk, a copy that
  // stopped), said so with what to do.
  pyframes::Error cut(std::string what) {
    return pyframes::make_error(pyframes::ErrorKind::Truncated, std::move(what),
                                "copy the file again, or dump it again");
  }

  // The arguments of the opcode at `at`: `n` bytes, or an error when the file ends first.
  bool take(size_t n, size_t at, uint8_t code, const char*& out) {
    if (in_.size() - pos_ < n) {
      error_ = cut(fmt::format("the file ends at byte {}, inside {} at byte {}", in_.size(), opcode_text(code), at));
      return false;
    }
    out = in_.data() + pos_;
    pos_ += n;
    return true;
  }
  uint64_t little(const char* p, size_t n) {
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = v << 8 | static_cast<unsigned char>(p[i]);
    return v;
  }

  // Python starts a new stack at each MARK: what lies below the newest mark cannot be popped.
  size_t frame_base() const { return marks_.empty() ? 0 : marks_.back(); }
  size_t frame_size() const { return stack_.size() - frame_base(); }

  // APPENDS and SETITEMS: closes the newest MARK, which must have the `container` they fill
  // just below it. Returns the stack position of the mark (never 0 then), or 0 after stop().
  size_t pop_mark_above(size_t at, const char* opcode, const char* container) {
    if (marks_.empty()) {
      stop(at, fmt::format("{} without a MARK", opcode));
      return 0;
    }
    const size_t from = marks_.back();
    marks_.pop_back();
    if (from <= frame_base()) {
      stop(at, fmt::format("{} with no {} below its MARK (stack underflow)", opcode, container));
      return 0;
    }
    return from;
  }

  bool push_new(ValueId v, size_t at) {
    if (doc_.value_count() > limits_.max_values) {
      return stop(at, fmt::format("more than {} values (a Flight Recorder dump holds far fewer)", limits_.max_values));
    }
    stack_.push_back(v);
    return true;
  }

  bool need(size_t n, size_t at, uint8_t code) {
    if (frame_size() >= n) return true;
    return stop(at, fmt::format("{} needs {} value(s) on the stack, {} there (stack underflow)", opcode_text(code), n, frame_size()));
  }

  bool step(uint8_t code, size_t at) {
    const char* p = nullptr;
    switch (code) {
      case op::kProto: {
        if (!take(1, at, code, p)) return false;
        uint8_t version = static_cast<uint8_t>(p[0]);
        if (version != kFlightRecorderProtocol) {
          error_ = pyframes::make_error(pyframes::ErrorKind::Corrupt, fmt::format("pickle protocol {} (PROTO at byte {}); Flight "
                                        "Recorder dumps are protocol {}", version, at, kFlightRecorderProtocol));
          error_.hint = "a dump rewritten by Python: write it again with pickle.dump(obj, f, protocol=2)";
          return false;
        }
        return true;
      }
      case op::kMark:
        if (marks_.size() >= limits_.max_marks) return stop(at, fmt::format("more than {} MARKs open at once", limits_.max_marks));
        marks_.push_back(stack_.size());
        return true;
      case op::kNone: return push_new(doc_.add_none(), at);
      case op::kNewTrue: return push_new(doc_.add_bool(true), at);
      case op::kNewFalse: return push_new(doc_.add_bool(false), at);
      case op::kBinInt1:
        if (!take(1, at, code, p)) return false;
        return push_new(doc_.add_int(static_cast<int64_t>(little(p, 1))), at);
      case op::kBinInt2:
        if (!take(2, at, code, p)) return false;
        return push_new(doc_.add_int(static_cast<int64_t>(little(p, 2))), at);
      case op::kBinInt:
        if (!take(4, at, code, p)) return false;
        return push_new(doc_.add_int(static_cast<int32_t>(static_cast<uint32_t>(little(p, 4)))), at);
      case op::kLong1: return long1(at, code);
      case op::kBinFloat: {
        if (!take(8, at, code, p)) return false;
        uint64_t bits = 0;
        for (size_t i = 0; i < 8; ++i) bits = bits << 8 | static_cast<unsigned char>(p[i]);  // big-endian
        return push_new(doc_.add_float(std::bit_cast<double>(bits)), at);
      }
      case op::kBinUnicode: {
        if (!take(4, at, code, p)) return false;
        uint64_t length = little(p, 4);
        if (in_.size() - pos_ < length) {
          error_ = cut(fmt::format("the file ends at byte {}, inside a string of {} bytes (BINUNICODE at byte {})", in_.size(),
                                   length, at));
          return false;
        }
        std::string_view text = in_.substr(pos_, static_cast<size_t>(length));
        pos_ += static_cast<size_t>(length);
        if (!is_valid_utf8(text)) return stop(at, "BINUNICODE string that is not UTF-8");
        return push_new(doc_.add_string(text), at);
      }
      case op::kEmptyDict: return push_new(doc_.add_container(Kind::Dict), at);
      case op::kEmptyList: return push_new(doc_.add_container(Kind::List), at);
      case op::kEmptyTuple: return push_new(doc_.add_container(Kind::Tuple), at);
      case op::kTuple: {
        if (marks_.empty()) return stop(at, "TUPLE without a MARK");
        size_t from = marks_.back();
        marks_.pop_back();
        ValueId t = doc_.add_tuple(std::span<const ValueId>(stack_).subspan(from));
        stack_.resize(from);
        return push_new(t, at);
      }
      case op::kTuple1:
      case op::kTuple2:
      case op::kTuple3: {
        size_t n = static_cast<size_t>(code - op::kTuple1) + 1;
        if (!need(n, at, code)) return false;
        ValueId t = doc_.add_tuple(std::span<const ValueId>(stack_).subspan(stack_.size() - n));
        stack_.resize(stack_.size() - n);
        return push_new(t, at);
      }
      case op::kAppend: {
        if (!need(2, at, code)) return false;
        ValueId item = stack_.back();
        stack_.pop_back();
        if (!doc_.is(stack_.back(), Kind::List)) return stop(at, fmt::format("APPEND to a {}, not a list", kind_name(doc_.kind(stack_.back()))));
        doc_.append(stack_.back(), item);
        return true;
      }
      case op::kAppends: {
        const size_t from = pop_mark_above(at, "APPENDS", "list");
        if (from == 0) return false;
        ValueId list = stack_[from - 1];
        if (!doc_.is(list, Kind::List)) return stop(at, fmt::format("APPENDS to a {}, not a list", kind_name(doc_.kind(list))));
        for (size_t i = from; i < stack_.size(); ++i) doc_.append(list, stack_[i]);
        stack_.resize(from);
        return true;
      }
      case op::kSetItem: {
        if (!need(3, at, code)) return false;
        ValueId value = stack_.back();
        ValueId key = stack_[stack_.size() - 2];
        stack_.resize(stack_.size() - 2);
        return set_item(stack_.back(), key, value, at);
      }
      case op::kSetItems: {
        const size_t from = pop_mark_above(at, "SETITEMS", "dict");
        if (from == 0) return false;
        ValueId dict = stack_[from - 1];
        size_t n = stack_.size() - from;
        for (size_t i = from; i + 1 < stack_.size(); i += 2) {
          if (!set_item(dict, stack_[i], stack_[i + 1], at)) return false;
        }
        if (n % 2 != 0) return stop(at, fmt::format("SETITEMS with {} values: a key without its value", n));
        stack_.resize(from);
        return true;
      }
      case op::kBinPut:
      case op::kLongBinPut: {
        size_t width = code == op::kBinPut ? 1 : 4;
        if (!take(width, at, code, p)) return false;
        if (frame_size() < 1) return stop(at, fmt::format("{} with nothing to remember (stack underflow)", opcode_text(code)));
        memo_[static_cast<uint32_t>(little(p, width))] = stack_.back();
        return true;
      }
      case op::kBinGet:
      case op::kLongBinGet: {
        size_t width = code == op::kBinGet ? 1 : 4;
        if (!take(width, at, code, p)) return false;
        uint32_t index = static_cast<uint32_t>(little(p, width));
        auto it = memo_.find(index);
        if (it == memo_.end()) return stop(at, fmt::format("{} of memo index {}, which nothing was put at", opcode_text(code), index));
        stack_.push_back(it->second);  // the same value again, not a copy
        return true;
      }
      default:
        return stop(at, fmt::format("{} is not one a Flight Recorder dump uses", opcode_text(code)));
    }
  }

  // LONG1: n bytes of a little-endian two's complement integer. Python reads any size; a dump
  // holds 64-bit values (the TorchScript pickler writes int64 as LONG1 of 8 bytes), so wider
  // ones are refused unless the extra bytes only extend the sign.
  bool long1(size_t at, uint8_t code) {
    const char* p = nullptr;
    if (!take(1, at, code, p)) return false;
    size_t n = static_cast<unsigned char>(p[0]);
    if (!take(n, at, code, p)) return false;
    if (n == 0) return push_new(doc_.add_int(0), at);
    bool negative = (static_cast<unsigned char>(p[n - 1]) & 0x80) != 0;
    size_t low = n < 8 ? n : 8;
    uint64_t v = little(p, low);
    if (n < 8 && negative) v |= ~uint64_t{0} << (8 * n);
    for (size_t i = 8; i < n; ++i) {
      if (static_cast<unsigned char>(p[i]) != (negative ? 0xFF : 0x00)) return stop(at, "LONG1 integer wider than 64 bits");
    }
    if (n > 8 && ((v >> 63) != 0) != negative) return stop(at, "LONG1 integer wider than 64 bits");
    return push_new(doc_.add_int(static_cast<int64_t>(v)), at);
  }

  bool set_item(ValueId dict, ValueId key, ValueId value, size_t at) {
    if (!doc_.is(dict, Kind::Dict)) return stop(at, fmt::format("SETITEM on a {}, not a dict", kind_name(doc_.kind(dict))));
    if (!doc_.hashable(key)) return stop(at, fmt::format("a dict key that is a {} (unhashable)", kind_name(doc_.kind(key))));
    doc_.set_item(dict, key, value);
    return true;
  }

  std::string_view in_;
  const Limits& limits_;
  size_t pos_ = 0;
  Document doc_;
  std::vector<ValueId> stack_;
  std::vector<size_t> marks_;  // stack sizes at each open MARK
  std::unordered_map<uint32_t, ValueId> memo_;
  pyframes::Error error_;
};

}  // namespace

pyframes::Result<Document> read_pickle(std::string_view bytes, const Limits& limits) {
  Reader reader(bytes, limits);
  return reader.run();
}

}  // namespace hangshim::report::pickle
