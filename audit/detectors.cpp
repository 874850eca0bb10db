// The bug detectors of detector_catalog.h, and diagnosis_context::explain. Each recomputes the
// sampled outputs with the double tier as the suspected bug would have, and states a finding
// only when that explains the output.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "audit/config_neighbours.h"
#include "audit/detector_catalog.h"
#include "bounds/error_bounds.h"
#include "reference/double_tier.h"
#include "spec/pair_index.h"
#include "spec/stream_layout.h"

namespace ropecheck::audit {

explanation diagnosis_context::explain(const alternative_rotation& alternative, double stored_scale,
                                       const pair_map& pair_at) const {
  std::int64_t within = 0, total = 0;
  double worst = 0;
  tolerance_rule stored_rule = rule;  // the tolerance of values stored as round(y / stored_scale)
  stored_rule.output_scale = stored_scale;
  const int rotary = in.spec.rotary_dim;
  std::vector<double> ref(in.spec.head_dim);
  const auto stream = pair_streams(in.spec.streams, rotary);  // each pair's stream, for its tolerance
  for (const sampled_vector& v : sampled.vectors) {
    alternative(v, ref);
    const auto m = positions_of(v);
    for (int j = 0; j < rotary / 2; ++j) {
      const auto [a, b] = pair_at(j);
      const double norm = std::hypot(v.x[a], v.x[b]);
      for (const int c : {a, b}) {
        // As judge_pairs: sat(y_exact / σ) (the identity at σ = 1 but for fp8's saturation).
        const double err = std::fabs(v.y[c] - bounds::saturated_exact(in.judged, ref[c] / stored_scale));
        ++total;
        const std::int64_t mj = m[static_cast<std::size_t>(stream[j])];
        const double widened = recipe == nullptr ? 0.0
                                                 : bounds::contract_output_extra(*recipe, in.judged, norm, mj, theta[j], j,
                                                                                 rule.scale.factor) /
                                                       stored_scale;
        if (err <= stored_rule.allowed(norm, mj, theta[j], j, v.y[c]) + widened) ++within;
        if (norm > 0) worst = std::max(worst, err * stored_scale / norm / unit);  // unscaled units
      }
    }
  }
  return {total > 0 ? static_cast<double>(within) / static_cast<double>(total) : 0, worst};
}

std::vector<std::int64_t> diagnosis_context::positions_of(const sampled_vector& v) const {
  if (in.stream_positions.empty()) return {v.position};
  const auto rows = static_cast<std::int64_t>(in.positions.size());
  std::vector<std::int64_t> p;
  for (int s = 0; s < in.spec.streams.streams(); ++s)
    p.push_back(in.stream_positions[static_cast<std::size_t>(s * rows + v.row)]);
  return p;
}

std::vector<std::int64_t> diagnosis_context::sampled_positions(std::span<const int> shifts) const {
  const std::vector<int> none = {0};
  std::vector<std::int64_t> p;
  for (const auto& v : sampled.vectors)
    for (const std::int64_t m : positions_of(v))
      for (const int k : shifts.empty() ? std::span<const int>(none) : shifts) p.push_back(m + k);
  return p;
}

void diagnosis_context::rotate_at(const reference::double_tier& tier, const sampled_vector& v,
                                  std::span<const std::int64_t> positions, std::span<double> out) {
  if (tier.streams() == 1) return tier.rotate(v.x, positions[0], out);
  std::vector<double> row(static_cast<std::size_t>(tier.rotary_dim()));
  tier.stream_cos_sin(positions, row);
  tier.rotate(v.x, row, out);
}

// wrong_pairing: the output is what the other pairing gives.
std::optional<reports::finding> detect_wrong_pairing(const diagnosis_context& c) {
  rope_spec other = c.in.spec;
  other.pair = other.pair == pairing::adjacent ? pairing::half_split : pairing::adjacent;
  const reference::double_tier tier(other, c.sampled_positions());
  const auto e = c.explain(
      [&](const sampled_vector& v, std::span<double> ref) {
        diagnosis_context::rotate_at(tier, v, c.positions_of(v), ref);
      },
      c.in.output_scale, other.pair);
  if (!diagnosis_context::explains(e)) return std::nullopt;
  return reports::finding{
      "wrong_pairing",
      fmt::format("the output matches the {} pairing, not the configured {}: pairs were formed the other way "
                  "(check the checkpoint conversion)", to_string(other.pair), to_string(c.in.spec.pair)),
      e.within,
      fmt::format("recomputed with {} pairing: {:.1f}% of sampled outputs within tolerance (worst {:.3g} units)",
                  to_string(other.pair), 100 * e.within, e.max_units)};
}

// position_offset: the output is the reference at positions shifted by a constant.
std::optional<reports::finding> detect_position_offset(const diagnosis_context& c) {
  const std::vector<int> shifts = {-4, -3, -2, -1, 0, 1, 2, 3, 4};
  const reference::double_tier tier(c.in.spec, c.sampled_positions(shifts));
  // A stream past the first that is 0 in every sampled row is a runtime's constant, not a
  // position (llama.cpp's fourth IMROPE stream e): a position_ids offset leaves it at 0.
  std::vector<bool> held_at_zero(static_cast<std::size_t>(c.in.spec.streams.streams()), true);
  held_at_zero[0] = false;
  for (const auto& v : c.sampled.vectors) {
    const auto m = c.positions_of(v);
    for (std::size_t s = 1; s < m.size(); ++s) held_at_zero[s] = held_at_zero[s] && m[s] == 0;
  }
  // The shift that explains the most outputs (the smallest |k| on a tie): under a recipe's
  // widened tolerance a neighbouring shift may explain some outputs too.
  int best_k = 0;
  explanation best;
  for (const int k : {1, -1, 2, -2, 3, -3, 4, -4}) {
    const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) {
      auto m = c.positions_of(v);
      for (std::size_t s = 0; s < m.size(); ++s)  // every stream shifted: a position_ids offset
        if (!held_at_zero[s]) m[s] += k;
      diagnosis_context::rotate_at(tier, v, m, ref);
    });
    if (e.within > best.within) best = e, best_k = k;
  }
  if (best_k == 0 || !diagnosis_context::explains(best)) return std::nullopt;
  return reports::finding{
      "position_offset",
      fmt::format("the output is the reference at positions shifted by {:+d}: an off-by-{} position (KV-cache "
                  "or position_ids offset)", best_k, std::abs(best_k)),
      best.within,
      fmt::format("recomputed at m {:+d}: {:.1f}% of sampled outputs within tolerance", best_k, 100 * best.within)};
}

