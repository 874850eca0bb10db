// sample: the head vectors the diagnosis recomputes — up to 64 position rows spread evenly over
// the dump and up to 4 heads of each, with X, Y and the double tier's output. Enough to test an
// explanation; cheap to recompute under dozens of recipes.
#pragma once

#include <cstdint>
#include <vector>

#include "audit/audit.h"
#include "reference/double_tier.h"

namespace ropecheck::audit {

struct sampled_vector {
  std::int64_t row = 0, position = 0;
  std::vector<double> x, y, ref;  // head_dim values each; ref is the double tier's rotation
};

struct sample {
  std::vector<sampled_vector> vectors;       // x finite (y may not be)
  std::vector<std::int64_t> positions;       // one per sampled row
};

// `tier` holds every position of the dump (the audit's own).
sample take_sample(const audit_input& in, const reference::double_tier& tier);

}  // namespace ropecheck::audit
