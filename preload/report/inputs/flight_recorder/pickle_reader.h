// A bounded reader of the pickles PyTorch's Flight Recorder writes (pickle_opcodes.h lists the
// opcodes), with Python's own semantics for each (Lib/pickle.py's _Unpickler): the same stack,
// marks and memo, so what it reads is what pickle.loads returns.
//
// The bytes are untrusted. Every opcode consumes at least one byte, every length is checked
// against the bytes left, and the values made, the marks open at once and the memo are bounded
// (Limits): a damaged or hostile file ends in an error, never a crash, a hang or an allocation
// larger than a small multiple of its size. Any other opcode (GLOBAL, REDUCE, FRAME, ...) is
// refused, named, with its byte offset.
#pragma once

#include <cstddef>
#include <string_view>

#include "pyframes/result.h"
#include "report/inputs/flight_recorder/pickle_document.h"

namespace hangshim::report::pickle {

struct Limits {
  size_t max_bytes = size_t{256} << 20;  // a dump of 2000 entries is a few MB
  size_t max_values = size_t{1} << 24;   // values made (a BINGET makes none)
  size_t max_marks = 64;                 // marks open at once: a dump nests 5 deep
};

// Reads one pickle from `bytes` up to its STOP (bytes after it are not read, as pickle.loads
// ignores them). Errors say what is wrong and at which byte: "opcode 0x63 (GLOBAL) at byte 12
// is not one a Flight Recorder dump uses", "cut at byte 4096 inside BINUNICODE", ...
pyframes::Result<Document> read_pickle(std::string_view bytes, const Limits& limits = {});

}  // namespace hangshim::report::pickle
