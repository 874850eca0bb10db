// The kernels' θ_j and A, correctly rounded from the 266-bit reference. Its own translation
// unit: it is the only part of the kernel library that needs Boost.Multiprecision.
#include <map>
#include <mutex>
#include <utility>

#include "properties/kernel_cases.h"
#include "reference/real.h"
#include "reference/scaling.h"

namespace ropecheck::properties::kernel_support {

namespace {

fast::rope_frequencies rounded_once(const rope_spec& spec) {
  // Length-dependent scalings: generated specs always give sequence_length (scaling_cases.h).
  const auto exact = reference::scaled_frequencies<reference::mp_real>(spec, 1);
  fast::rope_frequencies f;
  f.inverse_frequencies.reserve(exact.inverse_frequencies.size());
  for (const auto& t : exact.inverse_frequencies)
    f.inverse_frequencies.push_back(t.convert_to<double>());  // round to nearest
  f.attention_factor = exact.attention_factor.convert_to<double>();
  return f;
}

}  // namespace

fast::rope_frequencies kernel_frequencies(const rope_spec& spec) {
  if (type_of(spec.scaling) != scaling_type::none || spec.attention_factor) return rounded_once(spec);
  // A case costs rotary_dim/2 MPFR pows (~10 µs each); shrinking and the cases of one run
  // revisit the same plain shapes, so remember the last few.
  static std::mutex lock;
  static std::map<std::pair<int, double>, fast::rope_frequencies> memo;
  const std::scoped_lock guard(lock);
  const auto key = std::pair{spec.rotary_dim, spec.base};
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  if (memo.size() >= 64) memo.clear();
  return memo.emplace(key, rounded_once(spec)).first->second;
}

}  // namespace ropecheck::properties::kernel_support
