// judgeable: what an audit must have before its verdict can mean anything — at least one
// output to judge, a spec whose tolerance is derived (inverse frequencies within
// spec/frequency_domain.h), and a user tolerance narrower than the output itself. A pass needs
// a judged output, a finite tolerance and a reference the spec defines; anything else is
// refused (io_error / bad_input: exit 2, Python's ValueError) rather than judged.
#pragma once

#include <cstdint>
#include <span>

#include "audit/audit.h"

namespace ropecheck::audit {

// Tolerances of 2^24 units and more allow an error as large as the rotated pair itself: a zero
// output would pass as a right one.
inline constexpr double max_tolerance_units = 0x1p24;

// Throws io_error naming the input file and field (no rows, no heads, an inverse frequency past
// max_inverse_frequency) or bad_input naming "tolerance".
void check_judgeable(const audit_input& in, std::span<const double> inverse_frequencies);

// After the judging loop: outputs whose tolerance could not fail (non-finite, or as wide as
// the whole range of the judged format, as a tiny fp8 output scale makes it) are refused, naming
// what made it so (the output scale, the tolerance or the spec).
void check_tolerance_could_fail(const audit_input& in, std::int64_t vacuous_outputs);

}  // namespace ropecheck::audit
