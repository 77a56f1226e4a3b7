#include "report/outputs/flight_recorder/pickle_writer.h"

#include <bit>
#include <limits>

#include "report/inputs/flight_recorder/pickle_opcodes.h"
#include "report/inputs/flight_recorder/pickle_utf8.h"

namespace hangshim::report::pickle {

PickleWriter::PickleWriter() {
  put(op::kProto);
  put(kFlightRecorderProtocol);
}

void PickleWriter::put(uint8_t code) { out_ += static_cast<char>(code); }

void PickleWriter::little(uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) put(static_cast<uint8_t>(value >> (8 * i)));
}

void PickleWriter::value_written() {
  if (open_.empty()) {
    ++top_values_;
  } else {
    ++open_.back().items;
  }
}

void PickleWriter::memo_put() {
  if (next_memo_ <= std::numeric_limits<uint8_t>::max()) {
    put(op::kBinPut);
    put(static_cast<uint8_t>(next_memo_));
  } else {
    put(op::kLongBinPut);
    little(next_memo_, 4);
  }
  ++next_memo_;
}

void PickleWriter::none() {
  put(op::kNone);
  value_written();
}

void PickleWriter::boolean(bool value) {
  put(value ? op::kNewTrue : op::kNewFalse);
  value_written();
}

void PickleWriter::integer(int64_t value) {
  // The TorchScript pickler's choice (Pickler::pushInt): the smallest of the three fixed widths
  // that holds the value, else 8 bytes of LONG1.
  if (value >= 0 && value <= std::numeric_limits<uint8_t>::max()) {
    put(op::kBinInt1);
    little(static_cast<uint64_t>(value), 1);
  } else if (value >= 0 && value <= std::numeric_limits<uint16_t>::max()) {
    put(op::kBinInt2);
    little(static_cast<uint64_t>(value), 2);
  } else if (value >= std::numeric_limits<int32_t>::min() && value <= std::numeric_limits<int32_t>::max()) {
    put(op::kBinInt);
    little(static_cast<uint32_t>(static_cast<int32_t>(value)), 4);
  } else {
    put(op::kLong1);
    put(8);
    little(static_cast<uint64_t>(value), 8);
  }
  value_written();
}

void PickleWriter::real(double value) {
  put(op::kBinFloat);
  uint64_t bits = std::bit_cast<uint64_t>(value);
  for (size_t i = 8; i-- > 0;) put(static_cast<uint8_t>(bits >> (8 * i)));  // big-endian
  value_written();
}

void PickleWriter::string(std::string_view utf8) {
  if (!is_valid_utf8(utf8) && misuse_.empty()) misuse_ = "a string that is not UTF-8";
  auto it = strings_.find(std::string(utf8));
  if (it != strings_.end()) {
    if (it->second <= std::numeric_limits<uint8_t>::max()) {
      put(op::kBinGet);
      put(static_cast<uint8_t>(it->second));
    } else {
      put(op::kLongBinGet);
      little(it->second, 4);
    }
  } else {
    put(op::kBinUnicode);
    little(utf8.size(), 4);
    out_.append(utf8);
    strings_.emplace(std::string(utf8), next_memo_);
    memo_put();
  }
  value_written();
}

void PickleWriter::begin_list() {
  put(op::kEmptyList);
  put(op::kMark);
  open_.push_back({Kind::List});
}

void PickleWriter::begin_dict() {
  put(op::kEmptyDict);
  put(op::kMark);
  open_.push_back({Kind::Dict});
}

void PickleWriter::begin_tuple() {
  open_.push_back({Kind::Tuple, 0, out_.size()});
  put(op::kMark);
}

void PickleWriter::end() {
  if (open_.empty()) {
    if (misuse_.empty()) misuse_ = "end() with no list, dict or tuple open";
    return;
  }
  Open closing = open_.back();
  open_.pop_back();
  switch (closing.kind) {
    case Kind::List: put(op::kAppends); break;
    case Kind::Dict:
      if (closing.items % 2 != 0 && misuse_.empty()) misuse_ = "a dict given a key without its value";
      put(op::kSetItems);
      break;
    default:
      if (closing.items <= 3) {
        out_.erase(closing.mark_at, 1);  // no MARK: EMPTY_TUPLE or TUPLE1-3 take the items as they are
        put(closing.items == 0 ? op::kEmptyTuple : static_cast<uint8_t>(op::kTuple1 + closing.items - 1));
      } else {
        put(op::kTuple);
      }
      break;
  }
  value_written();
}

pyframes::Result<std::string> PickleWriter::finish() {
  if (misuse_.empty() && !open_.empty()) misuse_ = "a list, dict or tuple left open";
  if (misuse_.empty() && top_values_ != 1) misuse_ = "not exactly one value at the top";
  if (!misuse_.empty()) {
    return pyframes::make_error(pyframes::ErrorKind::Usage, "cannot write the pickle: " + misuse_);
  }
  put(op::kStop);
  return std::move(out_);
}

}  // namespace hangshim::report::pickle
