// The one list of diagnosis codes (recipes/diagnosis_codes.h) against everything that spells a
// code: the audit's detectors and recipe-search stages, the mutants' declared diagnoses and the
// CLI reference page. A code outside the list, a recipe stage the search never names, a bug model
// no detector recognises or no mutant reproduces, or a code the docs do not explain fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "audit/detector_catalog.h"
#include "audit/recipe_search.h"
#include "mutants/mutant_registry.h"
#include "recipes/diagnosis_codes.h"

namespace ropecheck {
namespace {

using recipes::diagnosis_kind;

diagnosis_kind kind_of(std::string_view code) {
  const recipes::diagnosis_code* d = recipes::find_diagnosis_code(code);
  EXPECT_NE(d, nullptr) << "'" << code << "' is not in recipes/diagnosis_codes.h";
  return d == nullptr ? diagnosis_kind::residue : d->kind;
}

TEST(diagnosis_catalog, every_detector_names_a_bug_model) {
  for (const auto& d : audit::detectors())
    EXPECT_EQ(kind_of(d.code), diagnosis_kind::bug_model) << d.code;
}

TEST(diagnosis_catalog, the_recipe_search_names_every_recipe_stage_code_and_only_those) {
  std::set<std::string_view> searched;
  for (const auto& s : audit::search_stages()) {
    EXPECT_EQ(kind_of(s.code), diagnosis_kind::recipe_stage) << s.code;
    searched.insert(s.code);
  }
  for (const auto& d : recipes::diagnosis_codes()) {
    if (d.kind != diagnosis_kind::recipe_stage) continue;
    EXPECT_TRUE(searched.count(d.code)) << d.code << " is never searched";
  }
}

TEST(diagnosis_catalog, every_bug_model_has_a_detector_and_a_mutant) {
  std::set<std::string_view> detected, reproduced;
  for (const auto& d : audit::detectors()) detected.insert(d.code);
  for (const auto& m : mutants::mutant_registry())
    if (!m.diagnosis.empty()) {
      EXPECT_NE(kind_of(m.diagnosis), diagnosis_kind::residue) << m.kernel.name << " declares " << m.diagnosis;
      reproduced.insert(m.diagnosis);
    }
  for (const auto& d : recipes::diagnosis_codes()) {
    if (d.kind != diagnosis_kind::bug_model) continue;
    EXPECT_TRUE(detected.count(d.code)) << d.code << ": no detector recognises it";
    EXPECT_TRUE(reproduced.count(d.code)) << d.code << ": no mutant reproduces it";
  }
}

TEST(diagnosis_catalog, the_cli_reference_explains_every_code) {
  std::ifstream in(ROPECHECK_SOURCE_DIR "/docs/cli.md");
  ASSERT_TRUE(in) << "cannot read docs/cli.md";
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& d : recipes::diagnosis_codes())
    EXPECT_NE(text.str().find("`" + std::string(d.code) + "`"), std::string::npos)
        << d.code << " is not in docs/cli.md";
}

}  // namespace
}  // namespace ropecheck
