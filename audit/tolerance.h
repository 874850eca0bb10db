// tolerance: the error the audit allows one rotated output, |y − y_exact| against the double
// tier: a correct kernel's derived bound (bounds/error_bounds.h, docs/error-bounds.md §2–§6 and
// §16), widened by a contract's recipe (--contract, §17) — or the user's --tolerance units —
// plus the oracle's own error (docs/double-tier.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "audit/audit.h"
#include "bounds/accuracy_contracts.h"
#include "bounds/error_bounds.h"
#include "numeric/dtype.h"
#include "reference/double_tier.h"

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
  // A contract's recipe terms (bounds::contract_terms), one per pair j, for its θ_j and A:
  // empty for the exact contract and with --tolerance (with_contract fills it).
  std::vector<recipes::extra_terms> contract_terms;
  double contract_absolute = 0;  // the largest absolute term among them (a narrow format's underflow)

  // Widens the derived bound by `contract`'s recipe for the judged dtype at these θ_j.
  tolerance_rule& with_contract(const bounds::accuracy_contract* contract, std::span<const double> theta) {
    contract_terms.clear();
    contract_absolute = 0;
    if (contract == nullptr || contract->is_exact() || units) return *this;
    for (const double t : theta) {
      contract_terms.push_back(bounds::contract_terms(*contract, judged, t, scale.factor));
      contract_absolute = std::max(contract_absolute, contract_terms.back().absolute);
    }
    return *this;
  }
  // Per unit of A·‖pair‖ at position m for pair j of frequency θ_j.
  double coefficient(std::int64_t position, double theta, int pair) const {
    if (units) return *units * unit;
    const double derived = bounds::working_output_relative(position, theta, scale);
    if (contract_terms.empty()) return derived;
    // A pair past the spec's (a neighbouring spec the diagnosis tries with a wider rotary_dim)
    // takes the last pair's terms: the smallest θ_j, whose exponent term is the largest.
    const auto j = std::min(static_cast<std::size_t>(pair), contract_terms.size() - 1);
    return derived + bounds::contract_output_coefficient(contract_terms[j], position, theta, pair);
  }
  double floor() const { return units ? 0.0 : bounds::float32_underflow_per_output + contract_absolute; }
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
  double allowed(double pair_norm, std::int64_t position, double theta, int pair, double stored) const {
    return allowed(coefficient(position, theta, pair), scale.factor * pair_norm, stored);
  }
};

// The tolerance every output of `in` is judged by, at the θ_j and A of `tier` (the spec's, or a
// neighbouring spec's the diagnosis tries): --tolerance units, or the derived bound widened by
// the audit's contract.
inline tolerance_rule tolerance_of(const audit_input& in, const reference::double_tier& tier) {
  tolerance_rule rule;
  rule.units = in.tolerance_units;
  rule.judged = in.judged;
  rule.scale = bounds::attention_scale_for(tier.attention_factor());
  rule.output_scale = in.output_scale;
  rule.with_contract(in.contract ? &*in.contract : nullptr, tier.inverse_frequencies());
  return rule;
}

}  // namespace ropecheck::audit
