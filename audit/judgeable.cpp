// Refusals of audits whose verdict could not mean anything (judgeable.h).
#include "audit/judgeable.h"

#include <fmt/format.h>

#include <cmath>

#include "io/io_error.h"
#include "spec/frequency_domain.h"

namespace ropecheck::audit {

void check_judgeable(const audit_input& in, std::span<const double> inverse_frequencies) {
  const std::string shape = format_shape(in.x.shape);
  if (in.positions.empty())
    throw io_error(in.x_file, "shape", "has no rows (0 tokens or a batch of 0): nothing to judge", shape);
  if (in.heads <= 0) throw io_error(in.x_file, "shape", "has 0 heads: nothing to judge", shape);
  if (in.tolerance_units &&
      !(std::isfinite(*in.tolerance_units) && *in.tolerance_units > 0 && *in.tolerance_units < max_tolerance_units))
    throw bad_input("tolerance",
                    "is not a number of units in (0, 2^24): 2^24 units allow an error as large as the "
                    "rotated pair, so a zero output would pass",
                    fmt::format("{}", *in.tolerance_units));
  for (std::size_t j = 0; j < inverse_frequencies.size(); ++j) {
    const double theta = inverse_frequencies[j];
    if (std::isfinite(theta) && std::fabs(theta) <= max_inverse_frequency) continue;
    const bool scaled = type_of(in.spec.scaling) != scaling_type::none;
    throw io_error(in.spec_file, scaled ? "rope_scaling" : "rope_theta",
                   fmt::format("gives inverse frequency theta_{} = {} radians per position, past 2^13, the most "
                               "ropecheck's tolerances are derived for (a correct kernel's error is not "
                               "bounded there)",
                               j, theta),
                   scaled ? std::string(to_string(type_of(in.spec.scaling))) : fmt::format("{}", in.spec.base));
  }
}

void check_tolerance_could_fail(const audit_input& in, std::int64_t vacuous_outputs) {
  if (vacuous_outputs == 0) return;
  const std::string problem = fmt::format(
      "makes the tolerance of {} outputs infinite or as wide as {}'s whole range, so any stored value "
      "would pass: nothing would be judged",
      vacuous_outputs, to_string(in.judged));
  if (in.output_scale != 1.0f) throw bad_input("output_scale", problem, fmt::format("{}", in.output_scale));
  if (in.tolerance_units) throw bad_input("tolerance", problem, fmt::format("{}", *in.tolerance_units));
  if (in.contract && !in.contract->is_exact())
    throw bad_input("--contract",
                    fmt::format("allows {} outputs an error as large as their pair's norm (its angle term at these "
                                "|m|·θ_j), so a zero output would pass: nothing would be judged there",
                                vacuous_outputs),
                    in.contract->name, "audit the positions where the recipe's error is below the pair's norm");
  throw io_error(in.spec_file, "rope_scaling", problem, std::string(to_string(type_of(in.spec.scaling))));
}

}  // namespace ropecheck::audit
