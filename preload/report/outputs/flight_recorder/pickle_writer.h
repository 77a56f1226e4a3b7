// Writes values as the TorchScript pickler writes a Flight Recorder dump (pickle_opcodes.h):
// protocol 2, dicts as EMPTY_DICT MARK ... SETITEMS, lists as EMPTY_LIST MARK ... APPENDS,
// tuples as EMPTY_TUPLE, TUPLE1-3 or MARK ... TUPLE, each distinct string once (BINUNICODE and
// BINPUT) and again by BINGET, ints as BININT1/BININT2/BININT or LONG1 of 8 bytes. Python's
// pickle.load and PyTorch's own tools read it; so does pickle_reader.h.
//
//   PickleWriter w;
//   w.begin_dict(); w.string("version"); w.string("2.10"); w.end();
//   auto bytes = w.finish();
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pyframes/result.h"
#include "report/inputs/flight_recorder/pickle_document.h"

namespace hangshim::report::pickle {

class PickleWriter {
 public:
  PickleWriter();

  void none();
  void boolean(bool value);
  void integer(int64_t value);
  void real(double value);
  void string(std::string_view utf8);  // must be UTF-8 (pickle_utf8.h makes it so)
  void begin_list();
  void begin_dict();  // then key, value, key, value, ...
  void begin_tuple();
  void end();         // closes the innermost list, dict or tuple

  // The pickle, ending in STOP: exactly one value written at the top, every container closed,
  // every dict given whole key-value pairs, every string UTF-8; else an error naming the misuse.
  pyframes::Result<std::string> finish();

 private:
  struct Open {
    Kind kind;
    size_t items = 0;
    size_t mark_at = 0;  // tuples: where their MARK byte is, dropped again for 0 to 3 items
  };
  void value_written();
  void put(uint8_t code);
  void little(uint64_t value, size_t bytes);
  void memo_put();

  std::string out_;
  std::vector<Open> open_;
  size_t top_values_ = 0;
  uint32_t next_memo_ = 0;
  std::unordered_map<std::string, uint32_t> strings_;  // memo index of each string written
  std::string misuse_;  // the first misuse, reported by finish()
};

}  // namespace hangshim::report::pickle
