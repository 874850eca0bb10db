// kernels: the one registry of fast RoPE kernels. Tests, benchmarks, the property suite, the
// gate and `ropecheck kernels --json` all iterate kernel_registry(); no other list exists.
// Each kernel is a plain function (call, prepared angles) -> status, which is what the C ABI
// (ropecheck/kernel_abi.h) exposes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

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

  status apply(const rope_call& call, const rope_angles& angles) const {
    return entry(context, call, angles);
  }

  bool supports(dtype t) const;
  bool supports(pairing p) const;
  // Angles for this kernel's strategy (the cos/sin table is built only for cache kernels).
  result<rope_angles> prepare(const rope_frequencies& frequencies,
                              std::int64_t max_position) const;
};

std::span<const kernel_info> kernel_registry();
const kernel_info* find_kernel(std::string_view name);  // nullptr if unknown

// [{"name", "description", "strategy", "dtypes": [...], "pairings": ["half", "adjacent"]}]
nlohmann::json kernels_json();

// What `ropecheck apply` has after reading its .npy files: X as a dense
// [batch, tokens, heads, head_dim] array, positions as [tokens] (shared by every batch
// entry) or [batch, tokens].
struct dense_rope_args {
  dtype storage = dtype::float32;
  const void* x = nullptr;
  void* y = nullptr;  // may equal x (in place)
  std::int64_t batch = 1;
  std::int64_t tokens = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  const void* positions = nullptr;
  dtype position_type = dtype::int64;
  bool positions_per_batch = false;  // positions are [batch, tokens]
  direction dir = direction::forward;
};

// Rotates X by the spec's plain RoPE frequencies with the named kernel. A cache kernel gets a
// table covering [0, max position + 1).
status apply_kernel(std::string_view kernel_name, const rope_spec& spec,
                    const dense_rope_args& args);

}  // namespace ropecheck::fast
