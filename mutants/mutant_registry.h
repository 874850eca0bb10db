// mutant_registry: deliberately wrong RoPE kernels ("mutants"), each a plain scalar kernel
// written from the RoPE definition with exactly one defect injected, modeled on a bug class
// that reached real inference engines. They exist for tests and `ropecheck gate --mutants`
// only: fast::kernel_registry() (what `ropecheck kernels` lists) never contains them.
// Like fast/, this folder never uses Boost.Multiprecision.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fast/frequencies.h"
#include "fast/kernels.h"
#include "spec/rope_spec.h"

namespace ropecheck::mutants {

// A replacement for fast::scaled_frequencies: where a defect lives in the frequency
// computation (scaling code) rather than in the kernel.
using frequencies_fn = fast::rope_frequencies (*)(const rope_spec& spec,
                                                  std::int64_t sequence_length);

struct mutant {
  fast::kernel_info kernel;      // kernel.description: what the defect is
  std::string_view imitates;     // one line: the real-world failure it imitates
  // The properties aimed at the defect: each must fail on the mutant (on one of its dtypes, in
  // the quick profile at the default seed), and together the mutants name every kernel
  // property, so that none can only pass (cli/mutant_kills_test checks both). A kernel property
  // (properties/kernel_property_catalog.h), or scaled_frequencies_within_4_ulps for a defect in
  // the frequency code.
  std::vector<std::string_view> must_fail;
  // The audit's diagnosis code that names the defect first in a dump of the mutant's output
  // (audit/detector_catalog.h, the recipe stages' codes, the data findings; checked by
  // cli/mutant_diagnosis_test); empty when no dump of one forward call shows the defect (it is
  // in K, the inverse direction, strides, in-place calls, large calls or refused calls, or shows
  // only against a kernel's promise of one rounding, which an audit is not told).
  std::string_view diagnosis;
  // Non-null when the defect is in the frequencies: used instead of fast::scaled_frequencies
  // wherever the gate prepares this mutant's angles from a spec (the kernel itself is correct).
  frequencies_fn frequencies = nullptr;
};

std::span<const mutant> mutant_registry();

// One row of the README's mutant table, from the catalog alone: "| `name` | imitates | the
// properties that must kill it | the audit's code |" (ropecheck_mutant_tables --catalog-rows
// prints them; mutants_test holds the README's rows to it).
std::string catalog_row(const mutant& m);
const mutant* find_mutant(std::string_view name);  // nullptr if unknown

// The frequencies the mutant's angles are prepared from for a spec (its own scaling code, or
// fast::scaled_frequencies).
fast::rope_frequencies mutant_frequencies(const mutant& m, const rope_spec& spec,
                                          std::int64_t sequence_length);

// The same scalar kernel without any defect (a test control: it must pass the gate).
const fast::kernel_info& defect_free_kernel();

}  // namespace ropecheck::mutants
