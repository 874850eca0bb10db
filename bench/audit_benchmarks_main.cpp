// ropecheck_audit_benchmarks: the audit throughput table (bench/audit_throughput.h) as a Google
// Benchmark program. Accepts the usual --benchmark_* flags, plus --all (adds a 1 GiB dump),
// --json (rows as JSON instead of the text table), --repetitions=N (best of N, default 3),
// --bytes=N (only dumps of N bytes of X + Y; repeatable) and --min-ratio=R (exit 1 when a row's
// audit/memcpy ratio is below R: the ctest smoke guard against an order-of-magnitude slowdown).
#include <cstdint>

#include "bench/audit_throughput.h"
#include "bench/table_main.h"

int main(int argc, char** argv) {
  namespace b = ropecheck::bench;
  auto extra = [](const char* arg, b::audit_throughput_options& options) {
    if (const auto n = b::flag_value(arg, "--bytes")) {  // X + Y bytes: at least one element each
      options.sizes.push_back(static_cast<std::int64_t>(
          ropecheck::decimal_integer_flag("--bytes", *n, 1, std::int64_t{1} << 40)));
      return 1;
    }
    if (const auto r = b::flag_value(arg, "--min-ratio")) {
      options.min_ratio = ropecheck::positive_number_flag("--min-ratio", *r);
      return 1;
    }
    return 0;
  };
  return b::run_table_main(argc, argv, b::audit_throughput_options{}, b::run_audit_throughput,
                           b::audit_throughput_json, b::audit_throughput_text, extra);
}
