// ropecheck_property_benchmarks: kernel-property cases per second, each property
// run as check_kernel_property runs it in the gate. Every run starts with a cold oracle memo,
// as a new gate or ctest process does. One iteration is one property on one kernel over the
// three dtypes float32/float16/bfloat16, --cases=N cases each (RC_PARAMS max_success; default
// 300), every catalog property but call_size_invariant (below). CPU time: the properties run
// on one thread. scripts/property-case-figures.py runs this binary and the same benchmark
// built from the tree at 17dc5fd (its per-case oracle path), alternately in one run,
// and turns both into the table in docs/performance.md.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "fast/kernels.h"
#include "properties/kernel_properties.h"

namespace ropecheck::properties {
namespace {

void property_cases(benchmark::State& state, const fast::kernel_info* kernel,
                    std::string_view property) {
  check_options options;
  std::int64_t cases = 0;
  for (auto _ : state) {
    clear_oracle_memo();
    for (dtype storage : {dtype::float32, dtype::float16, dtype::bfloat16}) {
      const property_result r =
          check_kernel_property(*kernel, property, storage, profile::quick, default_seed, {}, 1, options);
      if (!r.passed) state.SkipWithError(("property failed: " + r.message).c_str());
      cases += r.cases;
    }
  }
  state.SetItemsProcessed(cases);
  state.counters["cases"] = static_cast<double>(cases);
}

}  // namespace
}  // namespace ropecheck::properties

int main(int argc, char** argv) {
  using namespace ropecheck;
  std::string cases = "300";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--cases=", 8) == 0) cases = argv[i] + 8;
    else argv[kept++] = argv[i];
  }
  argc = kept;
  setenv("RC_PARAMS", ("max_success=" + cases).c_str(), 1);
  for (const char* name : {"on_the_fly_simd", "cache_simd"}) {
    const fast::kernel_info* kernel = fast::find_kernel(name);
    if (kernel == nullptr) return 2;
    for (std::string_view property : properties::kernel_property_names()) {
      // ~80 ms a case (≥ 64 MiB moved, no oracle); the deep profile gives it 1 200 cases, not
      // 10^6, so it is not part of a case's mean cost (scripts/property-case-figures.py adds its
      // time to the deep-profile estimate separately).
      if (property == "call_size_invariant") continue;
      benchmark::RegisterBenchmark(
          ("property_cases/" + std::string(name) + "/" + std::string(property)).c_str(),
          [kernel, property](benchmark::State& state) {
            properties::property_cases(state, kernel, property);
          })
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
