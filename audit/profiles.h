// profiles: the audit's error profiles — by |position| bucket (powers of two), by frequency, and
// frequency × bucket for the heatmap — folded once per position row from the row's per-frequency
// maxima, then written into the report. Also the worst-output and ULP totals kept per frequency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/audit_report.h"

namespace ropecheck::audit {

// Bucket of |position|: 0 for position 0, k + 1 for [2^k, 2^(k+1)).
int position_bucket(std::int64_t m);
std::string bucket_label(int bucket);

class profiles {
 public:
  explicit profiles(int pairs);

  // One position row: `max_rel[j]` is the row's worst |y − y_exact| / ‖pair‖ at frequency j over
  // its `vectors` judged head vectors.
  void fold_row(std::int64_t position, const std::vector<double>& max_rel, std::int64_t vectors);
  // Outputs that were not measured (non-finite) are taken back from the row's bucket.
  void unmeasured(std::int64_t position, std::int64_t outputs);

  // Per frequency, updated by the judging loop: max |y − y_exact|, ULP sum and max, outputs.
  std::vector<double> abs_max, ulp_sum, ulp_max;
  std::vector<std::int64_t> freq_count;

  // by_position, by_frequency, by_frequency_and_position, max_abs_error, ulp_max, ulp_mean.
  void write(reports::audit_report& r) const;

 private:
  static constexpr int bucket_count = 65;
  int pairs_;
  std::vector<reports::error_bucket> buckets_;
  std::vector<std::int64_t> bucket_first_, bucket_last_;
  std::vector<std::vector<double>> heat_;  // [frequency][bucket], units of 2^-24
  std::vector<double> freq_max_;
};

}  // namespace ropecheck::audit
