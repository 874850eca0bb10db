// accuracy_contracts: what a kernel promises — `ropecheck gate --contract …`. A contract is a
// recipe (recipes/recipe.h): a choice per stage, in the stage and choice names the audit
// prints, for every storage dtype or one per dtype. Its bound is the exact contract's
// (bounds/error_bounds.h, docs/error-bounds.md §1–§10) plus the extra error its choices can
// make, composed from the catalog's derived terms (recipes/recipe_catalog.h, §17):
//
//     extra(m, θ_j, j) = u·A·r·( min(2/u, angle·|m|·θ_j + angle_per_pair·j·|m|·θ_j) + constant ) + absolute
//
// (u = 2^-24, r the input pair's norm, A the attention factor), and, for the pair as a vector
// (norm, score and round-trip bounds), √2 times that. The named contracts are aliases of
// recipes. A property asks for contract_output_extra and never for a contract's name.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numeric/dtype.h"
#include "recipes/recipe.h"
#include "recipes/recipe_catalog.h"

namespace ropecheck::bounds {

struct accuracy_contract {
  std::string name;
  std::string statement;  // one line: the recipe whose error the contract allows
  // The recipe of every storage dtype (`for_all`), or of each dtype the kernel has
  // (`by_dtype`); a dtype given neither is held to the exact contract.
  std::optional<recipes::recipe> for_all;
  std::vector<std::pair<dtype, recipes::recipe>> by_dtype;
  std::int64_t max_position = 0;       // > 0: the kernel promises nothing for |m| beyond it
  bool nonnegative_positions = false;  // true: nothing for m < 0

  // The recipe `storage` is held to (the correct kernel's for a dtype with none).
  recipes::recipe recipe_for(dtype storage) const {
    for (const auto& [t, r] : by_dtype)
      if (t == storage) return with_output(r, storage);
    return with_output(for_all.value_or(recipes::correct_kernel_recipe(storage)), storage);
  }
  // True when no dtype's recipe adds anything to the exact contract.
  bool is_exact() const {
    const auto plain = [](recipes::recipe r) {
      r.output = dtype::float32;
      return r == recipes::correct_kernel_recipe(dtype::float32);
    };
    if (for_all && !plain(*for_all)) return false;
    return std::all_of(by_dtype.begin(), by_dtype.end(), [&](const auto& e) { return plain(e.second); });
  }

