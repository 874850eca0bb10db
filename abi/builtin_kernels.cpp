// The built-in kernels exposed through the C ABI (include/ropecheck/kernel_abi.h), built as the
// shared library libropecheck_kernels.so: what a third-party library looks like to the gate,
// and a round trip that checks the ABI itself (abi/kernel_library_test.cpp).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "abi/abi_dtype.h"
#include "abi/kernel_descriptors.h"
#include "fast/kernels.h"
#include "ropecheck/kernel_abi.h"

namespace {

using namespace ropecheck;
using ropecheck::abi::abi_code;
using ropecheck::abi::dtype_of_abi_code;

constexpr std::size_t max_builtin_kernels = 16;

int fail(const ropecheck_rope_call* call, int status, const char* message) {
  if (call->message != nullptr && call->message_capacity > 0)
    std::snprintf(call->message, call->message_capacity, "%s", message);
  return status;
}

bool storage_of(int32_t abi, dtype& out) {
  const std::optional<dtype> t = dtype_of_abi_code(abi);
  if (t) out = *t;
  return t.has_value();
}

fast::rope_tensor tensor_of(const ropecheck_tensor& t) {
  return {t.input, t.output, t.heads, t.input_token_stride, t.input_head_stride,
          t.output_token_stride, t.output_head_stride};
}

template <std::size_t I>
int apply_builtin(const ropecheck_rope_call* call) {
  if (call == nullptr) return ROPECHECK_STATUS_INVALID_ARGUMENT;
  if (call->abi_version != ROPECHECK_KERNEL_ABI_VERSION && call->abi_version != ROPECHECK_KERNEL_ABI_VERSION_2 &&
      call->abi_version != ROPECHECK_KERNEL_ABI_VERSION_1)
    return fail(call, ROPECHECK_STATUS_UNSUPPORTED, "unsupported abi_version");
  const fast::kernel_info& kernel = fast::kernel_registry()[I];
  fast::rope_call c;
  if (!storage_of(call->dtype, c.storage) || !storage_of(call->position_dtype, c.position_type))
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "unknown dtype or position_dtype");
  c.pair = call->pairing == ROPECHECK_PAIRING_ADJACENT ? pairing::adjacent : pairing::half_split;
  c.dir = call->direction == ROPECHECK_DIRECTION_INVERSE ? fast::direction::inverse : fast::direction::forward;
  c.head_dim = call->head_dim;
  c.rotary_dim = call->rotary_dim;
  c.tokens = call->tokens;
  c.q = tensor_of(call->q);
  c.k = tensor_of(call->k);
  c.positions = call->positions;
  if (call->abi_version >= 2) {  // a v1 call ends before the stream fields
    c.position_streams = call->position_streams;
    c.position_stream_stride = call->position_stream_stride;
    c.pair_streams = call->pair_streams;
    c.output_scale = call->output_scale;
  }
  if (call->rotary_dim < 2 || call->rotary_dim % 2 != 0 || call->inverse_frequencies == nullptr)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "rotary_dim must be even and >= 2, with frequencies");
  if (call->positions == nullptr || call->tokens < 0)
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT, "null positions or negative tokens");
  // A cache kernel needs its table to cover the largest position of the call.
  if (c.position_streams < 1 || c.position_streams > fast::max_position_streams ||
      (c.position_streams > 1 && c.position_stream_stride < 0))
    return fail(call, ROPECHECK_STATUS_INVALID_ARGUMENT,
                "position_streams out of range, or a negative position_stream_stride");
  // Angles for this call's positions: a cache kernel's table has rows for them only when they
  // are sparse (rope_angles::prepare_for), never one sized by the largest.
  std::vector<std::int64_t> positions;
  positions.reserve(static_cast<std::size_t>(c.position_streams * call->tokens));
  for (std::int32_t s = 0; s < c.position_streams; ++s)
    for (std::int64_t t = 0; t < call->tokens; ++t) positions.push_back(fast::position_at(c, t, s));
  fast::rope_frequencies frequencies{
      std::vector<double>(call->inverse_frequencies, call->inverse_frequencies + call->rotary_dim / 2),
      call->attention_factor};
  const auto angles = kernel.prepare_for(frequencies, positions);
  fast::status s = angles.ok() ? kernel.apply(c, *angles.value) : angles.state;
  if (s.ok()) return ROPECHECK_STATUS_OK;
  const int code = s.code == fast::status_code::out_of_range  ? ROPECHECK_STATUS_OUT_OF_RANGE
                   : s.code == fast::status_code::unsupported ? ROPECHECK_STATUS_UNSUPPORTED
                                                              : ROPECHECK_STATUS_INVALID_ARGUMENT;
  return fail(call, code, s.message.c_str());
}

template <std::size_t... I>
constexpr std::array<int (*)(const ropecheck_rope_call*), sizeof...(I)> entries(std::index_sequence<I...>) {
  return {apply_builtin<I>...};
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const ropecheck_kernel* ropecheck_kernels(
    uint32_t abi_version, size_t* count) {
  static const std::vector<ropecheck_kernel> kernels = [] {
    static constexpr auto apply = entries(std::make_index_sequence<max_builtin_kernels>());
    std::vector<ropecheck_kernel> list;
    const auto registry = fast::kernel_registry();
    for (std::size_t i = 0; i < registry.size() && i < max_builtin_kernels; ++i) {
      uint32_t dtypes = 0, pairings = 0;
      for (dtype t : registry[i].dtypes)
        dtypes |= 1u << abi_code(t);
      for (pairing p : registry[i].pairings)
        pairings |= 1u << (p == pairing::adjacent ? ROPECHECK_PAIRING_ADJACENT : ROPECHECK_PAIRING_HALF);
      // The registry's names are string literals: their data() is NUL-terminated.
      // A cache kernel's table holds rows m >= 0 only (fast/kernels.h): its domain says so.
      const uint32_t limits =
          registry[i].strategy == fast::angle_strategy::cache ? uint32_t{ROPECHECK_LIMIT_NONNEGATIVE_POSITIONS} : 0;
      list.push_back({registry[i].name.data(), registry[i].description.data(), dtypes, pairings, apply[i], limits, 0});
    }
    return list;
  }();
  // Versions 1 and 2 are answered in their own descriptor layout, as a library built against
  // those headers would (kernel_descriptors.h): the stride of the array differs from v3's.
  static const std::vector<abi::kernel_descriptor_v2> v2_kernels = [] {
    std::vector<abi::kernel_descriptor_v2> list;
    for (const ropecheck_kernel& k : kernels) list.push_back({k.name, k.description, k.dtypes, k.pairings, k.apply});
    return list;
  }();
  if (count == nullptr) return nullptr;
#ifdef ROPECHECK_KERNELS_V1_ONLY
  // The test build of a library made before ABI v2 (abi/CMakeLists.txt): it answers v1 only.
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION_1) return nullptr;
#endif
  if (abi_version == ROPECHECK_KERNEL_ABI_VERSION) {
    *count = kernels.size();
    return kernels.data();
  }
  if (abi_version != ROPECHECK_KERNEL_ABI_VERSION_2 && abi_version != ROPECHECK_KERNEL_ABI_VERSION_1) return nullptr;
  *count = v2_kernels.size();
  return reinterpret_cast<const ropecheck_kernel*>(v2_kernels.data());
}
