// Highway's target bits behind simd_target.h. The kernels' SIMD file is built for AVX2 and
// AVX-512 (rotation_simd.cpp disables SSSE3/SSE4, which lack FMA); lesser CPUs get the
// portable loop. The cap goes through hwy::DisableTargets, Highway's production API for
// keeping dispatch off targets the CPU has (hwy/targets.h), not its test mock
// SetSupportedTargetsForTest; DisableTargets(0) enables them all again.
#include "fast/simd_target.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <hwy/targets.h>

namespace ropecheck::fast {

namespace {

constexpr std::int64_t kernel_targets = HWY_AVX3_DL | HWY_AVX3 | HWY_AVX2;

std::string lower(const char* name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::int64_t> usable_targets() {
  std::vector<std::int64_t> all;
  for (std::int64_t t : hwy::SupportedAndGeneratedTargets()) {
    if ((t & kernel_targets) != 0) all.push_back(t);
  }
  return all;  // Highway lists the best first
}

}  // namespace

std::vector<std::string> available_simd_targets() {
  std::vector<std::string> names;
  for (std::int64_t t : usable_targets()) names.push_back(lower(hwy::TargetName(t)));
  return names;
}

std::string current_simd_target() {
  for (std::int64_t t : usable_targets()) {
    if ((hwy::SupportedTargets() & t) != 0) return lower(hwy::TargetName(t));
  }
  return "scalar";
}

status use_simd_target(std::string_view name) {
  if (name == "best") {
    hwy::DisableTargets(0);  // 0: back to what the CPU supports
    return status::success();
  }
  // Lift any earlier cap first, so that every target this CPU runs can be chosen again
  // (SupportedAndGeneratedTargets only lists the targets left enabled); an unknown name puts
  // the earlier cap back.
  const std::int64_t earlier = hwy::SupportedTargets();
  hwy::DisableTargets(0);
  std::string known;
  for (std::int64_t t : usable_targets()) {
    const std::string target = lower(hwy::TargetName(t));
    if (target == name) {
      // Every other target off but the scalar baselines, which Highway requires to stay.
      hwy::DisableTargets(~(t | HWY_SCALAR | HWY_EMU128));
      return status::success();
    }
    known += (known.empty() ? "" : ", ") + target;
  }
  hwy::DisableTargets(~earlier);
  return status::error(status_code::unsupported,
                       "SIMD target '" + std::string(name) + "' is not available on this CPU (available: " +
                           (known.empty() ? "none" : known) + ", best)");
}

}  // namespace ropecheck::fast
