// The pickle opcodes a PyTorch Flight Recorder dump is made of, and the names of all the others
// (for errors that say which opcode was refused).
//
// The dump is pickled by the TorchScript pickler (torch/csrc/jit/serialization/pickler.cpp,
// called by pickle_str() in torch/csrc/distributed/c10d/TraceUtils.h with tag_aggregates off,
// so no GLOBAL/REDUCE type tags): protocol 2, dicts as EMPTY_DICT MARK ... SETITEMS, lists as
// EMPTY_LIST MARK ... APPENDS, tuples as EMPTY_TUPLE/TUPLE1-3 or MARK ... TUPLE, strings as
// BINUNICODE memoized with BINPUT/LONG_BINPUT and repeated with BINGET/LONG_BINGET, ints as
// BININT1/BININT2/BININT or LONG1 with 8 bytes, floats as BINFLOAT, NEWTRUE/NEWFALSE, NONE.
// Python's pickle at protocol 2 writes the same values with the same opcodes, plus APPEND and
// SETITEM for one-item batches. Nothing else is accepted: no GLOBAL, REDUCE, BUILD or
// persistent ids, so reading a dump can never name code to run or objects to build.
#pragma once

#include <cstdint>

namespace hangshim::report::pickle {

namespace op {
inline constexpr uint8_t kProto = 0x80;        // PROTO n
inline constexpr uint8_t kStop = '.';
inline constexpr uint8_t kMark = '(';
inline constexpr uint8_t kNone = 'N';
inline constexpr uint8_t kNewTrue = 0x88;
inline constexpr uint8_t kNewFalse = 0x89;
inline constexpr uint8_t kBinInt = 'J';        // 4-byte signed, little-endian
inline constexpr uint8_t kBinInt1 = 'K';       // 1-byte unsigned
inline constexpr uint8_t kBinInt2 = 'M';       // 2-byte unsigned, little-endian
inline constexpr uint8_t kLong1 = 0x8a;        // n bytes, two's complement, little-endian
inline constexpr uint8_t kBinFloat = 'G';      // 8-byte IEEE double, big-endian
inline constexpr uint8_t kBinUnicode = 'X';    // 4-byte length, UTF-8 bytes
inline constexpr uint8_t kEmptyDict = '}';
inline constexpr uint8_t kEmptyList = ']';
inline constexpr uint8_t kEmptyTuple = ')';
inline constexpr uint8_t kTuple = 't';         // the items since the last MARK
inline constexpr uint8_t kTuple1 = 0x85;
inline constexpr uint8_t kTuple2 = 0x86;
inline constexpr uint8_t kTuple3 = 0x87;
inline constexpr uint8_t kAppend = 'a';
inline constexpr uint8_t kAppends = 'e';
inline constexpr uint8_t kSetItem = 's';
inline constexpr uint8_t kSetItems = 'u';
inline constexpr uint8_t kBinPut = 'q';        // 1-byte memo index
inline constexpr uint8_t kLongBinPut = 'r';    // 4-byte memo index
inline constexpr uint8_t kBinGet = 'h';
inline constexpr uint8_t kLongBinGet = 'j';
}  // namespace op

// The protocol the TorchScript pickler writes (PROTOCOL_VERSION in pickler.cpp).
inline constexpr uint8_t kFlightRecorderProtocol = 2;

// "BINUNICODE", "GLOBAL", ...: the name pickletools gives the opcode; nullptr for a byte that
// is no pickle opcode at all.
const char* opcode_name(uint8_t code) noexcept;
// Whether the reader accepts it (the list above).
bool is_accepted_opcode(uint8_t code) noexcept;

}  // namespace hangshim::report::pickle
