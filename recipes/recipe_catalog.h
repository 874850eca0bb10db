// recipe_catalog: the one catalog of RoPE recipe stages (recipe.h) — for each stage its name
// (the key of the audit's JSON "recipe" and the STAGE of `gate --contract 'STAGE=CHOICE,…'`),
// the choices a kernel makes there, and each choice's derived extra error over the exact
// contract (docs/error-bounds.md §17). The audit searches these choices (audit/recipe_search.h)
// and the gate composes a contract's bound from them (bounds/accuracy_contracts.h): adding a
// choice is one row here, its simulation (audit/recipe.cpp) and its derivation in §17.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "numeric/dtype.h"
#include "recipes/recipe.h"

namespace ropecheck::recipes {

// Where a bound is evaluated: the output's storage dtype, the attention factor A and θ_j (the
// kernel's, scaled θ'_j under rope_scaling).
struct bound_point {
  dtype storage = dtype::float32;
  double attention_factor = 1;
  double theta = 1;
};

// A recipe's extra error on one output over the exact contract (§17):
//     extra = u·A·r·min(2/u, angle·|m|·θ_j + angle_per_pair·j·|m|·θ_j) + u·A·r·constant + absolute
// (u = 2^-24, r the input pair's norm). Every coefficient is rounded up.
struct extra_terms {
  double constant = 0;        // units of u·A·r
  double angle = 0;           // the angle's relative error, units of u
  double angle_per_pair = 0;  // the part of it that grows with the pair index j, units of u
  double absolute = 0;        // a value: the underflow of a narrow format
};

using terms_fn = void (*)(const recipe& whole, const bound_point& at, extra_terms& t);

struct recipe_choice {
  std::string_view name;
  void (*set)(recipe&);
  terms_fn terms = nullptr;  // null: no error beyond the exact contract's
};

struct recipe_stage {
  std::string_view name;  // JSON key of the audit's recipe; STAGE in --contract
  std::string_view what;  // a phrase for messages
  std::vector<recipe_choice> choices;
  bool (*same)(const recipe&, const recipe&);  // do two recipes make the same choice here
};

namespace terms {

inline constexpr double u = 0x1p-24;
inline constexpr double sqrt2_up = 1.4143;

// A format's unit roundoff 2^-p in units of u: 2^(24-p).
inline double roundoff_units(dtype t) { return std::ldexp(1.0, 24 - precision_bits(t)); }
// Half the format's smallest spacing, 2^(emin-p): what one rounding may add below the normals.
inline double half_smallest_spacing(dtype t) {
  return std::ldexp(1.0, format_of(t).min_normal_exponent - precision_bits(t));
}
// The largest spacing of the format among values in [0, v]: 2^(⌈log₂ v⌉ - p), and never less
// than the subnormals' 2^(emin + 1 - p).
inline double largest_spacing_up_to(dtype t, double v) {
  const int p = precision_bits(t);
  return std::max(std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(v))) - p),
                  std::ldexp(1.0, format_of(t).min_normal_exponent + 1 - p));
}
// θ_j computed through pow in float32: the exponent 2j/d rounded moves θ_j by |ln θ_j|·u
// relative (θ_j = base^(-2j/d)); +3 keeps it a bound for a scaling that raised θ_j by up to
// e^3 over the plain θ_j the kernel computed.
inline double exponent_rounding(const bound_point& at) { return std::fabs(std::log(at.theta)) + 3; }

}  // namespace terms

