// scaled_frequencies_within_4_ulps: a frequency function against reference::scaled_frequencies.
#include "properties/frequency_properties.h"

#include <cmath>
#include <iomanip>
#include <sstream>
#include <vector>

#include "properties/property_runner.h"
#include "properties/scaling_cases.h"
#include "reference/real.h"
#include "reference/scaling.h"

namespace ropecheck::properties {

namespace {

// One ulp of double at |x| (x normal): the unit the bound is stated in.
double ulp(double x) {
  const double a = std::fabs(x);
  return std::nextafter(a, INFINITY) - a;
}

std::string show(double v) {
  std::ostringstream os;
  os << std::setprecision(17) << v << " (" << std::hexfloat << v << ")";
  return os.str();
}

}  // namespace

double scaled_frequencies_distance_in_ulps(const frequencies_fn& frequencies, const rope_spec& spec,
                                           std::int64_t sequence_length, std::string& beyond) {
  const auto r = reference::scaled_frequencies<reference::mp_real>(spec, sequence_length);
  const auto f = frequencies(spec, sequence_length);
  if (f.inverse_frequencies.size() != r.inverse_frequencies.size()) {
    beyond = std::to_string(f.inverse_frequencies.size()) + " frequencies, the reference has " +
             std::to_string(r.inverse_frequencies.size());
    return INFINITY;
  }
  double worst = 0;
  auto compare = [&](const std::string& what, double value, double exact) {
    const double ulps = std::fabs(value - exact) / ulp(exact);
    worst = std::max(worst, std::isnan(ulps) ? INFINITY : ulps);
    if (beyond.empty() && !(ulps <= scaled_frequencies_ulps))
      beyond = what + " = " + show(value) + ", reference " + show(exact) + ": " +
               (std::ostringstream() << std::setprecision(4) << ulps).str() +
               " ulps of double, bound " +
               (std::ostringstream() << scaled_frequencies_ulps).str();
  };
  for (std::size_t i = 0; i < f.inverse_frequencies.size(); ++i)
    compare("theta'_" + std::to_string(i), f.inverse_frequencies[i],
            r.inverse_frequencies[i].convert_to<double>());
  compare("A", f.attention_factor, r.attention_factor.convert_to<double>());
  return worst;
}

property_result check_scaled_frequencies(const frequencies_fn& frequencies, profile p,
                                         std::uint64_t seed, std::string_view replay_command) {
  const std::string name(scaled_frequencies_property);
  const run_settings settings = settings_from_rc_params(p, seed, std::string(replay_command));
  observation seen;
  property_result skipped;
  skipped.name = name;
  if (skipped_by_reproduce(settings, name)) {
    skipped.detail = "skipped: RC_PARAMS reproduces other properties";
    return skipped;
  }
  const std::vector<pairing> both{pairing::half_split, pairing::adjacent};
  auto body = [&] {
    const auto generated = *gen::scaled_spec(*gen::shape(both));
    std::string beyond;
    const double ulps = scaled_frequencies_distance_in_ulps(frequencies, generated.spec, 0, beyond);
    seen.record(ulps / scaled_frequencies_ulps, [&] { return generated.config.dump(); });
    if (!beyond.empty()) RC_FAIL(name + " violated: " + beyond);
  };
  property_result r = run_testable(name, name, body, 200, settings, seen);
  r.detail = "worst at " + (seen.worst_case.empty() ? std::string("-") : seen.worst_case);
  return r;
}

}  // namespace ropecheck::properties
