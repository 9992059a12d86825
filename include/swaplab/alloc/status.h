// Errors as values at the library boundary. Codes mirror the kernel's
// negative errno values; every error carries a message saying what and where.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace swaplab {

// A status: 0 or a negative errno (-ENOSPC, -ENOMEM, -EINVAL, -EBUSY, ...).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(int code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == 0; }
  int code() const { return code_; }
  const std::string& message() const { return message_; }
  // "EINVAL: order 10 is larger than a cluster (order 9)".
  std::string ToString() const;

 private:
  int code_ = 0;
  std::string message_;
};

// The symbolic name of a negative errno ("ENOSPC"), or "E<n>".
const char* ErrnoName(int code);

// Either a value or a non-OK Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit on purpose
  Result(Status status) : v_(std::move(status)) {}   // NOLINT
  bool ok() const { return v_.index() == 0; }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  Status status() const { return ok() ? Status::Ok() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace swaplab