inline const std::vector<recipe_stage>& recipe_stages() {
  using namespace terms;
  static const std::vector<recipe_stage> stages = {
      {"positions", "positions rounded to a low-precision type before m·θ_j",
       {{"exact", [](recipe& r) { r.positions = dtype::float64; }},
        // m rounded: relative 2^-p.
        {"float32", [](recipe& r) { r.positions = dtype::float32; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.angle += 1.0001; }},
        {"float16", [](recipe& r) { r.positions = dtype::float16; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.angle += roundoff_units(dtype::float16) + 0.0001; }},
        {"bfloat16", [](recipe& r) { r.positions = dtype::bfloat16; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.angle += roundoff_units(dtype::bfloat16) + 0.0001; }}},
       [](const recipe& a, const recipe& b) { return a.positions == b.positions; }},
      {"inverse_frequencies", "inverse frequencies θ_j computed or kept in low precision",
       {// double pow: a few double roundings, 2^-52 relative: far below 10^-4·u.
        {"pow float64", [](recipe& r) { r.method = frequency_method::pow, r.frequencies = dtype::float64; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.angle += 0.0001; }},
        // the exponent's rounding, powf within 1 ulp (2u), the division 1/x (u), the base as a
        // float32 (u), a scaling's per-pair factor rounded to float32 (u) and its product (u).
        {"pow float32", [](recipe& r) { r.method = frequency_method::pow, r.frequencies = dtype::float32; },
         [](const recipe&, const bound_point& at, extra_terms& t) { t.angle += exponent_rounding(at) + 6.0001; }},
        // the same, then rounded to bfloat16 (2^-8 relative).
        {"pow bfloat16", [](recipe& r) { r.method = frequency_method::pow, r.frequencies = dtype::bfloat16; },
         [](const recipe&, const bound_point& at, extra_terms& t) {
           t.angle += exponent_rounding(at) + 6.0001 + roundoff_units(dtype::bfloat16);
         }},
        // the exact θ_j rounded once: relative 2^-p.
        {"rounded float32", [](recipe& r) { r.method = frequency_method::rounded, r.frequencies = dtype::float32; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.angle += roundoff_units(dtype::float32) * 1.0001; }},
        {"rounded bfloat16", [](recipe& r) { r.method = frequency_method::rounded, r.frequencies = dtype::bfloat16; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.angle += roundoff_units(dtype::bfloat16) * 1.0001; }},
        {"repeated_product float64",
         [](recipe& r) { r.method = frequency_method::repeated_product, r.frequencies = dtype::float64; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.angle_per_pair += 0.0001; }},
        // θ_j = s^j by j float32 products: s = powf(base, -2/d) off by its exponent's rounding
        // (j times: |ln θ_j|·u) and powf's ulp (2u, j times), and each product rounded (u).
        {"repeated_product float32",
         [](recipe& r) { r.method = frequency_method::repeated_product, r.frequencies = dtype::float32; },
         [](const recipe&, const bound_point& at, extra_terms& t) {
           t.angle += exponent_rounding(at) + 1.0001;
           t.angle_per_pair += 3.0001;
         }}},
       [](const recipe& a, const recipe& b) { return a.method == b.method && a.frequencies == b.frequencies; }},
      {"angle", "the angle m·θ_j rounded to float32 before cos/sin",
       {{"float64", [](recipe& r) { r.angle = dtype::float64, r.angle_by_repeated_product = false; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.angle += 0.0001; }},
        // the product rounded (u), and m and θ_j rounded to float32 where no earlier stage
        // left them in a type float32 holds exactly.
        {"float32", [](recipe& r) { r.angle = dtype::float32, r.angle_by_repeated_product = false; },
         [](const recipe& w, const bound_point&, extra_terms& t) {
           t.angle += 1.0001 + (w.positions == dtype::float64 ? 1 : 0) + (w.frequencies == dtype::float64 ? 1 : 0);
         }},
        // ggml: φ_0 = float(m), φ_j = φ_{j−1}·s: m rounded (u), then as repeated_product float32.
        {"float32_repeated_product",
         [](recipe& r) { r.angle = dtype::float32, r.angle_by_repeated_product = true; },
         [](const recipe&, const bound_point& at, extra_terms& t) {
           t.angle += exponent_rounding(at) + 1.0001;
           t.angle_per_pair += 3.0001;
         }}},
       [](const recipe& a, const recipe& b) {
         return a.angle == b.angle && a.angle_by_repeated_product == b.angle_by_repeated_product;
       }},
      {"trig", "cos/sin evaluated in float32",
       {{"float64", [](recipe& r) { r.trig = dtype::float64; }},
        // cosf/sinf within 1 ulp where the exact contract counts half: half an ulp more on cos
        // and on sin, (√2/2)·u·A·r on an output; of a float64 angle, cosf((float)φ) rounds φ
        // first (u relative).
        {"float32", [](recipe& r) { r.trig = dtype::float32; },
         [](const recipe& w, const bound_point&, extra_terms& t) {
           t.constant += 0.7072;
           if (w.angle == dtype::float64) t.angle += 1.0001;
         }}},
       [](const recipe& a, const recipe& b) { return a.trig == b.trig; }},
      {"trig_cache", "cos/sin kept in a low-precision cache",
       {{"float64", [](recipe& r) { r.cache = dtype::float64; }},
        {"float32", [](recipe& r) { r.cache = dtype::float32; }},
        {"float16", [](recipe& r) { r.cache = dtype::float16; }},
        {"bfloat16", [](recipe& r) { r.cache = dtype::bfloat16; }}},
       [](const recipe& a, const recipe& b) { return a.cache == b.cache; }},
      // The cache's error is derived once for this stage and the two after it (cache_error).
      {"cache_rounding", "cos/sin rounded toward zero into the cache",
       {{"nearest_even", [](recipe& r) { r.cache_round = cache_rounding::nearest_even; }},
        {"truncation", [](recipe& r) { r.cache_round = cache_rounding::truncation; }}},
       [](const recipe& a, const recipe& b) { return a.cache_round == b.cache_round; }},
      {"attention_factor", "the attention factor applied after the cos/sin cache",
       {{"in_cache", [](recipe& r) { r.factor = factor_placement::in_cache; }},
        {"after_cache", [](recipe& r) { r.factor = factor_placement::after_cache; }}},
       [](const recipe& a, const recipe& b) { return a.factor == b.factor; }},
      {"arithmetic", "products and sums of the rotation rounded to a 16-bit type",
       {{"float64", [](recipe& r) { r.arithmetic = dtype::float64; }},
        {"float32_fma", [](recipe& r) { r.arithmetic = dtype::float32, r.fma = true; }},
        // §2: 2.7072 instead of the fused 2.5.
        {"float32", [](recipe& r) { r.arithmetic = dtype::float32, r.fma = false; },
         [](const recipe&, const bound_point&, extra_terms& t) { t.constant += 0.2072; }},
        // §2's sum with the format's roundoff; each of ≤ 4 roundings may underflow.
        {"float16", [](recipe& r) { r.arithmetic = dtype::float16; },
         [](const recipe&, const bound_point&, extra_terms& t) {
           t.constant += 2.5 * roundoff_units(dtype::float16);
           t.absolute += 4 * half_smallest_spacing(dtype::float16);
         }},
        {"bfloat16", [](recipe& r) { r.arithmetic = dtype::bfloat16; },
         [](const recipe&, const bound_point&, extra_terms& t) {
           t.constant += 2.5 * roundoff_units(dtype::bfloat16);
           t.absolute += 4 * half_smallest_spacing(dtype::bfloat16);
         }}},
       [](const recipe& a, const recipe& b) {
         return a.arithmetic == b.arithmetic && (a.arithmetic != dtype::float32 || a.fma == b.fma);
       }},
      {"output_store", "outputs stored by truncation or with subnormals flushed",
       {{"nearest_even", [](recipe& r) { r.store = output_store::nearest_even; }},
        // toward zero: a whole spacing where nearest-even leaves half, |y| ≤ A·r.
        {"truncation", [](recipe& r) { r.store = output_store::truncation; },
         [](const recipe&, const bound_point& at, extra_terms& t) {
           t.constant += roundoff_units(at.storage) * 1.0001;
           t.absolute += half_smallest_spacing(at.storage);
         }},
        // a subnormal result (below 2^emin) stored as zero.
        {"flush_subnormals", [](recipe& r) { r.store = output_store::flush_subnormals; },
         [](const recipe&, const bound_point& at, extra_terms& t) {
           t.absolute += std::ldexp(1.0, format_of(at.storage).min_normal_exponent);
         }}},
       [](const recipe& a, const recipe& b) { return a.store == b.store; }},
  };
  return stages;
}

