#include "render/json_names.h"

#include <array>
#include <utility>

namespace pyframes::render {

namespace {

constexpr std::array<std::pair<Frame::Kind, const char*>, 2> kFrameKinds{{
    {Frame::Kind::Python, "python"},
    {Frame::Kind::Native, "native"},
}};

constexpr std::array<std::pair<ThreadState, const char*>, 5> kThreadStates{{
    {ThreadState::Unknown, "unknown"},
    {ThreadState::Running, "running"},
    {ThreadState::HoldsGil, "holds_gil"},
    {ThreadState::WaitingForGil, "waiting_for_gil"},
    {ThreadState::Idle, "idle"},
}};

constexpr std::array<std::pair<ErrorKind, const char*>, 10> kErrorKinds{{
    {ErrorKind::NotFound, "not_found"},
    {ErrorKind::PermissionDenied, "permission_denied"},
    {ErrorKind::ProcessGone, "process_gone"},
    {ErrorKind::NotPython, "not_python"},
    {ErrorKind::UnsupportedVersion, "unsupported_version"},
    {ErrorKind::BadAddress, "bad_address"},
    {ErrorKind::Corrupt, "corrupt"},
    {ErrorKind::Truncated, "truncated"},
    {ErrorKind::Io, "io"},
    {ErrorKind::Usage, "usage"},
}};

template <class Enum, size_t N>
const char* name_of(const std::array<std::pair<Enum, const char*>, N>& table, Enum value, const char* fallback) {
  for (const auto& [entry, name] : table) {
    if (entry == value) return name;
  }
  return fallback;
}

template <class Enum, size_t N>
std::optional<Enum> value_of(const std::array<std::pair<Enum, const char*>, N>& table, std::string_view name) {
  for (const auto& [entry, entry_name] : table) {
    if (name == entry_name) return entry;
  }
  return std::nullopt;
}

}  // namespace

const char* frame_kind_name(Frame::Kind kind) { return name_of(kFrameKinds, kind, "python"); }
const char* thread_state_name(ThreadState state) { return name_of(kThreadStates, state, "unknown"); }
const char* error_kind_name(ErrorKind kind) { return name_of(kErrorKinds, kind, "unknown"); }

std::optional<Frame::Kind> frame_kind_from_name(std::string_view name) { return value_of(kFrameKinds, name); }
std::optional<ThreadState> thread_state_from_name(std::string_view name) { return value_of(kThreadStates, name); }
std::optional<ErrorKind> error_kind_from_name(std::string_view name) { return value_of(kErrorKinds, name); }

}  // namespace pyframes::render
