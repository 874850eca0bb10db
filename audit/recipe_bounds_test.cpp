// The contracts' derived terms (recipes/recipe_catalog.h, docs/error-bounds.md §17) against
// the audit's simulation of each recipe (audit/recipe.cpp), which is written from the
// implementations it models and not from the bounds: every output a recipe computes stays
// within the exact bound (bounds/error_bounds.h) plus the recipe's extra, for every single
// choice of the catalog, the named contracts and combinations real kernels use, in float32,
// float16 and bfloat16 storage, at A = 1 and A ≠ 1 (folded and after the cache), at positions
// up to 2^24. And the bound is not loose by orders of magnitude: a 16-bit cache's worst output
// reaches a visible fraction of its term.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "audit/recipe.h"
#include "bounds/accuracy_contracts.h"
#include "bounds/error_bounds.h"
#include "numeric/storage_element.h"
#include "recipes/recipe_catalog.h"
#include "reference/double_tier.h"
#include "spec/pair_index.h"

namespace ropecheck::audit {
namespace {

std::vector<std::int64_t> test_positions() {
  std::vector<std::int64_t> p = {0, 1, 2, 3, 7, 100, 1000, 4095, 65535, (1 << 20) - 1, (1 << 24) - 1};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 40; ++i) p.push_back(static_cast<std::int64_t>(rng() % (1u << 20)));
  return p;
}

// The recipes checked: the correct kernel's with each catalog choice alone, the named
// contracts, and combinations of the stages real kernels combine.
std::vector<recipes::recipe> recipes_to_check() {
  std::vector<recipes::recipe> out;
  const recipes::recipe correct = recipes::correct_kernel_recipe(dtype::float32);
  for (const auto& stage : recipes::recipe_stages())
    for (const auto& choice : stage.choices) {
      recipes::recipe r = correct;
      choice.set(r);
      out.push_back(r);
    }
  for (const auto& c : bounds::contract_catalog()) out.push_back(*c.for_all);
  const auto with = [&](std::initializer_list<std::pair<std::string_view, std::string_view>> choices) {
    recipes::recipe r = correct;
    for (const auto& [stage, choice] : choices) recipes::find_choice(*recipes::find_stage(stage), choice)->set(r);
    out.push_back(r);
  };
  // MLAS float16 cache; vLLM bfloat16 cache with a truncating store; HF float32 and bfloat16;
  // ggml; a truncated cache with A after it.
  with({{"angle", "float32"}, {"trig", "float32"}, {"trig_cache", "float16"}, {"arithmetic", "float32"}});
  with({{"angle", "float32"}, {"trig", "float32"}, {"trig_cache", "bfloat16"}, {"output_store", "flush_subnormals"}});
  with({{"angle", "float32"}, {"trig_cache", "bfloat16"}, {"output_store", "truncation"}});
  with({{"inverse_frequencies", "pow float32"}, {"angle", "float32"}, {"trig", "float32"}, {"arithmetic", "float32"}});
  with({{"inverse_frequencies", "pow float32"}, {"angle", "float32"}, {"trig", "float32"}, {"trig_cache", "bfloat16"},
        {"arithmetic", "bfloat16"}});
  with({{"angle", "float32_repeated_product"}, {"trig", "float32"}, {"arithmetic", "float32"}});
  with({{"trig_cache", "float16"}, {"cache_rounding", "truncation"}, {"attention_factor", "after_cache"}});
  with({{"positions", "float32"}, {"inverse_frequencies", "repeated_product float32"}, {"angle", "float32"},
        {"trig", "float32"}});
  return out;
}

struct worst {
  double over_bound = 0;       // max |y − exact| / bound
  double over_extra_16 = 0;    // for 16-bit caches: max (|y − exact| − exact bound) / extra
  std::string where;
};

worst check(const recipes::recipe& r, dtype storage, double attention_factor, bool scaled = false) {
  rope_spec spec{64, 64, 10000.0, pairing::half_split, "test"};
  spec.attention_factor = attention_factor;
  if (scaled) spec.scaling = linear_scaling{.factor = 4};
  const std::vector<std::int64_t> positions = test_positions();
  const reference::double_tier tier(spec, positions);
  recipe_simulator simulator(spec, tier);
  recipes::recipe run = r;
  run.output = storage;
  simulator.prepare(run);
  const bounds::accuracy_contract contract = bounds::contract_of_recipe("checked", "", r);
  const bounds::attention_scale scale = bounds::attention_scale_for(tier.attention_factor());
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  worst w;
  std::vector<double> x(64), y(64);
  for (std::int64_t m : positions)
    for (int vector = 0; vector < 8; ++vector) {
      // Magnitudes from 2^-30 to 2^4 reach the subnormal ranges of the 16-bit formats.
      const double magnitude = std::ldexp(1.0, -30 + 34 * vector / 7);
      for (double& v : x) v = round_to_storage(storage, normal(rng) * magnitude);
      simulator.simulate(run, x, m, y);
      for (int j = 0; j < 32; ++j) {
        const auto [a, b] = pair_of(spec.pair, 64, j);
        const double c = tier.cos_at(m, j), s = tier.sin_at(m, j);
        const double exact[2] = {x[a] * c - x[b] * s, x[b] * c + x[a] * s};
        const double out[2] = {y[a], y[b]};
        const double norm = std::hypot(x[a], x[b]), theta = tier.inverse_frequencies()[j];
        for (int k = 0; k < 2; ++k) {
          const double base = bounds::output_bound(storage, norm, m, theta, out[k], scale) +
                              bounds::oracle_output_bound(norm, scale);
          const double extra =
              bounds::contract_output_extra(contract, storage, norm, m, theta, j, tier.attention_factor());
          const double error = std::fabs(out[k] - exact[k]);
          if (error / (base + extra) > w.over_bound) {
            w.over_bound = error / (base + extra);
            w.where = "m=" + std::to_string(m) + " j=" + std::to_string(j) + " |x|~2^" +
                      std::to_string(-30 + 34 * vector / 7);
          }
          if (extra > 0) w.over_extra_16 = std::max(w.over_extra_16, (error - base) / extra);
        }
      }
    }
  return w;
}

TEST(RecipeBounds, EveryRecipeStaysWithinItsComposedBound) {
  for (const recipes::recipe& r : recipes_to_check()) {
    double tightest = 0;
    for (dtype storage : {dtype::float32, dtype::float16, dtype::bfloat16})
      for (double a : {1.0, 1.2, 0.8125}) {
        const worst w = check(r, storage, a);
        tightest = std::max(tightest, w.over_bound);
        EXPECT_LE(w.over_bound, 1.0) << bounds::recipe_spelling(r) << " " << to_string(storage) << " A=" << a
                                     << " at " << w.where;
      }
    std::printf("%-100s worst/bound %.3f\n", bounds::recipe_spelling(r).c_str(), tightest);
  }
}

// On a scaled spec every recipe applies the scaling (linear, factor 4: θ'_j = θ_j/4), the
// repeated products of ggml's angle included, and stays within its bound.
TEST(RecipeBounds, EveryRecipeAppliesTheSpecsScaling) {
  for (const recipes::recipe& r : recipes_to_check()) {
    const worst w = check(r, dtype::float32, 1.0, true);
    EXPECT_LE(w.over_bound, 1.0) << bounds::recipe_spelling(r) << " at " << w.where;
  }
}

// A float16 cache with A folded in reaches at least a quarter of its term at A = 1.2 (where the
// cached values cross 1 and the spacing doubles): the derivation is a sup, not a guess.
TEST(RecipeBounds, TheCacheTermIsReached) {
  recipes::recipe r = recipes::correct_kernel_recipe(dtype::float32);
  r.cache = dtype::float16;
  for (double a : {1.0, 1.2}) {
    const worst w = check(r, dtype::float32, a);
    EXPECT_GT(w.over_extra_16, 0.25) << "A=" << a;
    EXPECT_LE(w.over_bound, 1.0) << "A=" << a;
  }
}

}  // namespace
}  // namespace ropecheck::audit
