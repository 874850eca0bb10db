// ropecheck_audit_benchmarks: the audit throughput table (bench/audit_throughput.h) as a Google
// Benchmark program. Accepts the usual --benchmark_* flags, plus --all (adds a 1 GiB dump),
// --json (rows as JSON instead of the text table), --repetitions=N (best of N, default 3),
// --bytes=N (only dumps of N bytes of X + Y; repeatable) and --min-ratio=R (exit 1 when a row's
// audit/memcpy ratio is below R: the ctest smoke guard against an order-of-magnitude slowdown).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/audit_throughput.h"
#include "bench/table_main.h"

int main(int argc, char** argv) {
  namespace b = ropecheck::bench;
  auto extra = [](const char* arg, b::audit_throughput_options& options) {
    if (std::strncmp(arg, "--bytes=", 8) == 0) {
      options.sizes.push_back(std::atoll(arg + 8));
      if (options.sizes.back() > 0) return 1;
      std::fprintf(stderr, "ropecheck_audit_benchmarks: --bytes: '%s' is not a positive count\n", arg + 8);
      return -1;
    }
    if (std::strncmp(arg, "--min-ratio=", 12) == 0) {
      options.min_ratio = std::atof(arg + 12);
      return 1;
    }
    return 0;
  };
  return b::run_table_main(argc, argv, b::audit_throughput_options{}, b::run_audit_throughput,
                           b::audit_throughput_json, b::audit_throughput_text, extra);
}
