// kernel_library: RoPE kernels loaded from a shared library through the C ABI
// (include/ropecheck/kernel_abi.h), each wrapped into a fast::kernel_info so the gate and the
// property suite treat it exactly like a built-in kernel.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "abi/kernel_worker.h"
#include "fast/kernels.h"

namespace ropecheck::abi {

class kernel_library_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// kernel_abi.h's name rule: 1 to max_kernel_name_length characters of [A-Za-z0-9_.-]. A name
// is printed in replay command lines, Markdown tables and file names, so anything else is
// refused, not escaped; 128 characters is far beyond any real kernel's name and keeps a table
// readable. (Unique within a library, which the loader checks too.)
inline constexpr std::size_t max_kernel_name_length = 128;
bool is_valid_kernel_name(std::string_view name);

// Where a library's kernels run: in a worker process (kernel_worker.h), each call bounded by
// `timeout_seconds` (0: none), or in ropecheck's own process (`--isolate never`, for gdb).
// `builtins`: the built-in kernels run in a worker too (`--isolate always`).
struct isolation {
  bool isolate = true;
  double timeout_seconds = 60;
  bool builtins = false;
};

// The "library" that holds the built-in kernels (builtin_kernels.h) for kernel_library::load:
// they are listed and called through the C ABI in a worker, with their kernel_info's claim of
// one rounding per output kept.
inline constexpr const char* builtin_library = "(built-in kernels)";

class kernel_library {
 public:
  // dlopen()s `path` (in a worker, unless `how` says in process) and asks it for its kernels.
  // Throws kernel_library_error naming the file and what is wrong (cannot load, no
  // ropecheck_kernels symbol, ABI version refused, more than max_listed_kernels, a descriptor
  // with a null name or function, unknown dtype, pairing or limit bits, a negative max_position,
  // a library that ends its worker while loading). It asks for ABI v3, then v2, then v1, and
  // reads the descriptors in the layout of the version that answered (kernel_descriptors.h): a
  // v3 kernel's limits become its kernel_info::domain; a v1/v2 kernel serves every call. A v1
  // library's kernels have multi_stream false.
  static kernel_library load(const std::filesystem::path& path, const isolation& how = {});

  std::span<const fast::kernel_info> kernels() const { return infos_; }

  // What ended the worker while `kernel` ran (crashed, timed_out), if anything did: every later
  // call of that kernel is refused at once, and the gate gives it that verdict.
  std::optional<kernel_death> death_of(std::string_view kernel) const;

  // Calls `kernel` on a C-ABI call as it stands (a replayed case file, abi_case.h): in its
  // worker, or in this process with isolation off. Throws kernel_library_error for an unknown name.
  worker_answer call_raw(std::string_view kernel, const ropecheck_rope_call& call, std::size_t pairs) const;

  struct loaded;  // internal (kernel_library.cpp)

 private:
  std::shared_ptr<loaded> state_;  // keeps the library mapped while any copy lives
  std::vector<fast::kernel_info> infos_;
};

// The wrapper's entry: calls the C-ABI kernel `context` (its descriptor and its library's ABI
// version; a v1 kernel refuses multi-stream calls as unsupported).
fast::status call_abi_kernel(const void* context, const fast::rope_call& call,
                             const fast::rope_angles& angles);

}  // namespace ropecheck::abi