// position_offset, the extreme case: every token rotated as if at position 0.
std::optional<reports::finding> detect_positions_ignored(const diagnosis_context& c) {
  const auto p = c.sampled_positions();
  if (std::none_of(p.begin(), p.end(), [](std::int64_t m) { return m != 0; })) return std::nullopt;
  const std::vector<std::int64_t> zero = {0};
  const reference::double_tier tier(c.in.spec, zero);
  const std::vector<std::int64_t> zeros(static_cast<std::size_t>(c.in.spec.streams.streams()), 0);
  const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) {
    diagnosis_context::rotate_at(tier, v, zeros, ref);
  });
  if (!diagnosis_context::explains(e)) return std::nullopt;
  return reports::finding{
      "position_offset",
      "the output is the reference at position 0 for every token: positions were ignored (every token rotated "
      "as if first in the sequence)",
      e.within, fmt::format("recomputed at m = 0: {:.1f}% of sampled outputs within tolerance", 100 * e.within)};
}

// magnitude_scale: the output is the reference times one factor (an attention factor). With an
// fp8 output scale σ the factor is measured on y·σ; a factor that is σ applied the wrong way
// (σ² when multiplied, σ when ignored) is detect_output_scale's finding, not this one.
std::optional<reports::finding> detect_magnitude_scale(const diagnosis_context& c) {
  const int rotary = c.in.spec.rotary_dim;
  const double sigma = c.in.output_scale;
  if (sigma != 1 && detect_output_scale(c)) return std::nullopt;
  double yr = 0, rr = 0;
  for (const sampled_vector& v : c.sampled.vectors) {
    if (std::any_of(v.y.begin(), v.y.end(), [](double e) { return !std::isfinite(e); })) continue;
    for (int i = 0; i < rotary; ++i) {
      yr += v.y[i] * sigma * v.ref[i];
      rr += v.ref[i] * v.ref[i];
    }
  }
  const double alpha = rr > 0 ? yr / rr : 1;
  if (!std::isfinite(alpha) || std::fabs(alpha - 1) <= 0x1p-10) return std::nullopt;
  const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) {
    std::copy(v.ref.begin(), v.ref.end(), ref.begin());
    for (int i = 0; i < rotary; ++i) ref[i] *= alpha;
  });
  if (!diagnosis_context::explains(e)) return std::nullopt;
  return reports::finding{
      "magnitude_scale",
      fmt::format("the output is the reference scaled by {:.6g}: a factor on cos/sin (YaRN/attention factor) was "
                  "applied where it should not be, applied twice, or dropped", alpha),
      e.within,
      fmt::format("least-squares factor {:.6g}; the reference × it: {:.1f}% of sampled outputs within tolerance",
                  alpha, 100 * e.within)};
}

