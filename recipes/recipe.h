// recipe: a RoPE implementation modelled as a pipeline of roundings, one choice per stage —
// the position's type, how the inverse frequencies are made and kept, the angle m·θ_j's
// precision, where cos/sin are evaluated, what they are kept in and how they are rounded there,
// where the attention factor A is applied, the rotation's arithmetic, and how the output is
// stored. The audit finds the recipe that reproduces a dump (audit/forensics.cpp); the gate
// holds a kernel to the error its recipe can make (bounds/accuracy_contracts.h). The stages'
// names, choices and error terms are the catalog recipes/recipe_catalog.h.
#pragma once

#include "numeric/dtype.h"

namespace ropecheck::recipes {

// How θ_j is made: pow in the frequencies' type (HF's 1/base^(2j/d) in float32), the repeated
// product θ_{j−1}·s (ggml), or the exact θ_j rounded once to the type (a float64 table cast).
enum class frequency_method { pow, repeated_product, rounded };
enum class cache_rounding { nearest_even, truncation };
// Where A multiplies cos/sin: into the cached values (one rounding of A·cos to the cache type,
// as the exact contract and MLAS's float16 cache do), or after the cache is read (cos rounded
// to the cache type, then × A in the rotation's arithmetic).
enum class factor_placement { in_cache, after_cache };
// The output's one rounding: to nearest even; toward zero (a store that drops the low bits);
// to nearest even with subnormal results flushed to zero (a vector conversion under FTZ).
enum class output_store { nearest_even, truncation, flush_subnormals };

struct recipe {
  dtype positions = dtype::float64;          // float64: the integer position, exactly
  frequency_method method = frequency_method::pow;
  dtype frequencies = dtype::float64;        // the type θ_j is computed and kept in
  dtype angle = dtype::float64;              // m·θ_j rounded to float64 or float32
  bool angle_by_repeated_product = false;    // ggml: φ_0 = m, φ_j = φ_{j−1}·base^(−2/d) in float32
  dtype trig = dtype::float64;               // cos/sin evaluated in float64 or float32
  dtype cache = dtype::float32;              // cos/sin kept in float64, float32, float16, bfloat16
  cache_rounding cache_round = cache_rounding::nearest_even;
  factor_placement factor = factor_placement::in_cache;
  dtype arithmetic = dtype::float32;         // the rotation's products and sums
  bool fma = true;                           // float32 arithmetic: one rounded product, one FMA
  output_store store = output_store::nearest_even;
  dtype output = dtype::float32;             // the storage dtype of the one final rounding

  bool operator==(const recipe&) const = default;
};

// What a correct kernel with this output type does (fast/rotation.h): exact positions, θ_j and
// the angle in double, cos/sin correctly rounded, × A, then kept in float32, the rotation in
// float32 with one rounded product and one FMA, one rounding to nearest even. For float64
// outputs, everything in double. The `exact` contract is this recipe.
constexpr recipe correct_kernel_recipe(dtype output) {
  recipe r;
  r.output = output;
  if (output == dtype::float64) {
    r.cache = dtype::float64;
    r.arithmetic = dtype::float64;
  }
  return r;
}

}  // namespace ropecheck::recipes
