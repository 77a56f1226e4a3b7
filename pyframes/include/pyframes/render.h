// Renderers turn the plain model (model.h) into what people and machines read. They only read
// the model: no target access, no layouts. Text follows py-spy dump / gdb py-bt (one block per
// thread, frames innermost first, the source line under each frame); JSON is one document for
// any number of processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pyframes/model.h"
#include "pyframes/result.h"

namespace pyframes {

// Source lines for the text renderer, read on demand and cached per file. Only regular files are
// read (never a FIFO or device that could block), at most `max_file_bytes` of each; lines are
// returned with surrounding whitespace, tabs and carriage returns removed and invalid UTF-8
// replaced, so a hostile source file cannot break the output.
class SourceCache {
 public:
  explicit SourceCache(size_t max_files = 64, size_t max_file_bytes = 8u << 20);

  // The cleaned line `line` (1-based) of `path`, or nullopt when the file or line is unreadable.
  std::optional<std::string> line(const std::string& path, int line);
  // Carets under the cleaned line `line` marking UTF-8 byte columns [column, end_column) of the raw
  // line, as Python's tracebacks do: nullopt when unreadable, out of range, or the range covers
  // the whole cleaned line (then they would say nothing).
  std::optional<std::string> carets(const std::string& path, int line, int column, int end_column);

 private:
  struct Entry {
    std::string path;
    bool readable = false;
    std::string text;                // the file's bytes (a UTF-8 byte order mark left out)
    std::vector<size_t> line_starts;  // where each raw line starts in `text`; cleaned on lookup
    // Raw line `line` (1-based), or nullopt past the end.
    std::optional<std::string_view> raw_line(int line) const;
  };
  const Entry& load(const std::string& path);

  size_t max_files_;
  size_t max_file_bytes_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

struct TextOptions {
  bool color = false;         // ANSI colours (the CLI decides: a TTY and no NO_COLOR)
  bool source_lines = true;   // print the source line under each Python frame
};

// One process as text, ending in a newline. `sources` may be null (no source lines then). For a
// live process, relative file names are looked up in /proc/PID/cwd and absolute ones also under
// /proc/PID/root, so targets in another mount namespace still show their source.
std::string render_text(const Process& process, const TextOptions& options, SourceCache* sources);

// A target that could not be read, for the JSON document: what was asked for and why it failed.
struct FailedTarget {
  int64_t pid = 0;
  std::string target;  // "process 1234"
  Error error;
};

struct JsonOptions {
  bool pretty = false;  // indented output; compact (one line) otherwise
};

// The JSON document {"processes":[...]} (plus "errors":[...] when some targets failed), ending
// in a newline. Frames innermost first with function, qualname, file, line, kind; threads with
// thread_id, native_id, name, gil; processes with pid, python, and truncated / warnings when set.
std::string render_json(const std::vector<Process>& processes, const std::vector<FailedTarget>& failures,
                        const JsonOptions& options = {});

// The one-line error the CLIs print: "<program>: <what failed>: <why> (<what to do>)". Newlines
// and control characters in the parts are flattened so the result is always exactly one line.
// When the error carries no hint, a standard one for its kind is used where there is one.
std::string format_error_line(const std::string& program, const std::string& what_failed, const Error& error);

// The standard advice for an error kind (permission denied: run as the same user or root, ...),
// empty when there is nothing general to say.
std::string default_hint(ErrorKind kind);

}  // namespace pyframes
