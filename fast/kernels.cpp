// The registry, the driver every kernel shares (checks, then blocks of tokens: cos/sin rows
// from the table or computed, then the rotation loop per tensor) and apply_packed.
#include "fast/kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fast/call_checks.h"
#include "fast/cos_sin.h"
#include "fast/precise_rotation.h"
#include "fast/rotation.h"
#include "fast/store_policy.h"
#include "spec/stream_layout.h"

namespace ropecheck::fast {

namespace {

using rotate_fn = void (*)(const detail::rotation_chunk&);
// Where a precise kernel's double cos/sin rows come from (precise_rotation.h); null for the
// float32 kernels.
using precise_rows_fn = void (*)(const std::int64_t*, std::int64_t, const double*, std::int64_t,
                                 double, double*);

// Tokens per block: amortizes dispatch and lets on-the-fly fill SIMD lanes with short rows.
constexpr std::int64_t token_block = 16;

constexpr std::array both_pairings{pairing::half_split, pairing::adjacent};

status invalid(std::string message) {
  return status::error(status_code::invalid_argument, std::move(message));
}

status check_positions(const rope_call& call, const rope_angles& angles) {
  const bool cached = angles.strategy() == angle_strategy::cache;
  const std::int64_t lo = cached ? 0 : -on_the_fly_position_limit;
  const std::int64_t hi = cached ? angles.max_position() - 1 : on_the_fly_position_limit;
  for (std::int32_t stream = 0; stream < call.position_streams; ++stream) {
    for (std::int64_t i = 0; i < call.tokens; ++i) {
      const std::int64_t m = position_at(call, i, stream);
      // A sparse table (rope_angles::prepare_for) has rows for its call's positions only.
      if (m < lo || m > hi || (cached && !angles.covers(m))) {
        const std::string where = call.position_streams > 1
                                      ? "[" + std::to_string(stream) + ", " + std::to_string(i) + "]"
                                      : "[" + std::to_string(i) + "]";
        return status::error(
            status_code::out_of_range,
            "positions" + where + " = " + std::to_string(m) + " is outside " +
                (!cached ? "the on-the-fly range [-2^31, 2^31]"
                 : m < lo || m > hi
                     ? "the cos/sin cache [0, " + std::to_string(angles.max_position()) + ")"
                     : "the positions the cos/sin cache was built for"));
      }
    }
  }
  return status::success();
}

std::string list_names(std::span<const dtype> dtypes) {
  std::string s;
  for (dtype t : dtypes) s += (s.empty() ? "" : ", ") + std::string(to_string(t));
  return s;
}

// The precise kernels' reduction is exact only for |m·θ_j| < 2^45 (precise_rotation.h).
status check_precise_angles(const rope_call& call, const rope_angles& angles) {
  double largest_theta = 0;
  for (const double theta : angles.frequencies().inverse_frequencies)
    largest_theta = std::max(largest_theta, std::fabs(theta));
  for (std::int32_t stream = 0; stream < call.position_streams; ++stream) {
    for (std::int64_t i = 0; i < call.tokens; ++i) {
      const std::int64_t m = position_at(call, i, stream);
      if (std::fabs(static_cast<double>(m)) * largest_theta >= detail::precise_angle_limit) {
        return status::error(status_code::out_of_range,
                             "positions[" + std::to_string(stream) + "][" + std::to_string(i) +
                                 "] = " + std::to_string(m) +
                                 " times the largest inverse frequency reaches 2^45, beyond the "
                                 "exact range of the precise kernels' reduction");
      }
    }
  }
  return status::success();
}

template <typename T>
void grow_to(std::vector<T>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer.resize(size);
}

// One row per token for the rotation: the stream's own row with one stream, else pair j's cos
// and sin copied from the row of stream pair_streams[j] into `gathered`.
template <typename T>
void select_stream_rows(const rope_call& call, const T* const (&stream_rows)[max_position_streams][token_block],
                        std::int64_t count, std::int64_t pairs, T* gathered, const T** rows) {
  if (call.position_streams == 1) {
    for (std::int64_t i = 0; i < count; ++i) rows[i] = stream_rows[0][i];
    return;
  }
  for (std::int64_t i = 0; i < count; ++i) {
    T* row = gathered + i * 2 * pairs;
    for (std::int64_t j = 0; j < pairs; ++j) {
      const T* from = stream_rows[call.pair_streams[j]][i];
      row[j] = from[j];
      row[pairs + j] = from[pairs + j];
    }
    rows[i] = row;
  }
}

status run(const kernel_info& kernel, rotate_fn rotate, precise_rows_fn precise_rows,
           const rope_call& call, const rope_angles& angles) {
  const auto name = [&kernel] { return std::string(kernel.name); };  // for messages only
  if (!kernel.supports(call.storage)) {
    return status::error(status_code::unsupported,
                         "kernel " + name() + " does not support dtype " +
                             std::string(to_string(call.storage)) + " (supports " +
                             list_names(kernel.dtypes) + ")");
  }
  if (!kernel.supports(call.pair)) {
    return status::error(status_code::unsupported, "kernel " + name() +
                                                       " does not support pairing " +
                                                       std::string(to_string(call.pair)));
  }
  if (angles.strategy() != kernel.strategy) {
    return invalid("kernel " + name() + " needs angles prepared for strategy " +
                   std::string(to_string(kernel.strategy)) + ", got " +
                   std::string(to_string(angles.strategy())));
  }
  if (status s = detail::check_call(call); !s.ok()) return s;
  if (call.rotary_dim / 2 != angles.pairs()) {
    return invalid("rotary_dim " + std::to_string(call.rotary_dim) + " needs " +
                   std::to_string(call.rotary_dim / 2) + " inverse frequencies, the angles have " +
                   std::to_string(angles.pairs()));
  }
  if (status s = check_positions(call, angles); !s.ok()) return s;
  if (precise_rows != nullptr) {
    if (status s = check_precise_angles(call, angles); !s.ok()) return s;
  }

  const std::int64_t element = static_cast<std::int64_t>(size_of(call.storage));
  const std::int64_t pairs = angles.pairs();
  const std::int64_t output_bytes =
      (call.q.heads + call.k.heads) * call.tokens * call.head_dim * element;
  // Past the last-level cache (store_policy.h): non-temporal stores where aligned, and the
  // input prefetched ahead of the loop.
  const bool past_cache = output_bytes > streaming_threshold_bytes();
  const bool large = call.rotary_dim == call.head_dim && past_cache;

  const bool precise = precise_rows != nullptr;
  const bool on_the_fly = angles.strategy() == angle_strategy::on_the_fly && !precise;
  // Several position streams: each stream's rows are made exactly as for 1-D RoPE, then pair j
  // takes its cos and sin from the row of its stream (equal streams give 1-D RoPE's bits).
  const std::int32_t streams = call.position_streams;
  const std::size_t row_values = static_cast<std::size_t>(2 * pairs);
  const std::size_t block_values = static_cast<std::size_t>(token_block) * row_values;
  const std::size_t stream_values = block_values * static_cast<std::size_t>(streams);
  // Reused by the thread's later calls: a decode step's call would otherwise pay a malloc.
  thread_local std::vector<float> computed_rows, gathered_rows;
  thread_local std::vector<double> computed_precise_rows, gathered_precise_rows;
  grow_to(computed_rows, on_the_fly ? stream_values : 0);
  grow_to(gathered_rows, !precise && streams > 1 ? block_values : 0);
  grow_to(computed_precise_rows, precise ? stream_values : 0);
  grow_to(gathered_precise_rows, precise && streams > 1 ? block_values : 0);
  // Not zero-filled: every entry a block reads is written for that block first (filling these
  // 1.25 KiB took a third of the driver's own samples in a profile of a one-token call).
  std::int64_t positions[token_block];
  const float* rows[token_block];
  const double* rows64[token_block];
  const float* stream_rows[max_position_streams][token_block];
  const double* stream_rows64[max_position_streams][token_block];

  for (std::int64_t first = 0; first < call.tokens; first += token_block) {
    const std::int64_t count = std::min(token_block, call.tokens - first);
    for (std::int32_t stream = 0; stream < streams; ++stream) {
      for (std::int64_t i = 0; i < count; ++i) positions[i] = position_at(call, first + i, stream);
      const rope_frequencies& f = angles.frequencies();
      if (precise) {
        double* out = computed_precise_rows.data() + static_cast<std::size_t>(stream) * block_values;
        precise_rows(positions, count, f.inverse_frequencies.data(), pairs, f.attention_factor, out);
        for (std::int64_t i = 0; i < count; ++i) stream_rows64[stream][i] = out + i * 2 * pairs;
      } else if (on_the_fly) {
        float* out = computed_rows.data() + static_cast<std::size_t>(stream) * block_values;
        fill_cos_sin_rows(positions, count, f.inverse_frequencies.data(), pairs,
                          f.attention_factor, out);
        for (std::int64_t i = 0; i < count; ++i) stream_rows[stream][i] = out + i * 2 * pairs;
      } else {
        for (std::int64_t i = 0; i < count; ++i) stream_rows[stream][i] = angles.cached_row(positions[i]);
      }
    }
    if (precise) {
      select_stream_rows(call, stream_rows64, count, pairs, gathered_precise_rows.data(), rows64);
    } else {
      select_stream_rows(call, stream_rows, count, pairs, gathered_rows.data(), rows);
    }
    for (const rope_tensor* t : {&call.q, &call.k}) {
      if (t->heads == 0) continue;
      detail::rotation_chunk chunk;
      chunk.storage = call.storage;
      chunk.pair = call.pair;
      chunk.inverse = call.dir == direction::inverse;
      chunk.in_place = detail::is_in_place(*t);
      chunk.allow_streaming = large && !chunk.in_place;
      chunk.prefetch = past_cache;
      chunk.tokens = count;
      chunk.prefetch_tokens = call.tokens - first;
      chunk.heads = t->heads;
      chunk.head_dim = call.head_dim;
      chunk.pairs = pairs;
      chunk.output_scale = call.output_scale;
      chunk.cos_sin_rows = rows;
      chunk.precise_rows = rows64;
      chunk.input = static_cast<const std::byte*>(t->input) + first * t->input_token_stride * element;
      chunk.output = static_cast<std::byte*>(t->output) + first * t->output_token_stride * element;
      chunk.input_token_stride = t->input_token_stride;
      chunk.input_head_stride = t->input_head_stride;
      chunk.output_token_stride = t->output_token_stride;
      chunk.output_head_stride = t->output_head_stride;
      rotate(chunk);
    }
  }
  return status::success();
}

// A built-in kernel's entry: the shared driver with its rotation loop. It finds its own
// registry entry (names, dtypes, strategy) by its address, so the registry below is the one
// place each kernel is described, its function beside its description.
template <rotate_fn Rotate, angle_strategy Strategy, precise_rows_fn PreciseRows = nullptr>
status apply_builtin(const void*, const rope_call& call, const rope_angles& angles);

constexpr std::array<kernel_info, 6> registry{{
    {"cache_simd",
     "float32 cos/sin table per position; AVX2/AVX-512 FMA rotation (Highway, runtime "
     "dispatch), scalar fallback",
     angle_strategy::cache, storage_dtypes, both_pairings,
     apply_builtin<detail::rotate_chunk_simd, angle_strategy::cache>, nullptr},
    {"on_the_fly_simd",
     "cos/sin per token from positions in double (quarter-turn reduction); AVX2/AVX-512 "
     "FMA rotation (Highway, runtime dispatch), scalar fallback",
     angle_strategy::on_the_fly, storage_dtypes, both_pairings,
     apply_builtin<detail::rotate_chunk_simd, angle_strategy::on_the_fly>, nullptr},
    {"cache_scalar", "float32 cos/sin table per position; portable scalar FMA rotation",
     angle_strategy::cache, storage_dtypes, both_pairings,
     apply_builtin<detail::rotate_chunk_scalar, angle_strategy::cache>, nullptr},
    {"on_the_fly_scalar",
     "cos/sin per token from positions in double (quarter-turn reduction); portable scalar "
     "FMA rotation",
     angle_strategy::on_the_fly, storage_dtypes, both_pairings,
     apply_builtin<detail::rotate_chunk_scalar, angle_strategy::on_the_fly>, nullptr},
    {"precise_simd",
     "one rounding per output: cos/sin per token in double (exact m*theta, quarter-turn "
     "reduction), rotation in double, rounded once to storage; AVX2/AVX-512 FMA (Highway, "
     "runtime dispatch), scalar fallback",
     angle_strategy::on_the_fly, storage_dtypes, both_pairings,
     apply_builtin<detail::rotate_chunk_precise_simd, angle_strategy::on_the_fly,
                   detail::fill_precise_cos_sin_rows>,
     nullptr, true},
    {"precise_scalar",
     "one rounding per output: cos/sin per token in double (exact m*theta, quarter-turn "
     "reduction), rotation in double, rounded once to storage; portable scalar FMA",
     angle_strategy::on_the_fly, storage_dtypes, both_pairings,
     apply_builtin<detail::rotate_chunk_precise_scalar, angle_strategy::on_the_fly,
                   detail::fill_precise_cos_sin_rows_portable>,
     nullptr, true},
}};

template <rotate_fn Rotate, angle_strategy Strategy, precise_rows_fn PreciseRows>
status apply_builtin(const void*, const rope_call& call, const rope_angles& angles) {
  static const kernel_info& self = *std::find_if(registry.begin(), registry.end(), [](const kernel_info& k) {
    return k.entry == &apply_builtin<Rotate, Strategy, PreciseRows>;
  });
  return run(self, Rotate, PreciseRows, call, angles);
}

}  // namespace

bool kernel_info::supports(dtype t) const {
  return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}

bool kernel_info::supports(pairing p) const {
  return std::find(pairings.begin(), pairings.end(), p) != pairings.end();
}

result<rope_angles> kernel_info::prepare(const rope_frequencies& frequencies,
                                         std::int64_t max_position) const {
  return rope_angles::prepare(strategy, frequencies, max_position);
}

result<rope_angles> kernel_info::prepare_for(const rope_frequencies& frequencies,
                                             std::span<const std::int64_t> positions) const {
  return rope_angles::prepare_for(strategy, frequencies, positions);
}

std::span<const kernel_info> kernel_registry() { return registry; }

const kernel_info* find_kernel(std::string_view name) {
  for (const kernel_info& k : registry) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

status apply_packed(const kernel_info& kernel, const rope_spec& spec, dtype storage, const void* x,
                    void* y, std::int64_t heads, std::span<const std::int64_t> positions,
                    direction dir, float output_scale) {
  if (spec.rotary_dim < 2 || spec.rotary_dim % 2 != 0 || spec.rotary_dim > spec.head_dim) {
    return invalid("spec rotary_dim must be even, >= 2 and <= head_dim, got " +
                   std::to_string(spec.rotary_dim));
  }
  if (const std::string problem = stream_layout_problem(spec.streams, spec.rotary_dim); !problem.empty())
    return invalid("spec stream layout: " + problem);
  const std::int32_t streams = spec.streams.streams();
  if (positions.size() % static_cast<std::size_t>(streams) != 0)
    return invalid(std::to_string(positions.size()) + " positions do not split into " +
                   std::to_string(streams) + " streams");
  std::int64_t max_position = 0;
  for (const std::int64_t m : positions) max_position = std::max(max_position, m + 1);
  // Scalings that depend on the length see max position + 1; the cache table has a row per
  // position the call uses, not one per position up to the largest (prepare_for).
  auto angles = kernel.prepare_for(scaled_frequencies(spec, max_position), positions);
  if (!angles.ok()) return angles.state;
  const std::vector<std::int32_t> map = pair_streams(spec.streams, spec.rotary_dim);
  rope_call call = with_streams(
      make_call({storage, spec.pair, spec.head_dim, spec.rotary_dim}, positions,
                packed_tensor(x, y, heads, spec.head_dim), {}, dir),
      positions, streams, map);
  call.output_scale = output_scale;
  return kernel.apply(call, *angles.value);
}

}  // namespace ropecheck::fast
