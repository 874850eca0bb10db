// diagnosis_context: what every detector and the recipe fit share — the audit's input, the
// sample, the tolerance rule and θ_j — and `explain`, the fraction of sampled outputs within
// tolerance of a reference recomputed the way a suspected bug would have made it.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "audit/audit.h"
#include "audit/sample.h"
#include "audit/tolerance.h"

namespace ropecheck::audit {

struct explanation {
  double within = 0;     // fraction of sampled outputs within tolerance of the alternative
  double max_units = 0;  // worst error against it, units of 2^-24
};

struct diagnosis_context {
  const audit_input& in;
  const sample& sampled;
  tolerance_rule rule;
  std::vector<double> theta;  // θ'_j the double tier rotates by

  // alternative(vector, ref_out) writes the suspected reference for one sampled vector.
  explanation explain(const std::function<void(const sampled_vector&, std::span<double>)>& alternative) const;
  static bool explains(const explanation& e) { return e.within >= 0.99; }
};

}  // namespace ropecheck::audit
