// ropecheck: verifies Rotary Position Embedding implementations against a 256-bit reference.
// Exit codes: 0 pass, 1 gate/audit failed, 2 bad input or usage (cli/exit_codes.h).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <exception>

#include "cli/commands.h"
#include "cli/exit_codes.h"

#ifndef ROPECHECK_VERSION
#define ROPECHECK_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  using namespace ropecheck::cli;
  CLI::App app{"ropecheck — verify Rotary Position Embedding (RoPE) implementations", "ropecheck"};
  app.set_version_flag("--version", std::string("ropecheck ") + ROPECHECK_VERSION);
  app.require_subcommand(1);
  int exit_status = exit_pass;
  add_gate_command(app, exit_status);
  add_audit_command(app, exit_status);
  add_identify_command(app, exit_status);
  add_report_command(app, exit_status);
  add_reference_command(app, exit_status);
  add_apply_command(app, exit_status);
  add_kernels_command(app, exit_status);
#ifdef ROPECHECK_HAS_BENCH
  add_bench_command(app, exit_status);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help/version (code 0) or the usage error
    return code == 0 ? exit_pass : exit_bad_input;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ropecheck: {}\n", e.what());
    return exit_bad_input;
  }
  return exit_status;
}
