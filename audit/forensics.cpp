// Recipe fit and attribution (forensics.h).
#include "audit/forensics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "audit/recipe.h"
#include "audit/recipe_search.h"
#include "bounds/accuracy_contracts.h"
#include "bounds/error_bounds.h"
#include "spec/pair_index.h"
#include "spec/stream_layout.h"

namespace ropecheck::audit {
namespace {

bool same_value(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

// Which sampled outputs a distance is taken over: all, those beyond tolerance, or the outputs
// of one vector (the worst output's).
struct scope {
  enum kinds { all, failing, one } kind = all;
  std::size_t vector = 0;
};

// The sampled outputs recomputed under one recipe, in sample order (rotary_dim per vector).
class recomputation {
 public:
  // With an fp8 output scale σ the stored values are y/σ: the recomputations divide by σ
  // (recipe_simulator), the exact values are sat(y_exact/σ) as the verdict judges them
  // (judge_pairs.h), and distances are per stored pair norm ‖pair‖/σ, so that units of 2^-24
  // mean the same with and without a scale.
  recomputation(const diagnosis_context& c, const reference::double_tier& tier)
      : c_(c), simulator_(c.in.spec, tier, c.in.output_scale), rotary_(c.in.spec.rotary_dim) {
    const auto stream = pair_streams(c.in.spec.streams, rotary_);
    for (const sampled_vector& v : c.sampled.vectors) {
      const auto m = c.positions_of(v);
      const std::size_t first = beyond_.size();
      beyond_.resize(first + static_cast<std::size_t>(rotary_), false);
      for (int j = 0; j < rotary_ / 2; ++j) {
        const auto [a, b] = pair_of(c.in.spec.pair, rotary_, j);
        const double norm = std::hypot(v.x[a], v.x[b]);
        norm_.push_back(norm / c.in.output_scale);
        // Beyond tolerance as the verdict judges it (judge_pairs.h): |y − sat(y_exact/σ)|.
        for (const int k : {a, b}) {
          const double err = std::fabs(v.y[k] - bounds::saturated_exact(c.in.judged, v.ref[k] / c.in.output_scale));
          const std::int64_t mj = m[static_cast<std::size_t>(stream[j])];
          beyond_[first + static_cast<std::size_t>(k)] =
              !(err <= c.rule.allowed(norm, mj, c.theta[static_cast<std::size_t>(j)], j, v.y[k]));
        }
      }
    }
  }
  // How many sampled outputs are beyond tolerance.
  std::size_t beyond() const { return static_cast<std::size_t>(std::count(beyond_.begin(), beyond_.end(), true)); }

  std::vector<double> outputs(const recipe& r) {
    simulator_.prepare(r);
    std::vector<double> out;
    out.reserve(c_.sampled.vectors.size() * static_cast<std::size_t>(rotary_));
    std::vector<double> y(c_.in.spec.head_dim);
    for (const sampled_vector& v : c_.sampled.vectors) {
      simulator_.simulate(r, v.x, c_.positions_of(v), y);
      out.insert(out.end(), y.begin(), y.begin() + rotary_);
    }
    return out;
  }
  std::vector<double> exact() const {
    std::vector<double> out = slice([](const sampled_vector& v) { return &v.ref; });
    for (double& e : out) e = bounds::saturated_exact(c_.in.judged, e / c_.in.output_scale);
    return out;
  }
  std::vector<double> observed() const { return slice([](const sampled_vector& v) { return &v.y; }); }

  // Mean |p − q| / pair norm over outputs where both are finite, units of 2^-24; a non-finite
  // value on one side only counts as 2^24 units (a whole pair norm).
  double distance(const std::vector<double>& p, const std::vector<double>& q) const {
    return distance(p, q, scope{scope::all, 0});
  }
  double distance(const std::vector<double>& p, const std::vector<double>& q, scope where) const {
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const std::size_t vector = i / static_cast<std::size_t>(rotary_);
      if ((where.kind == scope::failing && !beyond_[i]) || (where.kind == scope::one && vector != where.vector))
        continue;
      const double norm = norm_[pair_slot(i)];
      if (!(norm > 0)) continue;
      ++n;
      if (std::isfinite(p[i]) != std::isfinite(q[i])) {
        sum += 1 / unit;
      } else if (std::isfinite(p[i])) {
        sum += std::fabs(p[i] - q[i]) / norm / unit;
      }
    }
    return n > 0 ? sum / static_cast<double>(n) : 0;
  }
  static double bit_exact(const std::vector<double>& p, const std::vector<double>& q) {
    std::size_t same = 0;
    for (std::size_t i = 0; i < p.size(); ++i) same += same_value(p[i], q[i]);
    return p.empty() ? 0 : static_cast<double>(same) / static_cast<double>(p.size());
  }

 private:
  template <class Member>
  std::vector<double> slice(Member member) const {
    std::vector<double> out;
    for (const sampled_vector& v : c_.sampled.vectors) {
      const auto& values = *member(v);
      out.insert(out.end(), values.begin(), values.begin() + rotary_);
    }
    return out;
  }
  // Output i of the flattened sample belongs to pair (vector, j).
  std::size_t pair_slot(std::size_t i) const {
    const std::size_t vector = i / static_cast<std::size_t>(rotary_);
    const int dim = static_cast<int>(i % static_cast<std::size_t>(rotary_));
    return vector * static_cast<std::size_t>(rotary_ / 2) + static_cast<std::size_t>(pair_of_dim(dim));
  }
  int pair_of_dim(int dim) const {
    return c_.in.spec.pair == pairing::adjacent ? dim / 2 : dim % (rotary_ / 2);
  }

  const diagnosis_context& c_;
  recipe_simulator simulator_;
  int rotary_;
  std::vector<double> norm_;  // per (vector, pair)
  std::vector<bool> beyond_;  // per output: beyond tolerance
};

// The catalog's name of the choice `r` makes at stage `name` (recipes/recipe_catalog.h).
std::string catalog_choice(std::string_view name, const recipe& r) {
  return std::string(recipes::choice_name(*recipes::find_stage(name), r));
}

}  // namespace

forensics_result attribute(const diagnosis_context& c, const reference::double_tier& sample_tier) {
  forensics_result result;
  if (c.sampled.vectors.empty()) return result;
  recomputation re(c, sample_tier);
  const std::vector<double> y = re.observed(), exact = re.exact();
  const recipe correct = correct_kernel_recipe(c.in.judged);

  // Coordinate search from the correct kernel's recipe: at each pass, the one choice (over every
  // stage) that brings the recomputation closest to Y, if it does so by more than 5%.
  recipe best = correct;
  std::vector<double> best_outputs = re.outputs(best);
  double best_distance = re.distance(y, best_outputs);
  for (int pass = 0; pass < 8 && best_distance > 0; ++pass) {
    recipe candidate_best = best;
    std::vector<double> candidate_outputs;
    double candidate_distance = best_distance;
    for (const search_stage& stage : search_stages())
      for (const search_move& move : stage.moves) {
        recipe candidate = best;
        move.set(candidate);
        if (candidate == best) continue;
        std::vector<double> outputs = re.outputs(candidate);
        const double d = re.distance(y, outputs);
        if (d < candidate_distance) {
          candidate_best = candidate;
          candidate_distance = d;
          candidate_outputs = std::move(outputs);
        }
      }
    if (!(candidate_distance < 0.95 * best_distance)) break;
    best = candidate_best;
    best_distance = candidate_distance;
    best_outputs = std::move(candidate_outputs);
  }

  result.found = best;
  reports::recipe_fit& fit = result.recipe;
  fit.fitted = true;
  fit.positions = catalog_choice("positions", best);
  fit.inverse_frequencies = catalog_choice("inverse_frequencies", best);
  fit.angle = catalog_choice("angle", best);
  fit.trig = catalog_choice("trig", best);
  fit.trig_cache = catalog_choice("trig_cache", best);
  fit.cache_rounding = catalog_choice("cache_rounding", best);
  fit.attention_factor = catalog_choice("attention_factor", best);
  fit.arithmetic = catalog_choice("arithmetic", best);
  fit.output_store = catalog_choice("output_store", best);
  fit.output = std::string(to_string(best.output));
  fit.as_contract = bounds::recipe_spelling(best);
  fit.bit_exact = recomputation::bit_exact(y, best_outputs);
  fit.residual_units = best_distance;

  // Attribution: each differing stage's move when made correct alone; the correct kernel's
  // distance from exact (output_rounding); the residual (unexplained). Measured where the audit
  // fails — over the sampled outputs beyond tolerance — when it does, so that the main cause is
  // the one of the failing outputs, not of the average one.
  const std::size_t failing = re.beyond();
  const scope where{failing > 0 ? scope::failing : scope::all, 0};
  const std::string over = failing > 0 ? fmt::format("the {} sampled outputs beyond tolerance", failing)
                                       : std::string("the sampled outputs");
  const std::vector<double> correct_outputs = re.outputs(correct);
  const double inherent = re.distance(correct_outputs, exact, where);
  const double total_error = re.distance(y, exact, where);
  const std::optional<std::size_t> worst = c.sampled.worst;
  struct part {
    const search_stage* stage;
    double units;
    std::string evidence;
    double at_worst = 0;  // its move at the worst output's vector
  };
  std::vector<part> parts;
  for (const search_stage& stage : search_stages()) {
    if (stage.same(best, correct)) continue;
    recipe fixed = best;
    stage.copy(fixed, correct);
    const std::vector<double> fixed_outputs = re.outputs(fixed);
    const double moved = re.distance(best_outputs, fixed_outputs, where);
    std::string at_worst;
    double worst_move = 0;
    if (worst) {
      const sampled_vector& v = c.sampled.vectors[*worst];
      worst_move = re.distance(best_outputs, fixed_outputs, {scope::one, *worst});
      at_worst = fmt::format("; at the vector holding the worst output (m = {}, head {}) by {:.3g} units", v.position,
                             v.head, worst_move);
    }
    parts.push_back({&stage, moved,
                     fmt::format("recomputing Y with {} {} instead of {} moves {} by {:.3g} units on average{}; the "
                                 "recipe found matches {:.1f}% of the sampled outputs bit for bit (a correct "
                                 "kernel's recipe: {:.1f}%)",
                                 stage.stage, stage.choice_name(best), stage.choice_name(correct), over, moved,
                                 at_worst, 100 * fit.bit_exact, 100 * recomputation::bit_exact(y, correct_outputs)),
                     worst_move});
  }
  // The worst output's own cause: the stage that moves its vector most, stated beside the main
  // cause (diagnosis.cpp) — at long context it can differ from the cause of most failing outputs.
  const auto worst_part = std::max_element(parts.begin(), parts.end(),
                                           [](const part& a, const part& b) { return a.at_worst < b.at_worst; });
  if (worst && worst_part != parts.end() && worst_part->at_worst > 0) {
    const sampled_vector& v = c.sampled.vectors[*worst];
    result.worst_output = {std::string(worst_part->stage->code),
                           fmt::format("at the worst output (m = {}, head {}) the largest part is {} ({:.3g} units)",
                                       v.position, v.head, worst_part->stage->what, worst_part->at_worst)};
  }
  const double residual = re.distance(y, best_outputs, where);
  double sum = inherent + residual;
  for (const part& p : parts) sum += p.units;
  const auto share = [&](double units) { return sum > 0 ? units / sum : 0.0; };
  for (const part& p : parts) {
    result.attribution.push_back({std::string(p.stage->stage), share(p.units), p.units});
    // A stage is a cause only when it moves the outputs by a visible amount: ≥ 5% of the error
    // and ≥ 0.05 units on average. float32 arithmetic without FMA is within a correct kernel's
    // contract (bounds/error_bounds.h, unfused_output_coefficient): a recipe, not a cause.
    const bool cause = share(p.units) >= 0.05 && p.units >= 0.05 &&
                       !(p.stage->stage == "arithmetic" && best.arithmetic == dtype::float32);
    if (cause)
      result.findings.push_back({std::string(p.stage->code), fmt::format("{} explains {:.0f}% of the error ({:.3g} of {:.3g} "
                                                            "units on average over {})",
                                                            p.stage->what, 100 * share(p.units), p.units, total_error,
                                                            over),
                                 share(p.units), p.evidence});
  }
  result.attribution.push_back({"output_rounding", share(inherent), inherent});
  result.attribution.push_back({"unexplained", share(residual), residual});
  const std::string scaled =
      c.in.output_scale == 1.0f ? "" : fmt::format(" stored as round(y / {})", c.in.output_scale);
  if (inherent > 0)
    result.findings.push_back(
        {"output_rounding",
         fmt::format("a correct kernel with {} outputs{} is {:.3g} units from the exact rotation on average: {:.0f}% "
                     "of the error is the rounding any implementation of this output type has",
                     to_string(c.in.judged), scaled, inherent, 100 * share(inherent)),
         share(inherent),
         fmt::format("recomputing Y as a correct kernel would (θ_j, angle and cos/sin in double, cos/sin kept in "
                     "{}, {} arithmetic{}, one rounding to {})",
                     to_string(correct.cache), catalog_choice("arithmetic", correct),
                     c.in.output_scale == 1.0f ? "" : ", divided by the output scale in float32",
                     to_string(correct.output))});
  return result;
}

}  // namespace ropecheck::audit
