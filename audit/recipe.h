// recipe: a RoPE implementation modelled as a pipeline of roundings: the position's
// type, how the inverse frequencies are made and kept, the angle m·θ_j's precision, where cos/sin
// are computed and what they are kept in, the arithmetic of the rotation, and one final rounding
// to the output type (after the division by the call's fp8 output scale σ, if any). simulate() recomputes one head vector's output under a recipe, from the
// double tier's correctly rounded cos/sin where the recipe is exact there and from libm
// otherwise, so the audit can find the recipe that reproduces Y (audit/forensics.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "numeric/dtype.h"
#include "reference/double_tier.h"
#include "spec/rope_spec.h"

namespace ropecheck::audit {

enum class frequency_method { pow, repeated_product };

struct recipe {
  dtype positions = dtype::float64;          // float64: the integer position, exactly
  frequency_method method = frequency_method::pow;
  dtype frequencies = dtype::float64;        // the type θ_j is computed and kept in
  dtype angle = dtype::float64;              // m·θ_j rounded to float64 or float32
  bool angle_by_repeated_product = false;    // ggml: φ_0 = m, φ_j = φ_{j−1}·base^(−2/d) in float32
  dtype trig = dtype::float64;               // cos/sin evaluated in float64 or float32
  dtype cache = dtype::float32;              // cos/sin kept in float64, float32, float16, bfloat16
  dtype arithmetic = dtype::float32;         // the rotation's products and sums
  bool fma = true;                           // float32 arithmetic: one rounded product, one FMA
  dtype output = dtype::float32;             // the one final rounding

  bool operator==(const recipe&) const = default;
};

// What a correct kernel with this output type does (fast/rotation.h): exact positions, θ_j and
// the angle in double, cos/sin correctly rounded then kept in float32, the rotation in float32
// with one rounded product and one FMA, one rounding to the output. For float64 outputs,
// everything in double.
recipe correct_kernel_recipe(dtype output);

std::string frequencies_name(const recipe& r);  // "pow float64", "repeated_product float32"
std::string arithmetic_name(const recipe& r);   // "float32_fma", "float32", "bfloat16", …
std::string angle_name(const recipe& r);        // "float64", "float32", "float32_repeated_product"

// The pieces of the audit's spec and sample a simulation needs.
class recipe_simulator {
 public:
  // `tier` holds every sampled position (its cos/sin are the exact-recipe values, × A).
  // `output_scale` σ: the audited call's fp8 output scale; the final rounding then stores
  // round(fl(y / σ)) as the kernels do (fast/rotation.h: the division in float32, in float64
  // for float64 arithmetic), so every recipe is replayed with the call's σ.
  recipe_simulator(const rope_spec& spec, const reference::double_tier& tier, float output_scale = 1.0f);

  // The rotated outputs (rotary_dim values, pairs in the spec's pairing) of head vector `x` at
  // position `m` under `r`. θ_j per recipe are cached by prepare().
  void prepare(const recipe& r);
  void simulate(const recipe& r, std::span<const double> x, std::int64_t m, std::span<double> y) const;

 private:
  const rope_spec& spec_;
  const reference::double_tier& tier_;
  float output_scale_;
  std::vector<double> exact_theta_;   // θ'_j the tier rotates by (double)
  std::vector<double> scaling_ratio_; // θ'_j / θ_j: what the spec's scaling multiplies by
  std::vector<double> theta_;         // θ'_j of the prepared recipe
  recipe prepared_{};
};

}  // namespace ropecheck::audit