// output_scale_misapplied: with an fp8 output scale σ (--output-scale), the output is the
// reference stored with σ applied the wrong way — multiplied, round(y·σ), the dequantisation
// direction where the store divides (vLLM's scaled_vec_conversion: a / scale), or not at all,
// round(y), a RoPE kernel writing the fp8 cache without the scale the attention backend applies
// (the mutants fp8_scale_multiplied and fp8_scale_ignored, mutants/mutant_registry.cpp).
std::optional<reports::finding> detect_output_scale(const diagnosis_context& c) {
  const double sigma = c.in.output_scale;
  if (sigma == 1) return std::nullopt;
  struct misapplied {
    const char* what;
    const char* stored;
    double stored_scale;  // what the output was divided by
  };
  const misapplied bugs[] = {
      {"multiplied by the output scale instead of divided (the dequantisation direction: k_scale where the store "
       "divides by it)", "round(y · σ)", 1 / sigma},
      {"stored without the output scale (the per-call scale ignored)", "round(y)", 1.0},
  };
  for (const misapplied& bug : bugs) {
    const auto e = c.explain(
        [](const sampled_vector& v, std::span<double> ref) { std::copy(v.ref.begin(), v.ref.end(), ref.begin()); },
        bug.stored_scale);
    if (!diagnosis_context::explains(e)) continue;
    return reports::finding{
        "output_scale_misapplied",
        fmt::format("the output is the reference {}: stored as {} where --output-scale {} means round(y / σ)",
                    bug.what, bug.stored, sigma),
        e.within,
        fmt::format("the reference stored as {} with σ = {}: {:.1f}% of sampled outputs within tolerance (worst {:.3g} "
                    "units)", bug.stored, sigma, 100 * e.within, e.max_units)};
  }
  return std::nullopt;
}

namespace {

// One other stream layout a kernel may have rotated by: what it is, the spec whose layout it
// rotates by, and the positions it reads (per stream, from the configured streams' positions).
struct layout_alternative {
  std::string what;  // the message's description of the bug
  rope_spec spec;
  std::function<std::vector<std::int64_t>(std::vector<std::int64_t>)> positions;
};

// Interleaved M-RoPE's two runtimes (rope_spec.h mrope_interleaved_4): under a three-stream spec
// (transformers, vLLM), ggml's IMROPE as llama.cpp runs it, its fourth stream e = 0; under a
// four-stream spec, e read as the temporal position or as 0 where the positions give another.
std::vector<layout_alternative> fourth_stream_alternatives(const rope_spec& spec) {
  std::vector<layout_alternative> rows;
  if (spec.streams.rule == stream_rule::mrope_interleaved) {
    rope_spec ggml = spec;
    ggml.streams.rule = stream_rule::mrope_interleaved_4;
    rows.push_back({"ggml's four-stream IMROPE as llama.cpp runs it: the pairs past the three interleaved "
                    "sections turned by a fourth stream e = 0, not by the temporal position",
                    ggml, [](std::vector<std::int64_t> p) {
                      p.push_back(0);
                      return p;
                    }});
  }
  if (spec.streams.rule == stream_rule::mrope_interleaved_4) {
    rows.push_back({"the fourth stream e read as the temporal position (transformers' and vLLM's interleaved "
                    "M-RoPE) where the positions give e",
                    spec, [](std::vector<std::int64_t> p) {
                      p[3] = p[0];
                      return p;
                    }});
    rows.push_back({"the fourth stream e read as 0 (llama.cpp's value) where the positions give e", spec,
                    [](std::vector<std::int64_t> p) {
                      p[3] = 0;
                      return p;
                    }});
  }
  return rows;
}

}  // namespace

