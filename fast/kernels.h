// kernels: the one registry of fast RoPE kernels. Tests, benchmarks, the property suite, the
// gate and `ropecheck kernels` all iterate kernel_registry(); no other list exists.
// Each kernel is a plain function (call, prepared angles) -> status, which is what the C ABI
// (ropecheck/kernel_abi.h) exposes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>

#include "fast/frequencies.h"
#include "fast/rope_angles.h"
#include "fast/rope_call.h"
#include "fast/status.h"
#include "numeric/dtype.h"
#include "spec/rope_spec.h"

namespace ropecheck::fast {

// The calls a kernel serves: its declared domain (C ABI v3's `limits` and `max_position`,
// include/ropecheck/kernel_abi.h). Kernels in use serve less than every call RoPE defines: a
// cos/sin cache has rows [0, N) only, a forward-only kernel has no inverse direction, an
// inference kernel no attention factor or pass-through dims, a fused one needs Q and K in one
// call. The gate never sends a kernel a call outside its domain (a refusal there would say
// nothing about the kernel, and a wrapper emulating the missing part would be what is judged);
// it reports the properties that need what is missing as skipped, with the reason. A refusal
// inside the domain is a failure. The default serves every call: the built-in kernels, Python
// kernels and C ABI v1/v2 libraries.
struct kernel_domain {
  bool negative_positions = true;  // false: positions m >= 0 only
  std::int64_t max_position = 0;   // > 0: |m| <= max_position (as gate --max-position); 0: no bound
  bool inverse = true;             // direction::inverse
  bool attention_factor = true;    // an attention factor A != 1
  bool partial_rotary = true;      // rotary_dim < head_dim (pass-through dims)
  bool absent_tensor = true;       // a call with Q or K absent (0 heads)

  bool serves_position(std::int64_t m) const {
    if (m < 0 && !negative_positions) return false;
    return max_position <= 0 || (m <= max_position && -m <= max_position);
  }
  // The calls both serve (a run's --positions and --max-position narrow each kernel's domain).
  kernel_domain intersect(const kernel_domain& o) const {
    kernel_domain d;
    d.negative_positions = negative_positions && o.negative_positions;
    d.max_position = max_position <= 0   ? o.max_position
                     : o.max_position <= 0 ? max_position
                                           : std::min(max_position, o.max_position);
    d.inverse = inverse && o.inverse;
    d.attention_factor = attention_factor && o.attention_factor;
    d.partial_rotary = partial_rotary && o.partial_rotary;
    d.absent_tensor = absent_tensor && o.absent_tensor;
    return d;
  }
  bool operator==(const kernel_domain&) const = default;
};

struct kernel_info {
  std::string_view name;
  std::string_view description;  // one line
  angle_strategy strategy;       // which rope_angles it needs
  std::span<const dtype> dtypes;
  std::span<const pairing> pairings;
  // The kernel itself. `context` is what it needs besides the call (null for built-in
  // kernels; the C-ABI descriptor for a kernel loaded from a shared library).
  status (*entry)(const void* context, const rope_call& call, const rope_angles& angles);
  const void* context = nullptr;
  // True for the kernels that round each output once from float64 (fast/precise_rotation.h):
  // they compute other bits than the float32 kernels and promise the tighter bound of
  // docs/error-bounds.md §18, which the property `rounded_once_within_half_ulp` checks.
  bool rounds_once = false;
  // Serves calls with several position streams (M-RoPE, 2-D vision). A kernel library built
  // for C ABI v1 does not: it gets single-stream calls only, and the gate skips the stream
  // properties for it.
  bool multi_stream = true;
  // Serves a per-call fp8 output scale (rope_call::output_scale). A C ABI v1 library and a
  // Python kernel do not: they are refused σ ≠ 1 (never sent it unscaled), and the gate skips
  // the property output_scale_within_bound for them.
  bool takes_output_scale = true;
  // What the kernel serves (kernel_domain above); every call by default.
  kernel_domain domain = {};

  status apply(const rope_call& call, const rope_angles& angles) const {
    return entry(context, call, angles);
  }

  bool supports(dtype t) const;
  bool supports(pairing p) const;
  // Angles for this kernel's strategy (the cos/sin table is built only for cache kernels).
  result<rope_angles> prepare(const rope_frequencies& frequencies,
                              std::int64_t max_position) const;
  // Angles for the positions of one call (rope_angles::prepare_for): a cache kernel's table
  // has rows for those positions only when they are sparse.
  result<rope_angles> prepare_for(const rope_frequencies& frequencies,
                                  std::span<const std::int64_t> positions) const;
};

std::span<const kernel_info> kernel_registry();
const kernel_info* find_kernel(std::string_view name);  // nullptr if unknown

// Rotates packed [rows, heads, head_dim] X into Y (Y may be X) with `kernel`, one position per
// row and stream (`positions` is [streams, rows] for the spec's stream layout), by the spec's frequencies (scaled ones see max position + 1 as the sequence length). A
// cache kernel gets a table of the call's positions (rope_angles::prepare_for: [0, max position
// + 1) when they are dense, else their distinct values). `output_scale`: rope_call's (fp8 only).
status apply_packed(const kernel_info& kernel, const rope_spec& spec, dtype storage, const void* x,
                    void* y, std::int64_t heads, std::span<const std::int64_t> positions,
                    direction dir = direction::forward, float output_scale = 1.0f);

}  // namespace ropecheck::fast
