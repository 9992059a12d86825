// SPDX-License-Identifier: MIT
// Errors as values at the library boundary. Codes mirror the kernel's
// negative errno values; every error carries a message saying what and where.
#pragma once
#pragma GCC visibility push(default)

#include <cerrno>
#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace swaplab {

// A status: 0 or a negative errno (-ENOSPC, -ENOMEM, -EINVAL, -EBUSY, ...).
// An OK status is an int and a null pointer: the allocator's fast paths
// return one per call, so it must cost no std::string construction or
// destruction. Only errors allocate their message.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(int code, std::string message)
      : code_(code), message_(std::make_unique<std::string>(std::move(message))) {}
  Status(const Status& o)
      : code_(o.code_),
        message_(o.message_ ? std::make_unique<std::string>(*o.message_) : nullptr) {}
  Status(Status&& o) noexcept = default;
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status& operator=(Status&& o) noexcept = default;
  ~Status() = default;

  static Status Ok() { return {}; }
  bool ok() const { return code_ == 0; }
  int code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : EmptyMessage(); }
  // "EINVAL: order 10 is larger than a cluster (order 9)".
  std::string ToString() const;

 private:
  static const std::string& EmptyMessage() {
    static const std::string empty;
    return empty;
  }
  int code_ = 0;
  std::unique_ptr<std::string> message_;
};

// The symbolic name of a negative errno ("ENOSPC"), or "E<n>".
const char* ErrnoName(int code);

// Either a value or a non-OK Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit on purpose
  Result(Status status) : v_(std::move(status)) {}  // NOLINT
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
#pragma GCC visibility pop
