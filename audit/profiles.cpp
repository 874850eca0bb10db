// The audit's error profiles (profiles.h): per position bucket, per frequency, and the heatmap.
#include "audit/profiles.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "audit/tolerance.h"

namespace ropecheck::audit {

int position_bucket(std::int64_t m) {
  const std::uint64_t a = m < 0 ? static_cast<std::uint64_t>(-(m + 1)) + 1 : static_cast<std::uint64_t>(m);
  return a == 0 ? 0 : 64 - __builtin_clzll(a);
}

std::string bucket_label(int k) {
  if (k == 0) return "0";
  return fmt::format("[{}, {})", std::uint64_t{1} << (k - 1), std::uint64_t{1} << std::min(k, 63));
}

profiles::profiles(int pairs)
    : abs_max(pairs, 0),
      ulp_sum(pairs, 0),
      ulp_max(pairs, 0),
      freq_count(pairs, 0),
      pairs_(pairs),
      buckets_(bucket_count),
      bucket_first_(bucket_count, INT64_MAX),
      bucket_last_(bucket_count, INT64_MIN),
      heat_(pairs, std::vector<double>(bucket_count, 0)),
      freq_max_(pairs, 0) {
  for (int k = 0; k < bucket_count; ++k) buckets_[k].label = bucket_label(k);
}

void profiles::unmeasured(std::int64_t position, std::int64_t outputs) {
  buckets_[position_bucket(position)].outputs -= outputs;
}

// Profiles take the row's maximum per frequency: one update per row, not per output.
void profiles::fold_row(std::int64_t m, const std::vector<double>& max_rel, std::int64_t vectors) {
  const int k = position_bucket(m);
  bucket_first_[k] = std::min(bucket_first_[k], m);
  bucket_last_[k] = std::max(bucket_last_[k], m);
  buckets_[k].outputs += 2 * pairs_ * vectors;
  for (int j = 0; j < pairs_; ++j) {
    freq_count[j] += 2 * vectors;
    const double units = max_rel[j] / unit;
    heat_[j][k] = std::max(heat_[j][k], units);
    freq_max_[j] = std::max(freq_max_[j], units);
    buckets_[k].max_units = std::max(buckets_[k].max_units, units);
  }
}

void profiles::write(reports::audit_report& r) const {
  double sum = 0;
  for (int j = 0; j < pairs_; ++j) {
    r.max_abs_error = std::max(r.max_abs_error, abs_max[j]);
    r.ulp_max = std::max(r.ulp_max, ulp_max[j]);
    sum += ulp_sum[j];
  }
  r.ulp_mean = r.ulp_outputs > 0 ? sum / static_cast<double>(r.ulp_outputs) : 0;
  std::vector<int> used;
  for (int k = 0; k < bucket_count; ++k) {
    if (buckets_[k].outputs == 0) continue;
    reports::error_bucket b = buckets_[k];
    b.first = bucket_first_[k];
    b.last = bucket_last_[k];
    r.by_position.push_back(b);
    used.push_back(k);
  }
  for (int j = 0; j < pairs_; ++j) {
    r.by_frequency.push_back({std::to_string(j), j, j, freq_count[j], freq_max_[j]});
    std::vector<double> row;
    for (int k : used) row.push_back(heat_[j][k]);
    r.by_frequency_and_position.push_back(std::move(row));
  }
}

}  // namespace ropecheck::audit
