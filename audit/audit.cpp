#include "audit/audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "numeric/half.h"
#include "numeric/ulp.h"
#include "properties/error_bounds.h"
#include "reference/double_tier.h"
#include "reference/frequencies.h"

namespace ropecheck::audit {
namespace {

constexpr double unit = 0x1p-24;  // the unit errors are reported in (× pair norm)

struct pair_index {
  int a, b;
};
pair_index pair_of(pairing pair, int rotary_dim, int j) {
  return pair == pairing::adjacent ? pair_index{2 * j, 2 * j + 1} : pair_index{j, j + rotary_dim / 2};
}

// Bucket of |position|: 0 for position 0, k + 1 for [2^k, 2^(k+1)).
int position_bucket(std::int64_t m) {
  const std::uint64_t a = m < 0 ? static_cast<std::uint64_t>(-(m + 1)) + 1 : static_cast<std::uint64_t>(m);
  return a == 0 ? 0 : 64 - __builtin_clzll(a);
}

std::string bucket_label(int k) {
  if (k == 0) return "0";
  return fmt::format("[{}, {})", std::uint64_t{1} << (k - 1), std::uint64_t{1} << std::min(k, 63));
}

// Allowed |y − y_exact| for one output: the kernel bound (properties/error_bounds.h) or the
// user's units (of the rotated pair's norm A·‖pair‖), plus the 16-bit store's half spacing,
// plus the oracle's own error. `pair_norm` is the input pair's.
struct tolerance_rule {
  std::optional<double> units;
  dtype judged;
  properties::bounds::attention_scale scale = properties::bounds::attention_scale_for(1);
  double allowed(double pair_norm, std::int64_t position, double theta, double stored) const {
    const double oracle = properties::bounds::oracle_output_bound(pair_norm, scale);
    if (units)
      return *units * unit * scale.factor * pair_norm +
             properties::bounds::store_half_spacing(judged, stored) + oracle;
    return properties::bounds::output_bound(judged, pair_norm, position, theta, stored, scale) +
           oracle;
  }
};

// One head vector of x and y, as doubles.
struct vector_view {
  std::vector<double> x, y;
};

// How well the sampled outputs match an alternative reference: the fraction within tolerance.
struct explanation {
  double within = 0;     // fraction of sampled outputs within tolerance of the alternative
  double max_units = 0;  // worst error against it, units of 2^-24
};

class auditor {
 public:
  explicit auditor(const audit_input& in)
      : in_(in),
        d_(in.spec.head_dim),
        rotary_(in.spec.rotary_dim),
        rows_(static_cast<std::int64_t>(in.positions.size())),
        rule_{in.tolerance_units, in.judged, properties::bounds::attention_scale_for(1)},
        theta_(reference::inverse_frequencies<double>(in.spec.rotary_dim, in.spec.base)) {}

