// kernel_library: RoPE kernels loaded from a shared library through the C ABI
// (include/ropecheck/kernel_abi.h), each wrapped into a fast::kernel_info so the gate and the
// property suite treat it exactly like a built-in kernel.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/kernels.h"

namespace ropecheck::abi {

class kernel_library_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class kernel_library {
 public:
  // dlopen()s `path` and asks it for its kernels. Throws kernel_library_error naming the file
  // and what is wrong (cannot load, no ropecheck_kernels symbol, ABI version refused, a
  // descriptor with a null name or function, unknown dtype or pairing bits). A library that
  // serves only ABI v1 loads too; its kernels have multi_stream false.
  static kernel_library load(const std::filesystem::path& path);

  std::span<const fast::kernel_info> kernels() const { return infos_; }

 private:
  struct loaded;
  std::shared_ptr<loaded> state_;  // keeps the library mapped while any copy lives
  std::vector<fast::kernel_info> infos_;
};

// The wrapper's entry: calls the C-ABI kernel `context` (its descriptor and its library's ABI
// version; a v1 kernel refuses multi-stream calls as unsupported).
fast::status call_abi_kernel(const void* context, const fast::rope_call& call,
                             const fast::rope_angles& angles);

}  // namespace ropecheck::abi
