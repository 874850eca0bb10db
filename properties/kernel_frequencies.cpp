// The kernels' θ_j, correctly rounded from the 266-bit reference. Its own translation unit:
// it is the only part of the kernel library that needs Boost.Multiprecision.
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "properties/kernel_cases.h"
#include "reference/frequencies.h"
#include "reference/real.h"

namespace ropecheck::properties::kernel_support {

std::vector<double> kernel_inverse_frequencies(int rotary_dim, double base) {
  // A case costs rotary_dim/2 MPFR pows (~10 µs each); shrinking and the cases of one run
  // revisit the same shapes, so remember the last few.
  static std::mutex lock;
  static std::map<std::pair<int, double>, std::vector<double>> memo;
  const std::scoped_lock guard(lock);
  const auto key = std::pair{rotary_dim, base};
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  const auto exact = reference::inverse_frequencies(rotary_dim, reference::mp_real(base));
  std::vector<double> theta;
  theta.reserve(exact.size());
  for (const auto& t : exact) theta.push_back(t.convert_to<double>());  // round to nearest
  if (memo.size() >= 64) memo.clear();
  memo.emplace(key, theta);
  return theta;
}

}  // namespace ropecheck::properties::kernel_support