  reports::audit_report run(const std::function<void(std::int64_t, std::int64_t)>& progress) {
    reports::audit_report r;
    r.dtype = std::string(to_string(in_.judged));
    r.tolerance_units = in_.tolerance_units.value_or(properties::bounds::documented_target_coefficient);
    r.spec = in_.spec_file;
    r.x = in_.x_file;
    r.positions = in_.positions_file;
    r.y = in_.y_file;
    const reference::double_tier tier(in_.spec, in_.positions);
    attention_ = tier.attention_factor();
    rule_.scale = properties::bounds::attention_scale_for(attention_);
    const int pairs = rotary_ / 2;
    std::vector<reports::error_bucket> buckets(65);
    for (int k = 0; k < 65; ++k) buckets[k].label = bucket_label(k);
    std::vector<std::vector<double>> heat(pairs, std::vector<double>(65, 0));
    std::vector<double> freq_max(pairs, 0);
    std::vector<std::int64_t> freq_count(pairs, 0);
    std::vector<std::int64_t> bucket_first(65, INT64_MAX), bucket_last(65, INT64_MIN);
    double ulp_sum = 0;
    std::vector<double> ref(d_);
    vector_view v{std::vector<double>(d_), std::vector<double>(d_)};
    const std::int64_t report_every = std::max<std::int64_t>(rows_ / 100, 1);

    for (std::int64_t row = 0; row < rows_; ++row) {
      if (progress && row % report_every == 0) progress(row, rows_);
      const std::int64_t m = in_.positions[row];
      const int k = position_bucket(m);
      bucket_first[k] = std::min(bucket_first[k], m);
      bucket_last[k] = std::max(bucket_last[k], m);
      for (std::int64_t h = 0; h < in_.heads; ++h) {
        load(row, h, v);
        const auto non_finite_x = std::count_if(v.x.begin(), v.x.end(), [](double e) { return !std::isfinite(e); });
        if (non_finite_x > 0) {
          r.non_finite += non_finite_x;  // nothing to judge this vector against
          continue;
        }
        tier.rotate(v.x, m, ref);
        for (int c = rotary_; c < d_; ++c) {
          ++r.passthrough_checked;
          if (!same_value(v.y[c], v.x[c])) ++r.passthrough_modified;
        }
        for (int j = 0; j < pairs; ++j) {
          const auto [a, b] = pair_of(in_.spec.pair, rotary_, j);
          const double norm = std::hypot(v.x[a], v.x[b]);
          for (const int c : {a, b}) {
            ++r.outputs;
            const double stored = v.y[c];
            if (!std::isfinite(stored)) {
              ++r.non_finite;
              ++r.outputs_beyond_tolerance;
              continue;
            }
            const double err = std::fabs(stored - ref[c]);
            const double rel = norm > 0 ? err / norm : (err > 0 ? INFINITY : 0);
            const double units = rel / unit;
            if (err > rule_.allowed(norm, m, theta_[j], stored)) ++r.outputs_beyond_tolerance;
            r.max_abs_error = std::max(r.max_abs_error, err);
            if (units > r.max_rel_pair_error_units || r.outputs == 1) {
              r.max_rel_pair_error_units = std::max(r.max_rel_pair_error_units, units);
              r.worst = {row / std::max<std::int64_t>(in_.tokens_per_sequence, 1),
                         row % std::max<std::int64_t>(in_.tokens_per_sequence, 1), h, c, m, stored, ref[c]};
            }
            buckets[k].outputs++;
            buckets[k].max_units = std::max(buckets[k].max_units, units);
            heat[j][k] = std::max(heat[j][k], units);
            freq_max[j] = std::max(freq_max[j], units);
            ++freq_count[j];
            // ULPs only where the output does not cancel: |y_exact| ≥ norm / 16.
            if (std::fabs(ref[c]) >= norm / 16 && norm > 0) {
              const double u = ulp_distance(stored, ref[c], in_.judged);
              if (!is_ulp_sentinel(u)) {
                r.ulp_max = std::max(r.ulp_max, u);
                ulp_sum += u;
                ++r.ulp_outputs;
              }
            }
          }
        }
      }
    }
    if (progress) progress(rows_, rows_);
    r.max_rel_pair_error = r.max_rel_pair_error_units * unit;
    r.max_rel_pair_error_dtype_units =
        r.max_rel_pair_error / std::ldexp(1.0, -precision_bits(in_.judged));
    r.ulp_mean = r.ulp_outputs > 0 ? ulp_sum / static_cast<double>(r.ulp_outputs) : 0;
    std::vector<int> used;
    for (int k = 0; k < 65; ++k) {
      if (buckets[k].outputs == 0) continue;
      buckets[k].first = bucket_first[k];
      buckets[k].last = bucket_last[k];
      r.by_position.push_back(buckets[k]);
      used.push_back(k);
    }
    for (int j = 0; j < pairs; ++j) {
      r.by_frequency.push_back({std::to_string(j), j, j, freq_count[j], freq_max[j]});
      std::vector<double> row;
      for (int k : used) row.push_back(heat[j][k]);
      r.by_frequency_and_position.push_back(std::move(row));
    }
    r.passed = r.outputs_beyond_tolerance == 0 && r.passthrough_modified == 0 && r.non_finite == 0;
    diagnose(r);
    return r;
  }

 private:
  void load(std::int64_t row, std::int64_t head, vector_view& v) const {
    const std::int64_t first = (row * in_.heads + head) * d_;
    to_float64(in_.x, first, v.x, in_.x_file);
    to_float64(in_.y, first, v.y, in_.y_file);
  }

  static bool same_value(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
  }

  // Up to 256 rows spread evenly: enough to test an explanation, cheap to recompute.
  std::vector<std::int64_t> sample_rows() const {
    std::vector<std::int64_t> rows;
    const std::int64_t count = std::min<std::int64_t>(rows_, 256);
    for (std::int64_t i = 0; i < count; ++i) rows.push_back(i * rows_ / count);
    return rows;
  }

