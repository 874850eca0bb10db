// stream_copy: Highway's Stream (non-temporal store) at the widest vectors this CPU has, picked
// at run time by HWY_DYNAMIC_DISPATCH as the kernels' rotation is (fast/rotation_simd.cpp): a
// copy through 16-byte stores runs well below the memory's speed on some machines.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/stream_copy.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <cstring>

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "bench/stream_copy.h"

HWY_BEFORE_NAMESPACE();
namespace ropecheck::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void stream_copy_target(const std::byte* in, std::byte* out, std::size_t bytes) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto* src = reinterpret_cast<const std::uint8_t*>(in);
  auto* dst = reinterpret_cast<std::uint8_t*>(out);
  std::size_t i = 0;
  for (; i + 4 * lanes <= bytes; i += 4 * lanes) {
    const auto a = hn::LoadU(d, src + i);
    const auto b = hn::LoadU(d, src + i + lanes);
    const auto c = hn::LoadU(d, src + i + 2 * lanes);
    const auto e = hn::LoadU(d, src + i + 3 * lanes);
    hn::Stream(a, d, dst + i);
    hn::Stream(b, d, dst + i + lanes);
    hn::Stream(c, d, dst + i + 2 * lanes);
    hn::Stream(e, d, dst + i + 3 * lanes);
  }
  if (i < bytes) std::memcpy(dst + i, src + i, bytes - i);
  hwy::FlushStream();
}

}  // namespace HWY_NAMESPACE
}  // namespace ropecheck::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ropecheck::bench {

HWY_EXPORT(stream_copy_target);

void stream_copy(const std::byte* in, std::byte* out, std::size_t bytes) {
  HWY_DYNAMIC_DISPATCH(stream_copy_target)(in, out, bytes);
}

}  // namespace ropecheck::bench
#endif  // HWY_ONCE
