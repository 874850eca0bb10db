// The ropecheck subcommands. Each add_*_command registers its flags on `app` and, when the
// subcommand is chosen, stores its exit code (exit_codes.h) in `exit_status`.
// Errors are thrown (io_error, spec_error, bad_input, ...) and mapped to exit 2 or 3 by main()
// (cli/error_exit.h); each subcommand checks its output paths before it reads or computes.
#pragma once

#include <CLI/CLI.hpp>

namespace ropecheck::core {}

namespace ropecheck::cli {

// The subcommands are flag parsing over core/ (what the Python module runs too): its names are
// theirs.
using namespace ropecheck::core;

void add_reference_command(CLI::App& app, int& exit_status);
void add_apply_command(CLI::App& app, int& exit_status);
void add_kernels_command(CLI::App& app, int& exit_status);
void add_gate_command(CLI::App& app, int& exit_status);
void add_report_command(CLI::App& app, int& exit_status);
void add_audit_command(CLI::App& app, int& exit_status);
void add_identify_command(CLI::App& app, int& exit_status);
void add_replay_command(CLI::App& app, int& exit_status);
void add_bench_command(CLI::App& app, int& exit_status);  // only with ROPECHECK_BUILD_BENCHMARKS

}  // namespace ropecheck::cli
