// The audit throughput table: an in-memory float32 dump per size, audited by audit::run_audit
// and copied by memcpy in the same Google Benchmark run (audit_throughput.h).
#include "bench/audit_throughput.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "audit/audit.h"
#include "bench/collecting_reporter.h"
#include "fast/kernels.h"

namespace ropecheck::bench {
namespace {

constexpr std::int64_t heads = 32;
constexpr std::int64_t head_dim = 128;
constexpr std::int64_t token_bytes = 2 * heads * head_dim * 4;  // X and Y, float32

// One dump per size, made once: X uniform in (−2, 2), Y = cache_simd(X).
struct dump {
  audit::audit_input input;
  std::vector<std::byte> copy_from, copy_to;  // the memcpy baseline's buffers, same size
};

std::unique_ptr<dump> make_dump(std::int64_t bytes) {
  const std::int64_t tokens = std::max<std::int64_t>(1, bytes / token_bytes);
  auto d = std::make_unique<dump>();
  audit::audit_input& in = d->input;
  in.spec = rope_spec{static_cast<int>(head_dim), static_cast<int>(head_dim), 500000.0,
                      pairing::half_split, "bench"};
  in.x = tensor(dtype::float32, {tokens, heads, head_dim});
  std::uint64_t state = 0x9E3779B97F4A7C15u;
  for (float& v : in.x.mutable_values<float>()) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
    v = static_cast<float>(static_cast<double>(state >> 11) * 0x1p-51 - 2.0);
  }
  in.positions.resize(static_cast<std::size_t>(tokens));
  for (std::int64_t t = 0; t < tokens; ++t) in.positions[static_cast<std::size_t>(t)] = t;
  in.y = tensor(dtype::float32, in.x.shape);
  if (const fast::status s =
          fast::apply_packed(*fast::find_kernel("cache_simd"), in.spec, dtype::float32, in.x.bytes().data(),
                             in.y.mutable_bytes().data(), heads, in.positions);
      !s.ok())
    throw std::runtime_error("audit benchmark: cache_simd failed: " + s.message);
  in.tokens_per_sequence = tokens;
  in.heads = heads;
  in.judged = dtype::float32;
  d->copy_from.resize(static_cast<std::size_t>(tokens * token_bytes), std::byte{0x3C});
  d->copy_to.resize(d->copy_from.size());
  return d;
}

std::string audit_name(std::int64_t bytes) { return "audit/float32/bytes:" + std::to_string(bytes); }
std::string memcpy_name(std::int64_t bytes) { return "memcpy/bytes:" + std::to_string(bytes); }

}  // namespace

std::vector<audit_throughput_row> run_audit_throughput(const audit_throughput_options& options) {
  std::vector<std::int64_t> sizes = options.sizes;
  if (sizes.empty()) {
    sizes = {std::int64_t{64} << 20, std::int64_t{256} << 20};
    if (options.all) sizes.push_back(std::int64_t{1} << 30);
  }
  auto dumps = std::make_shared<std::map<std::int64_t, std::unique_ptr<dump>>>();
  auto dump_of = [dumps](std::int64_t bytes) -> dump& {
    auto& d = (*dumps)[bytes];
    if (!d) d = make_dump(bytes);
    return *d;
  };

  benchmark::ClearRegisteredBenchmarks();
  auto configure = [&](benchmark::internal::Benchmark* b) {
    b->MeasureProcessCPUTime()
        ->MinTime(options.min_seconds)
        ->Repetitions(options.repetitions)
        ->Unit(benchmark::kMillisecond);
  };
  for (const std::int64_t bytes : sizes) {
    configure(benchmark::RegisterBenchmark(memcpy_name(bytes).c_str(), [dump_of, bytes](benchmark::State& state) {
      dump& d = dump_of(bytes);
      for (auto _ : state) {
        std::memcpy(d.copy_to.data(), d.copy_from.data(), d.copy_from.size());
        benchmark::ClobberMemory();
      }
      state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(d.copy_from.size()));
    }));
    configure(benchmark::RegisterBenchmark(audit_name(bytes).c_str(), [dump_of, bytes](benchmark::State& state) {
      const dump& d = dump_of(bytes);
      for (auto _ : state) {
        const reports::audit_report r = audit::run_audit(d.input);
        if (!r.passed) {
          state.SkipWithError("the benchmark dump did not pass its audit");
          return;
        }
        benchmark::DoNotOptimize(r.max_rel_pair_error);
      }
      state.SetBytesProcessed(state.iterations() *
                              static_cast<std::int64_t>(d.input.x.byte_size() + d.input.y.byte_size()));
    }));
  }

  std::unique_ptr<benchmark::BenchmarkReporter> console;
  if (options.console) console = std::make_unique<benchmark::ConsoleReporter>();
  collecting_reporter collector(console.get());
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();

  std::vector<audit_throughput_row> rows;
  for (const std::int64_t bytes : sizes) {
    const auto a = collector.bytes_per_second.find(audit_name(bytes));
    if (a == collector.bytes_per_second.end()) continue;  // filtered out or failed
    const auto m = collector.bytes_per_second.find(memcpy_name(bytes));
    audit_throughput_row row;
    row.bytes = dumps->count(bytes) ? static_cast<std::int64_t>(dumps->at(bytes)->copy_from.size()) : bytes;
    row.gbps = a->second / 1e9;
    row.memcpy_gbps = m == collector.bytes_per_second.end() ? 0 : m->second / 1e9;
    row.ratio = row.memcpy_gbps > 0 ? row.gbps / row.memcpy_gbps : 0;
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json audit_throughput_json(const std::vector<audit_throughput_row>& rows) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : rows)
    all.push_back({{"bytes", r.bytes}, {"gbps", r.gbps}, {"memcpy_gbps", r.memcpy_gbps}, {"ratio", r.ratio}});
  return all;
}

std::string audit_throughput_text(const std::vector<audit_throughput_row>& rows) {
  std::string text;
  char line[160];
  std::snprintf(line, sizeof line, "%-14s %10s %12s %8s\n", "X+Y bytes", "audit GB/s", "memcpy GB/s", "ratio");
  text += line;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%-14lld %10.2f %12.2f %8.3f\n", static_cast<long long>(r.bytes), r.gbps,
                  r.memcpy_gbps, r.ratio);
    text += line;
  }
  return text;
}

}  // namespace ropecheck::bench