// stream_layout: with position streams, the output is the rotation under another stream layout
// (the bugs that shipped, mutants/mutant_registry.cpp): the two non-temporal streams exchanged
// (M-RoPE height and width sections swapped; vision rows and columns read as (col, row)), the
// contiguous layout where interleaved was meant or the reverse (a kernel that hard-coded one),
// a text token's position put in stream 0 only (the others at 0), or interleaved M-RoPE's
// fourth stream read the other runtime's way (ggml's IMROPE: llama.cpp sets e = 0 where
// transformers and vLLM rotate those pairs by the temporal position).
std::optional<reports::finding> detect_stream_layout(const diagnosis_context& c) {
  const stream_layout& configured = c.in.spec.streams;
  if (!configured.multi()) return std::nullopt;
  const int streams = configured.streams();
  using alternative = layout_alternative;
  const auto same = [](std::vector<std::int64_t> p) { return p; };
  std::vector<alternative> alternatives;
  alternatives.push_back(
      {configured.vision() ? "rows and columns exchanged: (row, col) read as (col, row)"
                           : "the height and width sections exchanged (each reads the other's positions)",
       c.in.spec, [first = configured.vision() ? 0 : 1](std::vector<std::int64_t> p) {
         std::swap(p[first], p[first + 1]);  // (row, col), or M-RoPE's (h, w)
         return p;
       }});
  if (!configured.vision()) {
    // M-RoPE's (t, h, w) streams read in another order (a positions tensor built or indexed in
    // another order): every other permutation but the height/width exchange above.
    std::array<int, 3> order = {0, 1, 2};
    const char* const name = "thw";
    while (std::next_permutation(order.begin(), order.end())) {
      if (order == std::array<int, 3>{0, 2, 1}) continue;
      alternatives.push_back({fmt::format("the position streams read in the order ({}, {}, {}) instead of (t, h, w)",
                                          name[order[0]], name[order[1]], name[order[2]]),
                              c.in.spec, [order](std::vector<std::int64_t> p) {
                                const std::vector<std::int64_t> given = p;
                                for (std::size_t k = 0; k < 3; ++k) p[k] = given[static_cast<std::size_t>(order[k])];
                                return p;
                              }});
    }
  }
  if (configured.rule == stream_rule::mrope_sections || configured.rule == stream_rule::mrope_interleaved) {
    // The other M-RoPE rule with the same pairs per stream.
    const auto map = pair_streams(configured, c.in.spec.rotary_dim);
    std::vector<int> counts(3, 0);
    for (const auto s : map) ++counts[static_cast<std::size_t>(s)];
    rope_spec other = c.in.spec;
    other.streams = {configured.rule == stream_rule::mrope_sections ? stream_rule::mrope_interleaved
                                                                     : stream_rule::mrope_sections,
                     counts};
    if (stream_layout_problem(other.streams, other.rotary_dim).empty())
      alternatives.push_back({fmt::format("the {} layout where {} was configured (a kernel hard-coding one "
                                          "layout)", to_string(other.streams.rule), to_string(configured.rule)),
                              other, same});
  }
  for (const auto& row : fourth_stream_alternatives(c.in.spec)) alternatives.push_back(row);
  alternatives.push_back({"a text token's position put in stream 0 only, the other streams left at 0", c.in.spec,
                          [](std::vector<std::int64_t> p) {
                            if (std::all_of(p.begin(), p.end(), [&](std::int64_t m) { return m == p.front(); }))
                              std::fill(p.begin() + 1, p.end(), 0);
                            return p;
                          }});
  const auto configured_map = pair_streams(configured, c.in.spec.rotary_dim);
  for (const alternative& a : alternatives) {
    // An alternative that turns every sampled pair by the same position as the configured
    // layout (e.g. only text rows sampled) explains nothing the reference does not.
    const auto map = pair_streams(a.spec.streams, a.spec.rotary_dim);
    const bool differs = std::any_of(c.sampled.vectors.begin(), c.sampled.vectors.end(), [&](const sampled_vector& v) {
      const auto p = c.positions_of(v), q = a.positions(p);
      for (std::size_t j = 0; j < map.size(); ++j)
        if (p[static_cast<std::size_t>(configured_map[j])] != q[static_cast<std::size_t>(map[j])]) return true;
      return false;
    });
    if (!differs) continue;
    std::vector<std::int64_t> positions = {0};
    for (const auto& v : c.sampled.vectors)
      for (const std::int64_t m : a.positions(c.positions_of(v))) positions.push_back(m);
    const reference::double_tier tier(a.spec, positions);
    const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) {
      diagnosis_context::rotate_at(tier, v, a.positions(c.positions_of(v)), ref);
    });
    if (!diagnosis_context::explains(e)) continue;
    // Rows whose streams are all equal (text) turn the same under every layout: a bug shows
    // only on rows whose streams differ, so the finding says how many of those were sampled.
    std::size_t differing = 0;
    for (const auto& v : c.sampled.vectors) {
      const auto p = c.positions_of(v);
      differing += !std::all_of(p.begin(), p.end(), [&](std::int64_t m) { return m == p.front(); });
    }
    return reports::finding{
        "stream_layout",
        fmt::format("the output follows another position-stream layout than the configured {}: {}",
                    to_string(configured.rule), a.what),
        e.within,
        fmt::format("recomputed that way over {} streams: {:.1f}% of sampled outputs within tolerance ({} of {} "
                    "sampled vectors on rows whose streams differ)",
                    streams, 100 * e.within, differing, c.sampled.vectors.size())};
  }
  return std::nullopt;
}

}  // namespace ropecheck::audit

