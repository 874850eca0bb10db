// stream_copy: Highway's Stream (non-temporal store) over the baseline target; the copy is
// memory-bound, so the vector width does not matter and no dispatch is needed.
#include "bench/stream_copy.h"

#include <cstring>

#include <hwy/cache_control.h>
#include <hwy/highway.h>

namespace ropecheck::bench {

namespace hn = hwy::HWY_NAMESPACE;

void stream_copy(const std::byte* in, std::byte* out, std::size_t bytes) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto* src = reinterpret_cast<const std::uint8_t*>(in);
  auto* dst = reinterpret_cast<std::uint8_t*>(out);
  std::size_t i = 0;
  for (; i + 4 * lanes <= bytes; i += 4 * lanes) {
    const auto a = hn::Load(d, src + i);
    const auto b = hn::Load(d, src + i + lanes);
    const auto c = hn::Load(d, src + i + 2 * lanes);
    const auto e = hn::Load(d, src + i + 3 * lanes);
    hn::Stream(a, d, dst + i);
    hn::Stream(b, d, dst + i + lanes);
    hn::Stream(c, d, dst + i + 2 * lanes);
    hn::Stream(e, d, dst + i + 3 * lanes);
  }
  if (i < bytes) std::memcpy(dst + i, src + i, bytes - i);
  hwy::FlushStream();
}

}  // namespace ropecheck::bench
