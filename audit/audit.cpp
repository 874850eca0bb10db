// The auditor (audit.h): every output of X, Y against the double tier in one pass of a
// vectorized loop per head vector, profiles folded per row, then the diagnosis on samples.
#include "audit/audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <numeric>

#include "bounds/error_bounds.h"
#include "numeric/half.h"
#include "numeric/storage_element.h"
#include "numeric/ulp.h"
#include "reference/double_tier.h"
#include "spec/pair_index.h"

namespace ropecheck::audit {
namespace {

constexpr double unit = 0x1p-24;  // the unit errors are reported in (× pair norm)

// Bucket of |position|: 0 for position 0, k + 1 for [2^k, 2^(k+1)).
int position_bucket(std::int64_t m) {
  const std::uint64_t a = m < 0 ? static_cast<std::uint64_t>(-(m + 1)) + 1 : static_cast<std::uint64_t>(m);
  return a == 0 ? 0 : 64 - __builtin_clzll(a);
}

std::string bucket_label(int k) {
  if (k == 0) return "0";
  return fmt::format("[{}, {})", std::uint64_t{1} << (k - 1), std::uint64_t{1} << std::min(k, 63));
}

// Allowed |y − y_exact| for one output: the kernel bound (bounds/error_bounds.h) or the
// user's units (of the rotated pair's norm A·‖pair‖), plus the 16-bit store's half spacing,
// plus the oracle's own error. The part proportional to the rotated pair's norm depends on
// (position, frequency, A) only, so it is computed once per row and frequency (coefficient)
// and applied per output.
struct tolerance_rule {
  std::optional<double> units;
  dtype judged;
  bounds::attention_scale scale = bounds::attention_scale_for(1);
  double coefficient(std::int64_t position, double theta) const {
    return units ? *units * unit : bounds::working_output_relative(position, theta, scale);
  }
  double floor() const { return units ? 0.0 : bounds::float32_underflow_per_output; }
  // The oracle's error per unit of the rotated pair's norm A·‖pair‖.
  static double oracle_coefficient() {
    return bounds::oracle_output_bound(1.0, bounds::attention_scale_for(1));
  }
  // `scaled_norm` = A·‖pair‖ of the input pair.
  double allowed(double coefficient, double scaled_norm, double stored) const {
    return (coefficient * scaled_norm + floor()) + bounds::store_half_spacing(judged, stored) +
           oracle_coefficient() * scaled_norm;
  }
  double allowed(double pair_norm, std::int64_t position, double theta, double stored) const {
    return allowed(coefficient(position, theta), scale.factor * pair_norm, stored);
  }
};

// std::max by value: the reference std::max returns would make the vectorizer load through a
// pointer chosen at run time, which it cannot do unconditionally.
inline double larger(double a, double b) { return a < b ? b : a; }

// keep ? v : +0, as a bitwise AND. With a ?: the compiler computes v only when it is kept —
// inside a branch, and the vectorizer may not execute a floating-point operation (which could
// trap) that the program would have skipped.
inline double kept_or_zero(bool keep, double v) {
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(v) & (std::uint64_t{0} - keep));
}

// The 16-bit (or float64) store's half spacing next to an output; a non-finite one (whose
// comparison is discarded) is replaced by 0 so that nothing non-finite reaches ulp_of.
inline double spacing(dtype judged, bool finite, double stored) {
  return bounds::store_half_spacing(judged, finite ? stored : 0.0);
}

// ‖(x_a, x_b)‖. Squares of float32/16 inputs are exact in double and cannot overflow, so one
// rounded sum and a rounded sqrt (≤ 1.5·2^-53 relative, inside error_bounds.h's slack for the
// norm) replace hypot; float64 inputs keep hypot's overflow and underflow protection.
template <bool x_is_float64>
double pair_norm(double a, double b) {
  if constexpr (x_is_float64) {
    return std::hypot(a, b);
  } else {
    return std::sqrt(a * a + b * b);
  }
}

// One head vector of x and y, as doubles.
struct vector_view {
  std::vector<double> x, y;
};

// What judge_pairs needs besides the arrays.
struct pair_constants {
  std::int64_t pairs;
  dtype judged;
  double floor;       // tolerance_rule::floor()
  double attention;   // A
  double worst_rel;   // the worst output so far, as |y − y_exact| / ‖pair‖ (units·2^-24, exact)
};
struct pair_counts {
  std::int64_t beyond = 0, missing = 0, ulp_outputs = 0, above_worst = 0;
};

// One head vector's rotated outputs against the double tier's `ref`: counts what is beyond
// tolerance or not finite, and updates per-frequency running maxima and ULP sums. The loop
// vectorizes: no branch, no call, no reduction but integer sums — every floating-point maximum
// and sum is kept per frequency and folded by the caller — and the arrays do not alias
// (restrict). The norm-relative error is divided out once per pair: division and rounding are
// monotone, so max(e_a, e_b)/‖pair‖ is the larger output's error exactly. Built twice, picked
// at load time: for AVX2 (where the 64-bit masks and counters vectorize) and for baseline
// x86-64. Neither contracts to FMA, so both round every operation the same way.
template <pairing pair, bool x_is_float64, bool judged_float32>
[[gnu::target_clones("avx2", "default")]] pair_counts judge_pairs(const pair_constants& k, const double* __restrict x,
                        const double* __restrict y, const double* __restrict ref,
                        const double* __restrict coefficient, double* __restrict max_rel,
                        double* __restrict abs_max, double* __restrict ulp_sum,
                        double* __restrict ulp_max, std::int64_t* __restrict freq_count) {
  // Known at compile time for float32, so the ULP distance needs no branch on the format.
  const float_format judged_format = judged_float32 ? float32_format : format_of(k.judged);
  const std::int64_t pairs = k.pairs;
  // 64-bit counters and flags, like the doubles: every lane of the vector loop has one width.
  std::int64_t beyond = 0, missing = 0, ulp_outputs = 0, above_worst = 0;
  for (std::int64_t j = 0; j < pairs; ++j) {
    const auto [a, b] = pair_of(pair, 2 * pairs, j);
    const double ya = y[a], yb = y[b], ra = ref[a], rb = ref[b];
    const double norm = pair_norm<x_is_float64>(x[a], x[b]);
    // A scaled rotation (attention factor A) scales the pair, and its error bound, by A.
    const double scaled_norm = k.attention * norm;
    // Non-finite outputs count as beyond tolerance and are not measured (run() counts outputs
    // per judged vector, so they are taken back here); they stand in as error 0, neutral for
    // every maximum.
    const bool finite_a = std::fabs(ya) <= DBL_MAX, finite_b = std::fabs(yb) <= DBL_MAX;
    const std::int64_t lost = std::int64_t{!finite_a} + std::int64_t{!finite_b};
    missing += lost;
    freq_count[j] -= lost;
    const double err_a = kept_or_zero(finite_a, std::fabs(ya - ra));
    const double err_b = kept_or_zero(finite_b, std::fabs(yb - rb));
    // tolerance_rule::allowed, term for term, with the pair's shared part computed once.
    const double shared = coefficient[j] * scaled_norm + k.floor;
    const double oracle = tolerance_rule::oracle_coefficient() * scaled_norm;
    const double allowed_a = (shared + (judged_float32 ? 0.0 : spacing(k.judged, finite_a, ya))) + oracle;
    const double allowed_b = (shared + (judged_float32 ? 0.0 : spacing(k.judged, finite_b, yb))) + oracle;
    // & rather than &&: every comparison is evaluated, so none needs a branch.
    beyond += lost + std::int64_t{finite_a & (err_a > allowed_a)} + std::int64_t{finite_b & (err_b > allowed_b)};
    const double err = larger(err_a, err_b);
    abs_max[j] = larger(abs_max[j], err);
    // err / ‖pair‖; for a zero pair err/0 is infinity if err > 0 and NaN (taken as 0) if not.
    const double rel = larger(0.0, err / norm);
    max_rel[j] = larger(max_rel[j], rel);
    above_worst |= std::int64_t{rel > k.worst_rel};
    // ULPs only where the output does not cancel: |y_exact| >= norm / 16 > 0, so the exact
    // value is not 0 and the distance is never a sentinel.
    const double cancel_below = norm / 16;
    const bool ulp_a = finite_a & (std::fabs(ra) >= cancel_below) & (norm > 0);
    const bool ulp_b = finite_b & (std::fabs(rb) >= cancel_below) & (norm > 0);
    const double u_a = kept_or_zero(ulp_a, ulp_distance_of_difference(err_a, ra, judged_format));
    const double u_b = kept_or_zero(ulp_b, ulp_distance_of_difference(err_b, rb, judged_format));
    ulp_sum[j] += u_a;
    ulp_sum[j] += u_b;
    ulp_max[j] = larger(ulp_max[j], larger(u_a, u_b));
    ulp_outputs += std::int64_t{ulp_a} + std::int64_t{ulp_b};
  }
  return {beyond, missing, ulp_outputs, above_worst};
}

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
        rule_{in.tolerance_units, in.judged, bounds::attention_scale_for(1)} {}

