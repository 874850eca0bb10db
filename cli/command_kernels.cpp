// ropecheck kernels [--json]: the built-in kernel registry, as a table or as JSON
// (an array of objects with name, description, strategy, dtypes, pairings).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "fast/kernels.h"

namespace ropecheck::cli {

void add_kernels_command(CLI::App& app, int& exit_status) {
  auto as_json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("kernels", "List the built-in kernels");
  cmd->add_flag("--json", *as_json, "print the registry as JSON");
  cmd->callback([as_json, &exit_status] {
    const nlohmann::json registry = fast::kernels_json();
    if (*as_json) {
      fmt::print("{}\n", registry.dump(2));
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
