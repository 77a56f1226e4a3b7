// The plain model the engine builds and every renderer only reads (text, JSON, merged views,
// the report). No pointers into the target, no layouts: just what a person wants to see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pyframes {

struct Local {
  std::string name;
  std::string repr;       // bounded representation of the value ("<unreadable>" if it could not be read)
  bool is_argument = false;
  uint64_t address = 0;   // the value object in the target (gdb: `print *(PyObject *) ADDRESS`), 0 when unknown
};

struct Frame {
  enum class Kind { Python, Native };
  Kind kind = Kind::Python;
  std::string function;   // co_name for Python, symbol (demangled) for native
  std::string qualname;   // co_qualname (3.11+), else = function
  std::string file;       // co_filename for Python; native: the source file when known (else empty, see module)
  int line = 0;           // 0 when unknown
  // Python 3.11+: the source range of the current instruction (code.co_positions()): the line it
  // ends on and 0-based UTF-8 byte columns; -1 when unknown (older versions, no columns).
  int end_line = -1;
  int column = -1;
  int end_column = -1;
  bool is_entry = false;  // Python: first frame of an evaluation-loop run (3.11+ entry frames)
  uint64_t address = 0;   // native: instruction pointer (a return address for callers)
  uint64_t frame_address = 0;  // Python: the frame in the target (PyFrameObject <= 3.10, _PyInterpreterFrame 3.11+)
  uint64_t offset = 0;    // native: `address` as a link-time address of `module` (what addr2line takes)
  std::string module;     // native: the shared object or executable, as the target maps it
  std::vector<Local> locals;  // filled only when asked for (--locals)
  // Python, --globals: the frame's module globals (f_globals) and builtins (f_builtins), in the
  // dicts' order, bounded like locals (`is_argument` unused). What gdb's py-print looks up.
  std::vector<Local> globals;
  std::vector<Local> builtins;
};

enum class ThreadState { Unknown, Running, HoldsGil, WaitingForGil, Idle };

struct Thread {
  uint64_t thread_id = 0;  // Python's threading.get_ident() (pthread_t)
  int64_t native_id = 0;   // Linux TID, 0 when unknown
  std::string name;        // threading.Thread name, else /proc comm, else empty
  bool gil = false;        // this thread holds the GIL
  ThreadState state = ThreadState::Unknown;
  // The interpreter the thread state belongs to (its id: 0 the main one, then sub-interpreters);
  // -1 when unknown (3.6 has no ids). One OS thread can hold a thread state in several
  // interpreters (a sub-interpreter run on it): then several Threads share `native_id`.
  int64_t interpreter_id = -1;
  bool truncated = false;  // the frame chain was cut (cycle, bad pointer, depth bound)
  std::string truncation_reason;
  std::vector<Frame> frames;  // innermost first
  // --native: why the native stack is not (fully) merged into `frames`, one line; empty when it is.
  std::string native_note;
  // --native: the native stack, when it could not be merged into `frames` (see native_note).
  std::vector<Frame> native_frames;
};

// Where the target's interpreter keeps what naming an object's type from raw memory takes, as
// the layout pyframes read the process with says (a free-threaded build's larger object header
// included): PyObject.ob_type, PyTypeObject.tp_name, PyCFunctionObject.m_self. For readers of
// the target's memory that have no C types of their own (the gdb extension on a stripped
// interpreter, gdb/hangshim_gdb/cframes.py), so that the offsets are pyframes' and nobody else's.
// -1: unknown (a saved document without them).
struct ObjectOffsets {
  int ob_type = -1;
  int tp_name = -1;
  int cfunction_self = -1;
  bool known() const { return ob_type >= 0 && tp_name >= 0 && cfunction_self >= 0; }
};

struct Process {
  int64_t pid = 0;
  std::string source;          // "pid 1234" or the core file path
  std::string python_version;  // "3.11.7"
  // A free-threaded build (python3.13t, 3.14t), and whether its GIL is off: then no thread
  // holds a GIL (Thread::gil stays false) and threads run Python code at the same time.
  bool free_threaded = false;
  bool gil_disabled = false;
  ObjectOffsets object_offsets;
  // A garbage collection is running (pystack's is_gc_collecting): the stacks are inside it (a
  // __del__, a weakref callback, a finalizer). nullopt: cannot tell (3.6, an unreadable state).
  std::optional<bool> gc_collecting;
  std::string executable;
  std::vector<std::string> command_line;
  std::string rank;            // RANK from the environment, empty when not a launched rank
  std::string local_rank;
  int64_t ppid = 0;            // the parent's pid, 0 when unknown
  // A rank's helper (a DataLoader worker, a multiprocessing child): the pid of the rank process
  // it descends from, which has the same RANK, LOCAL_RANK and executable (the helper inherited
  // them); 0 for a rank itself and for processes without RANK. See pyframes/rank_workers.h.
  int64_t worker_of = 0;
  std::string fatal_signal;    // cores: the signal that killed the process, empty otherwise
  std::vector<Thread> threads;
  std::vector<std::string> warnings;  // non-fatal problems met while reading
};

}  // namespace pyframes
