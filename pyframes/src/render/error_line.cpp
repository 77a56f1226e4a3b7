// The one-line error every CLI prints: "<program>: <what failed>: <why> (<what to do>)".
#include <fmt/format.h>

#include "pyframes/render.h"
#include "pyframes/utf8.h"
#include "pyframes/versions.h"

namespace pyframes {

namespace {

// One line, whatever the parts hold: control characters become spaces, runs of spaces collapse,
// invalid UTF-8 is replaced.
std::string flatten(std::string_view text) {
  std::string out;
  for (char c : render::repair_utf8(text)) {
    const auto byte = static_cast<unsigned char>(c);
    const bool space = byte < 0x20 || byte == 0x7F || c == ' ';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::string default_hint(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::PermissionDenied:
      return "run as the same user or root, or echo 0 > /proc/sys/kernel/yama/ptrace_scope, or grant "
             "CAP_SYS_PTRACE";
    case ErrorKind::NotFound: return "check the PID with ps, or the path";
    case ErrorKind::ProcessGone: return "check that it is still running";
    case ErrorKind::NotPython: return "point pyframes at a CPython " PYFRAMES_CPYTHON_RANGE " process";
    case ErrorKind::UnsupportedVersion: return "pyframes reads CPython " PYFRAMES_CPYTHON_OLDEST " to " PYFRAMES_CPYTHON_NEWEST "; a newer pyframes may know this version";
    case ErrorKind::BadAddress:
    case ErrorKind::Corrupt: return "the target changed while being read: run again, or use --lock for a consistent snapshot";
    case ErrorKind::Truncated: return "the file is incomplete; was it cut short while being written?";
    case ErrorKind::Usage: return "see pyframes --help";
    case ErrorKind::Io: break;
  }
  return {};
}

std::string format_error_line(const std::string& program, const std::string& what_failed, const Error& error) {
  std::string line = flatten(program);
  if (!what_failed.empty()) line += ": " + flatten(what_failed);
  const std::string why = flatten(error.message);
  line += ": " + (why.empty() ? std::string("failed") : why);
  const std::string hint = flatten(error.hint.empty() ? default_hint(error.kind) : error.hint);
  if (!hint.empty()) line += " (" + hint + ")";
  return line;
}

}  // namespace pyframes
