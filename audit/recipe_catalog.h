// recipe_catalog: the stages of a RoPE recipe (audit/recipe.h) and the choices the audit tries
// at each, as data (like properties/kernel_property_catalog.h): adding a choice, or a stage,
// touches this file only. Each stage names the attribution stage and the diagnosis code it
// stands for; `set` writes a choice into a recipe and `same` tells whether two recipes agree at
// the stage.
#pragma once

#include <string>
#include <vector>

#include "audit/recipe.h"

namespace ropecheck::audit {

struct recipe_choice {
  const char* name;                // as reported in the recipe (JSON `recipe`)
  void (*set)(recipe&);
};

struct recipe_stage {
  const char* stage;               // attribution stage: positions, inverse_frequencies, …
  const char* code;                // the diagnosis code for a stage that differs from a correct kernel's
  const char* what;                // a phrase for messages
  std::vector<recipe_choice> choices;
  bool (*same)(const recipe&, const recipe&);
  void (*copy)(recipe& to, const recipe& from);  // take `from`'s choice at this stage
};

inline const std::vector<recipe_stage>& recipe_stages() {
  static const std::vector<recipe_stage> stages = {
      {"positions", "position_precision", "positions rounded to a low-precision type before m·θ_j",
       {{"exact", [](recipe& r) { r.positions = dtype::float64; }},
        {"float32", [](recipe& r) { r.positions = dtype::float32; }},
        {"float16", [](recipe& r) { r.positions = dtype::float16; }},
        {"bfloat16", [](recipe& r) { r.positions = dtype::bfloat16; }}},
       [](const recipe& a, const recipe& b) { return a.positions == b.positions; },
       [](recipe& to, const recipe& from) { to.positions = from.positions; }},
      {"inverse_frequencies", "low_precision_inverse_frequencies",
       "inverse frequencies θ_j computed or kept in low precision",
       {{"pow float64", [](recipe& r) { r.method = frequency_method::pow, r.frequencies = dtype::float64; }},
        {"pow float32", [](recipe& r) { r.method = frequency_method::pow, r.frequencies = dtype::float32; }},
        {"pow bfloat16", [](recipe& r) { r.method = frequency_method::pow, r.frequencies = dtype::bfloat16; }},
        {"repeated_product float64",
         [](recipe& r) { r.method = frequency_method::repeated_product, r.frequencies = dtype::float64; }},
        {"repeated_product float32",
         [](recipe& r) { r.method = frequency_method::repeated_product, r.frequencies = dtype::float32; }}},
       [](const recipe& a, const recipe& b) { return a.method == b.method && a.frequencies == b.frequencies; },
       [](recipe& to, const recipe& from) { to.method = from.method, to.frequencies = from.frequencies; }},
      {"angle", "angle_precision", "the angle m·θ_j rounded to float32 before cos/sin",
       {{"float64", [](recipe& r) { r.angle = dtype::float64, r.angle_by_repeated_product = false; }},
        {"float32", [](recipe& r) { r.angle = dtype::float32, r.angle_by_repeated_product = false; }},
        {"float32_repeated_product", [](recipe& r) { r.angle = dtype::float32, r.angle_by_repeated_product = true; }}},
       [](const recipe& a, const recipe& b) {
         return a.angle == b.angle && a.angle_by_repeated_product == b.angle_by_repeated_product;
       },
       [](recipe& to, const recipe& from) {
         to.angle = from.angle, to.angle_by_repeated_product = from.angle_by_repeated_product;
       }},
      // Where cos/sin are evaluated and what they are kept in: one stage, the trig cache.
      {"trig_cache", "low_precision_trig_cache", "cos/sin evaluated or kept in low precision",
       {{"float64 → float64", [](recipe& r) { r.trig = dtype::float64, r.cache = dtype::float64; }},
        {"float64 → float32", [](recipe& r) { r.trig = dtype::float64, r.cache = dtype::float32; }},
        {"float32 → float32", [](recipe& r) { r.trig = dtype::float32, r.cache = dtype::float32; }},
        {"float64 → float16", [](recipe& r) { r.trig = dtype::float64, r.cache = dtype::float16; }},
        {"float32 → float16", [](recipe& r) { r.trig = dtype::float32, r.cache = dtype::float16; }},
        {"float64 → bfloat16", [](recipe& r) { r.trig = dtype::float64, r.cache = dtype::bfloat16; }},
        {"float32 → bfloat16", [](recipe& r) { r.trig = dtype::float32, r.cache = dtype::bfloat16; }}},
       [](const recipe& a, const recipe& b) { return a.trig == b.trig && a.cache == b.cache; },
       [](recipe& to, const recipe& from) { to.trig = from.trig, to.cache = from.cache; }},
      {"arithmetic", "low_precision_arithmetic", "products and sums of the rotation rounded to a 16-bit type",
       {{"float64", [](recipe& r) { r.arithmetic = dtype::float64; }},
        {"float32_fma", [](recipe& r) { r.arithmetic = dtype::float32, r.fma = true; }},
        {"float32", [](recipe& r) { r.arithmetic = dtype::float32, r.fma = false; }},
        {"float16", [](recipe& r) { r.arithmetic = dtype::float16; }},
        {"bfloat16", [](recipe& r) { r.arithmetic = dtype::bfloat16; }}},
       [](const recipe& a, const recipe& b) {
         return a.arithmetic == b.arithmetic && (a.arithmetic != dtype::float32 || a.fma == b.fma);
       },
       [](recipe& to, const recipe& from) { to.arithmetic = from.arithmetic, to.fma = from.fma; }},
  };
  return stages;
}

}  // namespace ropecheck::audit
