// tolerance: the error the audit allows one rotated output, |y − y_exact| against the double
// tier: a correct kernel's derived bound (bounds/error_bounds.h, docs/error-bounds.md §2–§6 and
// §16) or the user's --tolerance units, plus the oracle's own error (docs/double-tier.md).
#pragma once

#include <cstdint>
#include <optional>

#include "bounds/error_bounds.h"
#include "numeric/dtype.h"

namespace ropecheck::audit {

inline constexpr double unit = 0x1p-24;  // the unit errors are reported in (× pair norm)

// Allowed |y − y_exact| for one output: the kernel bound (bounds/error_bounds.h) or the
// user's units (of the rotated pair's norm A·‖pair‖), plus the 16-bit store's half spacing,
// plus the oracle's own error. The part proportional to the rotated pair's norm depends on
// (position, frequency, A) only, so it is computed once per row and frequency (coefficient)
// and applied per output.
struct tolerance_rule {
  std::optional<double> units;
  dtype judged;
  bounds::attention_scale scale = bounds::attention_scale_for(1);
  // The fp8 output scale σ: the stored values are y/σ, so the working part and the oracle's
  // are divided by σ, fl(ŷ/σ) adds its rounding (bounds::output_scale_division), and dividing
  // the oracle's value by σ in double adds 2^-53 of it (docs/error-bounds.md §19).
  double output_scale = 1;
  static constexpr double reference_division = 0x1p-53;
  double coefficient(std::int64_t position, double theta) const {
    return units ? *units * unit : bounds::working_output_relative(position, theta, scale);
  }
  double floor() const { return units ? 0.0 : bounds::float32_underflow_per_output; }
  // The oracle's error per unit of the rotated pair's norm A·‖pair‖ (3·2^-53): a constant,
  // written out so that no loop evaluates attention_scale_for (32 hypot calls) to get it.
  static constexpr double oracle_coefficient = bounds::double_tier_pair_error_bound;
  // `scaled_norm` = A·‖pair‖ of the input pair.
  double allowed(double coefficient, double scaled_norm, double stored) const {
    if (output_scale != 1) {
      const double working = coefficient * scaled_norm + floor();
      return working / output_scale +
             bounds::output_scale_division(output_scale, scaled_norm + working) +
             bounds::store_half_spacing(judged, stored) +
             (oracle_coefficient + reference_division) * scaled_norm / output_scale;
    }
    return (coefficient * scaled_norm + floor()) + bounds::store_half_spacing(judged, stored) +
           oracle_coefficient * scaled_norm;
  }
  double allowed(double pair_norm, std::int64_t position, double theta, double stored) const {
    return allowed(coefficient(position, theta), scale.factor * pair_norm, stored);
  }
};

}  // namespace ropecheck::audit
