// kernel_comparison: entries (one kernel × dtype × pairing call, or one copy of a dtype's bytes)
// timed in rounds of random order; a row's ratio is to the fastest copy of the same bytes.
#include "bench/kernel_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>

#include "bench/cpu_model.h"
#include "bench/random_buffer.h"
#include "bench/stream_copy.h"
#include "fast/simd_target.h"

namespace ropecheck::bench {

namespace {

constexpr const auto& all_dtypes = storage_dtypes;

struct entry {
  std::function<fast::status()> call;
  double best_seconds = std::numeric_limits<double>::infinity();
  bool failed = false;
  // A kernel's row (index into rows), or a copy: nullptr memcpy, else one of fast_copies().
  int row = -1;
  const copy_method* copy = nullptr;
  std::size_t element_bytes = 0;  // a copy's: which byte count it copies
};

// Calls `e` until `min_seconds` of wall time have passed; keeps the best time per call. A call
// that fails (a refusal, a worker that died) ends the entry's timing with its status.
fast::status time_round(entry& e, double min_seconds) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  long calls = 0;
  double elapsed = 0;
  do {
    if (fast::status s = e.call(); !s.ok()) {
      e.failed = true;
      return s;
    }
    ++calls;
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  } while (elapsed < min_seconds);
  e.best_seconds = std::min(e.best_seconds, elapsed / static_cast<double>(calls));
  return fast::status::success();
}

// Q alone, or — for a kernel that needs both — Q and K splitting the heads of the same tokens
// (the same bytes move either way).
fast::rope_call workload_call(const fast::kernel_info& kernel, dtype storage, pairing pair,
                              const comparison_options& o, const std::byte* in, std::byte* out,
                              std::span<const std::int64_t> positions) {
  const fast::call_shape shape{storage, pair, o.head_dim, o.head_dim};
  fast::rope_call call;
  if (kernel.domain.absent_tensor) {
    call = fast::make_call(shape, positions, fast::packed_tensor(in, out, o.heads, o.head_dim));
  } else {
    const std::int64_t q_heads = o.heads - o.heads / 2;
    const std::int64_t row = o.heads * o.head_dim;
    const auto k_offset = static_cast<std::size_t>(q_heads * o.head_dim) * size_of(storage);
    const fast::rope_tensor q{in, out, q_heads, row, o.head_dim, row, o.head_dim};
    const fast::rope_tensor k{in + k_offset, out + k_offset, o.heads / 2, row, o.head_dim, row, o.head_dim};
    call = fast::make_call(shape, positions, q, k);
  }
  call.output_scale = o.output_scale;
  return call;
}

}  // namespace

std::optional<unmeasurable> why_not_measurable(const fast::kernel_info& kernel, const comparison_options& o) {
  if (!kernel.domain.serves_position(o.tokens - 1))
    return unmeasurable{"--tokens", fmt::format("it serves positions up to {}, and {} tokens reach position {}",
                                                kernel.domain.max_position, o.tokens, o.tokens - 1)};
  if (!kernel.domain.absent_tensor && o.heads < 2)
    return unmeasurable{"--heads", "it needs Q and K in one call, so at least 2 heads to split between them"};
  if (o.output_scale != 1.0f && !kernel.takes_output_scale)
    return unmeasurable{"--output-scale", "it takes no fp8 output scale"};
  return std::nullopt;
}

