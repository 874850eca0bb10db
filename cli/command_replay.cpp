// ropecheck replay CASE.json --kernel-lib L [--kernel K] [--isolate never|library]
//                 [--kernel-timeout SECONDS]
// Runs exactly the C-ABI call a gate saved for a kernel whose worker process ended (crashed,
// timed out): CASE.json is that gate's JSON report (the call under kernels[].ended.case) or the
// case object itself (abi/abi_case.h). `--isolate never` runs it in this process, so that a
// debugger stops at the crash; in a worker (the default) the ending is printed. Exit 0 when the
// call returns ROPECHECK_STATUS_OK, 1 when it returns an error or its process ends, 2 bad input.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "abi/abi_case.h"
#include "abi/kernel_library.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/isolation_flags.h"
#include "io/io_error.h"
#include "io/json_file.h"

namespace ropecheck::cli {
namespace {

struct replay_options {
  std::string input;
  std::string library;
  std::optional<std::string> kernel;
  abi::isolation isolation;
};

// The case object, or the one a gate report holds for the kernel asked for (the only ended
// kernel when none is named).
nlohmann::json find_case(const replay_options& o, const nlohmann::json& j) {
  if (j.is_object() && j.contains("case")) return j;
  if (!j.is_object() || j.value("report", "") != "gate" || !j.contains("kernels") || !j["kernels"].is_array())
    throw io_error(o.input, "(top level)", "is neither a kernel case file nor a gate report", "");
  std::optional<nlohmann::json> found;
  std::string ended;
  for (const auto& k : j["kernels"]) {
    if (!k.is_object() || !k.contains("ended") || !k["ended"].is_object()) continue;
    const std::string name = k.value("name", "");
    ended += (ended.empty() ? "" : ", ") + name;
    if ((o.kernel && name == *o.kernel) || (!o.kernel && !found)) found = k["ended"].value("case", nlohmann::json());
    else if (!o.kernel) throw bad_input("--kernel", "is needed: the report holds several ended kernels", ended);
  }
  if (!found || !found->is_object())
    throw io_error(o.input, "kernels[].ended",
                   o.kernel ? "holds no saved call for this kernel (its process did not end in that run)"
                            : "holds no kernel whose process ended",
                   o.kernel.value_or(""));
  return *found;
}

// The saved call, from the file given.
nlohmann::json saved_case(const replay_options& o) {
  try {
    return find_case(o, read_json_file(o.input));
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong JSON type
    throw io_error(o.input, "(top level)", "is neither a kernel case file nor a gate report", e.what());
  }
}

int run_replay(const replay_options& o) {
  abi::replayed_call replayed(saved_case(o).dump(), o.input);
  const std::string kernel = o.kernel.value_or(replayed.kernel());
  const abi::kernel_library library = abi::kernel_library::load(o.library, o.isolation);
  fmt::print("replay: {} on {}\n", kernel, abi::describe_call(replayed.call()));
  std::fflush(stdout);  // printed before an in-process crash
  const abi::worker_answer answer = library.call_raw(kernel, replayed.call(), replayed.pairs());
  if (answer.death) {
    fmt::print("replay: {} — {}\n", answer.death->verdict, answer.death->cause);
    return exit_failed;
  }
  fmt::print("replay: returned status {}{}\n", answer.status, answer.message.empty() ? "" : ": " + answer.message);
  return answer.status == 0 ? exit_pass : exit_failed;
}

}  // namespace

void add_replay_command(CLI::App& app, int& exit_status) {
  auto o = std::make_shared<replay_options>();
  CLI::App* cmd = app.add_subcommand("replay", "Run one saved kernel call again (a crash or hang the gate recorded)");
  cmd->add_option("CASE.json", o->input, "the gate's JSON report, or a kernel case file")->required();
  cmd->add_option("--kernel-lib", o->library, "the kernel library")->required();
  cmd->add_option("--kernel", o->kernel, "the kernel (default: the one the case names)");
  add_isolation_options(*cmd, o->isolation);
  cmd->callback([o, &exit_status] { exit_status = run_replay(*o); });
}

}  // namespace ropecheck::cli
