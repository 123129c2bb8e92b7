// Status and Result<T>: how every fallible elasticjob call reports failure.
//
// A Status is a code plus a message that names what failed and with what value
// (`shardingTotalCount: must be greater than 0, got -1`). Result<T> holds either a T or a
// non-OK Status, shaped like C++23 std::expected<T, Status>. Both are [[nodiscard]]: the
// caller decides on every outcome. "No node" and "node exists" are ordinary codes, never
// swallowed by a blanket ignore list.
//
// Thread safety: value types; distinct objects may be used from distinct threads freely.
#ifndef ELASTICJOB_STATUS_H_
#define ELASTICJOB_STATUS_H_

#include <cassert>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>

namespace elasticjob {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input: config, cron, YAML, command line
  kNotFound,            // registry: no node
  kAlreadyExists,       // registry: node exists
  kBadVersion,          // registry: version check failed
  kConnectionLoss,      // registry: connection lost, the operation may or may not have applied
  kSessionExpired,      // registry: the session ended; ephemeral nodes are gone
  kAuthFailed,          // registry: digest rejected or ACL forbids the operation
  kTimeout,             // a bounded wait ran out
  kFailedPrecondition,  // the object is not in a state that allows the call
  kUnavailable,         // a dependency (server, process) cannot be reached
  kCancelled,           // the operation was stopped on request
  kInternal,            // a bug or a broken invariant
};

// Returns the code's name, e.g. "INVALID_ARGUMENT".
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: shardingTotalCount: ..." or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "`context`: message". OK stays OK.
  Status WithContext(const std::string& context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

std::ostream& operator<<(std::ostream& os, const Status& status);

inline Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status NotFound(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status FailedPrecondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}
inline Status Internal(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}

// Either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // REQUIRES: !status.ok()
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  // The error; an OK status when the result holds a value. A reference into this result
  // (so `r.status().message()` lives as long as `r`); a copy from a temporary result.
  const Status& status() const& {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  Status status() && { return ok() ? Status() : std::get<Status>(std::move(v_)); }

  // REQUIRES: ok()
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The value, or `fallback` when this holds an error.
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_STATUS_H_
