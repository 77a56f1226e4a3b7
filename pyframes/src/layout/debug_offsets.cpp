#include "layout/debug_offsets.h"

#include <array>
#include <cstring>
#include <fmt/format.h>
#include <vector>

namespace pyframes {

namespace {

// Each debug-offsets section is a run of uint64_t; these name them in declaration order
// (Skip: a field pyframes does not use, including every section's leading `size`).
enum class Id : uint8_t {
  Skip,
  RuntimeSize, InterpretersHead,
  InterpSize, InterpId, InterpGc, GcCollecting, InterpNext, InterpThreadsHead, InterpModules, InterpSysdict, InterpBuiltins, InterpCevalGil,
  InterpGilState, InterpGilEnabled, InterpGilLocked, InterpGilHolder,
  TstateSize, TstatePrev, TstateNext, TstateInterp, TstateCurrentFrame, TstateThreadId, TstateNativeThreadId,
  FrameSize, FramePrevious, FrameExecutable, FrameInstrPtr, FrameLocalsplus, FrameOwner, FrameTlbcIndex,
  CodeSize, CodeFilename, CodeName, CodeQualname, CodeLinetable, CodeFirstlineno, CodeArgcount, CodeLocalsplusnames,
  CodeLocalspluskinds, CodeAdaptive, CodeTlbc,
  ObType, TypeName, TypeFlags, TypeBasicsize, TypeDictoffset, HeapTypeCachedKeys,
  TupleItem, TupleSize, ListItem, DictKeys, DictValues, FloatVal, LongTag, LongDigit, BytesSize, BytesSval,
  UnicodeState, UnicodeLength, UnicodeAsciiSize,
};

using S = Id;
// 3.13: Include/internal/pycore_runtime.h, struct _Py_DebugOffsets after cookie/version/free_threaded.
constexpr Id k313[] = {
    /* runtime_state */ S::Skip, S::Skip, S::InterpretersHead,
    /* interpreter_state */ S::InterpSize, S::InterpId, S::InterpNext, S::InterpThreadsHead, S::InterpGc,
    S::InterpModules, S::InterpSysdict, S::InterpBuiltins, S::InterpCevalGil, S::InterpGilState, S::InterpGilEnabled,
    S::InterpGilLocked, S::InterpGilHolder,
    /* thread_state */ S::TstateSize, S::TstatePrev, S::TstateNext, S::TstateInterp, S::TstateCurrentFrame,
    S::TstateThreadId, S::TstateNativeThreadId, S::Skip /*datastack_chunk*/, S::Skip /*status*/,
    /* interpreter_frame */ S::FrameSize, S::FramePrevious, S::FrameExecutable, S::FrameInstrPtr, S::FrameLocalsplus,
    S::FrameOwner,
    /* code_object */ S::CodeSize, S::CodeFilename, S::CodeName, S::CodeQualname, S::CodeLinetable, S::CodeFirstlineno,
    S::CodeArgcount, S::CodeLocalsplusnames, S::CodeLocalspluskinds, S::CodeAdaptive,
    /* pyobject */ S::Skip, S::ObType,
    /* type_object */ S::Skip, S::TypeName, S::Skip /*tp_repr*/, S::TypeFlags,
    /* tuple_object */ S::Skip, S::TupleItem, S::TupleSize,
    /* list_object */ S::Skip, S::ListItem, S::Skip,
    /* dict_object */ S::Skip, S::DictKeys, S::DictValues,
    /* float_object */ S::Skip, S::FloatVal,
    /* long_object */ S::Skip, S::LongTag, S::LongDigit,
    /* bytes_object */ S::Skip, S::BytesSize, S::BytesSval,
    /* unicode_object */ S::Skip, S::UnicodeState, S::UnicodeLength, S::UnicodeAsciiSize,
    /* gc */ S::Skip, S::GcCollecting,
};

// 3.14: Include/internal/pycore_debug_offsets.h. New: interpreter threads_main,
// code_object_generation, tlbc_generation; frame stackpointer, tlbc_index; code co_tlbc;
// set_object; gen_object; llist_node; debugger_support.
constexpr Id k314[] = {
    /* runtime_state */ S::Skip, S::Skip, S::InterpretersHead,
    /* interpreter_state */ S::InterpSize, S::InterpId, S::InterpNext, S::InterpThreadsHead, S::Skip /*threads_main*/,
    S::InterpGc, S::InterpModules, S::InterpSysdict, S::InterpBuiltins, S::InterpCevalGil, S::InterpGilState,
    S::InterpGilEnabled, S::InterpGilLocked, S::InterpGilHolder, S::Skip /*code_object_generation*/,
    S::Skip /*tlbc_generation*/,
    /* thread_state */ S::TstateSize, S::TstatePrev, S::TstateNext, S::TstateInterp, S::TstateCurrentFrame,
    S::TstateThreadId, S::TstateNativeThreadId, S::Skip /*datastack_chunk*/, S::Skip /*status*/,
    /* interpreter_frame */ S::FrameSize, S::FramePrevious, S::FrameExecutable, S::FrameInstrPtr, S::FrameLocalsplus,
    S::FrameOwner, S::Skip /*stackpointer*/, S::FrameTlbcIndex,
    /* code_object */ S::CodeSize, S::CodeFilename, S::CodeName, S::CodeQualname, S::CodeLinetable, S::CodeFirstlineno,
    S::CodeArgcount, S::CodeLocalsplusnames, S::CodeLocalspluskinds, S::CodeAdaptive, S::CodeTlbc,
    /* pyobject */ S::Skip, S::ObType,
    /* type_object */ S::Skip, S::TypeName, S::Skip /*tp_repr*/, S::TypeFlags,
    /* tuple_object */ S::Skip, S::TupleItem, S::TupleSize,
    /* list_object */ S::Skip, S::ListItem, S::Skip,
    /* set_object */ S::Skip, S::Skip, S::Skip, S::Skip,
    /* dict_object */ S::Skip, S::DictKeys, S::DictValues,
    /* float_object */ S::Skip, S::FloatVal,
    /* long_object */ S::Skip, S::LongTag, S::LongDigit,
    /* bytes_object */ S::Skip, S::BytesSize, S::BytesSval,
    /* unicode_object */ S::Skip, S::UnicodeState, S::UnicodeLength, S::UnicodeAsciiSize,
    /* gc */ S::Skip, S::GcCollecting,
};

// 3.15: read from the DWARF of Debian's libpython3.15 3.15.2 (`ptype/o struct _Py_DebugOffsets`).
// New since 3.14: thread_state base_frame, last_profiled_frame, last_profiled_frame_seq (before
// thread_id), holds_gil, gil_requested, current_exception, exc_state (after status); a section
// err_stackitem {exc_value} (no size word); type_object tp_basicsize, tp_dictoffset; a section
// heap_type_object {size, ht_cached_keys}; unicode_object compactunicodeobject_size; gc frame,
// generation_stats_size, generation_stats.
constexpr Id k315[] = {
    /* runtime_state */ S::Skip, S::Skip, S::InterpretersHead,
    /* interpreter_state */ S::InterpSize, S::InterpId, S::InterpNext, S::InterpThreadsHead, S::Skip /*threads_main*/,
    S::InterpGc, S::InterpModules, S::InterpSysdict, S::InterpBuiltins, S::InterpCevalGil, S::InterpGilState,
    S::InterpGilEnabled, S::InterpGilLocked, S::InterpGilHolder, S::Skip /*code_object_generation*/,
    S::Skip /*tlbc_generation*/,
    /* thread_state */ S::TstateSize, S::TstatePrev, S::TstateNext, S::TstateInterp, S::TstateCurrentFrame,
    S::Skip /*base_frame*/, S::Skip /*last_profiled_frame*/, S::Skip /*last_profiled_frame_seq*/, S::TstateThreadId,
    S::TstateNativeThreadId, S::Skip /*datastack_chunk*/, S::Skip /*status*/, S::Skip /*holds_gil*/,
    S::Skip /*gil_requested*/, S::Skip /*current_exception*/, S::Skip /*exc_state*/,
    /* err_stackitem */ S::Skip /*exc_value*/,
    /* interpreter_frame */ S::FrameSize, S::FramePrevious, S::FrameExecutable, S::FrameInstrPtr, S::FrameLocalsplus,
    S::FrameOwner, S::Skip /*stackpointer*/, S::FrameTlbcIndex,
    /* code_object */ S::CodeSize, S::CodeFilename, S::CodeName, S::CodeQualname, S::CodeLinetable, S::CodeFirstlineno,
    S::CodeArgcount, S::CodeLocalsplusnames, S::CodeLocalspluskinds, S::CodeAdaptive, S::CodeTlbc,
    /* pyobject */ S::Skip, S::ObType,
    /* type_object */ S::Skip, S::TypeName, S::Skip /*tp_repr*/, S::TypeFlags, S::TypeBasicsize, S::TypeDictoffset,
    /* heap_type_object */ S::Skip, S::HeapTypeCachedKeys,
    /* tuple_object */ S::Skip, S::TupleItem, S::TupleSize,
    /* list_object */ S::Skip, S::ListItem, S::Skip,
    /* set_object */ S::Skip, S::Skip, S::Skip, S::Skip,
    /* dict_object */ S::Skip, S::DictKeys, S::DictValues,
    /* float_object */ S::Skip, S::FloatVal,
    /* long_object */ S::Skip, S::LongTag, S::LongDigit,
    /* bytes_object */ S::Skip, S::BytesSize, S::BytesSval,
    /* unicode_object */ S::Skip, S::UnicodeState, S::UnicodeLength, S::UnicodeAsciiSize,
    S::Skip /*compactunicodeobject_size*/,
    /* gc */ S::Skip, S::GcCollecting,
};

constexpr size_t kHeaderWords = 3;  // cookie, version, free_threaded

int as_offset(uint64_t value) { return value > (1u << 30) ? -1 : static_cast<int>(value); }

}  // namespace

std::optional<uint32_t> read_debug_offsets_version(const Memory& memory, uint64_t runtime_address) {
  struct {
    char cookie[8];
    uint64_t version;
  } head;
  if (memory.read(runtime_address, &head, sizeof head) != ReadStatus::Ok) return std::nullopt;
  if (std::memcmp(head.cookie, kDebugCookie, sizeof kDebugCookie) != 0) return std::nullopt;
  return static_cast<uint32_t>(head.version);
}

bool debug_offsets_free_threaded(const Memory& memory, uint64_t runtime_address) {
  uint64_t free_threaded = 0;
  constexpr uint64_t kFreeThreadedWord = 2 * sizeof(uint64_t);  // after cookie and version (kHeaderWords)
  return read_debug_offsets_version(memory, runtime_address).has_value() &&
         memory.read(runtime_address + kFreeThreadedWord, &free_threaded, 8) == ReadStatus::Ok && free_threaded != 0;
}

Result<void> apply_debug_offsets(const Memory& memory, uint64_t runtime_address, Layout& layout) {
  auto version = read_debug_offsets_version(memory, runtime_address);
  if (!version) {
    return make_error(ErrorKind::Corrupt, fmt::format("no _Py_DebugOffsets (cookie \"xdebugpy\") at {:#x} in {}",
                                                      runtime_address, memory.describe()));
  }
  int major = static_cast<int>(*version >> 24), minor = static_cast<int>((*version >> 16) & 0xff);
  const Id* ids = nullptr;
  size_t count = 0;
  if (major == 3 && minor == 13) {
    ids = k313;
    count = std::size(k313);
  } else if (major == 3 && minor == 14) {
    ids = k314;
    count = std::size(k314);
  } else if (major == 3 && minor >= kNewestDebugOffsetsMinor) {
    // 3.15, and newer versions read as 3.15: a later CPython keeps the sections it has and adds
    // fields at their ends or new sections after them, so this reads the prefix it knows;
    // select_layout then checks the result against the target (check_newer_layout) and refuses
    // it when a section moved.
    ids = k315;
    count = std::size(k315);
  } else {
    return make_error(ErrorKind::UnsupportedVersion,
                      fmt::format("CPython {}.{} in {}: its _Py_DebugOffsets layout is not one pyframes knows",
                                  major, minor, memory.describe()),
                      "pyframes reads CPython " PYFRAMES_CPYTHON_OLDEST " to " PYFRAMES_CPYTHON_NEWEST "; a newer pyframes may support this version");
  }
  std::vector<uint64_t> words(kHeaderWords + count);
  ReadStatus status = memory.read(runtime_address, words.data(), words.size() * sizeof(uint64_t));
  if (status != ReadStatus::Ok) return memory.read_error(status, runtime_address, "_Py_DebugOffsets");
  layout.free_threaded = words[2] != 0;
  int gil_state = -1, gil_enabled = -1, gil_locked = -1, gil_holder = -1;
  for (size_t i = 0; i < count; ++i) {
    int v = as_offset(words[kHeaderWords + i]);
    switch (ids[i]) {
      case Id::Skip: break;
      case Id::RuntimeSize: layout.runtime.size = v; break;
      case Id::InterpretersHead: layout.runtime.interpreters_head = v; break;
      case Id::InterpSize: layout.interpreter.size = v; break;
      case Id::InterpId: layout.interpreter.id = v; break;
      case Id::InterpGc: layout.interpreter.gc = v; break;
      case Id::GcCollecting: layout.gc.collecting = v; break;
      case Id::InterpNext: layout.interpreter.next = v; break;
      case Id::InterpThreadsHead: layout.interpreter.tstate_head = v; break;
      case Id::InterpModules: layout.interpreter.modules = v; break;
      case Id::InterpSysdict: layout.interpreter.sysdict = v; break;
      case Id::InterpBuiltins: layout.interpreter.builtins = v; break;
      case Id::InterpCevalGil: layout.interpreter.ceval_gil = v; break;
      case Id::InterpGilState: gil_state = v; break;
      case Id::InterpGilEnabled: gil_enabled = v; break;
      case Id::InterpGilLocked: gil_locked = v; break;
      case Id::InterpGilHolder: gil_holder = v; break;
      case Id::TstateSize: layout.thread_state.size = v; break;
      case Id::TstatePrev: layout.thread_state.prev = v; break;
      case Id::TstateNext: layout.thread_state.next = v; break;
      case Id::TstateInterp: layout.thread_state.interp = v; break;
      case Id::TstateCurrentFrame: layout.thread_state.frame = v; break;
      case Id::TstateThreadId: layout.thread_state.thread_id = v; break;
      case Id::TstateNativeThreadId: layout.thread_state.native_thread_id = v; break;
      case Id::FrameSize: layout.interpreter_frame.size = v; break;
      case Id::FramePrevious: layout.interpreter_frame.previous = v; break;
      case Id::FrameExecutable: layout.interpreter_frame.executable = v; break;
      case Id::FrameInstrPtr: layout.interpreter_frame.instr_ptr = v; break;
      case Id::FrameLocalsplus: layout.interpreter_frame.localsplus = v; break;
      case Id::FrameOwner: layout.interpreter_frame.owner = v; break;
      case Id::FrameTlbcIndex: layout.interpreter_frame.tlbc_index = v; break;
      case Id::CodeSize: layout.code.size = v; break;
      case Id::CodeFilename: layout.code.filename = v; break;
      case Id::CodeName: layout.code.name = v; break;
      case Id::CodeQualname: layout.code.qualname = v; break;
      case Id::CodeLinetable: layout.code.linetable = v; break;
      case Id::CodeFirstlineno: layout.code.firstlineno = v; break;
      case Id::CodeArgcount: layout.code.argcount = v; break;
      case Id::CodeLocalsplusnames: layout.code.localsplusnames = v; break;
      case Id::CodeLocalspluskinds: layout.code.localspluskinds = v; break;
      case Id::CodeAdaptive: layout.code.code_adaptive = v; break;
      case Id::CodeTlbc: layout.code.tlbc = v; break;
      case Id::ObType: layout.object.ob_type = v; break;
      case Id::TypeName: layout.type.tp_name = v; break;
      case Id::TypeFlags: layout.type.tp_flags = v; break;
      case Id::TypeBasicsize: layout.type.tp_basicsize = v; break;
      case Id::TypeDictoffset: layout.type.tp_dictoffset = v; break;
      case Id::HeapTypeCachedKeys: layout.type.ht_cached_keys = v; break;  // 3.15 moved it (880 -> 888)
      case Id::TupleItem: layout.tuple.ob_item = v; break;
      case Id::TupleSize: layout.object.ob_size = v; break;
      case Id::ListItem: layout.list.ob_item = v; break;
      case Id::DictKeys: layout.dict.ma_keys = v; break;
      case Id::DictValues: layout.dict.ma_values = v; break;
      case Id::FloatVal: layout.float_.ob_fval = v; break;
      case Id::LongTag: layout.long_.lv_tag = v; break;
      case Id::LongDigit: layout.long_.ob_digit = v; break;
      case Id::BytesSize: break;  // same as PyVarObject.ob_size
      case Id::BytesSval: layout.bytes.ob_sval = v; break;
      case Id::UnicodeState: layout.unicode.state = v; break;
      case Id::UnicodeLength: layout.unicode.length = v; break;
      case Id::UnicodeAsciiSize: layout.unicode.ascii_size = v; break;
    }
  }
  // The GIL fields are offsets into PyInterpreterState of its embedded _gil; the walker follows
  // the ceval.gil pointer instead (a sub-interpreter may share the main one's GIL).
  if (gil_state >= 0 && gil_locked >= gil_state && gil_holder >= gil_state) {
    layout.gil.locked = gil_locked - gil_state;
    layout.gil.last_holder = gil_holder - gil_state;
  }
  // Only free-threaded builds have `enabled` (the struct's first field, so 0 there too; 0 in
  // the others), and CPython gives it relative to struct _gil_runtime_state already, unlike
  // locked and holder.
  if (layout.free_threaded && gil_enabled >= 0 && gil_enabled < layout.gil.locked) layout.gil.enabled = gil_enabled;
  // Only free-threaded builds keep per-thread bytecode copies (0 in the others).
  if (!layout.free_threaded || layout.interpreter_frame.tlbc_index <= 0 || layout.code.tlbc <= 0) {
    layout.interpreter_frame.tlbc_index = -1;
    layout.code.tlbc = -1;
  }
  layout.from_debug_offsets = true;
  return {};
}

}  // namespace pyframes
