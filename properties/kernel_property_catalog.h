// kernel_property_catalog: the kernel properties as data — a stable name, the quick-profile
// case count, and the body RapidCheck runs once per case. check_kernel and the gtest suite
// iterate this list, so a property added here is run everywhere. Internal to properties/.
#pragma once

#include <span>
#include <string_view>

#include "fast/kernels.h"
#include "properties/property_runner.h"

namespace ropecheck::properties {

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
};

// Properties measured against a bound (kernel_properties_accuracy.cpp).
std::span<const kernel_property_definition> accuracy_properties();
// Properties that hold bit for bit, or are about statuses (kernel_properties_exact.cpp).
std::span<const kernel_property_definition> exactness_properties();
// Properties of position streams, M-RoPE and 2-D vision (kernel_properties_streams.cpp).
std::span<const kernel_property_definition> stream_properties();

}  // namespace ropecheck::properties
