// kernel_worker: a kernel library loaded and called in a child process, so that what the code
// under test does — a crash, an abort(), exit()/_exit() of any status, an endless loop, a stray
// write — ends that process, not ropecheck's verdict and report. One worker per library,
// started once (and again for the next kernel after one died); each call's buffers cross over
// shared memory (a memfd mapped by both processes) at the same alignment modulo 64 bytes, with
// the same aliasing between them, and the outputs come back. What ended a worker becomes a
// kernel_death: the gate's `crashed` or `timed_out` verdict, with the call that was running as
// a replayable case (abi_case.h).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ropecheck/kernel_abi.h"

namespace ropecheck::abi {

// One ropecheck_kernels() entry as the library listed it (before the loader's checks).
struct listed_kernel {
  bool has_name = false;
  std::string name;
  std::string description;
  std::uint32_t dtypes = 0;
  std::uint32_t pairings = 0;
  bool has_apply = false;
  std::uint32_t limits = 0;        // v3: ropecheck_limit bits (0 for a v1/v2 library)
  std::int64_t max_position = 0;   // v3: the largest |m| served (0: no bound)
};
struct kernel_listing {
  std::uint32_t abi_version = 0;
  std::vector<listed_kernel> kernels;
};

// The most kernels one library may list: far beyond any real library, and a bound on what a
// count of SIZE_MAX would make the loader read.
inline constexpr std::size_t max_listed_kernels = 4096;

// What ended a kernel's worker.
struct kernel_death {
  std::string verdict;    // "crashed" or "timed_out"
  std::string cause;      // "signal 11 (SIGSEGV)", "exit status 0 (the kernel called exit or _exit)", …
  std::string call;       // one line: the call that was running
  std::string case_json;  // that call, replayable (abi_case.h)
};

// The answer to one call: the kernel's status and message, or how its worker died.
struct worker_answer {
  int status = ROPECHECK_STATUS_OK;
  std::string message;
  std::optional<kernel_death> death;
};

class kernel_worker {
 public:
  // Starts a worker that dlopen()s `path` (a path with a '/') and lists its kernels. Throws
  // kernel_library_error naming the library when it cannot be loaded there: the loader's own
  // message, or what ended the worker (a constructor that exits, a crash while listing), or a
  // load that takes longer than `timeout_seconds`, which also bounds each call (0: none).
  kernel_worker(std::string path, double timeout_seconds);
  ~kernel_worker();
  kernel_worker(const kernel_worker&) = delete;
  kernel_worker& operator=(const kernel_worker&) = delete;

  const kernel_listing& listing() const { return listing_; }

  // Runs kernel `index` on `call` in the worker (starting one if the last died). `pairs` is the
  // length of inverse_frequencies (and pair_streams when given).
  worker_answer call(std::size_t index, const ropecheck_rope_call& call, std::size_t pairs);

 private:
  struct process;
  void start();
  std::string path_;
  double timeout_seconds_;
  kernel_listing listing_;
  std::unique_ptr<process> process_;
};

}  // namespace ropecheck::abi
