// A synthetic CPython address space for robustness tests: objects laid out with a real
// generated Layout in plain buffers, so tests can build frame chains that loop, point into
// nothing or hold garbage, and check that the engine stops cleanly.
#pragma once

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "objects/object_reader.h"
#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/target.h"

namespace test_support {

class FakeMemory final : public pyframes::Memory {
 public:
  static constexpr uint64_t kBase = 0x10000000;

  pyframes::ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override {
    if (address < kBase || address - kBase > bytes_.size() || size > bytes_.size() - (address - kBase)) {
      return pyframes::ReadStatus::Unmapped;
    }
    std::memcpy(out, bytes_.data() + (address - kBase), size);
    return pyframes::ReadStatus::Ok;
  }
  std::string describe() const override { return "fake target"; }

  uint64_t allocate(size_t size) {
    size = (size + 15) & ~size_t{15};
    uint64_t at = kBase + bytes_.size();
    bytes_.resize(bytes_.size() + size, 0);
    return at;
  }
  template <class T>
  void put(uint64_t address, T value) {
    std::memcpy(bytes_.data() + (address - kBase), &value, sizeof value);
  }
  void put_bytes(uint64_t address, const void* data, size_t size) {
    std::memcpy(bytes_.data() + (address - kBase), data, size);
  }
  std::vector<uint8_t>& raw() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// No target at all: every read fails (select_layout still gives a version's generated table).
class NoMemory final : public pyframes::Memory {
 public:
  pyframes::ReadStatus read(uint64_t, void*, size_t) const noexcept override { return pyframes::ReadStatus::Unmapped; }
  std::string describe() const override { return "no memory"; }
};

// Counts the reads made of another Memory: the measure of a reader's work that does not depend
// on how loaded the machine running the test is.
class CountingMemory final : public pyframes::Memory {
 public:
  explicit CountingMemory(const pyframes::Memory& inner) : inner_(inner) {}
  pyframes::ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override {
    ++reads;
    return inner_.read(address, out, size);
  }
  std::string describe() const override { return inner_.describe(); }
  mutable uint64_t reads = 0;

 private:
  const pyframes::Memory& inner_;
};

// Builds objects of one CPython version's layout inside a FakeMemory.
class FakeTarget {
 public:
  explicit FakeTarget(pyframes::Layout layout) : layout_(std::move(layout)) {
    code_type_ = make_type("code", 0);
    str_type_ = make_type("str", pyframes::kTpFlagUnicodeSubclass);
    bytes_type_ = make_type("bytes", pyframes::kTpFlagBytesSubclass);
    runtime_ = memory_.allocate(4096);
    interp_ = memory_.allocate(static_cast<size_t>(std::max(layout_.interpreter.size, 4096)));
    // 3.7+: _PyRuntime.interpreters.head; 3.6: the interp_head global (here: runtime_).
    memory_.put<uint64_t>(runtime_ + static_cast<uint64_t>(std::max(layout_.runtime.interpreters_head, 0)), interp_);
  }

  FakeMemory& memory() { return memory_; }
  const pyframes::Layout& layout() const { return layout_; }
  pyframes::PythonTarget target() const {
    pyframes::PythonTarget t;
    t.version = layout_.version;
    if (layout_.runtime.interpreters_head >= 0) {
      t.runtime_address = runtime_;
    } else {
      t.interp_head_address = runtime_;
    }
    return t;
  }
  uint64_t interp() const { return interp_; }

  uint64_t make_type(const std::string& name, uint64_t flags) {
    uint64_t type = memory_.allocate(1024);
    uint64_t text = memory_.allocate(name.size() + 1);
    memory_.put_bytes(text, name.c_str(), name.size() + 1);
    memory_.put<uint64_t>(type + static_cast<uint64_t>(layout_.type.tp_name), text);
    memory_.put<uint64_t>(type + static_cast<uint64_t>(layout_.type.tp_flags), flags);
    return type;
  }

  uint64_t make_str(const std::string& ascii) {
    const auto& u = layout_.unicode;
    uint64_t object = memory_.allocate(static_cast<size_t>(u.ascii_size) + ascii.size() + 1);
    memory_.put<uint64_t>(object + static_cast<uint64_t>(layout_.object.ob_type), str_type_);
    memory_.put<int64_t>(object + static_cast<uint64_t>(u.length), static_cast<int64_t>(ascii.size()));
    uint32_t state = (1u << u.kind_shift) | (1u << u.compact_shift) | (1u << u.ascii_shift);
    if (u.ready_shift >= 0) state |= 1u << u.ready_shift;
    memory_.put<uint32_t>(object + static_cast<uint64_t>(u.state), state);
    memory_.put_bytes(object + static_cast<uint64_t>(u.ascii_size), ascii.data(), ascii.size());
    return object;
  }

  uint64_t make_bytes(const std::string& data) {
    uint64_t object = memory_.allocate(static_cast<size_t>(layout_.bytes.ob_sval) + data.size() + 1);
    memory_.put<uint64_t>(object + static_cast<uint64_t>(layout_.object.ob_type), bytes_type_);
    memory_.put<int64_t>(object + static_cast<uint64_t>(layout_.object.ob_size), static_cast<int64_t>(data.size()));
    memory_.put_bytes(object + static_cast<uint64_t>(layout_.bytes.ob_sval), data.data(), data.size());
    return object;
  }

