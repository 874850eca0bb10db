// throughput_ratchet: `ropecheck bench --baseline OLD.json --tolerance T` — this run's rows
// against a saved `bench --json` run. It compares each row's ratio to the copy baseline, not its
// GB/s, so that a CI runner of another speed can compare with a run saved elsewhere: a row
// regresses when its ratio falls below (1 − T) × the saved one. Rows are matched by what was
// measured (source, kernel, dtype, pairing, threads, X bytes, heads, head_dim, output scale);
// every saved row must be in this run (else the comparison would pass by leaving it out), and
// rows the baseline lacks are shown as new.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/throughput.h"

namespace ropecheck::bench {

// What a row measured, as one readable line: "built-in cache_simd float32 half threads 1 …".
std::string row_key(const throughput_row& row);

struct saved_ratio {
  double ratio = 0;
  std::size_t index = 0;  // the row's index in the file, for messages
};

// The ratios of a saved `bench --json` run by row_key. Throws io_error naming the file, the field
// ("[3].ratio") and the value for a file of another shape: not a non-empty array of objects, a
// field missing or of another type, a ratio that is not a finite number > 0, a row given twice.
std::map<std::string, saved_ratio> read_throughput_baseline(const std::filesystem::path& path);

struct ratchet_line {
  throughput_row row;                 // this run's
  std::optional<double> saved_ratio;  // none: a row the baseline does not have
  bool regressed = false;
};

struct ratchet_verdict {
  std::vector<ratchet_line> lines;  // regressed rows first, then the others, then the new ones
  std::size_t compared = 0;
  std::size_t regressed = 0;
};

// Throws io_error naming `path` and the saved row this run did not measure.
ratchet_verdict compare_to_baseline(const std::vector<throughput_row>& rows,
                                    const std::map<std::string, saved_ratio>& saved,
                                    const std::filesystem::path& path, double tolerance);

// The verdict as a table, regressed rows first, and a last line "ratchet: PASS|FAIL (…)".
std::string ratchet_text(const ratchet_verdict& verdict, const std::filesystem::path& path, double tolerance);

}  // namespace ropecheck::bench
