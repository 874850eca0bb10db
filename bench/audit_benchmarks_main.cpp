// ropecheck_audit_benchmarks: the audit throughput table (bench/audit_throughput.h) as a Google
// Benchmark program. Accepts the usual --benchmark_* flags, plus --all (adds a 1 GiB dump),
// --json (rows as JSON instead of the text table) and --repetitions=N (best of N, default 3).
#include "bench/audit_throughput.h"
#include "bench/table_main.h"

int main(int argc, char** argv) {
  namespace b = ropecheck::bench;
  return b::run_table_main(
      argc, argv, b::audit_throughput_options{}, b::run_audit_throughput, b::audit_throughput_json,
      b::audit_throughput_text, [](const char*, b::audit_throughput_options&) { return 0; });
}
