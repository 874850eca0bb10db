// recipe_search: the moves of the audit's recipe search and attribution (audit/forensics.cpp),
// built from the one catalog of recipe stages (recipes/recipe_catalog.h). A move changes one
// or more catalog stages together (where cos/sin are evaluated, what they are kept in, how they
// are rounded there and where A meets them move as one: "float32 → float16 → nearest_even →
// in_cache"); it names the attribution stage and the diagnosis code a
// difference there stands for. Adding a choice to the catalog adds it here with no edit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "recipes/diagnosis_codes.h"
#include "recipes/recipe_catalog.h"

namespace ropecheck::audit {

struct search_move {
  std::string name;      // "float32 → float16"
  std::vector<const recipes::recipe_choice*> choices;  // one per stage of the search stage
  void set(recipes::recipe& r) const {
    for (const auto* c : choices) c->set(r);
  }
};

struct search_stage {
  std::string_view stage;  // attribution stage: positions, inverse_frequencies, …
  std::string_view code;   // the diagnosis code for a stage that differs from a correct kernel's
  std::string_view what;   // a phrase for messages (the code's meaning)
  std::vector<const recipes::recipe_stage*> stages;  // the catalog stages it moves together
  std::vector<search_move> moves;                    // every combination of their choices

  bool same(const recipes::recipe& a, const recipes::recipe& b) const {
    for (const auto* s : stages)
      if (!s->same(a, b)) return false;
    return true;
  }
  void copy(recipes::recipe& to, const recipes::recipe& from) const {
    for (const auto* s : stages) recipes::choice_of(*s, from)->set(to);
  }
  std::string choice_name(const recipes::recipe& r) const {
    std::string out;
    for (const auto* s : stages) out += (out.empty() ? "" : " → ") + std::string(recipes::choice_name(*s, r));
    return out;
  }
};

namespace detail {
// `code` is a recipe-stage code of recipes/diagnosis_codes.h, whose meaning the messages print.
inline search_stage make_search_stage(std::string_view stage, std::string_view code,
                                      std::vector<std::string_view> catalog_stages) {
  search_stage s{stage, code, recipes::find_diagnosis_code(code)->meaning, {}, {{}}};
  for (std::string_view name : catalog_stages) {
    const recipes::recipe_stage* cs = recipes::find_stage(name);
    s.stages.push_back(cs);
    std::vector<search_move> grown;
    for (const search_move& m : s.moves)
      for (const auto& choice : cs->choices) {
        search_move g = m;
        g.name += (g.name.empty() ? "" : " → ") + std::string(choice.name);
        g.choices.push_back(&choice);
        grown.push_back(std::move(g));
      }
    s.moves = std::move(grown);
  }
  return s;
}
}  // namespace detail

inline const std::vector<search_stage>& search_stages() {
  static const std::vector<search_stage> stages = {
      detail::make_search_stage("positions", "position_precision", {"positions"}),
      // The angle before θ_j: where both explain Y alike (θ_j rounded to float32 and a float32
      // product at a power-of-two position), the float32 angle real kernels use is named.
      detail::make_search_stage("angle", "angle_precision", {"angle"}),
      detail::make_search_stage("inverse_frequencies", "low_precision_inverse_frequencies", {"inverse_frequencies"}),
      // One move: a 16-bit cache rounded another way, or with A applied on the other side of
      // it, is no closer to Y than a float32 cache until both change together.
      detail::make_search_stage("trig_cache", "low_precision_trig_cache",
                                {"trig", "trig_cache", "cache_rounding", "attention_factor"}),
      detail::make_search_stage("arithmetic", "low_precision_arithmetic", {"arithmetic"}),
      detail::make_search_stage("output_store", "output_store", {"output_store"}),
  };
  return stages;
}

}  // namespace ropecheck::audit