  // Compares the sampled outputs with `alternative(x, row, ref)`, a reference recomputed the
  // way a suspected bug would have.
  template <class Alternative>
  explanation explain(const std::vector<std::int64_t>& rows, Alternative alternative) const {
    std::int64_t within = 0, total = 0;
    double worst = 0;
    std::vector<double> ref(d_);
    vector_view v{std::vector<double>(d_), std::vector<double>(d_)};
    for (const std::int64_t row : rows) {
      for (std::int64_t h = 0; h < in_.heads; ++h) {
        load(row, h, v);
        if (std::any_of(v.x.begin(), v.x.end(), [](double e) { return !std::isfinite(e); })) continue;
        alternative(v.x, row, ref);
        for (int j = 0; j < rotary_ / 2; ++j) {
          const auto [a, b] = pair_of(in_.spec.pair, rotary_, j);
          const double norm = std::hypot(v.x[a], v.x[b]);
          for (const int c : {a, b}) {
            const double err = std::fabs(v.y[c] - ref[c]);
            ++total;
            if (err <= rule_.allowed(norm, in_.positions[row], theta_[j], v.y[c])) ++within;
            if (norm > 0) worst = std::max(worst, err / norm / unit);
          }
        }
      }
    }
    return {total > 0 ? static_cast<double>(within) / static_cast<double>(total) : 0, worst};
  }

  static bool explains(const explanation& e) { return e.within >= 0.99; }