  reports::audit_report run(const std::function<void(std::int64_t, std::int64_t)>& progress) {
    reports::audit_report r;
    r.dtype = std::string(to_string(in_.judged));
    r.tolerance_units = in_.tolerance_units.value_or(bounds::documented_target_coefficient);
    r.tolerance.derived = !in_.tolerance_units.has_value();
    r.tolerance.absolute = rule_.floor();
    r.tolerance.oracle_units = tolerance_rule::oracle_coefficient() / unit;
    r.tolerance.store_half_spacing = in_.judged != dtype::float32;
    r.spec = in_.spec_file;
    r.x = in_.x_file;
    r.positions = in_.positions_file;
    r.y = in_.y_file;
    const reference::double_tier tier(in_.spec, in_.positions);
    attention_ = tier.attention_factor();
    rule_.scale = bounds::attention_scale_for(attention_);
    // The angle terms of the tolerance grow with m·θ_j: the θ_j rotated by, scaled if need be.
    theta_.assign(tier.inverse_frequencies().begin(), tier.inverse_frequencies().end());
    const int pairs = rotary_ / 2;
    totals t;
    t.buckets.resize(65);
    for (int k = 0; k < 65; ++k) t.buckets[k].label = bucket_label(k);
    t.heat.assign(pairs, std::vector<double>(65, 0));
    t.freq_max.assign(pairs, 0);
    t.freq_count.assign(pairs, 0);
    t.abs_max.assign(pairs, 0);
    t.ulp_sum.assign(pairs, 0);
    t.ulp_max.assign(pairs, 0);
    std::vector<std::int64_t> bucket_first(65, INT64_MAX), bucket_last(65, INT64_MIN);
    const std::int64_t report_every = std::max<std::int64_t>(rows_ / 100, 1);
    const auto judge = vector_judge();
    const std::size_t row_size = static_cast<std::size_t>(in_.heads * d_);
    std::vector<double> x_row(row_size), y_row(row_size), ref(d_);
    row_state rs;
    rs.coefficient.resize(pairs);
    rs.max_rel.resize(pairs);

    // X and Y are read once, front to back: hand back the pages of every ~4 MiB behind us, so
    // a memory-mapped multi-GiB dump is not all resident at the end (tensor::release_pages).
    const std::int64_t row_elements = in_.heads * d_;
    const std::int64_t release_rows =
        std::max<std::int64_t>(1, (std::int64_t{4} << 20) / (row_elements * static_cast<std::int64_t>(size_of(in_.x.type))));
    std::int64_t released = 0;
    for (std::int64_t row = 0; row < rows_; ++row) {
      if (progress && row % report_every == 0) progress(row, rows_);
      if (row - released == release_rows) {
        in_.x.release_pages(released * row_elements, (row - released) * row_elements);
        in_.y.release_pages(released * row_elements, (row - released) * row_elements);
        released = row;
      }
      const std::int64_t m = in_.positions[row];
      const int k = position_bucket(m);
      bucket_first[k] = std::min(bucket_first[k], m);
      bucket_last[k] = std::max(bucket_last[k], m);
      rs.row = row;
      rs.position = m;
      rs.bucket = k;
      rs.cos_sin = tier.cos_sin(m);
      for (int j = 0; j < pairs; ++j) rs.coefficient[j] = rule_.coefficient(m, theta_[j]);
      std::fill(rs.max_rel.begin(), rs.max_rel.end(), 0.0);
      rs.vectors = 0;
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
        tier.rotate(x, rs.cos_sin, ref);
        for (int c = rotary_; c < d_; ++c) {
          ++r.passthrough_checked;
          if (!same_value(y[c], x[c])) ++r.passthrough_modified;
        }
        (this->*judge)(rs, h, x, y, ref, r, t);
      }
      // Profiles take the row's maximum per frequency: one update per row, not per output.
      t.buckets[k].outputs += 2 * pairs * rs.vectors;
      for (int j = 0; j < pairs; ++j) {
        t.freq_count[j] += 2 * rs.vectors;
        const double units = rs.max_rel[j] / unit;
        t.heat[j][k] = std::max(t.heat[j][k], units);
        t.freq_max[j] = std::max(t.freq_max[j], units);
        t.buckets[k].max_units = std::max(t.buckets[k].max_units, units);
      }
    }
    if (progress) progress(rows_, rows_);
    r.max_rel_pair_error = r.max_rel_pair_error_units * unit;
    r.max_rel_pair_error_dtype_units =
        r.max_rel_pair_error / std::ldexp(1.0, -precision_bits(in_.judged));
    double ulp_sum = 0;
    for (int j = 0; j < pairs; ++j) {
      r.max_abs_error = std::max(r.max_abs_error, t.abs_max[j]);
      r.ulp_max = std::max(r.ulp_max, t.ulp_max[j]);
      ulp_sum += t.ulp_sum[j];
    }
    r.ulp_mean = r.ulp_outputs > 0 ? ulp_sum / static_cast<double>(r.ulp_outputs) : 0;
    std::vector<int> used;
    for (int k = 0; k < 65; ++k) {
      if (t.buckets[k].outputs == 0) continue;
      t.buckets[k].first = bucket_first[k];
      t.buckets[k].last = bucket_last[k];
      r.by_position.push_back(t.buckets[k]);
      used.push_back(k);
    }
    for (int j = 0; j < pairs; ++j) {
      r.by_frequency.push_back({std::to_string(j), j, j, t.freq_count[j], t.freq_max[j]});
      std::vector<double> row;
      for (int k : used) row.push_back(t.heat[j][k]);
      r.by_frequency_and_position.push_back(std::move(row));
    }
    r.passed = r.outputs_beyond_tolerance == 0 && r.passthrough_modified == 0 && r.non_finite == 0;
    diagnose(r);
    return r;
  }

 private:
  // What one position row shares across its heads.
  struct row_state {
    std::int64_t row = 0, position = 0;
    int bucket = 0;
    std::span<const double> cos_sin;   // the double tier's row for this position
    std::vector<double> coefficient;   // tolerance_rule::coefficient per frequency
    std::vector<double> max_rel;       // per frequency: max |y − y_exact| / ‖pair‖ over the row
    std::int64_t vectors = 0;          // head vectors judged (x finite) in the row
  };
  // Sums and profiles over the whole dump.
  struct totals {
    std::vector<reports::error_bucket> buckets;
    std::vector<std::vector<double>> heat;
    std::vector<double> freq_max;
    std::vector<std::int64_t> freq_count;
    // Per frequency, folded in run(): max |y − y_exact|, and the ULP distances' sum and max.
    std::vector<double> abs_max, ulp_sum, ulp_max;
  };
  using judge_function = void (auditor::*)(row_state&, std::int64_t, std::span<const double>,
                                           std::span<const double>, std::span<const double>,
                                           reports::audit_report&, totals&) const;

  // The rotated outputs of one head vector against the tier's `ref` (judge_pairs), then the
  // rare "worst output" update, a second, ordered pass over the vector.
  template <pairing pair, bool x_is_float64, bool judged_float32>
  void judge_vector(row_state& rs, std::int64_t h, std::span<const double> x,
                    std::span<const double> y, std::span<const double> ref,
                    reports::audit_report& r, totals& t) const {
    const pair_constants k{rotary_ / 2, in_.judged, rule_.floor(), attention_,
                           r.max_rel_pair_error_units * unit};
    const pair_counts n = judge_pairs<pair, x_is_float64, judged_float32>(
        k, x.data(), y.data(), ref.data(), rs.coefficient.data(), rs.max_rel.data(), t.abs_max.data(),
        t.ulp_sum.data(), t.ulp_max.data(), t.freq_count.data());
    const bool first_of_audit = r.outputs == 0;
    r.outputs += 2 * k.pairs;
    ++rs.vectors;
    r.non_finite += n.missing;
    t.buckets[rs.bucket].outputs -= n.missing;
    r.outputs_beyond_tolerance += n.beyond;
    r.ulp_outputs += n.ulp_outputs;
    if (n.above_worst || first_of_audit) [[unlikely]]
      update_worst<pair, x_is_float64>(rs, h, x, y, ref, first_of_audit, r);
  }

  // Output by output, as the report defines "worst": the first output of the audit, then
  // each one strictly above the worst so far.
  template <pairing pair, bool x_is_float64>
  void update_worst(const row_state& rs, std::int64_t h, std::span<const double> x,
                    std::span<const double> y, std::span<const double> ref, bool first_of_audit,
                    reports::audit_report& r) const {
    const int pairs = rotary_ / 2;
    const std::int64_t per_sequence = std::max<std::int64_t>(in_.tokens_per_sequence, 1);
    for (int j = 0; j < pairs; ++j) {
      const auto [a, b] = pair_of(pair, rotary_, j);
      const double norm = pair_norm<x_is_float64>(x[a], x[b]);
      for (const int c : {a, b}) {
        if (!std::isfinite(y[c])) continue;
        const double err = std::fabs(y[c] - ref[c]);
        const double units = (norm > 0 ? err / norm : (err > 0 ? INFINITY : 0.0)) / unit;
        if (units > r.max_rel_pair_error_units || (first_of_audit && j == 0 && c == a)) {
          r.max_rel_pair_error_units = std::max(r.max_rel_pair_error_units, units);
          r.worst = {rs.row / per_sequence, rs.row % per_sequence, h, c, rs.position, y[c], ref[c],
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
      return x64 ? (f32 ? &auditor::judge_vector<adj, true, true> : &auditor::judge_vector<adj, true, false>)
                 : (f32 ? &auditor::judge_vector<adj, false, true> : &auditor::judge_vector<adj, false, false>);
    return x64 ? (f32 ? &auditor::judge_vector<half, true, true> : &auditor::judge_vector<half, true, false>)
               : (f32 ? &auditor::judge_vector<half, false, true> : &auditor::judge_vector<half, false, false>);
  }

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
    diagnose_context(r);
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
          const double c = round_to_storage(trig, sample_tier.cos_at(m, j));
          const double s = round_to_storage(trig, sample_tier.sin_at(m, j));
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

  // position_outside_context: positions no model sequence has (negative), or at or past the
  // context the config declares (max_position_embeddings; dynamic NTK is built to go past it).
  // A property of the data, stated without changing the verdict: the rotation there is still
  // judged against the reference, which is defined for every |m| <= 2^31 - 1.
  void diagnose_context(reports::audit_report& r) const {
    const std::int64_t context =
        in_.spec.scaling.type == scaling_type::dynamic ? 0 : in_.spec.scaling.max_position_embeddings;
    std::int64_t negative = 0, past = 0, lowest = 0, highest = 0;
    for (const std::int64_t m : in_.positions) {
      if (m < 0) {
        lowest = negative++ == 0 ? m : std::min(lowest, m);
      } else if (context > 0 && m >= context) {
        highest = past++ == 0 ? m : std::max(highest, m);
      }
    }
    if (negative > 0)
      r.diagnosis.push_back({"position_outside_context", fmt::format(
          "{} of {} rows have negative positions (lowest {}): no model sequence has them (an "
          "underflowed position offset?); they were judged as rotations by R(m), m < 0",
          negative, rows_, lowest)});
    if (past > 0)
      r.diagnosis.push_back({"position_outside_context", fmt::format(
          "{} of {} rows have positions at or past max_position_embeddings {} (highest {}): "
          "beyond the context the model is configured for; the rotation there was still judged "
          "against the reference", past, rows_, context, highest)});
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
