// The throughput table: Google Benchmark runs, a reporter that collects bytes/s per run, and
// rows pairing each kernel measurement with the copies (memcpy and streaming) of the same size
// and thread count.
#include "bench/throughput.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/collecting_reporter.h"
#include "bench/cpu_model.h"
#include "bench/random_buffer.h"
#include "bench/stream_copy.h"
#include "bench/worker_pool.h"
#include "fast/kernels.h"
#include "fast/simd_target.h"
#include "numeric/storage_element.h"

namespace ropecheck::bench {

namespace {

constexpr std::int64_t heads = 32;
constexpr std::int64_t head_dim = 128;

// Buffers, positions, prepared angles and thread pools, made once and shared by all runs.
class workspace {
 public:
  std::pair<std::byte*, std::byte*> buffers(std::int64_t bytes, dtype storage) {
    auto& b = buffers_[{bytes, storage}];
    if (!b.first) b = {random_buffer(bytes, storage, 0), random_buffer(bytes, storage, 1)};
    return {b.first.get(), b.second.get()};
  }
  const std::int64_t* positions(std::int64_t tokens) {
    if (static_cast<std::int64_t>(positions_.size()) < tokens) {
      positions_.resize(static_cast<std::size_t>(tokens));
      for (std::int64_t i = 0; i < tokens; ++i) positions_[static_cast<std::size_t>(i)] = i;
    }
    return positions_.data();
  }
  const fast::rope_angles* angles(const fast::kernel_info& kernel, std::int64_t tokens) {
    auto& a = angles_[{kernel.strategy, tokens}];
    if (!a) {
      rope_spec spec;
      spec.head_dim = head_dim;
      spec.rotary_dim = head_dim;
      auto prepared = kernel.prepare(fast::unscaled_frequencies(spec), tokens);
      if (!prepared.ok()) return nullptr;
      a = std::make_unique<fast::rope_angles>(std::move(*prepared.value));
    }
    return a.get();
  }
  worker_pool& pool(int threads) {
    auto& p = pools_[threads];
    if (!p) p = std::make_unique<worker_pool>(threads);
    return *p;
  }

