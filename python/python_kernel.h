// python_kernel: a Python callable wrapped as a fast::kernel_info, so the gate's properties and
// fixtures (core/gate_run.h, the gate's whole run) run on it exactly as on a built-in or C-ABI kernel.
//
// Each call is checked (fast::detail::check_call) before Python sees it, then Q and K are
// gathered from their strided views into packed [tokens, heads, head_dim] NumPy arrays of raw
// storage elements and handed, with int64 positions ([tokens]; [streams, tokens] and
// params["pair_streams"] for a kernel that declares position streams) and the params dict, to `adapter`
// (ropecheck/_bridge.py), which makes NumPy or torch inputs, calls the user's kernel and
// returns its outputs as raw storage elements; those are scattered into the call's outputs.
// The adapter is also told which check is running (set_check), for a timeout's message.
// The GIL is taken only around the Python call. The first Python exception is kept and every
// later call throws the kernel_raised marker, which ends the running check; the gate then
// rethrows the exception itself (rethrow_pending).
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fast/kernels.h"

namespace ropecheck::python {

class python_kernel {
 public:
  python_kernel(pybind11::object adapter, std::string name, std::string description,
                std::vector<dtype> dtypes, std::vector<pairing> pairings, fast::kernel_domain domain = {},
                bool streams = false);
  ~python_kernel();
  python_kernel(const python_kernel&) = delete;
  python_kernel& operator=(const python_kernel&) = delete;

  const fast::kernel_info& info() const { return info_; }

  // The check the gate is running ("property/dtype" or "fixtures"), passed to the adapter.
  void set_check(std::string_view check) { check_ = check; }
  // Throws a C++ marker (kernel_raised) if the kernel raised: lets the gate stop between checks.
  void stop_if_raised() const;
  // With the GIL held: re-raises the kernel's exception, if any, as itself.
  void rethrow_pending();

  struct kernel_raised {};

 private:
  static fast::status call(const void* context, const fast::rope_call& call,
                           const fast::rope_angles& angles);
  fast::status call_with_gil(const fast::rope_call& call, const fast::rope_angles& angles);

  pybind11::object adapter_;
  std::string name_, description_, check_;
  std::vector<dtype> dtypes_;
  std::vector<pairing> pairings_;
  fast::kernel_info info_;
  std::optional<pybind11::error_already_set> pending_;
};

}  // namespace ropecheck::python
