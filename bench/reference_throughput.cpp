// ropecheck_reference_benchmarks: head vectors per second of the 256-bit reference on a real
// tensor shape (≥ 20 000 vectors/s for a 32-head tensor on 2 cores), each form as
// `ropecheck reference` runs it (reference::rope_tensor: per-position work shared by the heads,
// rows over all cores) beside the one-vector-at-a-time call it replaced, in the same run.
// Real time, since the tensor path uses every core. Regenerate the figures in docs/performance.md
// with scripts/reference-figures.py.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "reference/real.h"
#include "reference/rope_forms.h"
#include "reference/rope_tensor.h"

namespace ropecheck::reference {
namespace {

constexpr std::int64_t heads = 32;
constexpr int head_dim = 128;

rope_spec bench_spec() {
  rope_spec spec;
  spec.head_dim = head_dim;
  spec.rotary_dim = head_dim;
  spec.base = 500000.0;
  return spec;
}

struct workload {
  std::vector<double> x;
  std::vector<std::int64_t> positions;
};

workload make_workload(std::int64_t tokens) {
  workload w;
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> value(-2.0, 2.0);
  w.x.resize(static_cast<std::size_t>(tokens * heads * head_dim));
  for (double& v : w.x) v = value(random);
  for (std::int64_t t = 0; t < tokens; ++t) w.positions.push_back(100000 + 37 * t);
  return w;
}

void tensor_benchmark(benchmark::State& state, reference_form form) {
  const std::int64_t tokens = state.range(0);
  const workload w = make_workload(tokens);
  for (auto _ : state) {
    auto y = rope_tensor(w.x, {tokens, heads}, w.positions, bench_spec(), form,
                         reference_output::float32);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * tokens * heads);
}

// The path `ropecheck reference` took before: the whole form once per head vector, one core.
void per_vector_benchmark(benchmark::State& state) {
  const std::int64_t tokens = state.range(0);
  const workload w = make_workload(tokens);
  const auto params = params_from_spec<mp_real>(bench_spec(), 0);
  std::vector<mp_real> in(head_dim);
  for (auto _ : state) {
    for (std::int64_t v = 0; v < tokens * heads; ++v) {
      for (int c = 0; c < head_dim; ++c) in[c] = w.x[static_cast<std::size_t>(v * head_dim + c)];
      auto y = rope_elementwise<mp_real>(in, w.positions[static_cast<std::size_t>(v / heads)],
                                         params);
      benchmark::DoNotOptimize(y.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * tokens * heads);
}

BENCHMARK(per_vector_benchmark)->Name("reference/elementwise/per_vector")->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tensor_benchmark, elementwise, reference_form::elementwise)
    ->Name("reference/elementwise/tensor")->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tensor_benchmark, complex, reference_form::complex)
    ->Name("reference/complex/tensor")->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tensor_benchmark, matrix, reference_form::matrix)
    ->Name("reference/matrix/tensor")->Arg(4)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ropecheck::reference

BENCHMARK_MAIN();