namespace ropecheck::audit {
namespace {

// The (cos, sin) of every pair of v at its positions, interleaved (rotary_dim doubles), from a
// tier over the sampled positions.
std::vector<double> cos_sin_of(const diagnosis_context& c, const reference::double_tier& tier, const sampled_vector& v) {
  const auto m = c.positions_of(v);
  if (tier.streams() == 1) {
    const auto row = tier.cos_sin(m[0]);
    return {row.begin(), row.end()};
  }
  std::vector<double> row(static_cast<std::size_t>(tier.rotary_dim()));
  tier.stream_cos_sin(m, row);
  return row;
}

// Every pair rotated by (c', s') = transform(c, s) instead of (c, s).
template <class Transform>
explanation explain_transformed(const diagnosis_context& c, const reference::double_tier& tier, Transform transform) {
  const int rotary = c.in.spec.rotary_dim;
  return c.explain([&](const sampled_vector& v, std::span<double> ref) {
    const std::vector<double> cs = cos_sin_of(c, tier, v);
    for (int j = 0; j < rotary / 2; ++j) {
      const auto [a, b] = pair_of(c.in.spec.pair, rotary, j);
      const auto [cj, sj] = transform(cs[static_cast<std::size_t>(2 * j)], cs[static_cast<std::size_t>(2 * j + 1)]);
      ref[a] = v.x[a] * cj - v.x[b] * sj;
      ref[b] = v.x[b] * cj + v.x[a] * sj;
    }
  });
}

// An alternative names a bug only where the reference fails: it must reproduce at least half
// of the sampled outputs the reference misses. (A rotation that equals the reference at most
// sampled positions — m mod 2^k below 2^k, sin's sign at m = 0 — explains as much as the
// reference does, and names nothing.)
bool beats_reference(const diagnosis_context& c, const explanation& e) {
  const explanation reference = c.explain([](const sampled_vector& v, std::span<double> ref) {
    std::copy(v.ref.begin(), v.ref.end(), ref.begin());
  });
  return diagnosis_context::explains(e) && e.within > reference.within &&
         e.within - reference.within >= 0.5 * (1 - reference.within);
}

}  // namespace

// inverse_rotation: the output is the rotation by −m·θ_j (sin's sign flipped).
std::optional<reports::finding> detect_inverse_rotation(const diagnosis_context& c) {
  const reference::double_tier tier(c.in.spec, c.sampled_positions());
  const auto e = explain_transformed(c, tier, [](double cj, double sj) { return std::pair{cj, -sj}; });
  if (!beats_reference(c, e)) return std::nullopt;
  return reports::finding{
      "inverse_rotation",
      "the output is the rotation by −m·θ_j: sin's sign is flipped (a rotate_half sign convention inverted, or the "
      "inverse direction applied)",
      e.within, fmt::format("recomputed with sin negated: {:.1f}% of sampled outputs within tolerance", 100 * e.within)};
}

// cos_sin_swapped: every pair turned by (sin, cos) instead of (cos, sin).
std::optional<reports::finding> detect_cos_sin_swapped(const diagnosis_context& c) {
  const reference::double_tier tier(c.in.spec, c.sampled_positions());
  const auto e = explain_transformed(c, tier, [](double cj, double sj) { return std::pair{sj, cj}; });
  if (!beats_reference(c, e)) return std::nullopt;
  return reports::finding{
      "cos_sin_swapped",
      "the output turns each pair by (sin, cos) instead of (cos, sin): the cos/sin cache halves are read in the "
      "wrong order",
      e.within, fmt::format("recomputed with cos and sin exchanged: {:.1f}% of sampled outputs within tolerance",
                            100 * e.within)};
}

// positions_wrapped: the output is the reference at m mod 2^k (a cos/sin cache of 2^k rows
// indexed past its end without a check).
std::optional<reports::finding> detect_positions_wrapped(const diagnosis_context& c) {
  const auto sampled = c.sampled_positions();
  const std::int64_t highest = sampled.empty() ? 0 : *std::max_element(sampled.begin(), sampled.end());
  for (int k = 8; k <= 24 && (std::int64_t{1} << k) <= highest; ++k) {
    const std::int64_t rows = std::int64_t{1} << k;
    std::vector<std::int64_t> wrapped;
    for (std::int64_t m : sampled) wrapped.push_back(m >= 0 ? m % rows : m);
    const reference::double_tier tier(c.in.spec, wrapped);
    const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) {
      auto m = c.positions_of(v);
      for (auto& p : m) p = p >= 0 ? p % rows : p;
      diagnosis_context::rotate_at(tier, v, m, ref);
    });
    if (beats_reference(c, e))
      return reports::finding{
          "positions_wrapped",
          fmt::format("the output is the reference at m mod {}: a cos/sin cache of {} rows read past its end "
                      "without a check (it wraps)", rows, rows),
          e.within, fmt::format("recomputed at m mod {}: {:.1f}% of sampled outputs within tolerance", rows,
                                100 * e.within)};
  }
  return std::nullopt;
}

