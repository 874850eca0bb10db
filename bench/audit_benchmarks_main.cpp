// ropecheck_audit_benchmarks: the audit throughput table (bench/audit_throughput.h) as a Google
// Benchmark program. Accepts the usual --benchmark_* flags, plus --all (adds a 1 GiB dump),
// --json (rows as JSON instead of the text table) and --repetitions=N (best of N, default 3).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/audit_throughput.h"

int main(int argc, char** argv) {
  ropecheck::bench::audit_throughput_options options;
  bool json = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--all") == 0) {
      options.all = true;
    } else if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
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
  const auto rows = ropecheck::bench::run_audit_throughput(options);
  if (json) {
    std::printf("%s\n", ropecheck::bench::audit_throughput_json(rows).dump(2).c_str());
  } else {
    std::printf("\n%s", ropecheck::bench::audit_throughput_text(rows).c_str());
  }
  benchmark::Shutdown();
  return 0;
}
