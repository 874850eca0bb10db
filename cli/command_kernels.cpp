// ropecheck kernels [--json] [--kernel-lib PATH.so]...: the built-in kernel registry (or the
// kernels of shared libraries built on ropecheck/kernel_abi.h), as a table or as JSON (an
// array of objects with name, description, strategy, dtypes, pairings).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/isolation_flags.h"
#include "abi/kernel_library.h"
#include "cli/exit_codes.h"
#include "fast/kernels.h"
#include "reports/report_text.h"

namespace ropecheck::cli {
namespace {

// [{"name", "description", "strategy", "dtypes": [...], "pairings": ["half", "adjacent"]}]
nlohmann::json kernels_json(std::span<const fast::kernel_info> kernels) {
  nlohmann::json all = nlohmann::json::array();
  for (const fast::kernel_info& k : kernels) {
    nlohmann::json dtypes = nlohmann::json::array();
    for (dtype t : k.dtypes) dtypes.push_back(std::string(to_string(t)));
    nlohmann::json pairings = nlohmann::json::array();
    for (pairing p : k.pairings) pairings.push_back(std::string(to_string(p)));
    all.push_back({{"name", std::string(k.name)},
                   {"description", std::string(k.description)},
                   {"strategy", std::string(to_string(k.strategy))},
                   {"dtypes", dtypes},
                   {"pairings", pairings}});
  }
  return all;
}

}  // namespace

void add_kernels_command(CLI::App& app, int& exit_status) {
  auto as_json = std::make_shared<bool>(false);
  auto libraries = std::make_shared<std::vector<std::string>>();
  auto isolation = std::make_shared<abi::isolation>();
  CLI::App* cmd = app.add_subcommand("kernels", "List the built-in kernels");
  cmd->add_flag("--json", *as_json, "print the registry as JSON");
  cmd->add_option("--kernel-lib", *libraries,
                  "list the kernels of this shared library instead (repeatable)");
  add_isolation_options(*cmd, *isolation);
  cmd->callback([as_json, libraries, isolation, &exit_status] {
    nlohmann::json registry = nlohmann::json::array();
    if (libraries->empty()) registry = kernels_json(fast::kernel_registry());
    for (const auto& path : *libraries) {
      const auto library = abi::kernel_library::load(path, *isolation);
      for (auto& k : kernels_json(library.kernels())) registry.push_back(std::move(k));
    }
    if (*as_json) {
      fmt::print("{}", reports::json_text(registry));  // a library's description may not be UTF-8
    } else {
      fmt::print("{:<24} {:<11} {:<28} {:<15} {}\n", "name", "strategy", "dtypes", "pairings",
                 "description");
      for (const auto& k : registry) {
        fmt::print("{:<24} {:<11} {:<28} {:<15} {}\n", k["name"].get<std::string>(),
                   k["strategy"].get<std::string>(),
                   fmt::format("{}", fmt::join(k["dtypes"].get<std::vector<std::string>>(), ",")),
                   fmt::format("{}", fmt::join(k["pairings"].get<std::vector<std::string>>(), ",")),
                   k["description"].get<std::string>());
      }
    }
    exit_status = exit_pass;
  });
}

}  // namespace ropecheck::cli
