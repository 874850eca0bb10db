// accuracy_contracts: what a kernel promises, as data — `ropecheck gate --contract NAME|FILE`.
// `exact` is the derived bound of bounds/error_bounds.h (docs/error-bounds.md §1–§10). Every
// other contract is a recipe that real kernels use (the recipes the audit's diagnosis names:
// angle_precision, low_precision_trig_cache) and adds, to every output bound, the extra error
// that recipe can make, derived in docs/error-bounds.md §17:
//
//     extra(m, θ_j, j) = u·A·r·( constant + angle·|m|·θ_j + angle_per_pair·j·|m|·θ_j ) + absolute
//
// (u = 2^-24, r the input pair's norm, A the attention factor), per storage dtype, and, for the
// pair as a vector (norm, score and round-trip bounds), √2 times that. A catalog entry rather
// than a branch: a property asks for contract_output_extra and never for a contract's name.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "numeric/dtype.h"

namespace ropecheck::bounds {

// A recipe's extra error terms for one storage dtype, in units of u·A·r (§17).
struct contract_terms {
  double constant = 0;        // cos/sin error not proportional to the angle
  double angle = 0;           // per unit of |m|·θ_j: the angle's relative error
  double angle_per_pair = 0;  // per unit of j·|m|·θ_j: θ_j's error growing with the pair index
  double absolute = 0;        // not relative: underflow of a narrower format (a value, not × u·A·r)
};

struct accuracy_contract {
  std::string name;
  std::string statement;      // one line: the recipe whose error the contract allows
  contract_terms float32;
  contract_terms float16;
  contract_terms bfloat16;
  std::int64_t max_position = 0;  // > 0: the kernel promises nothing for |m| beyond it

  const contract_terms& terms(dtype storage) const {
    return storage == dtype::float16 ? float16 : storage == dtype::bfloat16 ? bfloat16 : float32;
  }
};

// §17 coefficients, each rounded up. √2 from a cos/sin error δ on both values of a pair:
// |x_a·δ_c| + |x_b·δ_s| ≤ √2·δ·r.
inline constexpr double sqrt2_up = 1.4143;
// float32 angles: θ_j and m rounded to float32 and their product rounded: 3 roundings of the
// angle, (1 + u)^3 − 1 ≤ 3.0001·u. The cos/sin and rotation such kernels use: cosf/sinf within
// 1 ulp (half an ulp more than §2 counts: ≤ (√2/2)·u·r), A applied in float32 (≤ (√2/2)·u·A·r),
// the rotation unfused (2.7072 − 2.5, §2): 0.7072 + 0.7072 + 0.2072 ≤ 1.65.
inline constexpr double float32_trig_constant = 1.65;
inline constexpr contract_terms float32_angle_terms{float32_trig_constant, 3.0001, 0};
// θ_j as θ_{j−1}·s_j in float32 with each s_j rounded once: each of the j products and
// roundings of s adds u to θ_j's relative error (2j·u), on top of the float32 angle's 3u.
inline constexpr contract_terms repeated_product_terms{float32_trig_constant, 3.0001, 2.0001};
// cos/sin rounded (RNE) to a 16-bit cache: half an ulp of a value in [0, 1], 2^-12 (float16,
// 10 stored bits) or 2^-9 (bfloat16, 7), on both values: √2·2^12·u and √2·2^15·u.
inline constexpr contract_terms float16_cache_terms{sqrt2_up * 4096, 0, 0};
inline constexpr contract_terms bfloat16_cache_terms{sqrt2_up * 32768, 0, 0};
// Arithmetic in a 16-bit format whatever the storage: the §2 sum (2.5 unit roundoffs) with the
// format's unit roundoff, 2^-11 = 2^13·u (float16) or 2^-8 = 2^16·u (bfloat16), plus the 16-bit
// cos/sin cache it reads, plus 1 for cos/sin below the format's normal range (absolute half
// spacing × |x| ≤ 2^-25·r, float16); and the format's underflow: each of the ≤ 4 roundings of a
// product, sum or A·cos may add half its smallest spacing, 2^-25 (float16) or 2^-134
// (bfloat16): 4 × that.
inline constexpr contract_terms float16_arithmetic_terms{2.5 * 8192 + sqrt2_up * 4096 + 1, 0, 0, 0x1p-23};
inline constexpr contract_terms bfloat16_arithmetic_terms{2.5 * 65536 + sqrt2_up * 32768 + 1, 0, 0, 0x1p-132};

// The named contracts, strictest first. `exact` is the default.
inline std::span<const accuracy_contract> contract_catalog() {
  static const accuracy_contract catalog[] = {
      {"exact", "ropecheck's derived bound: exact angle, cos/sin rounded once to float32 (docs/error-bounds.md §1-§10)",
       {}, {}, {}, 0},
      {"float32_angles", "angle float(m)*float(theta_j) in float32, cos/sin in float32",
       float32_angle_terms, float32_angle_terms, float32_angle_terms, 0},
      {"float32_repeated_product_frequencies",
       "theta_j by repeated float32 multiplication (theta_j = theta_{j-1}*s), float32 angles, float32 cos/sin",
       repeated_product_terms, repeated_product_terms, repeated_product_terms, 0},
      {"float16_cos_sin_cache", "cos/sin cache stored in float16, rotation in float32",
       float16_cache_terms, float16_cache_terms, float16_cache_terms, 0},
      {"bfloat16_cos_sin_cache", "cos/sin cache stored in bfloat16, rotation in float32",
       bfloat16_cache_terms, bfloat16_cache_terms, bfloat16_cache_terms, 0},
      {"float16_arithmetic", "cos/sin, products and sums rounded to float16, in every storage dtype",
       float16_arithmetic_terms, float16_arithmetic_terms, float16_arithmetic_terms, 0},
      {"bfloat16_arithmetic", "cos/sin, products and sums rounded to bfloat16, in every storage dtype",
       bfloat16_arithmetic_terms, bfloat16_arithmetic_terms, bfloat16_arithmetic_terms, 0},
  };
  return catalog;
}

// The catalog entry named `name`, or nullptr.
inline const accuracy_contract* find_contract(std::string_view name) {
  for (const auto& c : contract_catalog())
    if (c.name == name) return &c;
  return nullptr;
}

inline const accuracy_contract& exact_contract() { return contract_catalog().front(); }

// §17: the contract's extra error on one output, per unit of A·r (multiply by A·r).
inline double contract_output_relative(const accuracy_contract& c, dtype storage,
                                       std::int64_t position, double theta, int pair) {
  const contract_terms& t = c.terms(storage);
  const double angle = std::fabs(static_cast<double>(position)) * theta;
  return 0x1p-24 * (t.constant + t.angle * angle + t.angle_per_pair * pair * angle);
}

inline double contract_output_absolute(const accuracy_contract& c, dtype storage) {
  return c.terms(storage).absolute;
}

// The extra on one output of a pair of input norm `pair_norm` with attention factor A.
inline double contract_output_extra(const accuracy_contract& c, dtype storage, double pair_norm,
                                    std::int64_t position, double theta, int pair, double a) {
  return contract_output_relative(c, storage, position, theta, pair) * a * pair_norm +
         contract_output_absolute(c, storage);
}

// The same for the pair as a vector (norm, score and round-trip bounds).
inline double contract_pair_extra(const accuracy_contract& c, dtype storage, double pair_norm,
                                  std::int64_t position, double theta, int pair, double a) {
  return sqrt2_up * contract_output_extra(c, storage, pair_norm, position, theta, pair, a);
}

}  // namespace ropecheck::bounds