 private:
  std::map<std::pair<std::int64_t, dtype>, std::pair<aligned_bytes, aligned_bytes>> buffers_;
  std::vector<std::int64_t> positions_;
  std::map<std::tuple<fast::angle_strategy, std::int64_t>, std::unique_ptr<fast::rope_angles>> angles_;
  std::map<int, std::unique_ptr<worker_pool>> pools_;
};

// Splits [0, count) into `parts` nearly equal ranges; returns part i.
std::pair<std::int64_t, std::int64_t> share(std::int64_t count, int parts, int i) {
  return {count * i / parts, count * (i + 1) / parts};
}

// A copy of the baseline: memcpy (null) or one of fast_copies().
using copy_choice = const copy_method*;

std::vector<copy_choice> baseline_copies() {
  std::vector<copy_choice> copies{nullptr};
  for (const copy_method& copy : fast_copies()) copies.push_back(&copy);
  return copies;
}

std::int64_t tokens_of(std::int64_t bytes, dtype storage) {
  return std::max<std::int64_t>(1, bytes / (heads * head_dim * static_cast<std::int64_t>(size_of(storage))));
}

std::string copy_name(copy_choice copy, std::int64_t bytes, int threads) {
  const std::string size = "/bytes:" + std::to_string(bytes) + "/threads:" + std::to_string(threads);
  return copy == nullptr ? "memcpy" + size : "stream_copy" + size + "/" + std::string(copy->name);
}

std::string kernel_name(const throughput_row& r) {
  return "rope/" + r.kernel + "/" + r.dtype + "/" + r.pairing + "/bytes:" +
         std::to_string(r.bytes) + "/threads:" + std::to_string(r.threads);
}

// One thread calls the task directly: the pool's lock and wake-up cost about as much as a
// cache-resident 16 KiB call, kernel and copy alike, and would hide what the kernels cost.
void run_on(worker_pool& pool, const std::function<void(int)>& task) {
  if (pool.size() == 1) {
    task(0);
  } else {
    pool.run(task);
  }
}

void copy_benchmark(benchmark::State& state, workspace& ws, copy_choice copy, std::int64_t bytes,
                    int threads) {
  auto [in, out] = ws.buffers(bytes, dtype::float32);
  worker_pool& pool = ws.pool(threads);
  const std::function<void(int)> task = [&, in = in, out = out](int i) {
    // Split on 64-byte lines, as the kernels split on tokens.
    const auto [begin, end] = share(bytes / 64, threads, i);
    const std::int64_t last = i == threads - 1 ? bytes : end * 64;
    const auto length = static_cast<std::size_t>(last - begin * 64);
    if (copy == nullptr)
      std::memcpy(out + begin * 64, in + begin * 64, length);
    else
      copy->copy(in + begin * 64, out + begin * 64, length);
  };
  for (auto _ : state) {
    run_on(pool, task);
    benchmark::ClobberMemory();
  }
  // A baseline that did not copy would flatter every ratio: checked against the input itself.
  if (std::memcmp(in, out, static_cast<std::size_t>(bytes)) != 0) {
    state.SkipWithError("the copy's output differs from its input");
    return;
  }
  state.SetBytesProcessed(state.iterations() * 2 * bytes);
}

void kernel_benchmark(benchmark::State& state, workspace& ws, const fast::kernel_info& kernel,
                      dtype storage, pairing pair, std::int64_t bytes, int threads,
                      float output_scale) {
  auto [in, out] = ws.buffers(bytes, storage);
  const std::int64_t tokens = tokens_of(bytes, storage);
  const fast::rope_angles* angles = ws.angles(kernel, tokens);
  if (angles == nullptr) {
    state.SkipWithError("could not prepare angles");
    return;
  }
  fast::rope_call call =
      fast::make_call({storage, pair, head_dim, head_dim},
                      std::span(ws.positions(tokens), static_cast<std::size_t>(tokens)),
                      fast::packed_tensor(in, out, heads, head_dim));
  call.output_scale = output_scale;
  if (fast::status s = kernel.apply(call, *angles); !s.ok()) {
    state.SkipWithError(s.message.c_str());
    return;
  }
  worker_pool& pool = ws.pool(threads);
  const std::function<void(int)> task = [&](int i) {
    const auto [begin, end] = share(tokens, threads, i);
    if (begin < end) kernel.apply(fast::slice_tokens(call, begin, end), *angles);
  };
  for (auto _ : state) {
    run_on(pool, task);
    benchmark::ClobberMemory();
  }
  const std::int64_t moved = tokens * heads * head_dim * static_cast<std::int64_t>(size_of(storage));
  state.SetBytesProcessed(state.iterations() * 2 * moved);
}

}  // namespace

std::vector<std::int64_t> standard_sizes(bool all) {
  std::vector<std::int64_t> sizes{std::int64_t{16} << 10, std::int64_t{256} << 10,
                                  std::int64_t{4} << 20, std::int64_t{64} << 20};
  if (all) {
    sizes.push_back(std::int64_t{256} << 20);
    sizes.push_back(std::int64_t{1} << 30);
  }
  return sizes;
}

std::vector<throughput_row> run_throughput_table(const throughput_options& options) {
  auto ws = std::make_shared<workspace>();
  const std::vector<std::int64_t> sizes =
      options.sizes.empty() ? standard_sizes(options.all) : options.sizes;
  const auto& dtypes = storage_dtypes;

  if (options.random_interleaving) {
    static const bool interleaving = [] {
      char program[] = "ropecheck";
      char flag[] = "--benchmark_enable_random_interleaving=true";
      char* argv[] = {program, flag, nullptr};
      int argc = 2;
      benchmark::Initialize(&argc, argv);
      return true;
    }();
    (void)interleaving;
  }
  benchmark::ClearRegisteredBenchmarks();
  std::vector<throughput_row> rows;
  auto configure = [&](benchmark::internal::Benchmark* b) {
    b->UseRealTime()
        ->MinTime(options.min_seconds)
        ->Repetitions(options.repetitions)
        ->Unit(benchmark::kMicrosecond);
  };
  for (std::int64_t bytes : sizes) {
    for (int threads : options.threads) {
      for (copy_choice copy : baseline_copies()) {
        configure(benchmark::RegisterBenchmark(
            copy_name(copy, bytes, threads).c_str(),
            [ws, copy, bytes, threads](benchmark::State& s) {
              copy_benchmark(s, *ws, copy, bytes, threads);
            }));
      }
      for (const fast::kernel_info& kernel : fast::kernel_registry()) {
        for (dtype storage : dtypes) {
          if (!kernel.supports(storage)) continue;
          if (options.output_scale != 1.0f && !is_float8(storage)) continue;  // fp8 only
          for (pairing pair : kernel.pairings) {
            throughput_row row;
            row.kernel = std::string(kernel.name);
            row.dtype = std::string(to_string(storage));
            row.pairing = std::string(to_string(pair));
            row.threads = threads;
            row.bytes = bytes;
            row.output_scale = options.output_scale;
            row.tokens = tokens_of(bytes, storage);
            row.heads = heads;
            row.head_dim = head_dim;
            const float scale = options.output_scale;
            configure(benchmark::RegisterBenchmark(
                kernel_name(row).c_str(),
                [ws, &kernel, storage, pair, bytes, threads, scale](benchmark::State& s) {
                  kernel_benchmark(s, *ws, kernel, storage, pair, bytes, threads, scale);
                }));
            rows.push_back(std::move(row));
          }
        }
      }
    }
  }

  std::unique_ptr<benchmark::BenchmarkReporter> console;
  if (options.console) console = std::make_unique<benchmark::ConsoleReporter>();
  collecting_reporter collector(console.get());
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();

  std::vector<throughput_row> measured;
  const std::string simd_target = fast::current_simd_target();
  for (throughput_row& row : rows) {
    row.simd_target = simd_target;
    auto k = collector.bytes_per_second.find(kernel_name(row));
    if (k == collector.bytes_per_second.end()) continue;  // filtered out or failed
    row.gbps = k->second / 1e9;
    auto gbps_of = [&](copy_choice copy) {
      auto m = collector.bytes_per_second.find(copy_name(copy, row.bytes, row.threads));
      return m == collector.bytes_per_second.end() ? 0.0 : m->second / 1e9;
    };
    row.memcpy_gbps = gbps_of(nullptr);
    for (const copy_method& copy : fast_copies())
      if (const double gbps = gbps_of(&copy); gbps > row.stream_copy_gbps) {
        row.stream_copy_gbps = gbps;
        row.stream_copy = copy.name;
      }
    row.cpu = cpu_model();
    const double baseline = std::max(row.memcpy_gbps, row.stream_copy_gbps);
    row.ratio = baseline > 0 ? row.gbps / baseline : 0;
    measured.push_back(std::move(row));
  }
  return measured;
}

nlohmann::json throughput_json(const std::vector<throughput_row>& rows) {
  nlohmann::json all = nlohmann::json::array();
  for (const throughput_row& r : rows) {
    all.push_back({{"kernel", r.kernel},
                   {"dtype", r.dtype},
                   {"pairing", r.pairing},
                   {"threads", r.threads},
                   {"bytes", r.bytes},
                   {"gbps", r.gbps},
                   {"memcpy_gbps", r.memcpy_gbps},
                   {"stream_copy_gbps", r.stream_copy_gbps},
                   {"ratio", r.ratio},
                   {"simd_target", r.simd_target},
                   {"output_scale", r.output_scale},
                   {"source", r.source},
                   {"tokens", r.tokens},
                   {"heads", r.heads},
                   {"head_dim", r.head_dim},
                   {"stream_copy", r.stream_copy},
                   {"cpu", r.cpu}});
  }
  return all;
}

std::string throughput_text(const std::vector<throughput_row>& rows) {
  std::string text;
  if (rows.empty()) return text;
  text += "CPU: " + rows.front().cpu + "\n";
  text += "SIMD target: " + rows.front().simd_target + "\n";
  if (rows.front().output_scale != 1.0f)
    text += "fp8 output scale: " + std::to_string(rows.front().output_scale) + "\n";
  auto shown = [](const throughput_row& r) {
    return r.source == "built-in" ? r.kernel : r.kernel + " (" + r.source + ")";
  };
  int width = 18;
  for (const throughput_row& r : rows) width = std::max(width, static_cast<int>(shown(r).size()));
  text += fmt::format("{:<{}} {:<13} {:<9} {:>7} {:>10} {:>8} {:>8} {:>8} {:<13} {:>7}\n", "kernel", width,
                      "dtype", "pairing", "threads", "X bytes", "GB/s", "memcpy", "stream", "(copy)", "ratio");
  for (const throughput_row& r : rows)
    text += fmt::format("{:<{}} {:<13} {:<9} {:>7} {:>10} {:>8.2f} {:>8.2f} {:>8.2f} {:<13} {:>7.3g}\n", shown(r),
                        width, r.dtype, r.pairing, r.threads, r.bytes, r.gbps, r.memcpy_gbps,
                        r.stream_copy_gbps, r.stream_copy, r.ratio);
  return text;
}

}  // namespace ropecheck::bench
