// kernel_descriptors: asks a library's ropecheck_kernels() for its table — version 3, else 2,
// else 1 (include/ropecheck/kernel_abi.h) — and reads its descriptors in the layout of the
// version that answered. The array's stride is the descriptor's size in that version: a v1/v2
// library's descriptors end before v3's `limits`, so indexing them as v3 descriptors would read
// the next kernel's name as this one's limits. Shared by the in-process loader and the worker.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ropecheck/kernel_abi.h"

namespace ropecheck::abi {

// The descriptor of ABI versions 1 and 2: ropecheck_kernel without the v3 fields.
struct kernel_descriptor_v2 {
  const char* name;
  const char* description;
  std::uint32_t dtypes;
  std::uint32_t pairings;
  int (*apply)(const ropecheck_rope_call* call);
};
static_assert(offsetof(ropecheck_kernel, limits) >= sizeof(kernel_descriptor_v2) &&
                  offsetof(ropecheck_kernel, apply) == offsetof(kernel_descriptor_v2, apply),
              "v3 appends to the v2 descriptor");

struct kernel_table {
  std::uint32_t version = 0;  // the ABI version that answered (0: none did)
  const void* descriptors = nullptr;
  std::size_t count = 0;

  // Descriptor i as a v3 descriptor (a v1/v2 one with limits 0 and no maximum position).
  ropecheck_kernel at(std::size_t i) const {
    if (version >= ROPECHECK_KERNEL_ABI_VERSION) return static_cast<const ropecheck_kernel*>(descriptors)[i];
    const kernel_descriptor_v2& d = static_cast<const kernel_descriptor_v2*>(descriptors)[i];
    return {d.name, d.description, d.dtypes, d.pairings, d.apply, 0, 0};
  }
};

// Asks for version 3, then 2, then 1; a version whose answer is NULL or empty is passed over.
inline kernel_table ask_for_kernels(ropecheck_kernels_fn list) {
  for (const std::uint32_t version : {ROPECHECK_KERNEL_ABI_VERSION, ROPECHECK_KERNEL_ABI_VERSION_2,
                                      ROPECHECK_KERNEL_ABI_VERSION_1}) {
    std::size_t count = 0;
    const void* table = list(version, &count);
    if (table != nullptr && count > 0) return {version, table, count};
  }
  return {};
}

}  // namespace ropecheck::abi
