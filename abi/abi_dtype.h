// abi_dtype: the C ABI's dtype codes (include/ropecheck/kernel_abi.h, ROPECHECK_DTYPE_*) beside
// ropecheck's dtypes — the one table the loader, the built-in export and the case files read.
// A dtype without a code (float64) is no ABI type; numeric/dtype.h's storage dtypes all have one
// (checked below), so a new storage dtype does not compile until it is given its ABI code.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "numeric/dtype.h"
#include "ropecheck/kernel_abi.h"

namespace ropecheck::abi {

inline constexpr std::pair<dtype, std::int32_t> abi_dtype_codes[] = {
    {dtype::float32, ROPECHECK_DTYPE_FLOAT32},
    {dtype::float16, ROPECHECK_DTYPE_FLOAT16},
    {dtype::bfloat16, ROPECHECK_DTYPE_BFLOAT16},
    {dtype::int32, ROPECHECK_DTYPE_INT32},
    {dtype::int64, ROPECHECK_DTYPE_INT64},
    {dtype::float8_e4m3fn, ROPECHECK_DTYPE_FLOAT8_E4M3FN},
    {dtype::float8_e5m2, ROPECHECK_DTYPE_FLOAT8_E5M2},
};

// The ABI code of t; 0 (no ABI type) for float64.
constexpr std::int32_t abi_code(dtype t) {
  for (const auto& [type, code] : abi_dtype_codes)
    if (type == t) return code;
  return 0;
}

constexpr std::optional<dtype> dtype_of_abi_code(std::int32_t code) {
  for (const auto& [type, c] : abi_dtype_codes)
    if (c == code) return type;
  return std::nullopt;
}

constexpr bool every_storage_dtype_has_an_abi_code() {
  for (dtype t : storage_dtypes)
    if (abi_code(t) == 0) return false;
  return true;
}
static_assert(every_storage_dtype_has_an_abi_code(),
              "a storage dtype (numeric/dtype.h) without a ROPECHECK_DTYPE_* code in abi_dtype_codes");

}  // namespace ropecheck::abi
