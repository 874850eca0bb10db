// recipe: the audit's simulation of a recipe (recipes/recipe.h, the catalog's stages):
// simulate() recomputes one head vector's output under a recipe, from the double tier's
// correctly rounded cos/sin where the recipe is exact there and from libm otherwise, so the
// audit can find the recipe that reproduces Y (audit/forensics.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "numeric/dtype.h"
#include "recipes/recipe.h"
#include "reference/double_tier.h"
#include "spec/rope_spec.h"

namespace ropecheck::audit {

using recipes::recipe;
using recipes::correct_kernel_recipe;
using recipes::frequency_method;

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
  // With position streams (M-RoPE, 2-D vision): the token's position in each stream of the
  // spec's layout; pair j turns by its stream's (tier.pair_stream(j)).
  void simulate(const recipe& r, std::span<const double> x, std::span<const std::int64_t> positions,
                std::span<double> y) const;

 private:
  const rope_spec& spec_;
  const reference::double_tier& tier_;
  float output_scale_;
  std::vector<int> frequency_;        // f(j): the frequency index pair j rotates by
  std::vector<double> exact_theta_;   // θ'_j the tier rotates by (double)
  std::vector<double> scaling_ratio_; // θ'_j / θ_j: what the spec's scaling multiplies by
  std::vector<double> theta_;         // θ'_j of the prepared recipe
  recipe prepared_{};
};

}  // namespace ropecheck::audit
