// isolation_flags: --isolate and --kernel-timeout, declared once for every subcommand that
// loads --kernel-lib libraries (gate, apply, kernels, replay). A library's kernels run in a
// worker process (abi/kernel_worker.h) unless --isolate never, which runs them in ropecheck's
// own process, for a debugger; the gate's --isolate always runs the built-ins in one too.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "abi/kernel_library.h"
#include "cli/decimal_options.h"

namespace ropecheck::cli {

// The longest --kernel-timeout: a day per call.
inline constexpr std::int64_t max_kernel_timeout_seconds = 86400;

// `always` (gate only): the built-in kernels run in a worker too, as a library's do — for a
// built-in kernel under development.
inline void add_isolation_options(CLI::App& cmd, abi::isolation& how, bool builtins_too = false) {
  cmd.add_option_function<std::string>(
         "--isolate",
         [&how](const std::string& mode) {
           how.isolate = mode != "never";
           how.builtins = mode == "always";
         },
         builtins_too ? "where kernels run: library (default: --kernel-lib kernels in a worker process, so that a "
                        "crash, exit or hang becomes the kernel's verdict; built-ins in process), always (the "
                        "built-in kernels in a worker too) or never (everything in ropecheck's process, for gdb)"
                      : "where --kernel-lib kernels run: library (default: in a worker process, so that a crash, "
                        "exit or hang becomes the kernel's verdict) or never (in ropecheck's process, for gdb)")
      ->check(builtins_too ? CLI::IsMember({"library", "never", "always"}) : CLI::IsMember({"library", "never"}))
      ->type_name("MODE");
  cmd.add_option_function<std::string>(
         "--kernel-timeout",
         [&how](const std::string& text) {
           how.timeout_seconds = static_cast<double>(
               decimal_integer_flag("--kernel-timeout", text, 0, max_kernel_timeout_seconds));
         },
         "seconds one kernel call may take before its run ends as timed_out (default 60; 0: no limit)")
      ->type_name("SECONDS");
}

}  // namespace ropecheck::cli
