// Which loops of a Python function enclose a line, read from the source file itself (the report
// runs where the job's files are, as a traceback does). This is the evidence that tells a loop
// line from the wrapper below it and the main() above it: the shim's stacks say which frames led
// to a collective, not which of them runs once per iteration. Only the file's indentation is
// read: a line is inside every `for` / `while` / `async for` header above it with less
// indentation, up to the `def` (or `class`) that holds it.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace hangshim::report {

class SourceLoops {
 public:
  // The loop headers (1-based lines) around `line` within its function, innermost first; empty
  // when none. `readable` is set false when the file cannot be read or is shorter than `line`.
  std::vector<int> headers(const std::string& file, int line, bool* readable = nullptr) const;
  // Whether `line` is inside some loop of its function; false when unknown.
  bool in_loop(const std::string& file, int line) const { return !headers(file, line).empty(); }
  // Whether `other` lies within the body of the innermost loop around `line`, or is that loop's
  // header (a rank fetching its next batch is in the loop), both lines of `file`.
  bool in_same_loop(const std::string& file, int line, int other) const;

 private:
  const std::vector<std::string>* lines_of(const std::string& file) const;
  mutable std::map<std::string, std::vector<std::string>> files_;  // empty: unreadable
};

}  // namespace hangshim::report
