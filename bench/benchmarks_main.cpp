// ropecheck_benchmarks: the throughput table as a Google Benchmark program. Accepts the usual
// --benchmark_* flags (e.g. --benchmark_filter='64M|67108864'), plus --all (sizes to 1 GiB),
// --json (print the rows as JSON instead of the text table), --threads=N (only N) and
// --repetitions=N (best of N per row, default 3) and --simd-target=NAME (e.g. avx2: cap the
// SIMD kernels' instruction set; default: the best this CPU has).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/throughput.h"
#include "fast/simd_target.h"

int main(int argc, char** argv) {
  ropecheck::bench::throughput_options options;
  bool json = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--all") == 0) {
      options.all = true;
    } else if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      options.threads = {std::stoi(argv[i] + 10)};
    } else if (std::strncmp(argv[i], "--simd-target=", 14) == 0) {
      const auto status = ropecheck::fast::use_simd_target(argv[i] + 14);
      if (!status.ok()) {
        std::fprintf(stderr, "ropecheck_benchmarks: --simd-target: %s\n", status.message.c_str());
        return 2;
      }
    } else if (std::strncmp(argv[i], "--repetitions=", 14) == 0) {
      options.repetitions = std::stoi(argv[i] + 14);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  options.console = !json;
  const auto rows = ropecheck::bench::run_throughput_table(options);
  if (json) {
    std::printf("%s\n", ropecheck::bench::throughput_json(rows).dump(2).c_str());
  } else {
    std::printf("\n%s", ropecheck::bench::throughput_text(rows).c_str());
  }
  benchmark::Shutdown();
  return 0;
}