 private:
  static recipes::recipe with_output(recipes::recipe r, dtype storage) {
    r.output = storage;
    return r;
  }
};

// A recipe spelled as the stages that differ from the correct kernel's:
// "angle=float32,trig=float32" ("exact" when none does).
inline std::string recipe_spelling(const recipes::recipe& r) {
  const recipes::recipe correct = recipes::correct_kernel_recipe(dtype::float32);
  std::string out;
  for (const auto& stage : recipes::recipe_stages()) {
    if (stage.same(r, correct)) continue;
    out += (out.empty() ? "" : ",") + std::string(stage.name) + "=" + std::string(recipes::choice_name(stage, r));
  }
  return out.empty() ? "exact" : out;
}

// A contract holding one recipe for every dtype.
inline accuracy_contract contract_of_recipe(std::string name, std::string statement, const recipes::recipe& r) {
  accuracy_contract c;
  c.name = std::move(name);
  c.statement = std::move(statement);
  c.for_all = r;
  return c;
}

// The named contracts, strictest first, each an alias of a recipe. `exact` is the default.
inline std::span<const accuracy_contract> contract_catalog() {
  using recipes::recipe;
  static const std::vector<accuracy_contract> catalog = [] {
    const auto make = [](void (*edit)(recipe&)) {
      recipe r = recipes::correct_kernel_recipe(dtype::float32);
      edit(r);
      return r;
    };
    return std::vector<accuracy_contract>{
        contract_of_recipe("exact",
                           "ropecheck's derived bound: exact angle, cos/sin rounded once to float32 "
                           "(docs/error-bounds.md §1-§10)",
                           make([](recipe&) {})),
        contract_of_recipe("float32_angles",
                           "angle float(m)*float(theta_j) in float32, cos/sin in float32, A applied after",
                           make([](recipe& r) {
                             r.angle = dtype::float32, r.trig = dtype::float32;
                             r.factor = recipes::factor_placement::after_cache, r.fma = false;
                           })),
        contract_of_recipe("float32_repeated_product_frequencies",
                           "theta_j by repeated float32 multiplication (theta_j = theta_{j-1}*s), float32 "
                           "angles, float32 cos/sin",
                           make([](recipe& r) {
                             r.method = recipes::frequency_method::repeated_product, r.frequencies = dtype::float32;
                             r.angle = dtype::float32, r.trig = dtype::float32;
                             r.factor = recipes::factor_placement::after_cache, r.fma = false;
                           })),
        contract_of_recipe("float16_cos_sin_cache",
                           "cos/sin (times A) cached in float16, rotation in float32",
                           make([](recipe& r) { r.cache = dtype::float16; })),
        contract_of_recipe("bfloat16_cos_sin_cache",
                           "cos/sin (times A) cached in bfloat16, rotation in float32",
                           make([](recipe& r) { r.cache = dtype::bfloat16; })),
        contract_of_recipe("float16_arithmetic",
                           "cos/sin, products and sums rounded to float16, in every storage dtype",
                           make([](recipe& r) { r.cache = dtype::float16, r.arithmetic = dtype::float16; })),
        contract_of_recipe("bfloat16_arithmetic",
                           "cos/sin, products and sums rounded to bfloat16, in every storage dtype",
                           make([](recipe& r) { r.cache = dtype::bfloat16, r.arithmetic = dtype::bfloat16; })),
    };
  }();
  return catalog;
}

// The catalog entry named `name`, or nullptr.
inline const accuracy_contract* find_contract(std::string_view name) {
  for (const auto& c : contract_catalog())
    if (c.name == name) return &c;
  return nullptr;
}

inline const accuracy_contract& exact_contract() { return contract_catalog().front(); }

// The contract's extra terms for one output (§17).
inline recipes::extra_terms contract_terms(const accuracy_contract& c, dtype storage, double theta, double a) {
  return recipes::extra_error(c.recipe_for(storage), {storage, a, theta});
}

// The extra on one output of a pair of input norm `pair_norm` with attention factor A.
// Its part per unit of A·‖pair‖ at position m (the rest is t.absolute), from terms `t` that
// contract_terms gave for this θ_j and A: what the audit adds to its per-pair coefficient.
inline double contract_output_coefficient(const recipes::extra_terms& t, std::int64_t position, double theta,
                                          int pair) {
  const double angle = std::fabs(static_cast<double>(position)) * theta;
  const double angle_part = std::min(2.0, 0x1p-24 * (t.angle + t.angle_per_pair * pair) * angle);
  return angle_part + 0x1p-24 * t.constant;
}

inline double contract_output_extra(const accuracy_contract& c, dtype storage, double pair_norm,
                                    std::int64_t position, double theta, int pair, double a) {
  if (c.is_exact()) return 0;
  const recipes::extra_terms t = contract_terms(c, storage, theta, a);
  return contract_output_coefficient(t, position, theta, pair) * a * pair_norm + t.absolute;
}

// The largest |m| at which the contract still judges: its bound for the fastest-turning pair
// (θ_0 = 1, A = 1) stays below half the pair's norm, so a zero or wrong-angle output still
// fails. Past it the recipe's angle error (it grows with |m|·θ_j) allows anything of the pair's
// size, and a case there would pass whatever the kernel wrote; a run under the contract stops
// there (core/contract_spelling.h, run_domain). 0: no limit (the exact contract, or no angle term
// that reaches it below 2^31).
inline std::int64_t contract_judged_max_position(const accuracy_contract& c) {
  if (c.is_exact()) return 0;
  double limit = 2147483647.0;
  for (const dtype storage : storage_dtypes) {
    const recipes::extra_terms t = contract_terms(c, storage, 1.0, 1.0);
    if (!(t.angle > 0)) continue;
    limit = std::min(limit, std::max(0.0, (0.5 / 0x1p-24 - t.constant) / t.angle));
  }
  // Past 2^31 − 1 (the positions a spec allows, docs/spec.md) it limits nothing.
  return limit >= 2147483647.0 ? 0 : std::max<std::int64_t>(1, static_cast<std::int64_t>(limit));
}

// The same for the pair as a vector (norm, score and round-trip bounds).
inline double contract_pair_extra(const accuracy_contract& c, dtype storage, double pair_norm,
                                  std::int64_t position, double theta, int pair, double a) {
  return recipes::terms::sqrt2_up * contract_output_extra(c, storage, pair_norm, position, theta, pair, a);
}

// How the bound is composed, one clause per recipe: its spelling and its terms at A = 1,
// θ_j = 1 (docs/error-bounds.md §17), e.g. "every dtype: angle=float32 (+1.65 u·A·r,
// +3.0001·|m|·θ_j u·A·r, …)". Dtypes without a recipe of their own are exact.
inline std::string contract_derivation(const accuracy_contract& c) {
  const auto clause = [](std::string_view who, const recipes::recipe& r, dtype t) {
    const recipes::extra_terms e = recipes::extra_error(r, {t, 1, 1});
    char terms[240];
    std::snprintf(terms, sizeof terms,
                  " (extra at A = 1, theta_j = 1: %.6g u*A*r + %.6g*|m|*theta_j u*A*r + %.6g*j*|m|*theta_j u*A*r "
                  "+ %.3g)",
                  e.constant, e.angle, e.angle_per_pair, e.absolute);
    return std::string(who) + ": " + recipe_spelling(r) + terms;
  };
  std::string out;
  if (c.for_all) out = clause("every dtype", *c.for_all, dtype::float32);
  for (const auto& [t, r] : c.by_dtype) out += (out.empty() ? "" : "; ") + clause(to_string(t), r, t);
  if (!c.for_all) out += "; other dtypes: exact";
  return out;
}

}  // namespace ropecheck::bounds
