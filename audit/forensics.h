// forensics: which recipe (audit/recipe.h) produced Y, and how much of the error each stage
// explains. The recipe is found by recomputation on the sample, never by fitting a slope:
// start from a correct kernel's recipe and, stage by stage (audit/recipe_search.h, over the
// catalog recipes/recipe_catalog.h), take the choice that brings the recomputed outputs closest
// to Y, until no choice helps. The attribution then asks, for each stage where the recipe
// differs from a correct kernel's, how far the outputs move when that stage alone is made
// correct; the correct kernel's own distance from the exact rotation is the output_rounding
// share, and what the recipe does not reproduce is unexplained.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "audit/diagnosis_context.h"
#include "recipes/recipe.h"
#include "reference/double_tier.h"
#include "reports/audit_report.h"

namespace ropecheck::audit {

struct forensics_result {
  reports::recipe_fit recipe;
  std::optional<recipes::recipe> found;  // the recipe the fit names, when a vector was sampled
  std::vector<reports::attribution_entry> attribution;
  // One finding per stage the recomputation supports (code from recipe_search.h), plus
  // output_rounding; each with its share and evidence, not yet ordered.
  std::vector<reports::finding> findings;
  // The stage that moves the worst output most: its code and a sentence, stated beside the main
  // cause. Empty when no stage differs from a correct kernel's.
  struct worst_cause {
    std::string code, sentence;
  };
  std::optional<worst_cause> worst_output;
};

forensics_result attribute(const diagnosis_context& c, const reference::double_tier& sample_tier);

}  // namespace ropecheck::audit
