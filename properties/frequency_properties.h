// frequency_properties: the property a frequency-scaling implementation must have — θ'_j and A
// for generated scaled specs (scaling_cases.h: every rope_type and convention) within 4 ulps of
// double of the 266-bit reference (reference/scaling.h). Run on fast::scaled_frequencies by the
// ctest suite (scaling_properties_test.cpp) and, by `gate --mutants`, on the mutants whose
// defect lives in the scaling code, which no kernel property can see (kernels take θ'_j and A
// as data).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "fast/frequencies.h"
#include "properties/kernel_properties.h"
#include "spec/rope_spec.h"

namespace ropecheck::properties {

using frequencies_fn =
    std::function<fast::rope_frequencies(const rope_spec& spec, std::int64_t sequence_length)>;

// The bound fast/frequencies.h states (long double evaluation, one rounding to double).
inline constexpr double scaled_frequencies_ulps = 4;

inline constexpr std::string_view scaled_frequencies_property = "scaled_frequencies_within_4_ulps";

// The worst distance, in ulps of double, of `frequencies`' θ'_j and A from the reference's for
// one spec; the first quantity beyond scaled_frequencies_ulps is described in `beyond`.
double scaled_frequencies_distance_in_ulps(const frequencies_fn& frequencies, const rope_spec& spec,
                                           std::int64_t sequence_length, std::string& beyond);

// The property over generated scaled specs, the way check_kernel_property runs a kernel's.
property_result check_scaled_frequencies(const frequencies_fn& frequencies, profile p,
                                         std::uint64_t seed, std::string_view replay_command);

}  // namespace ropecheck::properties
