// status: how every ropecheck::fast entry point reports an invalid call — a code plus a
// message naming the offending argument — instead of aborting or invoking UB. Plain data so
// the C kernel ABI (ropecheck/kernel_abi.h) can carry it as an int and a string.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace ropecheck::fast {

enum class status_code {
  ok = 0,
  invalid_argument,  // malformed call: bad sizes, null pointers, aliasing, ...
  out_of_range,      // a position outside what the kernel's angles cover
  unsupported,       // well-formed, but this kernel does not do that dtype/pairing
};

struct status {
  status_code code = status_code::ok;
  std::string message;

  bool ok() const { return code == status_code::ok; }
  static status success() { return {}; }
  static status error(status_code code, std::string message) {
    return {code, std::move(message)};
  }
};

// A value or the status that explains why there is none.
template <class T>
struct result {
  std::optional<T> value;
  status state;

  bool ok() const { return state.ok(); }
  static result success(T v) { return {std::move(v), status::success()}; }
  static result failure(status s) { return {std::nullopt, std::move(s)}; }
};

}  // namespace ropecheck::fast
