// throughput: the standard RoPE throughput table — every registered kernel × storage dtype ×
// pairing × thread count × size, each beside the honest copy baseline of the same bytes measured
// in the same run, via Google Benchmark: the fastest of glibc memcpy and the streaming and
// `rep movsb` copies this CPU runs (bench/stream_copy.h says why all of them). Throughput counts
// bytes read + bytes written (an out-of-place pass reads X and writes Y: 2 × |X|), for the
// kernel and for the copies alike.
// `ropecheck bench [--json] [--all]` and the ropecheck_benchmarks program both call this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ropecheck::bench {

struct throughput_options {
  bool all = false;                  // sizes up to 1 GiB instead of 64 MiB
  std::vector<int> threads{1, 2};    // tokens are split evenly across std::threads
  double min_seconds = 0.1;          // Google Benchmark's minimum time per measurement
  int repetitions = 3;               // rows keep the best repetition (kernel and memcpy alike)
  std::vector<std::int64_t> sizes;   // tensor bytes; empty: standard_sizes(all)
  bool console = true;               // print Google Benchmark's console report as it runs
  float output_scale = 1.0f;         // fp8 output scale σ (rope_call::output_scale); σ ≠ 1
                                     // measures the fp8 rows only (other dtypes refuse σ ≠ 1)
  // Run every repetition of every row and copy in one random order (Google Benchmark's
  // --benchmark_enable_random_interleaving), so the copies are measured over the same minutes as
  // the kernels on a machine whose bandwidth drifts; for callers that do not pass Google
  // Benchmark its flags (`ropecheck bench`). Set once, it stays set in the process.
  bool random_interleaving = false;
};

struct throughput_row {
  std::string kernel;
  std::string dtype;
  std::string pairing;
  int threads = 1;
  std::int64_t bytes = 0;  // size of X (the same again is written)
  double gbps = 0;         // (bytes read + bytes written) / s / 1e9
  double memcpy_gbps = 0;       // glibc memcpy of X into Y, same threads, same run
  double stream_copy_gbps = 0;  // the fastest other copy (stream_copy.h) of X into Y, same run
  double ratio = 0;             // gbps / max(memcpy_gbps, stream_copy_gbps)
  std::string simd_target; // what the *_simd kernels dispatched to (fast/simd_target.h)
  float output_scale = 1.0f;  // the σ the kernel stored with
  std::string source = "built-in";  // or "library": a --kernel-lib kernel (kernel_comparison.h)
  std::int64_t tokens = 0;          // X = [tokens, heads, head_dim]
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::string stream_copy;          // which copy stream_copy_gbps is (copy_method::name)
  std::string cpu;                  // cpu_model.h: the machine the row was measured on
};

// X = [tokens, 32 heads, 128] sized 16 KiB (L1) .. 64 MiB (past L3); `all` adds 256 MiB, 1 GiB.
std::vector<std::int64_t> standard_sizes(bool all);

// Registers the table's benchmarks (and memcpy baselines) with Google Benchmark, runs them
// (honouring --benchmark_filter if benchmark::Initialize saw it) and returns the rows.
std::vector<throughput_row> run_throughput_table(const throughput_options& options);

// [{"kernel", "dtype", "pairing", "threads", "bytes", "gbps", "memcpy_gbps", "stream_copy_gbps",
//   "ratio", "simd_target", "output_scale", "source", "tokens", "heads", "head_dim",
//   "stream_copy", "cpu"}, ...]
nlohmann::json throughput_json(const std::vector<throughput_row>& rows);

// A fixed-width text table of the rows, for terminals.
std::string throughput_text(const std::vector<throughput_row>& rows);

}  // namespace ropecheck::bench
