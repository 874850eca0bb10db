// stream_copy: the copies that make the honest copy baseline. glibc's memcpy switches to
// non-temporal stores only above a size threshold (about 240 MiB on the machine
// docs/throughput.md measured), so below it memcpy pays a read-for-ownership of the destination
// that a kernel streaming its outputs does not; and which copy is fastest differs by machine
// (on some, a 32-byte streaming copy outruns one at the widest vectors). So every copy this CPU
// can run is measured — streaming stores at each vector width it has, four vectors per
// iteration, and `rep movsb` — and the baseline is the fastest of them and memcpy, each checked
// byte for byte against its input.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace ropecheck::bench {

// A copy of `bytes` from `in` to `out` (not overlapping; any alignment) that has finished,
// fences included, when it returns.
struct copy_method {
  std::string_view name;  // stream_sse2, stream_avx2, stream_avx512, rep_movsb
  void (*copy)(const std::byte* in, std::byte* out, std::size_t bytes);
};

// The copies besides memcpy this CPU runs (x86-64: SSE2, AVX2 and AVX-512 streaming stores as
// the CPU has them, and rep movsb; other architectures: none, and memcpy is the baseline).
std::span<const copy_method> fast_copies();

}  // namespace ropecheck::bench
