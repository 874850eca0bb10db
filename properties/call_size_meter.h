// call_size_meter: the largest call a property sends a kernel, in token-heads (tokens × (Q heads
// + K heads), the measure kernels dispatch on), for the report's largest_call_token_heads. A
// kernel_info whose entry counts and forwards to the kernel's, so that every call of every
// property is seen, whichever helper made it. Internal to properties/.
#pragma once

#include <algorithm>
#include <cstdint>

#include "fast/kernels.h"

namespace ropecheck::properties {

class call_size_meter {
 public:
  explicit call_size_meter(const fast::kernel_info& kernel) : inner_(kernel), metered_(kernel) {
    metered_.entry = &forward;
    metered_.context = this;
  }
  call_size_meter(const call_size_meter&) = delete;  // metered_ points at this object
  call_size_meter& operator=(const call_size_meter&) = delete;

  const fast::kernel_info& kernel() const { return metered_; }
  std::int64_t largest_token_heads() const { return largest_; }

 private:
  // Counts the calls the kernel served: a call it refused (rejects_invalid_calls sends absurd
  // sizes on purpose) was not one it ran.
  static fast::status forward(const void* context, const fast::rope_call& call, const fast::rope_angles& angles) {
    auto* self = static_cast<call_size_meter*>(const_cast<void*>(context));
    fast::status s = self->inner_.apply(call, angles);
    std::int64_t heads = 0, token_heads = 0;
    if (s.ok() && call.tokens >= 0 && call.q.heads >= 0 && call.k.heads >= 0 &&
        !__builtin_add_overflow(call.q.heads, call.k.heads, &heads) &&
        !__builtin_mul_overflow(call.tokens, heads, &token_heads))
      self->largest_ = std::max(self->largest_, token_heads);
    return s;
  }

  const fast::kernel_info& inner_;
  fast::kernel_info metered_;
  std::int64_t largest_ = 0;
};

}  // namespace ropecheck::properties
