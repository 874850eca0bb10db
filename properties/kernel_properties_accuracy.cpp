// The kernel properties measured against a derived bound (bounds/error_bounds.h,
// docs/error-bounds.md): accuracy against the double-tier oracle, norm preservation, relative-
// offset invariance of attention scores, forward-then-inverse, and agreement between the cache
// and on-the-fly strategies. Each records its worst error/bound ratio while it runs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "numeric/pair_error.h"
#include "numeric/storage_element.h"
#include "numeric/ulp.h"
#include "bounds/error_bounds.h"
#include "properties/kernel_cases.h"
#include "properties/kernel_property_catalog.h"
#include "reference/double_tier.h"
#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::properties {

namespace {

using namespace kernel_support;

// The kernels' documented accuracy target holds for |m| ≤ 2^24 (fast/rope_angles.h).
constexpr std::int64_t accuracy_position_limit = std::int64_t{1} << 24;
// Properties whose bound grows with |m| (the θ_j rounding term) run over every int32 position.
constexpr std::int64_t int32_position_limit = (std::int64_t{1} << 31) - 1;
// Below this pair norm the bound is all underflow and a ratio to the relative target means
// nothing; such pairs are still held to the derived bound.
constexpr double meaningful_norm = 0x1p-100;

double error_of(double computed, double exact) { return output_error(computed, exact); }

// A rotated pair of the case's Q tensor: token t at position m, head h, pair j at coordinates
// (a, b), and the input pair x_a, x_b.
struct pair_site {
  std::int64_t t, m;
  int h, j, a, b;
  double xa, xb;
  double theta;
};

// Calls visit(site) for every rotated pair of `q` (the case's Q heads), in token, head, pair order.
template <class Visit>
void for_each_pair(const kernel_case& c, const tensor_buffers& q, Visit visit) {
  for (std::int64_t t = 0; t < c.tokens(); ++t) {
    const std::int64_t m = c.positions[static_cast<std::size_t>(t)];
    for (int h = 0; h < c.q_heads; ++h) {
      for (int j = 0; j < c.pairs(); ++j) {
        const auto [ia, ib] = pair_of(c.shape.pair, c.shape.rotary_dim, j);
        visit(pair_site{t, m, h, j, ia, ib, q.input.get(element_index(q, t, h, ia)),
                        q.input.get(element_index(q, t, h, ib)),
                        c.theta()[static_cast<std::size_t>(j)]});
      }
    }
  }
}

std::string failure_message(std::string_view property, const std::string& where,
                            std::string_view what, double computed, double expected,
                            double error, double bound, double pair_norm) {
  std::ostringstream os;
  os << property << " violated at " << where << ": " << what << " = " << show_number(computed)
     << ", expected " << show_number(expected) << ", |error| = " << show_number(error) << " = "
     << (pair_norm > 0 ? in_units_of_2_pow_minus_24(error / pair_norm) : error)
     << "·2^-24·A·‖pair‖, derived bound " << show_number(bound) << " (bounds/error_bounds.h)";
  return os.str();
}

// Row (token, head) of a tensor's input or output as doubles.
std::vector<double> row_of(const element_buffer& b, const tensor_buffers& t, std::int64_t token,
                           std::int64_t head, int head_dim) {
  std::vector<double> r(static_cast<std::size_t>(head_dim));
  for (int i = 0; i < head_dim; ++i) r[static_cast<std::size_t>(i)] = b.get(element_index(t, token, head, i));
  return r;
}

// A case and its judged outputs as a call to run again (judged_case.h).
judged_case judged_case_of(const kernel_case& c, std::string property, std::string bound_source,
                           std::vector<judged_output> outputs) {
  judged_case j;
  j.property = std::move(property);
  j.storage = c.storage;
  j.pair = c.shape.pair;
  j.head_dim = c.shape.head_dim;
  j.rotary_dim = c.shape.rotary_dim;
  j.base = c.shape.base;
  j.scaling = describe(c.spec.scaling);
  j.theta = c.theta();
  j.attention_factor = c.frequencies.attention_factor;
  j.positions = c.positions;
  j.q_heads = c.q_heads;
  j.k_heads = c.k_heads;
  j.q = c.q.values;
  j.k = c.k.values;
  j.bound_source = std::move(bound_source);
  j.outputs = std::move(outputs);
  return j;
}

// A case's judged outputs handed out (observation::worst_data, the failure's data) when the case
// holds the property's worst ratio (it rose above `worst_before`) or failed.
void keep_judged(const kernel_case& c, std::string property, std::string bound_source,
                 std::vector<judged_output> judged, double worst_before, observation& seen,
                 first_violation& violation) {
  if (!(seen.worst_over_bound > worst_before) && !violation.noted()) return;
  auto data = std::make_shared<const judged_case>(
      judged_case_of(c, std::move(property), std::move(bound_source), std::move(judged)));
  if (seen.worst_over_bound > worst_before) seen.worst_data = data;
  violation.attach(std::move(data));
}

// --------------------------------------------------------------------------------------------
// within_bound_of_reference: every rotated output of Q and of K — rotated together in one call,
// with head counts that may differ (grouped-query attention) — within output_bound (+ the
// oracle's own error) of the double tier, for |m| ≤ 2^24, every base in [2, 1e9], both
// pairings, plain RoPE and every rope_scaling with its attention factor A (§16).

void within_bound_of_reference(const fast::kernel_info& kernel, dtype storage,
                               const run_settings& settings, observation& seen) {
  case_limits limits = case_limits{.position_limit = accuracy_position_limit};
  limits.with_k = true;
  limits.allow_saturation = true;
  const kernel_case c = pick_case(kernel, storage, within(settings, limits));
  const bounds::accuracy_contract& contract = *settings.contract;
  const fast::rope_angles angles = prepare_angles(kernel, c);
  tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  tensor_buffers k = packed_buffers(c.k, storage, c.k_heads, c.shape.head_dim, c.tokens());
  apply_or_fail(kernel, make_call(c, fast::direction::forward, c.positions, &q, &k), angles);

  const reference::double_tier tier = oracle_tier(c);
  const bounds::attention_scale scale = c.scale();
  // fast/'s documented target is stated for plain RoPE (A = 1).
  const bool plain = scale.factor == 1;
  std::vector<double> exact(static_cast<std::size_t>(c.shape.head_dim));
  first_violation violation;
  // Every judged output, kept so that the case can be handed out as a call to run again
  // (judged_case.h) when it holds the property's worst ratio or fails.
  std::vector<judged_output> judged;
  judged.reserve(static_cast<std::size_t>(c.tokens() * (c.q_heads + c.k_heads) * c.shape.rotary_dim));
  const double worst_before = seen.worst_over_bound;
  for (const auto& [tensor, name] : {std::pair{&q, "Q"}, std::pair{&k, "K"}}) {
    for (std::int64_t t = 0; t < c.tokens(); ++t) {
      const std::int64_t m = c.positions[static_cast<std::size_t>(t)];
      for (int h = 0; h < tensor->heads; ++h) {
        const auto x = row_of(tensor->input, *tensor, t, h, c.shape.head_dim);
        tier.rotate(x, m, exact);
        for (int j = 0; j < c.pairs(); ++j) {
          const auto [ia, ib] = pair_of(c.shape.pair, c.shape.rotary_dim, j);
          const double xa = x[static_cast<std::size_t>(ia)], xb = x[static_cast<std::size_t>(ib)];
          const double r = std::hypot(xa, xb);
          for (int i : {ia, ib}) {
            const double y = tensor->output.get(element_index(*tensor, t, h, i));
            // fp8 stores saturate: the stored value approximates clamp(exact, ±max).
            const double e = bounds::saturated_exact(storage, exact[static_cast<std::size_t>(i)]);
            const double error = error_of(y, e);
            const double theta = c.theta()[static_cast<std::size_t>(j)];
            const double bound =
                bounds::output_bound(storage, r, m, theta, y, scale) +
                bounds::oracle_output_bound(r, scale) +
                bounds::contract_output_extra(contract, storage, r, m, theta, j, scale.factor);
            const double units = error / (bounds::float32_unit_roundoff * scale.factor * r);
            auto where = [&] {
              return std::string(name) + " " + describe_location(c, t, h, j) + " ‖pair‖=" +
                     show_number(r) + " error=" + std::to_string(units) + "·2^-24·A·‖pair‖";
            };
            auto location = [&] { return locate(c, t, j, units, where()); };
            seen.record(error / bound, m, j, c.shape.head_dim, location);
            judged.push_back({tensor == &k, t, h, i, j, -1, e, bound, y});
            if (r >= meaningful_norm) {
              if (tensor == &k) seen.worst_key_over_bound = std::max(seen.worst_key_over_bound, error / bound);
              if (c.scaled())
                seen.worst_scaled_over_bound = std::max(seen.worst_scaled_over_bound, error / bound);
            }
            if (plain && r >= meaningful_norm) {
              seen.worst_over_target =
                  std::max(seen.worst_over_target, (error - bounds::oracle_output_bound(r, scale)) /
                                                       bounds::documented_target(storage, r, y));
              seen.worst_pair_error = std::max(seen.worst_pair_error, pair_error(y, e, xa, xb));
              // ULPs only where the output does not cancel (numeric/ulp.h; see its banner).
              if (std::fabs(e) >= r / 2)
                seen.worst_noncancelling_ulps =
                    std::max(seen.worst_noncancelling_ulps, ulp_distance(y, e, storage));
            }
            if (!(error <= bound)) {
              violation.note(c, location(), [&] {
                return failure_message("within_bound_of_reference", where(),
                                       std::string(name) + " y[" + std::to_string(i) + "]", y, e,
                                       error, bound, scale.factor * r);
              });
            }
          }
        }
      }
    }
  }
  keep_judged(c, "within_bound_of_reference",
              "bounds::output_bound + bounds::oracle_output_bound + the contract's extra (contract " +
                  contract.name + ")",
              std::move(judged), worst_before, seen, violation);
  violation.raise(seen);
}

// --------------------------------------------------------------------------------------------
// norm_preserved: | ‖(ŷ_a, ŷ_b)‖ − A·‖(x_a, x_b)‖ | ≤ pair_bound for every rotated pair.

void norm_preserved(const fast::kernel_info& kernel, dtype storage, const run_settings& settings,
                    observation& seen) {
  const kernel_case c =
      pick_case(kernel, storage, within(settings, case_limits{.position_limit = int32_position_limit}));
  const fast::rope_angles angles = prepare_angles(kernel, c);
  tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  apply_or_fail(kernel, make_call(c, fast::direction::forward, c.positions, &q, nullptr), angles);
  const bounds::attention_scale scale = c.scale();
  first_violation violation;
  std::vector<judged_output> judged;  // every pair's norm, for keep_judged
  judged.reserve(static_cast<std::size_t>(c.tokens() * c.q_heads * c.pairs()));
  const double worst_before = seen.worst_over_bound;
  for_each_pair(c, q, [&](const pair_site& p) {
    const double r = std::hypot(p.xa, p.xb);
    const double ya = q.output.get(element_index(q, p.t, p.h, p.a));
    const double yb = q.output.get(element_index(q, p.t, p.h, p.b));
    const double norm = std::hypot(ya, yb);
    const double error = error_of(norm, scale.factor * r);
    const double bound = bounds::pair_bound(storage, r, p.m, p.theta, ya, yb, scale) +
                         bounds::contract_pair_extra(*settings.contract, storage, r, p.m, p.theta,
                                                     p.j, scale.factor);
    judged.push_back({false, p.t, p.h, p.a, p.j, p.b, scale.factor * r, bound, norm});
    auto where = [&] { return describe_location(c, p.t, p.h, p.j) + " ‖pair‖=" + show_number(r); };
    const double units = r > 0 ? error / (bounds::float32_unit_roundoff * scale.factor * r) : -1;
    auto location = [&] { return locate(c, p.t, p.j, units, where()); };
    seen.record(error / bound, p.m, p.j, c.shape.head_dim, location);
    if (c.scaled() && r >= meaningful_norm)
      seen.worst_scaled_over_bound = std::max(seen.worst_scaled_over_bound, error / bound);
    if (!(error <= bound))
      violation.note(c, location(), [&] {
        return failure_message("norm_preserved", where(), "‖(y_a, y_b)‖", norm, scale.factor * r,
                               error, bound, scale.factor * r);
      });
  });
  keep_judged(c, "norm_preserved",
              "bounds::pair_bound + the contract's pair extra (contract " + settings.contract->name + ")",
              std::move(judged), worst_before, seen, violation);
  violation.raise(seen);
}

// --------------------------------------------------------------------------------------------
// relative_offset_invariance: ⟨f(q, m), f(k, n)⟩ and ⟨f(q, m + s), f(k, n + s)⟩, both computed
// from the kernel's outputs, differ by at most the sum of their error bounds (error_bounds.h
// §8): the exact scores are equal, g(q, k, m − n).

struct rotated_tensor {
  tensor_buffers buffers;
  std::vector<std::int64_t> positions;
  // Per (token, head, pair j), index (token·heads + head)·pairs + j: the exact rotated pair's
  // norm A·r and the stored pair's bound (pair_terms). A row's terms enter every score it is
  // in, so they are computed once per row, not once per score (hypot was a quarter of a case).
  std::vector<double> pair_norms;
  std::vector<double> pair_bounds;
};

void measure_pairs(const kernel_case& c, const bounds::attention_scale& scale,
                   const bounds::accuracy_contract& contract, rotated_tensor& t) {
  const auto& b = t.buffers;
  const std::int64_t pairs = c.pairs();
  const std::size_t count = t.positions.size() * static_cast<std::size_t>(b.heads * pairs);
  t.pair_norms.resize(count);
  t.pair_bounds.resize(count);
  for (std::int64_t token = 0; token < std::ssize(t.positions); ++token) {
    const std::int64_t position = t.positions[static_cast<std::size_t>(token)];
    for (int head = 0; head < b.heads; ++head) {
      for (int j = 0; j < pairs; ++j) {
        const auto [ia, ib] = pair_of(c.shape.pair, c.shape.rotary_dim, j);
        const double r = std::hypot(b.input.get(element_index(b, token, head, ia)),
                                    b.input.get(element_index(b, token, head, ib)));
        const double theta = c.theta()[static_cast<std::size_t>(j)];
        const auto i = static_cast<std::size_t>((token * b.heads + head) * pairs + j);
        t.pair_norms[i] = scale.factor * r;
        t.pair_bounds[i] =
            bounds::pair_bound(c.storage, r, position, theta,
                               b.output.get(element_index(b, token, head, ia)),
                               b.output.get(element_index(b, token, head, ib)), scale) +
            bounds::contract_pair_extra(contract, c.storage, r, position, theta, j, scale.factor);
      }
    }
  }
}

rotated_tensor rotate(const fast::kernel_info& kernel, const kernel_case& c,
                      const fast::rope_angles& angles, const value_rows& rows, int heads,
                      std::vector<std::int64_t> positions) {
  rotated_tensor r{packed_buffers(rows, c.storage, heads, c.shape.head_dim,
                                  static_cast<std::int64_t>(positions.size())),
                   std::move(positions), {}, {}};
  apply_or_fail(kernel, make_call(c, fast::direction::forward, r.positions, &r.buffers, nullptr),
                angles);
  return r;
}

struct score_with_bound {
  double score = 0;
  double bound = 0;
};

// The score of Q row (qt, qh) with K row (kt, kh) and its bound; both tensors measured
// (measure_pairs).
score_with_bound score(const kernel_case& c, const rotated_tensor& q, std::int64_t qt, int qh,
                       const rotated_tensor& k, std::int64_t kt, int kh) {
  score_with_bound s;
  double magnitudes = 0;
  for (int i = 0; i < c.shape.head_dim; ++i) {
    const double product = q.buffers.output.get(element_index(q.buffers, qt, qh, i)) *
                           k.buffers.output.get(element_index(k.buffers, kt, kh, i));
    s.score += product;
    magnitudes += std::fabs(product);
  }
  s.bound = bounds::double_sum_error(c.shape.head_dim, magnitudes);
  const std::int64_t pairs = c.pairs();
  const auto q_row = static_cast<std::size_t>((qt * q.buffers.heads + qh) * pairs);
  const auto k_row = static_cast<std::size_t>((kt * k.buffers.heads + kh) * pairs);
  for (std::size_t j = 0; j < static_cast<std::size_t>(pairs); ++j) {
    s.bound += bounds::score_pair_error(q.pair_bounds[q_row + j], q.pair_norms[q_row + j],
                                        k.pair_bounds[k_row + j], k.pair_norms[k_row + j]);
  }
  return s;
}

void relative_offset_invariance(const fast::kernel_info& kernel, dtype storage,
                                const run_settings& settings, observation& seen) {
  case_limits limits = case_limits{.position_limit = int32_position_limit};
  limits.with_k = true;
  limits.max_tokens = 6;  // every (query token, key token) pair is scored
  limits = within(settings, limits);
  const kernel_case c = pick_case(kernel, storage, limits);
  const bool cached = kernel.strategy == fast::angle_strategy::cache;
  // The kernel's own maximum position too (pick_case keeps c's positions to it).
  std::int64_t limit = cached ? c.position_limit - 1 : limits.position_limit;
  if (kernel.domain.max_position > 0) limit = std::min(limit, kernel.domain.max_position);
  // Key positions of their own, then one shift s that keeps every position in range.
  const bool negatives = limits.allow_negative_positions && kernel.domain.negative_positions && !cached;
  const auto key_positions = *gen::positions(c.tokens(), limit + 1, c.approximate_theta(), negatives);
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  std::int64_t highest = std::numeric_limits<std::int64_t>::min();
  for (const auto* list : {&c.positions, &key_positions}) {
    lowest = std::min(lowest, *std::min_element(list->begin(), list->end()));
    highest = std::max(highest, *std::max_element(list->begin(), list->end()));
  }
  // Cache tables and a nonnegative domain start at 0; the others take |m| up to the limit.
  const std::int64_t shift_low = negatives ? -limit - lowest : -lowest;
  const std::int64_t shift = *gen::int_toward_zero(std::min<std::int64_t>(shift_low, 0),
                                                   std::max<std::int64_t>(limit - highest, 0));
  auto shifted = [shift](std::vector<std::int64_t> p) {
    for (auto& m : p) m += shift;
    return p;
  };

  kernel_case for_angles = c;  // the cache must cover the shifted and the key positions too
  for_angles.positions.insert(for_angles.positions.end(), key_positions.begin(), key_positions.end());
  const auto shifted_all = shifted(for_angles.positions);
  for_angles.positions.insert(for_angles.positions.end(), shifted_all.begin(), shifted_all.end());
  const fast::rope_angles angles = prepare_angles(kernel, for_angles);
  const bounds::attention_scale scale = c.scale();

  auto rotate_and_measure = [&](const value_rows& rows, int heads, std::vector<std::int64_t> at) {
    rotated_tensor r = rotate(kernel, c, angles, rows, heads, std::move(at));
    measure_pairs(c, scale, *settings.contract, r);
    return r;
  };
  const auto q = rotate_and_measure(c.q, c.q_heads, c.positions);
  const auto k = rotate_and_measure(c.k, c.k_heads, key_positions);
  const auto q_shifted = rotate_and_measure(c.q, c.q_heads, shifted(c.positions));
  const auto k_shifted = rotate_and_measure(c.k, c.k_heads, shifted(key_positions));

  first_violation violation;
  for (std::int64_t qt = 0; qt < c.tokens(); ++qt) {
    for (std::int64_t kt = 0; kt < c.tokens(); ++kt) {
      for (int qh = 0; qh < c.q_heads; ++qh) {
        const int kh = qh * c.k_heads / c.q_heads;  // grouped-query attention's head mapping
        const auto before = score(c, q, qt, qh, k, kt, kh);
        const auto after = score(c, q_shifted, qt, qh, k_shifted, kt, kh);
        const double difference = error_of(after.score, before.score);
        const double bound = before.bound + after.bound;
        auto where = [&] {
          std::ostringstream os;
          os << describe_location(c, qt, qh, 0) << " n=" << key_positions[static_cast<std::size_t>(kt)]
             << " s=" << shift;
          return os.str();
        };
        const std::int64_t m = c.positions[static_cast<std::size_t>(qt)];
        auto location = [&] { return locate(c, qt, -1, -1, where()); };
        if (bound > 0) {
          seen.record(difference / bound, m, location);
          if (c.scaled())
            seen.worst_scaled_over_bound = std::max(seen.worst_scaled_over_bound, difference / bound);
        }
        if (!(difference <= bound)) {
          violation.note(c, location(), [&] {
            std::ostringstream os;
            os << "relative_offset_invariance violated at " << where() << " heads " << qh << "/"
               << kh << ": ⟨f(q,m), f(k,n)⟩ = " << show_number(before.score)
               << ", ⟨f(q,m+s), f(k,n+s)⟩ = " << show_number(after.score) << ", difference "
               << show_number(difference) << " > derived bound " << show_number(bound);
            return os.str();
          });
        }
      }
    }
  }
  violation.raise(seen);
}

// --------------------------------------------------------------------------------------------
// inverse_round_trip: inverse(forward(x)) within round_trip_bound of x — of A²·x when cos and
// sin carry an attention factor (the inverse is the backward pass, A·R(−m)).

void inverse_round_trip(const fast::kernel_info& kernel, dtype storage,
                        const run_settings& settings, observation& seen) {
  const kernel_case c =
      pick_case(kernel, storage, within(settings, case_limits{.position_limit = int32_position_limit}));
  const bounds::accuracy_contract& contract = *settings.contract;
  const fast::rope_angles angles = prepare_angles(kernel, c);
  tensor_buffers forward = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  apply_or_fail(kernel, make_call(c, fast::direction::forward, c.positions, &forward, nullptr),
                angles);
  tensor_buffers back;
  back.heads = forward.heads;
  back.token_stride = forward.token_stride;
  back.head_stride = forward.head_stride;
  back.input = forward.output.clone();
  back.output = element_buffer(storage, forward.output.count());
  back.output.fill_bytes(std::byte{0xA5});
  apply_or_fail(kernel, make_call(c, fast::direction::inverse, c.positions, &back, nullptr), angles);

  const bounds::attention_scale scale = c.scale();
  const double gain = scale.factor * scale.factor;
  first_violation violation;
  for_each_pair(c, forward, [&](const pair_site& p) {
    const double r = std::hypot(p.xa, p.xb);
    const double ya = forward.output.get(element_index(forward, p.t, p.h, p.a));
    const double yb = forward.output.get(element_index(forward, p.t, p.h, p.b));
    const double forward_bound =
        bounds::pair_bound(storage, r, p.m, p.theta, ya, yb, scale) +
        bounds::contract_pair_extra(contract, storage, r, p.m, p.theta, p.j, scale.factor);
    for (auto [i, original] : {std::pair{p.a, p.xa}, std::pair{p.b, p.xb}}) {
      const double restored = back.output.get(element_index(back, p.t, p.h, i));
      const double expected = gain * original;
      const double error = error_of(restored, expected);
      const double r_out = std::hypot(ya, yb);
      const double bound = bounds::round_trip_bound(
          forward_bound,
          bounds::output_bound(storage, r_out, p.m, p.theta, restored, scale) +
              bounds::contract_output_extra(contract, storage, r_out, p.m, p.theta, p.j, scale.factor),
          scale);
      auto where = [&] { return describe_location(c, p.t, p.h, p.j); };
      const double units = gain * r > 0 ? error / (bounds::float32_unit_roundoff * gain * r) : -1;
      auto location = [&] { return locate(c, p.t, p.j, units, where()); };
      seen.record(error / bound, p.m, p.j, c.shape.head_dim, location);
      if (c.scaled() && r >= meaningful_norm)
        seen.worst_scaled_over_bound = std::max(seen.worst_scaled_over_bound, error / bound);
      if (!(error <= bound)) {
        violation.note(c, location(), [&] {
          return failure_message("inverse_round_trip", where(), "x̂[" + std::to_string(i) + "]",
                                 restored, expected, error, bound, gain * r);
        });
      }
    }
  });
  violation.raise(seen);
}

// --------------------------------------------------------------------------------------------
// strategies_agree: this kernel and every registered kernel of the other angle strategy (same
// dtype and pairing) agree within the sum of their output bounds.

void strategies_agree(const fast::kernel_info& kernel, dtype storage, const run_settings& settings,
                      observation& seen) {
  std::vector<const fast::kernel_info*> others;
  for (const fast::kernel_info& k : fast::kernel_registry()) {
    if (k.strategy != kernel.strategy && k.name != kernel.name && k.supports(storage))
      others.push_back(&k);
  }
  // check_kernel reports "no comparator" before getting here.
  if (others.empty()) RC_DISCARD("no registered kernel of the other angle strategy");
  const fast::kernel_info& other = *others[static_cast<std::size_t>(
      *gen::uniform_int(0, static_cast<std::int64_t>(others.size()) - 1))];
  const fast::kernel_info& cached = kernel.strategy == fast::angle_strategy::cache ? kernel : other;
  const kernel_case c =
      pick_case(cached, storage, within(settings, case_limits{.position_limit = accuracy_position_limit}));
  if (!other.supports(c.shape.pair) || !kernel.supports(c.shape.pair))
    RC_DISCARD(std::string(other.name) + " or " + std::string(kernel.name) + " lacks pairing " +
               std::string(to_string(c.shape.pair)));

  auto run = [&](const fast::kernel_info& k) {
    const fast::rope_angles angles = prepare_angles(k, c);
    tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
    apply_or_fail(k, make_call(c, fast::direction::forward, c.positions, &q, nullptr), angles);
    return q;
  };
  const tensor_buffers mine = run(kernel);
  const tensor_buffers theirs = run(other);
  const bounds::attention_scale scale = c.scale();
  first_violation violation;
  for_each_pair(c, mine, [&](const pair_site& p) {
    const double r = std::hypot(p.xa, p.xb);
    for (int k : {p.a, p.b}) {
      const double a = mine.output.get(element_index(mine, p.t, p.h, k));
      const double b = theirs.output.get(element_index(theirs, p.t, p.h, k));
      const double difference = error_of(a, b);
      if (difference != 0) seen.all_bit_identical = false;
      // The gated kernel is held to the contract; the registered comparator to `exact`.
      const double bound = bounds::agreement_bound(
          bounds::output_bound(storage, r, p.m, p.theta, a, scale) +
              bounds::contract_output_extra(*settings.contract, storage, r, p.m, p.theta, p.j,
                                            scale.factor),
          bounds::output_bound(storage, r, p.m, p.theta, b, scale));
      auto where = [&] { return describe_location(c, p.t, p.h, p.j) + " vs " + std::string(other.name); };
      const double units = r > 0 ? difference / (bounds::float32_unit_roundoff * scale.factor * r) : -1;
      auto location = [&] { return locate(c, p.t, p.j, units, where()); };
      seen.record(difference / bound, p.m, location);
      if (!(difference <= bound)) {
        violation.note(c, location(), [&] {
          return failure_message("strategies_agree", where(),
                                 std::string(kernel.name) + " y[" + std::to_string(k) + "]", a, b,
                                 difference, bound, scale.factor * r);
        });
      }
    }
  });
  violation.raise(seen);
}

// --------------------------------------------------------------------------------------------
// rounded_once_within_half_ulp: for a kernel that declares one rounding per output
// (kernel_info::rounds_once), every rotated Q and K output within ½·ulp(y_exact) + 2^-40·A·r of
// exact (error_bounds.h §18), y_exact the rotation by the exact angle m·θ_j for the θ_j and A
// the kernel received (doubles) — taken from the 266-bit reference with those values as its
// explicit frequencies (exact to 2^-200 relative, §11). Every int32 position: the bound does
// not grow with m. The contract does not widen it (it is the kernel's own claim). fp8 stores
// saturate: fp8 inputs reach the format's max, and the stored value is held to the bound
// around clamp(y_exact, ±max) (§18: the one rounding of the saturated value).

void rounded_once_within_half_ulp(const fast::kernel_info& kernel, dtype storage,
                                  const run_settings& settings, observation& seen) {
  using reference::mp_real;
  case_limits limits = case_limits{.position_limit = int32_position_limit};
  limits.with_k = true;
  limits.allow_saturation = true;
  const kernel_case c = pick_case(kernel, storage, within(settings, limits));
  const fast::rope_angles angles = prepare_angles(kernel, c);
  tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  tensor_buffers k = packed_buffers(c.k, storage, c.k_heads, c.shape.head_dim, c.tokens());
  apply_or_fail(kernel, make_call(c, fast::direction::forward, c.positions, &q, &k), angles);

  // The reference rotating by exactly what the kernel got: θ_j and A as doubles.
  reference::rotary_params<mp_real> params{c.shape.head_dim, c.shape.rotary_dim, mp_real(10000),
                                           c.shape.pair, {}, mp_real(angles.frequencies().attention_factor)};
  for (const double theta : angles.frequencies().inverse_frequencies)
    params.explicit_inverse_frequencies.emplace_back(theta);
  // x with every pair (1, 0): the reference returns (A·cos, A·sin) of each pair's angle.
  std::vector<mp_real> unit(static_cast<std::size_t>(c.shape.head_dim), mp_real(0));
  for (int j = 0; j < c.pairs(); ++j) unit[static_cast<std::size_t>(pair_of(c.shape.pair, c.shape.rotary_dim, j).a)] = 1;
  const bounds::attention_scale scale = bounds::attention_scale_for(angles.frequencies().attention_factor);
  const double reference_relative = std::ldexp(1.0, bounds::reference_tolerance_exponent);
  first_violation violation;
  for (std::int64_t t = 0; t < c.tokens(); ++t) {
    const std::int64_t m = c.positions[static_cast<std::size_t>(t)];
    const std::vector<mp_real> cos_sin = reference::rope_elementwise<mp_real>(unit, m, params);
    for (const auto& [tensor, name] : {std::pair{&q, "Q"}, std::pair{&k, "K"}}) {
      for (int h = 0; h < tensor->heads; ++h) {
        for (int j = 0; j < c.pairs(); ++j) {
          const auto [ia, ib] = pair_of(c.shape.pair, c.shape.rotary_dim, j);
          const mp_real& ac = cos_sin[static_cast<std::size_t>(ia)];
          const mp_real& as = cos_sin[static_cast<std::size_t>(ib)];
          const double xa = tensor->input.get(element_index(*tensor, t, h, ia));
          const double xb = tensor->input.get(element_index(*tensor, t, h, ib));
          const double r = std::hypot(xa, xb);
          const double oracle = reference_relative * scale.factor * r;
          for (const auto& [i, unsaturated] : {std::pair{ia, mp_real(xa) * ac - mp_real(xb) * as},
                                               std::pair{ib, mp_real(xb) * ac + mp_real(xa) * as}}) {
            const double y = tensor->output.get(element_index(*tensor, t, h, i));
            // fp8: clamp(y_exact, ±max), exact (max is a double); the identity otherwise.
            mp_real exact = unsaturated;
            if (is_float8(storage)) {
              const mp_real limit(bounds::saturation_limit(storage));
              if (exact > limit) exact = limit;
              if (exact < -limit) exact = -limit;
            }
            const double e = static_cast<double>(exact);
            const double error = std::isfinite(y) ? static_cast<double>(abs(mp_real(y) - exact))
                                                  : std::numeric_limits<double>::infinity();
            const double bound =
                bounds::rounded_once_output_bound(storage, r, std::fabs(e) + oracle, scale) + oracle;
            const double units = r > 0 ? error / (bounds::float32_unit_roundoff * scale.factor * r) : -1;
            auto where = [&] {
              return std::string(name) + " " + describe_location(c, t, h, j) + " ‖pair‖=" +
                     show_number(r) + " error=" + show_number(error / ulp_of(std::fabs(e), storage)) +
                     " ulp";
            };
            auto location = [&] { return locate(c, t, j, units, where()); };
            seen.record(error / bound, m, j, c.shape.head_dim, location);
            if (c.scaled() && r >= meaningful_norm)
              seen.worst_scaled_over_bound = std::max(seen.worst_scaled_over_bound, error / bound);
            if (!(error <= bound)) {
              violation.note(c, location(), [&] {
                return failure_message("rounded_once_within_half_ulp", where(),
                                       std::string(name) + " y[" + std::to_string(i) + "]", y, e,
                                       error, bound, scale.factor * r);
              });
            }
          }
        }
      }
    }
  }
  violation.raise(seen);
}

// --------------------------------------------------------------------------------------------
// output_scale_within_bound: with a per-call output scale σ (fast/rope_call.h; generated: powers
// of two and general float32 values), every fp8 output of Q and K is within
// scaled_output_bound (+ the oracle's error / σ) of sat(y_exact / σ) — inputs up to the
// format's max, so outputs saturate for small σ and reach the subnormals for large σ — and
// pass-through dims are round(fl(x / σ)) exactly. Other storage dtypes: σ ≠ 1 is refused
// (status unsupported) and nothing is written (docs/error-bounds.md §19).

void output_scale_within_bound(const fast::kernel_info& kernel, dtype storage,
                               const run_settings& settings, observation& seen) {
  const float sigma = *gen::output_scale();
  case_limits limits = case_limits{.position_limit = accuracy_position_limit};
  limits.with_k = true;
  limits.allow_saturation = true;
  const kernel_case c = pick_case(kernel, storage, within(settings, limits));
  const fast::rope_angles angles = prepare_angles(kernel, c);
  tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  tensor_buffers k = packed_buffers(c.k, storage, c.k_heads, c.shape.head_dim, c.tokens());
  fast::rope_call call = make_call(c, fast::direction::forward, c.positions, &q, &k);
  call.output_scale = sigma;
  if (!is_float8(storage)) {
    if (sigma == 1.0f) return;
    const element_buffer before = q.output.clone();
    const fast::status s = kernel.apply(call, angles);
    if (s.code != fast::status_code::unsupported)
      RC_FAIL("output_scale_within_bound violated: kernel " + std::string(kernel.name) +
              " given output_scale " + show_number(sigma) + " with " + std::string(to_string(storage)) +
              " storage returned status " + std::to_string(static_cast<int>(s.code)) +
              " (expected unsupported: the scale applies to fp8 only) " + s.message);
    if (!q.output.same_bytes(before))
      RC_FAIL("output_scale_within_bound violated: kernel " + std::string(kernel.name) +
              " refused output_scale with " + std::string(to_string(storage)) + " but wrote its output");
    return;
  }
  apply_or_fail(kernel, call, angles);

  const reference::double_tier tier = oracle_tier(c);
  const bounds::attention_scale scale = c.scale();
  std::vector<double> exact(static_cast<std::size_t>(c.shape.head_dim));
  first_violation violation;
  for (const auto& [tensor, name] : {std::pair{&q, "Q"}, std::pair{&k, "K"}}) {
    for (std::int64_t t = 0; t < c.tokens(); ++t) {
      const std::int64_t m = c.positions[static_cast<std::size_t>(t)];
      for (int h = 0; h < tensor->heads; ++h) {
        const auto x = row_of(tensor->input, *tensor, t, h, c.shape.head_dim);
        for (int i = c.shape.rotary_dim; i < c.shape.head_dim; ++i) {
          const double y = tensor->output.get(element_index(*tensor, t, h, i));
          const double want = round_to_storage(storage, static_cast<float>(x[static_cast<std::size_t>(i)]) / sigma);
          if (!(y == want))
            RC_FAIL("output_scale_within_bound violated at " + std::string(name) + " " +
                    describe_location(c, t, h, 0) + ": pass-through y[" + std::to_string(i) + "] = " +
                    show_number(y) + ", expected round(x / " + show_number(sigma) + ") = " + show_number(want));
        }
        tier.rotate(x, m, exact);
        for (int j = 0; j < c.pairs(); ++j) {
          const auto [ia, ib] = pair_of(c.shape.pair, c.shape.rotary_dim, j);
          const double r = std::hypot(x[static_cast<std::size_t>(ia)], x[static_cast<std::size_t>(ib)]);
          const double theta = c.theta()[static_cast<std::size_t>(j)];
          for (int i : {ia, ib}) {
            const double y = tensor->output.get(element_index(*tensor, t, h, i));
            const double e = bounds::saturated_exact(storage, exact[static_cast<std::size_t>(i)] / sigma);
            const double error = error_of(y, e);
            const double bound =
                bounds::scaled_output_bound(storage, r, m, theta, y, sigma, scale) +
                (bounds::oracle_output_bound(r, scale) +
                 bounds::contract_output_extra(*settings.contract, storage, r, m, theta, j, scale.factor)) /
                    sigma;
            const double units = r > 0 ? error * sigma / (bounds::float32_unit_roundoff * scale.factor * r) : -1;
            auto where = [&] {
              return std::string(name) + " " + describe_location(c, t, h, j) + " output_scale=" +
                     show_number(sigma) + " ‖pair‖=" + show_number(r);
            };
            auto location = [&] { return locate(c, t, j, units, where()); };
            seen.record(error / bound, m, j, c.shape.head_dim, location);
            if (!(error <= bound)) {
              violation.note(c, location(), [&] {
                return failure_message("output_scale_within_bound", where(),
                                       std::string(name) + " y[" + std::to_string(i) + "]", y, e,
                                       error, bound, scale.factor * r / sigma);
              });
            }
          }
        }
      }
    }
  }
  violation.raise(seen);
}

bool rounds_once(const fast::kernel_info& kernel) { return kernel.rounds_once; }
bool takes_output_scale(const fast::kernel_info& kernel) { return kernel.takes_output_scale; }

constexpr kernel_property_definition accuracy_list[] = {
    {"within_bound_of_reference",
     "every rotated Q and K output (one call, GQA head counts, any rope_scaling and attention "
     "factor A) within the derived bound of the double-tier oracle (|m| <= 2^24)",
     120, deep_cases_per_property, true, within_bound_of_reference},
    {"norm_preserved",
     "each pair's norm times A preserved within the derived pair bound",
     120, deep_cases_per_property, true, norm_preserved},
    {"relative_offset_invariance",
     "<f(q,m), f(k,n)> = <f(q,m+s), f(k,n+s)> within the derived score bound",
     60, deep_cases_per_property, true, relative_offset_invariance},
    {"inverse_round_trip",
     "inverse(forward(x)) = A^2 x within the derived round-trip bound",
     120, deep_cases_per_property, true, inverse_round_trip, nullptr, {}, kernel_need::inverse},
    {"strategies_agree",
     "cache and on-the-fly kernels agree within the sum of their output bounds",
     80, deep_cases_per_property, true, strategies_agree},
    {"rounded_once_within_half_ulp",
     "kernels that declare one rounding per output: every Q and K output within "
     "1/2 ulp(y_exact) + 2^-40*A*||pair|| of exact, every int32 position (docs/error-bounds.md §18)",
     120, deep_cases_per_property, true, rounded_once_within_half_ulp, rounds_once,
     "the kernel does not declare one rounding per output (kernel_info::rounds_once)"},
    {"output_scale_within_bound",
     "fp8 with a per-call output scale s (powers of two and general values): every Q and K output "
     "within the derived bound of sat(y_exact/s), pass-through dims round(x/s); other dtypes "
     "refuse s != 1 (docs/error-bounds.md §19)",
     120, deep_cases_per_property, true, output_scale_within_bound, takes_output_scale,
     "the kernel takes no output scale (a C ABI v1 library, a Python kernel)"},
};

}  // namespace

std::span<const kernel_property_definition> accuracy_properties() { return accuracy_list; }

}  // namespace ropecheck::properties
