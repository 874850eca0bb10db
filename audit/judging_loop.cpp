// The judging loop (judging_loop.h): rows of X and Y converted to double once, each head vector
// rotated by the double tier and judged by judge_pairs, the profiles folded per row.
#include "audit/judging_loop.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "audit/judge_pairs.h"
#include "audit/judgeable.h"
#include "audit/profiles.h"
#include "audit/tolerance.h"
#include "numeric/storage_element.h"

namespace ropecheck::audit {
namespace {

bool same_value(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

class judging_loop {
 public:
  judging_loop(const audit_input& in, const reference::double_tier& tier)
      : in_(in),
        tier_(tier),
        d_(in.spec.head_dim),
        rotary_(in.spec.rotary_dim),
        rows_(static_cast<std::int64_t>(in.positions.size())),
        rule_{in.tolerance_units, in.judged, bounds::attention_scale_for(tier.attention_factor()),
              in.output_scale},
        attention_(tier.attention_factor()),
        theta_(tier.inverse_frequencies().begin(), tier.inverse_frequencies().end()),
        profile_(rotary_ / 2),
        streams_(tier.streams()),
        stream_m_(static_cast<std::size_t>(tier.streams())),
        stream_row_(static_cast<std::size_t>(in.spec.rotary_dim)) {}

  void run(reports::audit_report& r, sample_collector& sampled,
           const std::function<void(std::int64_t, std::int64_t)>& progress) {
    const int pairs = rotary_ / 2;
    const std::int64_t report_every = std::max<std::int64_t>(rows_ / 100, 1);
    const auto judge = vector_judge();
    const std::int64_t row_elements = in_.heads * d_;
    std::vector<double> x_row(static_cast<std::size_t>(row_elements)), y_row(x_row.size()), ref(d_);
    row_state rs;
    rs.coefficient.resize(pairs);
    rs.max_rel.resize(pairs);
    double widest = 0;  // the largest per-norm coefficient the verdict used (tolerance_units)

    // X and Y are read once, front to back: hand back the pages of every ~4 MiB behind us, so
    // a memory-mapped multi-GiB dump is not all resident at the end (tensor::release_pages).
    const std::int64_t release_rows = std::max<std::int64_t>(
        1, (std::int64_t{4} << 20) / (row_elements * static_cast<std::int64_t>(size_of(in_.x.type))));
    std::int64_t released = 0;
    for (std::int64_t row = 0; row < rows_; ++row) {
      if (progress && row % report_every == 0) progress(row, rows_);
      if (row - released == release_rows) {
        in_.x.release_pages(released * row_elements, (row - released) * row_elements);
        in_.y.release_pages(released * row_elements, (row - released) * row_elements);
        released = row;
      }
      const std::int64_t m = in_.positions[row];
      rs.row = row;
      rs.position = m;
      if (streams_ == 1) {
        rs.cos_sin = tier_.cos_sin(m);
      } else {  // M-RoPE, 2-D vision: each pair's (cos, sin) at its own stream's position
        for (int s = 0; s < streams_; ++s)
          stream_m_[static_cast<std::size_t>(s)] = in_.stream_positions[static_cast<std::size_t>(s * rows_ + row)];
        tier_.stream_cos_sin(std::span<const std::int64_t>(stream_m_.data(), static_cast<std::size_t>(streams_)),
                             stream_row_);
        rs.cos_sin = stream_row_;
      }
      for (int j = 0; j < pairs; ++j) {
        const std::int64_t mj = streams_ == 1 ? m : stream_m_[static_cast<std::size_t>(tier_.pair_stream(j))];
        rs.coefficient[j] = rule_.coefficient(mj, theta_[j]);
        widest = std::max(widest, rs.coefficient[j]);
      }
      std::fill(rs.max_rel.begin(), rs.max_rel.end(), 0.0);
      rs.vectors = 0;
      const bool sampled_row = sampled.wants_row(row);
      const std::int64_t first = row * row_elements;
      to_float64(in_.x, first, x_row, in_.x_file);
      to_float64(in_.y, first, y_row, in_.y_file);
      for (std::int64_t h = 0; h < in_.heads; ++h) {
        const std::span<const double> x(x_row.data() + h * d_, static_cast<std::size_t>(d_));
        const std::span<const double> y(y_row.data() + h * d_, static_cast<std::size_t>(d_));
        const auto non_finite_x = std::count_if(x.begin(), x.end(), [](double e) { return !std::isfinite(e); });
        if (non_finite_x > 0) {
          r.non_finite += non_finite_x;  // nothing to judge this vector against
          continue;
        }
        tier_.rotate(x, rs.cos_sin, ref);
        for (int c = rotary_; c < d_; ++c) {
          ++r.passthrough_checked;
          // With an output scale the stored pass-through is round(fl(x / σ)) (fast/rotation.h).
          const double expected = in_.output_scale == 1.0f
                                      ? x[c]
                                      : round_to_storage(in_.judged, static_cast<float>(x[c]) / in_.output_scale);
          if (!same_value(y[c], expected)) ++r.passthrough_modified;
        }
        const vector_outcome outcome = (this->*judge)(rs, h, x, y, ref, r);
        if (sampled_row && sampled.wants_head(h)) [[unlikely]]
          sampled.take(row, m, h, outcome.beyond > 0, x, y, ref);
        if (outcome.beyond > 0) [[unlikely]]
          sampled.offer_failing(row, m, h, x, y, ref);
        if (outcome.new_worst) [[unlikely]]
          sampled.offer_worst(row, m, h, outcome.beyond > 0, x, y, ref);
      }
      if (sampled_row) sampled.row_done(row, m);
      profile_.fold_row(m, rs.max_rel, rs.vectors);
    }
    if (progress) progress(rows_, rows_);
    sampled.finish();
    r.max_rel_pair_error = r.max_rel_pair_error_units * unit;
    r.max_rel_pair_error_dtype_units = r.max_rel_pair_error / std::ldexp(1.0, -precision_bits(in_.judged));
    // What the verdict used: the user's units, or the widest derived coefficient of any row
    // (it grows with m·θ_j), with the oracle's share; 16-bit outputs add half a spacing.
    // Both are per unit of the rotated pair's norm A·‖pair‖, so × A per input pair norm.
    r.tolerance_units =
        ((in_.tolerance_units ? *in_.tolerance_units * unit : widest) + tolerance_rule::oracle_coefficient) *
        attention_ / unit;
    r.tolerance.derived = !in_.tolerance_units.has_value();
    r.tolerance.absolute = rule_.floor();
    r.tolerance.oracle_units = tolerance_rule::oracle_coefficient / unit;
    r.tolerance.store_half_spacing = in_.judged != dtype::float32;
    profile_.write(r);
    check_tolerance_could_fail(in_, vacuous_);
    // A pass judged at least one output, each against a finite tolerance that could fail.
    r.passed = r.outputs > 0 && std::isfinite(r.tolerance_units) && r.outputs_beyond_tolerance == 0 &&
               r.passthrough_modified == 0 && r.non_finite == 0;
  }

 private:
  // What one position row shares across its heads.
  struct row_state {
    std::int64_t row = 0, position = 0;
    std::span<const double> cos_sin;   // the double tier's row for this position
    std::vector<double> coefficient;   // tolerance_rule::coefficient per frequency
    std::vector<double> max_rel;       // per frequency: max |y − y_exact| / ‖pair‖ over the row
    std::int64_t vectors = 0;          // head vectors judged (x finite) in the row
  };
  // What judging one head vector found: its outputs beyond tolerance, and whether it now holds
  // the worst output (the diagnosis sample keeps such vectors).
  struct vector_outcome {
    std::int64_t beyond = 0;
    bool new_worst = false;
  };
  using judge_function = vector_outcome (judging_loop::*)(row_state&, std::int64_t, std::span<const double>,
                                                          std::span<const double>, std::span<const double>,
                                                          reports::audit_report&);

  // The rotated outputs of one head vector against the tier's `ref` (judge_pairs), then the
  // rare "worst output" update, a second, ordered pass over the vector.
  template <pairing pair, bool x_is_float64, bool judged_float32>
  vector_outcome judge_vector(row_state& rs, std::int64_t h, std::span<const double> x, std::span<const double> y,
                              std::span<const double> ref, reports::audit_report& r) {
    const double sigma = in_.output_scale;
    const bool scaled = sigma != 1;
    const pair_constants k{rotary_ / 2, in_.judged, rule_.floor(), attention_, r.max_rel_pair_error_units * unit,
                           bounds::saturation_limit(in_.judged), sigma,
                           scaled && !bounds::is_power_of_two(sigma) ? bounds::float32_unit_roundoff : 0.0,
                           scaled ? 0x1p-150 : 0.0, scaled ? tolerance_rule::reference_division : 0.0};
    const pair_counts n = judge_pairs<pair, x_is_float64, judged_float32>(
        k, x.data(), y.data(), ref.data(), rs.coefficient.data(), rs.max_rel.data(), profile_.abs_max.data(),
        profile_.ulp_sum.data(), profile_.ulp_max.data(), profile_.freq_count.data());
    const bool first_of_audit = r.outputs == 0;
    r.outputs += 2 * k.pairs;
    ++rs.vectors;
    r.non_finite += n.missing;
    profile_.unmeasured(rs.position, n.missing);
    r.outputs_beyond_tolerance += n.beyond;
    vacuous_ += n.vacuous;
    r.ulp_outputs += n.ulp_outputs;
    vector_outcome outcome{n.beyond, false};
    if (n.above_worst || first_of_audit) [[unlikely]] {
      const double before = r.max_rel_pair_error_units;
      update_worst<pair, x_is_float64>(rs, h, x, y, ref, first_of_audit, r);
      outcome.new_worst = first_of_audit || r.max_rel_pair_error_units > before;
    }
    return outcome;
  }

  // Output by output, as the report defines "worst": the first output of the audit, then
  // each one strictly above the worst so far.
  template <pairing pair, bool x_is_float64>
  void update_worst(const row_state& rs, std::int64_t h, std::span<const double> x, std::span<const double> y,
                    std::span<const double> ref, bool first_of_audit, reports::audit_report& r) const {
    const int pairs = rotary_ / 2;
    const std::int64_t per_sequence = std::max<std::int64_t>(in_.tokens_per_sequence, 1);
    for (int j = 0; j < pairs; ++j) {
      const auto [a, b] = pair_of(pair, rotary_, j);
      const double norm = pair_norm<x_is_float64>(x[a], x[b]);
      for (const int c : {a, b}) {
        if (!std::isfinite(y[c])) continue;
        const double exact = bounds::saturated_exact(in_.judged, ref[c] / in_.output_scale);  // as judge_pairs
        const double err = std::fabs(y[c] - exact);
        const double scaled_err = err * in_.output_scale;  // in the unscaled output's units
        const double units = (norm > 0 ? scaled_err / norm : (err > 0 ? INFINITY : 0.0)) / unit;
        if (units > r.max_rel_pair_error_units || (first_of_audit && j == 0 && c == a)) {
          r.max_rel_pair_error_units = std::max(r.max_rel_pair_error_units, units);
          r.worst = {rs.row / per_sequence, rs.row % per_sequence, h, c, rs.position, y[c], exact,
                     err, rule_.allowed(rs.coefficient[j], attention_ * norm, y[c])};
        }
      }
    }
  }

  judge_function vector_judge() const {
    const bool x64 = in_.x.type == dtype::float64, f32 = in_.judged == dtype::float32;
    const bool adjacent = in_.spec.pair == pairing::adjacent;
    constexpr auto half = pairing::half_split, adj = pairing::adjacent;
    if (adjacent)
      return x64 ? (f32 ? &judging_loop::judge_vector<adj, true, true> : &judging_loop::judge_vector<adj, true, false>)
                 : (f32 ? &judging_loop::judge_vector<adj, false, true> : &judging_loop::judge_vector<adj, false, false>);
    return x64 ? (f32 ? &judging_loop::judge_vector<half, true, true> : &judging_loop::judge_vector<half, true, false>)
               : (f32 ? &judging_loop::judge_vector<half, false, true> : &judging_loop::judge_vector<half, false, false>);
  }

  const audit_input& in_;
  std::int64_t vacuous_ = 0;  // outputs whose tolerance no stored value could exceed
  const reference::double_tier& tier_;
  int d_, rotary_;
  std::int64_t rows_;
  tolerance_rule rule_;
  double attention_;  // the spec's attention factor A (1 unless scaled)
  std::vector<double> theta_;
  profiles profile_;
  int streams_ = 1;                      // position streams (the spec's stream layout)
  std::vector<std::int64_t> stream_m_;   // this row's position in each stream
  std::vector<double> stream_row_;       // this row's (cos, sin) assembled from its streams
};

}  // namespace

void judge_every_output(const audit_input& in, const reference::double_tier& tier, reports::audit_report& r,
                        sample_collector& sampled, const std::function<void(std::int64_t, std::int64_t)>& progress) {
  judging_loop(in, tier).run(r, sampled, progress);
}

}  // namespace ropecheck::audit