  void diagnose(reports::audit_report& r) const {
    if (r.non_finite > 0)
      r.diagnosis.push_back({"non_finite", fmt::format("{} non-finite values (NaN or infinity) in the "
                                                       "input or output", r.non_finite)});
    if (r.passthrough_modified > 0)
      r.diagnosis.push_back({"passthrough_modified",
                             fmt::format("{} of {} pass-through dims (past rotary_dim {}) differ from "
                                         "the input; they must be copied bit for bit",
                                         r.passthrough_modified, r.passthrough_checked, rotary_)});
    if (r.outputs_beyond_tolerance == 0) return;
    const std::size_t before = r.diagnosis.size();
    const auto rows = sample_rows();
    std::vector<std::int64_t> sampled_positions;
    for (auto row : rows) sampled_positions.push_back(in_.positions[row]);

    // wrong_pairing: the output is what the other pairing gives.
    rope_spec other = in_.spec;
    other.pair = other.pair == pairing::adjacent ? pairing::half_split : pairing::adjacent;
    const reference::double_tier other_tier(other, sampled_positions);
    const auto paired = explain(rows, [&](const std::vector<double>& x, std::int64_t row, std::vector<double>& ref) {
      other_tier.rotate(x, in_.positions[row], ref);
    });
    if (explains(paired))
      r.diagnosis.push_back({"wrong_pairing", fmt::format(
          "the output matches the {} pairing within tolerance ({:.1f}% of sampled outputs), not the "
          "configured {}: pairs were formed the other way (check the checkpoint conversion)",
          to_string(other.pair), 100 * paired.within, to_string(in_.spec.pair))});

    // position_offset: the output is the reference at positions shifted by a constant, or at 0.
    std::vector<std::int64_t> shifted;
    for (auto m : sampled_positions)
      for (int c = -4; c <= 4; ++c) shifted.push_back(m + c);
    shifted.push_back(0);
    const reference::double_tier shifted_tier(in_.spec, shifted);
    for (int c = -4; c <= 4; ++c) {
      if (c == 0) continue;
      const auto e = explain(rows, [&](const std::vector<double>& x, std::int64_t row, std::vector<double>& ref) {
        shifted_tier.rotate(x, in_.positions[row] + c, ref);
      });
      if (explains(e)) {
        r.diagnosis.push_back({"position_offset", fmt::format(
            "the output matches the reference at positions shifted by {:+d} ({:.1f}% of sampled "
            "outputs): an off-by-{} position (KV-cache or position_ids offset)", c, 100 * e.within, std::abs(c))});
        break;
      }
    }
    const bool any_rotated = std::any_of(sampled_positions.begin(), sampled_positions.end(),
                                         [](std::int64_t m) { return m != 0; });
    if (any_rotated) {
      const auto e = explain(rows, [&](const std::vector<double>& x, std::int64_t, std::vector<double>& ref) {
        shifted_tier.rotate(x, 0, ref);
      });
      if (explains(e))
        r.diagnosis.push_back({"position_offset", fmt::format(
            "the output matches the reference at position 0 for every token ({:.1f}% of sampled "
            "outputs): positions were ignored (every token rotated as if first in the sequence)",
            100 * e.within)});
    }

    // magnitude_scale: the output is the reference times one factor (an attention factor).
    const reference::double_tier sample_tier(in_.spec, sampled_positions);
    double yr = 0, rr = 0;
    {
      std::vector<double> ref(d_);
      vector_view v{std::vector<double>(d_), std::vector<double>(d_)};
      for (auto row : rows)
        for (std::int64_t h = 0; h < in_.heads; ++h) {
          load(row, h, v);
          if (std::any_of(v.y.begin(), v.y.end(), [](double e) { return !std::isfinite(e); }) ||
              std::any_of(v.x.begin(), v.x.end(), [](double e) { return !std::isfinite(e); }))
            continue;
          sample_tier.rotate(v.x, in_.positions[row], ref);
          for (int c = 0; c < rotary_; ++c) {
            yr += v.y[c] * ref[c];
            rr += ref[c] * ref[c];
          }
        }
    }
    const double alpha = rr > 0 ? yr / rr : 1;
    if (std::isfinite(alpha) && std::fabs(alpha - 1) > 0x1p-10) {
      const auto e = explain(rows, [&](const std::vector<double>& x, std::int64_t row, std::vector<double>& ref) {
        sample_tier.rotate(x, in_.positions[row], ref);
        for (int c = 0; c < rotary_; ++c) ref[c] *= alpha;
      });
      if (explains(e))
        r.diagnosis.push_back({"magnitude_scale", fmt::format(
            "the output matches the reference scaled by {:.6g} ({:.1f}% of sampled outputs): a "
            "factor on cos/sin (YaRN/attention factor) was applied where it should not be, applied "
            "twice, or dropped", alpha, 100 * e.within)});
    }

    // low_precision_trig_cache: cos/sin rounded to a 16-bit type before the rotation.
    for (const dtype trig : {dtype::bfloat16, dtype::float16}) {
      const auto e = explain(rows, [&](const std::vector<double>& x, std::int64_t row, std::vector<double>& ref) {
        const std::int64_t m = in_.positions[row];
        ref = x;
        for (int j = 0; j < rotary_ / 2; ++j) {
          const double c = round_to(trig, sample_tier.cos_at(m, j));
          const double s = round_to(trig, sample_tier.sin_at(m, j));
          const auto [a, b] = pair_of(in_.spec.pair, rotary_, j);
          ref[a] = x[a] * c - x[b] * s;
          ref[b] = x[b] * c + x[a] * s;
        }
      });
      if (explains(e)) {
        r.diagnosis.push_back({"low_precision_trig_cache", fmt::format(
            "the output matches a rotation whose cos/sin were rounded to {} ({:.1f}% of sampled "
            "outputs): the cos/sin cache is stored in a 16-bit type", to_string(trig), 100 * e.within)});
        break;
      }
    }

    // angle_precision: error grows in proportion to position (log-log slope near 1).
    std::vector<std::pair<double, double>> profile;  // (log2 first position, log2 max units)
    for (const auto& b : r.by_position)
      if (b.first >= 8 && b.max_units > 0)
        profile.emplace_back(std::log2(static_cast<double>(b.first)), std::log2(b.max_units));
    if (profile.size() >= 3) {
      double mx = 0, my = 0;
      for (auto [px, py] : profile) { mx += px; my += py; }
      mx /= profile.size();
      my /= profile.size();
      double sxy = 0, sxx = 0;
      for (auto [px, py] : profile) { sxy += (px - mx) * (py - my); sxx += (px - mx) * (px - mx); }
      const double slope = sxx > 0 ? sxy / sxx : 0;
      const auto& low = r.by_position[r.by_position.size() - profile.size()];
      const auto& high = r.by_position.back();
      if (slope > 0.7 && slope < 1.3 && high.max_units > r.tolerance_units)
        r.diagnosis.push_back({"angle_precision", fmt::format(
            "the error grows in proportion to position (log-log slope {:.2f}): {} × 2^-24 at "
            "positions {}, {} × 2^-24 at {}: angles or frequencies are computed in low precision "
            "(e.g. float32 m·θ before cos/sin)", slope, units_text(low.max_units), low.label,
            units_text(high.max_units), high.label)});
    }
    if (r.diagnosis.size() == before)
      r.diagnosis.push_back({"unexplained", fmt::format(
          "{} outputs exceed the tolerance and no known bug pattern (pairing, position offset, "
          "scale factor, 16-bit cos/sin, low-precision angles) explains them", r.outputs_beyond_tolerance)});
  }

  static double round_to(dtype t, double v) {
    return t == dtype::bfloat16 ? bfloat16_bits_to_float(double_to_bfloat16_bits(v))
                                : float16_bits_to_float(double_to_float16_bits(v));
  }
  static std::string units_text(double u) { return u < 1000 ? fmt::format("{:.3g}", u) : fmt::format("{:.2e}", u); }

  const audit_input& in_;
  int d_, rotary_;
  std::int64_t rows_;
  tolerance_rule rule_;
  std::vector<double> theta_;
  double attention_ = 1;  // the spec's attention factor A (1 unless scaled)
};

}  // namespace

reports::audit_report run_audit(const audit_input& input,
                                const std::function<void(std::int64_t, std::int64_t)>& progress) {
  return auditor(input).run(progress);
}

}  // namespace ropecheck::audit
