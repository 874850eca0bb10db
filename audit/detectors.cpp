// The bug detectors of detector_catalog.h, and diagnosis_context::explain. Each recomputes the
// sampled outputs with the double tier as the suspected bug would have, and states a finding
// only when that explains the output.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "audit/detector_catalog.h"
#include "bounds/error_bounds.h"
#include "reference/double_tier.h"
#include "spec/pair_index.h"
#include "spec/stream_layout.h"

namespace ropecheck::audit {

explanation diagnosis_context::explain(const alternative_rotation& alternative, double stored_scale,
                                       pairing pairs) const {
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
      const auto [a, b] = pair_of(pairs, rotary, j);
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
        if (err <= stored_rule.allowed(norm, mj, theta[j], v.y[c]) + widened) ++within;
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
  // The shift that explains the most outputs (the smallest |k| on a tie): under a recipe's
  // widened tolerance a neighbouring shift may explain some outputs too.
  int best_k = 0;
  explanation best;
  for (const int k : {1, -1, 2, -2, 3, -3, 4, -4}) {
    const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) {
      auto m = c.positions_of(v);
      for (auto& p : m) p += k;  // every stream shifted: a position_ids offset
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

// stream_layout: with position streams, the output is the rotation under another stream layout
// (the bugs that shipped, mutants/mutant_registry.cpp): the two non-temporal streams exchanged
// (M-RoPE height and width sections swapped; vision rows and columns read as (col, row)), the
// contiguous layout where interleaved was meant or the reverse (a kernel that hard-coded one), or
// a text token's position put in stream 0 only (the others at 0).
std::optional<reports::finding> detect_stream_layout(const diagnosis_context& c) {
  const stream_layout& configured = c.in.spec.streams;
  if (!configured.multi()) return std::nullopt;
  const int streams = configured.streams();
  struct alternative {
    std::string what;                 // the message's description of the bug
    rope_spec spec;                   // the layout it rotates by
    std::function<std::vector<std::int64_t>(std::vector<std::int64_t>)> positions;  // the streams it reads
  };
  const auto same = [](std::vector<std::int64_t> p) { return p; };
  std::vector<alternative> alternatives;
  alternatives.push_back(
      {configured.vision() ? "rows and columns exchanged: (row, col) read as (col, row)"
                           : "the height and width sections exchanged (each reads the other's positions)",
       c.in.spec, [](std::vector<std::int64_t> p) {
         std::swap(p[p.size() - 2], p[p.size() - 1]);
         return p;
       }});
  if (!configured.vision()) {
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

// frequency_mismatch / config_mismatch: the output is the rotation by another θ_j — the
// inverse-frequency formula's exponent off (2j/(d−2), j/d: a base of base^(d/(d−2)) or √base),
// the config's rope_theta not read (a common default base instead), or its rope_scaling
// dropped or with llama3's two frequency factors exchanged. Each alternative is a spec the
// reference rotates by; the first that explains the output is named, with both values.
std::optional<reports::finding> detect_frequency_mismatch(const diagnosis_context& c) {
  struct alternative {
    const char* code;
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
    alternatives.push_back({"frequency_mismatch",
                            fmt::format("θ_j = base^(−2j/(d−2)): the inverse-frequency exponent's endpoint off by one "
                                        "(as a base of {:.6g})", std::pow(s.base, d / (d - 2))),
                            with_base(std::pow(s.base, d / (d - 2)))});
  alternatives.push_back({"frequency_mismatch",
                          fmt::format("θ_j = base^(−j/d): arange(0, d/2)/d where arange(0, d, 2)/d was meant (as a "
                                      "base of {:.6g})", std::sqrt(s.base)),
                          with_base(std::sqrt(s.base))});
  for (const double base : {10000.0, 500000.0, 1000000.0, 100000.0, 50000.0})
    if (base != s.base)
      alternatives.push_back({"config_mismatch",
                              fmt::format("Y matches rope_theta = {:.6g}; the spec says {:.6g} (the config's base not "
                                          "read, a default used)", base, s.base),
                              with_base(base)});
  if (type_of(s.scaling) != scaling_type::none) {
    rope_spec unscaled = s;
    unscaled.scaling = no_scaling{};
    alternatives.push_back({"config_mismatch",
                            fmt::format("Y matches no rope_scaling; the spec says {} (the scaling computed but not "
                                        "applied)", to_string(type_of(s.scaling))),
                            unscaled});
  }
  if (const auto* l = std::get_if<llama3_scaling>(&s.scaling); l && l->low_freq_factor != l->high_freq_factor) {
    rope_spec swapped = s;
    auto& m = std::get<llama3_scaling>(swapped.scaling);
    std::swap(m.low_freq_factor, m.high_freq_factor);
    alternatives.push_back({"config_mismatch",
                            fmt::format("Y matches rope_scaling low_freq_factor = {:.6g}, high_freq_factor = {:.6g}; "
                                        "the spec says the reverse (the two factors exchanged)",
                                        m.low_freq_factor, m.high_freq_factor),
                            swapped});
  }
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
      return reports::finding{a.code, fmt::format("the output is the rotation by other inverse frequencies: {}", a.what),
                              e.within,
                              fmt::format("recomputed with those frequencies: {:.1f}% of sampled outputs within "
                                          "tolerance", 100 * e.within)};
  }
  return std::nullopt;
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
            err <= c.rule.allowed(norm, m[static_cast<std::size_t>(stream[j])], c.theta[j], v.y[k]);
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