// frequency_mismatch: the output is the rotation by another θ_j — the inverse-frequency
// formula's exponent off (2j/(d−2), j/d: a base of base^(d/(d−2)) or √base). Each alternative
// is a spec the reference rotates by; the first that explains the output is named. (A config
// field read wrong is config_mismatch's, below.)
std::optional<reports::finding> detect_frequency_mismatch(const diagnosis_context& c) {
  struct alternative {
    std::string what;
    rope_spec spec;
  };
  std::vector<alternative> alternatives;
  const rope_spec& s = c.in.spec;
  const double d = s.rotary_dim;
  const auto with_base = [&](double base) {
    rope_spec other = s;
    other.base = base;
    return other;
  };
  if (d > 2)
    alternatives.push_back({fmt::format("θ_j = base^(−2j/(d−2)): the inverse-frequency exponent's endpoint off by one "
                                        "(as a base of {:.6g})", std::pow(s.base, d / (d - 2))),
                            with_base(std::pow(s.base, d / (d - 2)))});
  alternatives.push_back({fmt::format("θ_j = base^(−j/d): arange(0, d/2)/d where arange(0, d, 2)/d was meant (as a "
                                      "base of {:.6g})", std::sqrt(s.base)),
                          with_base(std::sqrt(s.base))});
  for (const alternative& a : alternatives) {
    std::optional<reference::double_tier> tier;
    try {
      tier.emplace(a.spec, c.sampled_positions());
    } catch (const std::exception&) {
      continue;  // a spec the reference cannot rotate by is no explanation
    }
    const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) {
      diagnosis_context::rotate_at(*tier, v, c.positions_of(v), ref);
    });
    if (beats_reference(c, e))
      return reports::finding{"frequency_mismatch",
                              fmt::format("the output is the rotation by other inverse frequencies: {}", a.what),
                              e.within,
                              fmt::format("recomputed with those frequencies: {:.1f}% of sampled outputs within "
                                          "tolerance", 100 * e.within)};
  }
  return std::nullopt;
}

// config_mismatch: the output is the rotation under a neighbouring spec (config_neighbours.h):
// one config field at another conventional value. Each neighbour is judged with its own θ_j and
// A in the tolerance (and, on top of a suspected recipe, that recipe's error at its θ_j); the
// neighbour that explains the most sampled outputs is named (the first on a tie), with the field
// and both values.
std::optional<reports::finding> detect_config_mismatch(const diagnosis_context& c) {
  const auto& all = c.in.stream_positions.empty() ? c.in.positions : c.in.stream_positions;
  const std::int64_t highest = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  const std::vector<config_neighbour> neighbours =
      config_neighbours(c.in.spec, highest + 1, c.rule.scale.factor, c.in.other_layer_types);
  const std::vector<std::int64_t> positions = c.sampled_positions();
  const config_neighbour* best = nullptr;
  explanation best_e;
  for (const config_neighbour& n : neighbours) {
    std::optional<reference::double_tier> tier;
    try {
      tier.emplace(n.spec, positions);
    } catch (const std::exception&) {
      continue;  // a spec the reference cannot rotate by is no explanation
    }
    diagnosis_context under = c;
    under.theta.assign(tier->inverse_frequencies().begin(), tier->inverse_frequencies().end());
    under.theta.resize(c.theta.size());
    under.rule = tolerance_of(c.in, *tier);  // the neighbour's A, and a contract's terms at its θ_j
    const auto e = under.explain([&](const sampled_vector& v, std::span<double> ref) {
      diagnosis_context::rotate_at(*tier, v, c.positions_of(v), ref);
    });
    if (e.within > best_e.within && beats_reference(c, e)) best = &n, best_e = e;
  }
  if (best == nullptr) return std::nullopt;
  c.matched_config = best->spec;
  const explanation spec = c.explain([](const sampled_vector& v, std::span<double> ref) {
    std::copy(v.ref.begin(), v.ref.end(), ref.begin());
  });
  return reports::finding{
      "config_mismatch",
      fmt::format("Y matches {} = {}; the spec says {} ({})", best->field, best->value, best->spec_value,
                  best->mistake),
      best_e.within,
      fmt::format("recomputed with {} = {}: {:.1f}% of sampled outputs within tolerance (with the spec's {}: {:.1f}%; "
                  "{} neighbouring configs tried)",
                  best->field, best->value, 100 * best_e.within, best->spec_value, 100 * spec.within,
                  neighbours.size())};
}

