// The bug detectors of detector_catalog.h, and diagnosis_context::explain. Each recomputes the
// sampled outputs with the double tier as the suspected bug would have, and states a finding
// only when that explains the output.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "audit/detector_catalog.h"
#include "reference/double_tier.h"
#include "spec/pair_index.h"

namespace ropecheck::audit {

explanation diagnosis_context::explain(
    const std::function<void(const sampled_vector&, std::span<double>)>& alternative) const {
  std::int64_t within = 0, total = 0;
  double worst = 0;
  const int rotary = in.spec.rotary_dim;
  std::vector<double> ref(in.spec.head_dim);
  for (const sampled_vector& v : sampled.vectors) {
    alternative(v, ref);
    for (int j = 0; j < rotary / 2; ++j) {
      const auto [a, b] = pair_of(in.spec.pair, rotary, j);
      const double norm = std::hypot(v.x[a], v.x[b]);
      for (const int c : {a, b}) {
        const double err = std::fabs(v.y[c] - ref[c]);
        ++total;
        if (err <= rule.allowed(norm, v.position, theta[j], v.y[c])) ++within;
        if (norm > 0) worst = std::max(worst, err / norm / unit);
      }
    }
  }
  return {total > 0 ? static_cast<double>(within) / static_cast<double>(total) : 0, worst};
}

namespace {

std::vector<std::int64_t> sampled_positions(const diagnosis_context& c) {
  std::vector<std::int64_t> p;
  for (const auto& v : c.sampled.vectors) p.push_back(v.position);
  return p;
}

}  // namespace

// wrong_pairing: the output is what the other pairing gives.
std::optional<reports::finding> detect_wrong_pairing(const diagnosis_context& c) {
  rope_spec other = c.in.spec;
  other.pair = other.pair == pairing::adjacent ? pairing::half_split : pairing::adjacent;
  const reference::double_tier tier(other, sampled_positions(c));
  const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) { tier.rotate(v.x, v.position, ref); });
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
  std::vector<std::int64_t> shifted;
  for (auto m : sampled_positions(c))
    for (int k = -4; k <= 4; ++k) shifted.push_back(m + k);
  const reference::double_tier tier(c.in.spec, shifted);
  for (int k = -4; k <= 4; ++k) {
    if (k == 0) continue;
    const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) { tier.rotate(v.x, v.position + k, ref); });
    if (diagnosis_context::explains(e))
      return reports::finding{
          "position_offset",
          fmt::format("the output is the reference at positions shifted by {:+d}: an off-by-{} position (KV-cache "
                      "or position_ids offset)", k, std::abs(k)),
          e.within,
          fmt::format("recomputed at m {:+d}: {:.1f}% of sampled outputs within tolerance", k, 100 * e.within)};
  }
  return std::nullopt;
}

// position_offset, the extreme case: every token rotated as if at position 0.
std::optional<reports::finding> detect_positions_ignored(const diagnosis_context& c) {
  const auto p = sampled_positions(c);
  if (std::none_of(p.begin(), p.end(), [](std::int64_t m) { return m != 0; })) return std::nullopt;
  const std::vector<std::int64_t> zero = {0};
  const reference::double_tier tier(c.in.spec, zero);
  const auto e = c.explain([&](const sampled_vector& v, std::span<double> ref) { tier.rotate(v.x, 0, ref); });
  if (!diagnosis_context::explains(e)) return std::nullopt;
  return reports::finding{
      "position_offset",
      "the output is the reference at position 0 for every token: positions were ignored (every token rotated "
      "as if first in the sequence)",
      e.within, fmt::format("recomputed at m = 0: {:.1f}% of sampled outputs within tolerance", 100 * e.within)};
}

// magnitude_scale: the output is the reference times one factor (an attention factor).
std::optional<reports::finding> detect_magnitude_scale(const diagnosis_context& c) {
  const int rotary = c.in.spec.rotary_dim;
  double yr = 0, rr = 0;
  for (const sampled_vector& v : c.sampled.vectors) {
    if (std::any_of(v.y.begin(), v.y.end(), [](double e) { return !std::isfinite(e); })) continue;
    for (int i = 0; i < rotary; ++i) {
      yr += v.y[i] * v.ref[i];
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

}  // namespace ropecheck::audit
