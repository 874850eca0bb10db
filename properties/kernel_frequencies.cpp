// The kernels' θ_j and A, correctly rounded from the 266-bit reference (kernel_cases.h): from
// the oracle's memo, so that a spec's 266-bit frequencies are computed once per process.
#include <utility>

#include "properties/kernel_cases.h"
#include "reference/real.h"
#include "reference/scaling.h"

namespace ropecheck::properties::kernel_support {

fast::rope_frequencies kernel_frequencies(const rope_spec& spec) {
  // Length-dependent scalings: generated specs always give sequence_length (scaling_cases.h);
  // otherwise the length is 1.
  auto rounded = oracle_memo().frequencies(spec, 1);
  fast::rope_frequencies f;
  f.inverse_frequencies = std::move(rounded.inverse_frequencies);
  f.attention_factor = rounded.attention_factor;
  return f;
}

}  // namespace ropecheck::properties::kernel_support
