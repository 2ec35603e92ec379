// Errors are values: every fallible call returns a Status or a Result<T>; no exception
// crosses the public API.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace fusedgemm {

enum class ErrorCode {
  kOk = 0,
  kInvalidGraph,     // validate found a malformed graph
  kInvalidArgument,  // an API was called with a bad argument (unknown op name, bad JSON value)
  kDeclined,         // the fused engine's support gate refused the graph
  kIllegalCall,      // a call broke one of the plan's rules
  kIo,               // a file could not be read or written
  kUnavailable,      // something the call needs is missing: a GPU, the driver, a library
  kDriver,           // a CUDA driver call failed; the message names the call and the error
  kCompile,          // NVRTC refused a generated kernel; the message carries the log
  kNotFound,         // a lookup by name or uid found nothing
  kInternal,         // a broken invariant of fusedgemm itself
};

std::string_view to_string(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : state_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return is_ok(); }

  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(state_); }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace fusedgemm

#define FG_CONCAT_INNER(a, b) a##b
#define FG_CONCAT(a, b) FG_CONCAT_INNER(a, b)

// Propagates a failed Status (or the status of a failed Result) to the caller.
#define FG_TRY(expr)                                         \
  do {                                                       \
    if (auto fg_try_status_ = (expr); !fg_try_status_) {     \
      return ::fusedgemm::detail::status_of(fg_try_status_); \
    }                                                        \
  } while (0)

// Unwraps a Result<T> into `lhs` or returns its Status.
#define FG_ASSIGN_OR_RETURN(lhs, expr)               \
  auto FG_CONCAT(fg_result_, __LINE__) = (expr);     \
  if (!FG_CONCAT(fg_result_, __LINE__)) {            \
    return FG_CONCAT(fg_result_, __LINE__).status(); \
  }                                                  \
  lhs = std::move(FG_CONCAT(fg_result_, __LINE__)).value()

// Guards a condition on user input; `msg` is only built when the condition fails.
#define FG_CHECK(cond, code, msg)                \
  do {                                           \
    if (!(cond)) {                               \
      return ::fusedgemm::Status((code), (msg)); \
    }                                            \
  } while (0)

namespace fusedgemm::detail {
inline Status status_of(const Status& s) {
  return s;
}
template <class T>
Status status_of(const Result<T>& r) {
  return r.status();
}
}  // namespace fusedgemm::detail
