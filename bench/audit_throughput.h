// audit_throughput: how fast `ropecheck audit` judges a float32 dump, beside a memcpy of the
// same bytes measured in the same run (Google Benchmark). The audit core (audit::run_audit:
// the double tier's table, every output against it, the profiles) runs on an in-memory dump
// X, Y = [tokens, 32 heads, 128] float32, base 5e5, positions 0 … tokens − 1, Y from the
// cache_simd kernel, so it passes. Both rates count the dump's bytes once: |X| + |Y| judged per
// second, and |X| + |Y| copied per second (each byte read once and written once). Seconds are
// the process's CPU seconds (every thread's, as Google Benchmark's MeasureProcessCPUTime
// counts them), not wall time: on a shared machine other load stretches wall time but barely
// CPU time, and a rate per CPU-second is a rate on one core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ropecheck::bench {

struct audit_throughput_options {
  bool all = false;                 // adds 1 GiB dumps (X + Y) to 64 MiB and 256 MiB
  double min_seconds = 0.1;         // Google Benchmark's minimum time per measurement
  int repetitions = 3;              // rows keep the best repetition (audit and memcpy alike)
  std::vector<std::int64_t> sizes;  // X + Y bytes; empty: 64 MiB, 256 MiB (and 1 GiB with all)
  bool console = true;              // print Google Benchmark's console report as it runs
  double min_ratio = 0;             // --min-ratio=R: exit 1 if a row's ratio is below R (ctest)
};

struct audit_throughput_row {
  std::int64_t bytes = 0;    // |X| + |Y|
  double gbps = 0;           // bytes / audit CPU seconds / 1e9
  double memcpy_gbps = 0;    // bytes / memcpy CPU seconds / 1e9, same run
  double ratio = 0;          // gbps / memcpy_gbps
};

std::vector<audit_throughput_row> run_audit_throughput(const audit_throughput_options& options);

// [{"bytes", "gbps", "memcpy_gbps", "ratio"}, ...]
nlohmann::json audit_throughput_json(const std::vector<audit_throughput_row>& rows);
std::string audit_throughput_text(const std::vector<audit_throughput_row>& rows);

}  // namespace ropecheck::bench
