// ropecheck: verifies Rotary Position Embedding implementations against a 256-bit reference.
// Exit codes: 0 pass, 1 gate/audit failed, 2 bad input or usage, 3 internal error
// (cli/exit_codes.h, cli/error_exit.h). Every error is one line on stderr starting "ropecheck:".
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/error_exit.h"
#include "cli/exit_codes.h"

#ifndef ROPECHECK_VERSION
#define ROPECHECK_VERSION "unknown"
#endif

namespace {

// CLI11's usage errors as one line: its own message (which names the flag or word), newlines
// folded, and where to look.
int usage_error(const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  fmt::print(stderr, "ropecheck: {} (see ropecheck --help)\n", line);
  return ropecheck::cli::exit_bad_input;
}

// "ropecheck frobnicate": CLI11 would only say that a subcommand is required.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return {};
  const std::string_view word = argv[1];
  if (word.empty() || word.front() == '-') return {};
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return {};
    names.push_back(sub->get_name());
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return fmt::format("unknown subcommand '{}' (one of: {})", word, list);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ropecheck::cli;
  install_internal_error_handler();
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
  add_replay_command(app, exit_status);
#ifdef ROPECHECK_HAS_BENCH
  add_bench_command(app, exit_status);
#endif
  if (const std::string unknown = unknown_subcommand(app, argc, argv); !unknown.empty())
    return usage_error(unknown);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  } catch (...) {
    return exit_for_exception(std::current_exception());
  }
  return exit_status;
}
