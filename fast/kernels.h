// kernels: the one registry of fast RoPE kernels. Tests, benchmarks, the property suite, the
// gate and `ropecheck kernels` all iterate kernel_registry(); no other list exists.
// Each kernel is a plain function (call, prepared angles) -> status, which is what the C ABI
// (ropecheck/kernel_abi.h) exposes.
#pragma once

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
