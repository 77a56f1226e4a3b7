// Errors as values at every library boundary. A small stand-in for std::expected (C++23),
// which g++ 12 in C++20 mode does not offer.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace pyframes {

// What went wrong, coarse enough for callers to pick an exit code or a fallback.
enum class ErrorKind {
  NotFound,            // no such process / file / symbol
  PermissionDenied,    // ptrace or file permissions
  ProcessGone,         // the target exited while being read
  NotPython,           // target has no CPython interpreter
  UnsupportedVersion,  // a CPython we have no layout for
  BadAddress,          // an address that is not readable in the target
  Corrupt,             // data that fails validation (cycles, garbage pointers, bad magic)
  Truncated,           // a file shorter than its headers claim
  Io,                  // any other OS error
  Usage,               // the caller passed something invalid
};

// `message` says what failed and why; `hint` says what the user can do about it (may be empty).
struct Error {
  ErrorKind kind = ErrorKind::Io;
  std::string message;
  std::string hint;
};

inline Error make_error(ErrorKind kind, std::string message, std::string hint = {}) {
  return Error{kind, std::move(message), std::move(hint)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(state_); }
  Error&& take_error() { return std::get<1>(std::move(state_)); }

  template <class U>
  T value_or(U&& fallback) const& {
    return ok() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }
  Error&& take_error() { return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

// Propagate an error from an expression returning Result<...> inside a function returning Result.
#define PYFRAMES_TRY(var, expr)              \
  auto var##_result = (expr);                \
  if (!var##_result) return var##_result.take_error(); \
  auto& var = var##_result.value()

#define PYFRAMES_CHECK(expr)                 \
  do {                                       \
    auto _pyframes_check = (expr);           \
    if (!_pyframes_check) return _pyframes_check.take_error(); \
  } while (0)

}  // namespace pyframes
