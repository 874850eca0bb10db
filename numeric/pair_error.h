// pair_error: the norm-relative error of one rotated RoPE pair,
//   e = |y - y_exact| / ||(x_a, x_b)||_2,
// where (x_a, x_b) is the INPUT pair and y one output coordinate. A rotation preserves the
// norm, so this is the backward-stable yardstick for it: a rotation computed in precision p
// with a correctly rounded cos/sin is off by a small multiple of 2^-p in this measure even
// when y itself cancels to ~0 — where a per-element ulp metric would report enormous errors.
//
// Zero-norm convention: for the input pair (0, 0) both exact outputs are 0, so the error is
// the absolute |y - y_exact| (both should be 0) rather than 0/0.
// Non-finite values: a NaN or infinite y against a finite y_exact gives +infinity (so a max
// over a batch surfaces it); inputs and y_exact are expected to be finite.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "numeric/dtype.h"

namespace ropecheck {

// Error of one output coordinate of the rotated pair.
inline double pair_error(double y, double y_exact, double x_a, double x_b) {
  const double difference = std::fabs(y - y_exact);
  if (std::isnan(difference)) return std::numeric_limits<double>::infinity();
  const double norm = std::hypot(x_a, x_b);  // hypot: no overflow/underflow of the squares
  return norm == 0 ? difference : difference / norm;
}

// Error of the whole pair: the larger of its two coordinates' errors.
inline double pair_error(double y_a, double y_b, double y_a_exact, double y_b_exact, double x_a,
                         double x_b) {
  return std::max(pair_error(y_a, y_a_exact, x_a, x_b), pair_error(y_b, y_b_exact, x_a, x_b));
}

// The error as a multiple of 2^-24 (float32's unit roundoff), a dtype-independent scale.
inline double in_units_of_2_pow_minus_24(double error) { return std::ldexp(error, 24); }

// The error as a multiple of the dtype's unit roundoff u = 2^-p (p from precision_bits;
// float16: p = 11, bfloat16: p = 8). Integer dtypes have no unit roundoff: returns NaN.
inline double in_unit_roundoffs(double error, dtype t) {
  const int p = precision_bits(t);
  return p == 0 ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(error, p);
}

}  // namespace ropecheck
