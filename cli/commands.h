// The ropecheck subcommands. Each add_*_command registers its flags on `app` and, when the
// subcommand is chosen, stores its exit code (exit_codes.h) in `exit_status`.
// Errors are thrown (spec_error, io_error, reference_error, ...) and reported by main().
#pragma once

#include <CLI/CLI.hpp>

namespace ropecheck::cli {

void add_reference_command(CLI::App& app, int& exit_status);
void add_apply_command(CLI::App& app, int& exit_status);
void add_kernels_command(CLI::App& app, int& exit_status);
void add_gate_command(CLI::App& app, int& exit_status);
void add_report_command(CLI::App& app, int& exit_status);
void add_audit_command(CLI::App& app, int& exit_status);
void add_identify_command(CLI::App& app, int& exit_status);
void add_bench_command(CLI::App& app, int& exit_status);  // only with ROPECHECK_BUILD_BENCHMARKS

}  // namespace ropecheck::cli