// wrong_pairing under a partial rotary: the half-split partner of pair j taken at j + head_dim/2
// (rotate_half over the whole head, partial_rotary_factor ignored in the indexing) instead of
// j + rotary_dim/2. Pair j turns (x_j, x_{j+head_dim/2}) by θ_j; the dims rotary_dim/2 …
// rotary_dim − 1 the bug leaves unwritten are not judged.
std::optional<reports::finding> detect_partner_over_head_dim(const diagnosis_context& c) {
  const rope_spec& s = c.in.spec;
  if (s.pair != pairing::half_split || s.rotary_dim == s.head_dim) return std::nullopt;
  const int half_head = s.head_dim / 2, pairs = s.rotary_dim / 2;
  const reference::double_tier tier(s, c.sampled_positions());
  const auto e = c.explain(
      [&](const sampled_vector& v, std::span<double> ref) {
        const std::vector<double> cs = cos_sin_of(c, tier, v);
        for (int j = 0; j < pairs; ++j) {
          const double cj = cs[static_cast<std::size_t>(2 * j)], sj = cs[static_cast<std::size_t>(2 * j + 1)];
          ref[j] = v.x[j] * cj - v.x[j + half_head] * sj;
          ref[j + half_head] = v.x[j + half_head] * cj + v.x[j] * sj;
        }
      },
      c.in.output_scale, [half_head](int j) { return pair_index<int>{j, j + half_head}; });
  if (!diagnosis_context::explains(e)) return std::nullopt;
  return reports::finding{
      "wrong_pairing",
      fmt::format("the output pairs dim j with j + head_dim/2 = j + {}, not j + rotary_dim/2 = j + {}: rotate_half over "
                  "the whole head under a partial rotary (dims {} … {} rotated, {} … {} left unwritten)",
                  half_head, pairs, half_head, half_head + pairs - 1, pairs, s.rotary_dim - 1),
      e.within,
      fmt::format("recomputed with pairs (j, j + {}): {:.1f}% of those outputs within tolerance (worst {:.3g} units)",
                  half_head, 100 * e.within, e.max_units)};
}