// The cos/sin cache's extra error (stages trig_cache, cache_rounding, attention_factor): the
// cached values lie in [0, V], V = A when A is folded in, 1 when applied after. Rounding one to
// the cache type moves it by at most half the largest spacing up to V (a whole one when
// truncated); on both values of a pair, √2 times that on an output, × A after the cache. A
// float32 cache rounded to nearest even with A folded in is the exact contract's own rounding.
// A applied after the cache is one more rounding of A·cos in the rotation's arithmetic.
inline void cache_error(const recipe& r, const bound_point& at, extra_terms& t) {
  using namespace terms;
  const double a = at.attention_factor;
  const bool folded = r.factor == factor_placement::in_cache;
  if (r.cache == dtype::float16 || r.cache == dtype::bfloat16 ||
      (r.cache == dtype::float32 && r.cache_round == cache_rounding::truncation)) {
    const double v = folded ? a : 1.0;
    const double spacing = largest_spacing_up_to(r.cache, v);
    const double per_value = r.cache_round == cache_rounding::truncation ? spacing : spacing / 2;
    // in units of u·A·r: √2·per_value·(folded ? r : A·r) / (u·A·r); float32 RNE counted already.
    const double counted = r.cache == dtype::float32 ? spacing / 2 : 0;
    t.constant += sqrt2_up * (per_value - counted) / (u * (folded ? a : 1.0)) * 1.0001;
  }
  if (!folded && a != 1) {
    if (r.arithmetic == dtype::float32) t.constant += 1.0001;
    else if (r.arithmetic != dtype::float64) t.constant += roundoff_units(r.arithmetic) * 1.0001;
  }
}

// The stage named `name`, or nullptr.
inline const recipe_stage* find_stage(std::string_view name) {
  for (const auto& s : recipe_stages())
    if (s.name == name) return &s;
  return nullptr;
}

// The choice `r` makes at `stage` (never null for a recipe built from the catalog's choices).
inline const recipe_choice* choice_of(const recipe_stage& stage, const recipe& r) {
  for (const auto& c : stage.choices) {
    recipe probe = r;
    c.set(probe);
    if (stage.same(probe, r)) return &c;
  }
  return nullptr;
}

inline std::string_view choice_name(const recipe_stage& stage, const recipe& r) {
  const recipe_choice* c = choice_of(stage, r);
  return c != nullptr ? c->name : "?";
}

// The choice named `name` at `stage`, or nullptr.
inline const recipe_choice* find_choice(const recipe_stage& stage, std::string_view name) {
  for (const auto& c : stage.choices)
    if (c.name == name) return &c;
  return nullptr;
}

// The extra error terms of `r` at `at`: the sum over its stages' choices, plus the cache's.
inline extra_terms extra_error(const recipe& r, const bound_point& at) {
  extra_terms t;
  for (const auto& stage : recipe_stages())
    if (const recipe_choice* c = choice_of(stage, r); c != nullptr && c->terms != nullptr) c->terms(r, at, t);
  cache_error(r, at, t);
  return t;
}

}  // namespace ropecheck::recipes
