// kernel_property_catalog: the kernel properties as data — a stable name, the quick-profile
// case count, and the body RapidCheck runs once per case. check_kernel and the gtest suite
// iterate this list, so a property added here is run everywhere. Internal to properties/.
#pragma once

#include <span>
#include <string_view>

#include "fast/kernels.h"
#include "properties/property_runner.h"

namespace ropecheck::properties {

// What a property needs of a kernel's declared domain (fast::kernel_domain) beyond drawing
// its cases inside it: a round trip needs the inverse direction, pass-through dims a partial
// rotary, Q and K called apart a call with one of them absent (an attention factor is never
// needed: a kernel without one gets A = 1 cases). A kernel without it leaves the
// property no case at all, so the property shows as skipped with the reason, never as a pass
// of nothing (kernel_properties.cpp: kernel_needs).
enum class kernel_need { nothing, inverse, partial_rotary, absent_tensor };

struct kernel_property_definition {
  std::string_view name;
  std::string_view statement;  // one line: what holds, and within what
  int quick_cases;             // per storage dtype; the whole quick suite must fit 3 minutes
  int deep_cases;              // per property, split over the (kernel, dtype) runs of a suite
  bool measures_error;         // reports worst_over_bound (false: bit-exact or status checks)
  // One case: picks its inputs with RapidCheck, fails with RC_FAIL(message) — the message
  // names the violated bound and its inputs, and is what reports show (property_runner.cpp).
  void (*run_case)(const fast::kernel_info& kernel, dtype storage, const run_settings& settings,
                   observation& seen);
  // Kernels the property is about (null: every kernel); the others show it as skipped, with
  // `skipped_because` as the reason. A claim a kernel declares in its kernel_info (e.g.
  // rounds_once) is checked this way, never by a kernel's name.
  bool (*applies_to)(const fast::kernel_info& kernel) = nullptr;
  std::string_view skipped_because = {};
  kernel_need needs = kernel_need::nothing;
};

// Properties measured against a bound (kernel_properties_accuracy.cpp).
std::span<const kernel_property_definition> accuracy_properties();
// Properties that hold bit for bit, or are about statuses (kernel_properties_exact.cpp).
std::span<const kernel_property_definition> exactness_properties();
// Properties of position streams, M-RoPE and 2-D vision (kernel_properties_streams.cpp).
std::span<const kernel_property_definition> stream_properties();

}  // namespace ropecheck::properties
