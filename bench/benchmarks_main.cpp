// ropecheck_benchmarks: the throughput table as a Google Benchmark program. Accepts the usual
// --benchmark_* flags (e.g. --benchmark_filter='64M|67108864'), plus --all (sizes to 1 GiB),
// --json (print the rows as JSON instead of the text table), --threads=N (only N),
// --repetitions=N (best of N per row, default 3), --simd-target=NAME (e.g. avx2: cap the
// SIMD kernels' instruction set; default: the best this CPU has) and --output-scale=S (the fp8
// rows only, storing round(y / S)).
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/table_main.h"
#include "bench/throughput.h"
#include "fast/simd_target.h"

int main(int argc, char** argv) {
  namespace b = ropecheck::bench;
  auto extra = [](const char* arg, b::throughput_options& options) {
    if (const auto n = b::flag_value(arg, "--threads")) {
      options.threads = {static_cast<int>(ropecheck::decimal_integer_flag("--threads", *n, 1, 1024))};
      return 1;
    }
    if (const auto s = b::flag_value(arg, "--output-scale")) {
      options.output_scale = ropecheck::positive_float32_flag("--output-scale", *s);
      return 1;
    }
    if (std::strncmp(arg, "--simd-target=", 14) == 0) {
      const auto status = ropecheck::fast::use_simd_target(arg + 14);
      if (status.ok()) return 1;
      std::fprintf(stderr, "ropecheck_benchmarks: --simd-target: %s\n", status.message.c_str());
      return -1;
    }
    return 0;
  };
  return b::run_table_main(argc, argv, b::throughput_options{}, b::run_throughput_table,
                           b::throughput_json, b::throughput_text, extra);
}
