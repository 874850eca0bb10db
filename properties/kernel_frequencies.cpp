// The kernels' θ_j and A, correctly rounded from the 266-bit reference (kernel_cases.h): from
// the oracle's memo, so that a spec's 266-bit frequencies are computed once per process, or
// (oracle_tables::per_case, the benchmark's old path) as before the memo.
#include <map>
#include <mutex>
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

namespace {

fast::rope_frequencies rounded_once(const rope_spec& spec) {
  const auto exact = reference::scaled_frequencies<reference::mp_real>(spec, 1);
  fast::rope_frequencies f;
  f.inverse_frequencies.reserve(exact.inverse_frequencies.size());
  for (const auto& t : exact.inverse_frequencies)
    f.inverse_frequencies.push_back(t.convert_to<double>());  // round to nearest
  f.attention_factor = exact.attention_factor.convert_to<double>();
  return f;
}

}  // namespace

fast::rope_frequencies kernel_frequencies_per_case(const rope_spec& spec) {
  if (type_of(spec.scaling) != scaling_type::none || spec.attention_factor) return rounded_once(spec);
  static std::mutex lock;
  static std::map<std::pair<int, double>, fast::rope_frequencies> memo;
  const std::scoped_lock guard(lock);
  const auto key = std::pair{spec.rotary_dim, spec.base};
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  if (memo.size() >= 64) memo.clear();
  return memo.emplace(key, rounded_once(spec)).first->second;
}

}  // namespace ropecheck::properties::kernel_support
