#pragma once
// Result<T>: a value or an error message, shaped like std::expected so it can be swapped later.
// Used for expected failures (infeasible plans, unparsable strings) that are not exceptions.

#include <string>
#include <utility>
#include <variant>

#include "xpusim/core/check.h"

namespace xpusim::core {

/// The error half of a Result: a human-readable reason.
struct Error {
  std::string message;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}              // NOLINT(implicit)
  Result(Error error) : v_(std::move(error)) {}          // NOLINT(implicit)

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  const T& value() const& {
    XS_CHECK(has_value(), "Result::value() called on an error");
    return std::get<0>(v_);
  }
  T&& value() && {
    XS_CHECK(has_value(), "Result::value() called on an error");
    return std::get<0>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const {
    XS_CHECK(!has_value(), "Result::error() called on a value");
    return std::get<1>(v_).message;
  }

 private:
  std::variant<T, Error> v_;
};

}  // namespace xpusim::core