  // A code object of `units` code units whose every instruction is on line `firstlineno + 1`.
  uint64_t make_code(const std::string& name, const std::string& file, int firstlineno, int units = 8) {
    const auto& c = layout_.code;
    uint64_t code = memory_.allocate(static_cast<size_t>(std::max(c.size, 256)) + static_cast<size_t>(units) * 2);
    memory_.put<uint64_t>(code + static_cast<uint64_t>(layout_.object.ob_type), code_type_);
    memory_.put<int64_t>(code + static_cast<uint64_t>(layout_.object.ob_size), units);
    memory_.put<uint64_t>(code + static_cast<uint64_t>(c.name), make_str(name));
    memory_.put<uint64_t>(code + static_cast<uint64_t>(c.filename), make_str(file));
    if (c.qualname >= 0) memory_.put<uint64_t>(code + static_cast<uint64_t>(c.qualname), make_str("Q." + name));
    memory_.put<int32_t>(code + static_cast<uint64_t>(c.firstlineno), firstlineno);
    std::string table;
    switch (layout_.line_table) {
      case pyframes::LineTableFormat::Lnotab: table = std::string("\x00\x01", 2); break;
      case pyframes::LineTableFormat::Linetable310: table = std::string(1, static_cast<char>(units * 2)) + "\x01"; break;
      case pyframes::LineTableFormat::Locations311:
        // One "no columns" entry per code unit (code 13), the first moving to the next line.
        for (int i = 0; i < units; ++i) {
          table += static_cast<char>(0xE8);
          table += static_cast<char>(i == 0 ? 2 : 0);  // signed varint: +1, then 0
        }
        break;
    }
    memory_.put<uint64_t>(code + static_cast<uint64_t>(c.linetable), make_bytes(table));
    return code;
  }

  // A thread state with the given frame chain head, linked into the interpreter's list.
  uint64_t add_thread(uint64_t thread_id, uint64_t first_frame) {
    const auto& ts = layout_.thread_state;
    uint64_t tstate = memory_.allocate(static_cast<size_t>(std::max(ts.size, 512)));
    memory_.put<uint64_t>(tstate + static_cast<uint64_t>(ts.interp), interp_);
    memory_.put<uint64_t>(tstate + static_cast<uint64_t>(ts.thread_id), thread_id);
    if (ts.frame >= 0) {
      memory_.put<uint64_t>(tstate + static_cast<uint64_t>(ts.frame), first_frame);
    } else {
      uint64_t cframe = memory_.allocate(64);
      memory_.put<uint64_t>(cframe + static_cast<uint64_t>(layout_.cframe.current_frame), first_frame);
      memory_.put<uint64_t>(tstate + static_cast<uint64_t>(ts.cframe), cframe);
    }
    uint64_t head = 0;
    memory_.read(interp_ + static_cast<uint64_t>(layout_.interpreter.tstate_head), &head, 8);
    memory_.put<uint64_t>(tstate + static_cast<uint64_t>(ts.next), head);
    memory_.put<uint64_t>(interp_ + static_cast<uint64_t>(layout_.interpreter.tstate_head), tstate);
    return tstate;
  }

  // A frame running `code` at code unit `unit`, whose caller is `back`.
  uint64_t make_frame(uint64_t code, uint64_t back, int unit = 1, uint8_t owner = 0) {
    if (layout_.frame_model == pyframes::FrameModel::FrameObject) {
      const auto& f = layout_.frame_object;
      uint64_t frame = memory_.allocate(static_cast<size_t>(std::max(f.size, 512)));
      memory_.put<uint64_t>(frame + static_cast<uint64_t>(f.code), code);
      memory_.put<uint64_t>(frame + static_cast<uint64_t>(f.back), back);
      memory_.put<int32_t>(frame + static_cast<uint64_t>(f.lasti), layout_.lasti_in_code_units ? unit : unit * 2);
      return frame;
    }
    const auto& f = layout_.interpreter_frame;
    uint64_t frame = memory_.allocate(256);
    memory_.put<uint64_t>(frame + static_cast<uint64_t>(f.executable), code);
    memory_.put<uint64_t>(frame + static_cast<uint64_t>(f.previous), back);
    memory_.put<uint64_t>(frame + static_cast<uint64_t>(f.instr_ptr),
                          code + static_cast<uint64_t>(layout_.code.code_adaptive) + static_cast<uint64_t>(unit) * 2);
    memory_.put<uint8_t>(frame + static_cast<uint64_t>(f.owner), owner);
    return frame;
  }

  void set_frame_back(uint64_t frame, uint64_t back) {
    int offset = layout_.frame_model == pyframes::FrameModel::FrameObject ? layout_.frame_object.back
                                                                          : layout_.interpreter_frame.previous;
    memory_.put<uint64_t>(frame + static_cast<uint64_t>(offset), back);
  }

 private:
  pyframes::Layout layout_;
  FakeMemory memory_;
  uint64_t code_type_ = 0, str_type_ = 0, bytes_type_ = 0;
  uint64_t runtime_ = 0, interp_ = 0;
};

}  // namespace test_support