// trig_range_reduction: sin/cos evaluated by a fast path that reduces the angle by 2π rounded
// to float32 (__sinf-style intrinsics): past |m·θ_j| > R the kernel turns by m·θ_j − k·δ, k the
// number of turns removed and δ = fl32(2π) − 2π ≈ 1.75e-7. R is searched over powers of two.
std::optional<reports::finding> detect_trig_range_reduction(const diagnosis_context& c) {
  constexpr double two_pi = 6.283185307179586476925286766559;
  const double delta = static_cast<double>(static_cast<float>(two_pi)) - two_pi;
  const int rotary = c.in.spec.rotary_dim;
  const auto streams = pair_streams(c.in.spec.streams, rotary);
  double widest = 0;
  for (const sampled_vector& v : c.sampled.vectors) {
    const auto m = c.positions_of(v);
    for (int j = 0; j < rotary / 2; ++j)
      widest = std::max(widest, std::fabs(static_cast<double>(m[static_cast<std::size_t>(streams[j])]) * c.theta[j]));
  }
  const reference::double_tier tier(c.in.spec, c.sampled_positions());
  std::optional<double> best_range;
  explanation best;
  for (int k = 0; k <= 30 && std::exp2(k) < widest; ++k) {
    const double range = std::exp2(k);
    const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) {
      const std::vector<double> cs = cos_sin_of(c, tier, v);
      const auto m = c.positions_of(v);
      for (int j = 0; j < rotary / 2; ++j) {
        double cj = cs[static_cast<std::size_t>(2 * j)], sj = cs[static_cast<std::size_t>(2 * j + 1)];
        const double phi = static_cast<double>(m[static_cast<std::size_t>(streams[j])]) * c.theta[j];
        if (std::fabs(phi) > range) {  // turned by φ − ε: (cos, sin)(φ − ε) by angle subtraction
          const double eps = std::nearbyint(phi / two_pi) * delta;
          const double ce = std::cos(eps), se = std::sin(eps);
          const double c2 = cj * ce + sj * se, s2 = sj * ce - cj * se;
          cj = c2, sj = s2;
        }
        const auto [a, b] = pair_of(c.in.spec.pair, rotary, j);
        ref[a] = v.x[a] * cj - v.x[b] * sj;
        ref[b] = v.x[b] * cj + v.x[a] * sj;
      }
    });
    if (e.within > best.within) best = e, best_range = range;
  }
  if (!best_range || !beats_reference(c, best)) return std::nullopt;
  return reports::finding{
      "trig_range_reduction",
      fmt::format("the output is cos/sin of the angle reduced by 2π rounded to float32 past |m·θ_j| > {:.6g} rad: a "
                  "fast sin/cos path (__sinf/__cosf-style) without full range reduction at large angles",
                  *best_range),
      best.within,
      fmt::format("recomputed with m·θ_j − round(m·θ_j/2π)·(fl32(2π) − 2π) past {:.6g} rad: {:.1f}% of sampled outputs "
                  "within tolerance (angles to {:.3g} rad sampled)",
                  *best_range, 100 * best.within, widest)};
}

// pair_tail_wrong: the first J pairs are right and the pairs from J on are not — a vector
// kernel whose remainder loop is missing (correct at d = 64/128, wrong at 80 or 96).
std::optional<reports::finding> detect_pair_tail(const diagnosis_context& c) {
  // A scaling that rescales the low frequencies (llama3, YaRN) leaves a wrong tail of pairs when
  // it is dropped or mis-set: frequency_mismatch's finding, not a vector remainder.
  if (type_of(c.in.spec.scaling) != scaling_type::none) return std::nullopt;
  const int rotary = c.in.spec.rotary_dim, pairs = rotary / 2;
  std::vector<std::int64_t> within(static_cast<std::size_t>(pairs)), total(static_cast<std::size_t>(pairs));
  const auto stream = pair_streams(c.in.spec.streams, rotary);
  for (const sampled_vector& v : c.sampled.vectors) {
    const auto m = c.positions_of(v);
    for (int j = 0; j < pairs; ++j) {
      const auto [a, b] = pair_of(c.in.spec.pair, rotary, j);
      const double norm = std::hypot(v.x[a], v.x[b]);
      for (const int k : {a, b}) {
        const double err = std::fabs(v.y[k] - bounds::saturated_exact(c.in.judged, v.ref[k] / c.in.output_scale));
        ++total[static_cast<std::size_t>(j)];
        within[static_cast<std::size_t>(j)] +=
            err <= c.rule.allowed(norm, m[static_cast<std::size_t>(stream[j])], c.theta[j], j, v.y[k]);
      }
    }
  }
  const auto share = [&](int j) {
    return total[static_cast<std::size_t>(j)] == 0
               ? 1.0
               : static_cast<double>(within[static_cast<std::size_t>(j)]) / static_cast<double>(total[static_cast<std::size_t>(j)]);
  };
  // The tail is wrong at every sampled position (a precision loss would spare the small ones).
  int first_wrong = pairs;
  while (first_wrong > 0 && share(first_wrong - 1) < 0.01) --first_wrong;
  // A remainder is shorter than the vector: at most half the pairs.
  if (first_wrong == pairs || 2 * (pairs - first_wrong) > pairs) return std::nullopt;
  for (int j = 0; j < first_wrong; ++j)
    if (share(j) < 0.99) return std::nullopt;
  const double explained = static_cast<double>(pairs - first_wrong) / pairs;
  return reports::finding{
      "pair_tail_wrong",
      fmt::format("pairs 0 … {} are right and pairs {} … {} (the last {} of {}) are not: a vector loop's remainder "
                  "is not processed", first_wrong - 1, first_wrong, pairs - 1, pairs - first_wrong, pairs),
      1.0,
      fmt::format("{:.0f}% of the pairs, all past pair {}, hold every output beyond tolerance; the pairs before it are "
                  "within tolerance", 100 * explained, first_wrong - 1)};
}

}  // namespace ropecheck::audit