comparison_result run_kernel_comparison(std::span<const fast::kernel_info> library,
                                        const comparison_options& o) {
  comparison_result result;
  struct measured {
    const fast::kernel_info* kernel;
    std::string source;
  };
  std::vector<measured> kernels;
  std::set<std::pair<dtype, pairing>> served;  // what the library's kernels serve
  auto wanted = [&](const fast::kernel_info& k, dtype t) {
    return k.supports(t) && (o.output_scale == 1.0f || is_float8(t));
  };
  for (const fast::kernel_info& k : library) {
    if (why_not_measurable(k, o)) continue;
    kernels.push_back({&k, o.library_source});
    for (dtype t : all_dtypes)
      if (wanted(k, t))
        for (pairing p : k.pairings) served.insert({t, p});
  }
  for (const fast::kernel_info& k : fast::kernel_registry()) kernels.push_back({&k, "built-in"});

  const std::vector<std::int64_t> positions = [&] {
    std::vector<std::int64_t> p(static_cast<std::size_t>(o.tokens));
    for (std::int64_t i = 0; i < o.tokens; ++i) p[static_cast<std::size_t>(i)] = i;
    return p;
  }();
  rope_spec spec;
  spec.head_dim = o.head_dim;
  spec.rotary_dim = o.head_dim;
  const fast::rope_frequencies frequencies = fast::unscaled_frequencies(spec);

  const std::int64_t elements = o.tokens * o.heads * o.head_dim;
  std::map<dtype, std::pair<aligned_bytes, aligned_bytes>> buffers;
  auto buffers_of = [&](dtype t) {
    auto& b = buffers[t];
    const auto bytes = elements * static_cast<std::int64_t>(size_of(t));
    if (!b.first) b = {random_buffer(bytes, t, 0), random_buffer(bytes, t, 1)};
    return std::pair<const std::byte*, std::byte*>(b.first.get(), b.second.get());
  };
  std::vector<std::unique_ptr<fast::rope_angles>> angles;
  std::deque<fast::rope_call> calls;  // entries point into it
  std::vector<entry> entries;
  std::set<std::size_t> element_sizes;
  for (const measured& m : kernels) {
    const fast::kernel_info& k = *m.kernel;
    std::unique_ptr<fast::rope_angles> prepared;
    bool unprepared = false;  // its angles could not be prepared: reported once, not measured
    for (dtype t : all_dtypes) {
      if (!wanted(k, t)) continue;
      for (pairing p : k.pairings) {
        if (m.source == "built-in" && !library.empty() && !served.contains({t, p})) continue;
        if (unprepared) continue;
        if (!prepared) {
          auto a = k.prepare(frequencies, o.tokens);
          if (!a.ok()) {
            result.failures.push_back(
                fmt::format("{}: cannot prepare its angles: {}", k.name, a.state.message));
            unprepared = true;
            continue;
          }
          prepared = std::make_unique<fast::rope_angles>(std::move(*a.value));
        }
        const auto [in, out] = buffers_of(t);
        throughput_row row;
        row.kernel = std::string(k.name);
        row.dtype = std::string(to_string(t));
        row.pairing = std::string(to_string(p));
        row.bytes = elements * static_cast<std::int64_t>(size_of(t));
        row.output_scale = o.output_scale;
        row.source = m.source;
        row.tokens = o.tokens;
        row.heads = o.heads;
        row.head_dim = o.head_dim;
        calls.push_back(workload_call(k, t, p, o, in, out, positions));
        entry e;
        e.call = [&k, call = &calls.back(), a = prepared.get()] { return k.apply(*call, *a); };
        e.row = static_cast<int>(result.rows.size());
        result.rows.push_back(std::move(row));
        entries.push_back(std::move(e));
        element_sizes.insert(size_of(t));
      }
    }
    if (prepared) angles.push_back(std::move(prepared));
  }
  // The copies of each byte count a row moves: memcpy and every fast copy.
  for (std::size_t size : element_sizes) {
    const dtype t = size == 4 ? dtype::float32 : size == 2 ? dtype::float16 : dtype::float8_e4m3fn;
    const auto [in, out] = buffers_of(t);
    const auto bytes = static_cast<std::size_t>(elements) * size;
    std::vector<const copy_method*> copies{nullptr};
    for (const copy_method& c : fast_copies()) copies.push_back(&c);
    for (const copy_method* c : copies) {
      entry e;
      e.copy = c;
      e.element_bytes = size;
      e.call = [c, in = in, out = out, bytes] {
        if (c == nullptr)
          std::memcpy(out, in, bytes);
        else
          c->copy(in, out, bytes);
        return fast::status::success();
      };
      // A baseline that did not copy would flatter every ratio: checked against the input.
      std::memset(out, 0x5A, bytes);
      e.call();
      if (std::memcmp(in, out, bytes) != 0)
        throw std::logic_error(fmt::format("bench: the copy {} does not copy", c ? c->name : "memcpy"));
      entries.push_back(std::move(e));
    }
  }

  // One call each first (page faults, a cache table's first touch, a worker's start); a
  // refused call is a failure, reported and left out.
  for (entry& e : entries) {
    if (const fast::status s = e.call(); !s.ok()) {
      e.failed = true;
      const throughput_row& r = result.rows[static_cast<std::size_t>(e.row)];
      result.failures.push_back(fmt::format("{} {} {}: {}", r.kernel, r.dtype, r.pairing, s.message));
    }
  }
  std::vector<entry*> order;
  for (entry& e : entries) order.push_back(&e);
  std::mt19937_64 random(std::random_device{}());
  for (int round = 0; round < o.rounds; ++round) {
    std::shuffle(order.begin(), order.end(), random);
    for (entry* e : order) {
      if (e->failed) continue;
      if (const fast::status s = time_round(*e, o.min_seconds); !s.ok() && e->row >= 0) {
        const throughput_row& r = result.rows[static_cast<std::size_t>(e->row)];
        result.failures.push_back(fmt::format("{} {} {}: {}", r.kernel, r.dtype, r.pairing, s.message));
      }
    }
  }

  // Rows: GB/s of bytes read + written; the copies of the same bytes beside them.
  std::vector<throughput_row> rows;
  const std::string simd_target = fast::current_simd_target();
  for (const entry& e : entries) {
    if (e.row < 0 || e.failed) continue;
    throughput_row row = result.rows[static_cast<std::size_t>(e.row)];
    const auto gbps = [&](const entry& x) {
      return 2.0 * static_cast<double>(row.bytes) / x.best_seconds / 1e9;
    };
    row.gbps = gbps(e);
    for (const entry& c : entries) {
      if (c.row >= 0 ||
          c.element_bytes * static_cast<std::size_t>(elements) != static_cast<std::size_t>(row.bytes))
        continue;
      if (c.copy == nullptr) {
        row.memcpy_gbps = gbps(c);
      } else if (gbps(c) > row.stream_copy_gbps) {
        row.stream_copy_gbps = gbps(c);
        row.stream_copy = c.copy->name;
      }
    }
    row.ratio = row.gbps / std::max(row.memcpy_gbps, row.stream_copy_gbps);
    row.simd_target = simd_target;
    row.cpu = cpu_model();
    rows.push_back(std::move(row));
  }
  result.rows = std::move(rows);
  return result;
}

}  // namespace ropecheck::bench
