#include <doctest/doctest.h>

#include <string>

#include "pyframes/render.h"

using namespace pyframes;

TEST_CASE("format_error_line: program, what failed, why and what to do on one line") {
  const Error error = make_error(ErrorKind::NotPython, "no libpython or python executable is mapped", "is it a Python process?");
  const std::string line = format_error_line("pyframes", "process 42", error);
  CHECK(line == "pyframes: process 42: " + error.message + " (" + error.hint + ")");
}

TEST_CASE("format_error_line: a missing hint is filled from the error kind") {
  const Error error = make_error(ErrorKind::PermissionDenied, "process_vm_readv: Operation not permitted");
  const std::string line = format_error_line("pyframes", "process 1", error);
  // Appended, not "(" + std::string: GCC 12's -Wrestrict misfires on that (an error with HANGSHIM_WERROR).
  std::string hint = "(";
  hint += default_hint(ErrorKind::PermissionDenied);
  hint += ")";
  CHECK(line.find(hint) != std::string::npos);
  CHECK(default_hint(ErrorKind::PermissionDenied).find("CAP_SYS_PTRACE") != std::string::npos);
  CHECK(default_hint(ErrorKind::PermissionDenied).find("ptrace_scope") != std::string::npos);
}

TEST_CASE("format_error_line: newlines and control characters never split the line") {
  const Error error = make_error(ErrorKind::Io, "first\nsecond\r\n\tthird\x1b", "do\nthis");
  const std::string line = format_error_line("pyframes", "process\n7", error);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find('\x1b') == std::string::npos);
  CHECK(line.find("first second third") != std::string::npos);
  CHECK(line.find("(do this)") != std::string::npos);
}
