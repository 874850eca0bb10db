// ropecheck replay CASE.json [--kernel-lib L] [--kernel K] [--all] [--isolate never|library]
//                 [--kernel-timeout SECONDS]
// Runs one saved case again, exactly. Two kinds of case:
// - a judged case (properties/judged_case.h, written by `gate --cases-out DIR`): the worst case or
//   shrunk counterexample of a failed property; the call is made again on K (a --kernel-lib
//   kernel, or without --kernel-lib a built-in kernel or a mutant) and each output's error is
//   printed against the bound that applied, worst first. Exit 1 when one exceeds its bound.
// - the C-ABI call a gate saved for a kernel whose worker process ended (crashed, timed out):
//   CASE.json is that gate's JSON report (the call under kernels[].ended.case) or the case object
//   itself (abi/abi_case.h). `--isolate never` runs it in this process, so that a debugger stops
//   at the crash; in a worker (the default) the ending is printed. Exit 0 when the call returns
//   ROPECHECK_STATUS_OK, 1 when it returns an error or its process ends.
// Exit 2 for bad input.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "abi/abi_case.h"
#include "abi/kernel_library.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/isolation_flags.h"
#include "io/io_error.h"
#include "io/json_file.h"
#include "fast/kernels.h"
#include "mutants/mutant_registry.h"
#include "properties/judged_case.h"

namespace ropecheck::cli {
namespace {

struct replay_options {
  std::string input;
  std::string library;
  std::optional<std::string> kernel;
  bool all = false;  // every judged output, not only those beyond their bound and the ten worst
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
nlohmann::json saved_case(const replay_options& o, const nlohmann::json& file) {
  try {
    return find_case(o, file);
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong JSON type
    throw io_error(o.input, "(top level)", "is neither a kernel case file nor a gate report", e.what());
  }
}

// "0x1.8p-20 (1.43051e-06)": the bits, and a number to read.
std::string both(double v) { return fmt::format("{:a} ({:.6g})", v, v); }

// A judged case (gate --cases-out): the call again on the kernel asked for, each output's error
// against the bound that applied, worst first.
int replay_judged(const replay_options& o, const nlohmann::json& file) {
  std::string named;
  const properties::judged_case c = properties::read_judged_case(file, o.input, named);
  const std::string name = o.kernel.value_or(named);
  std::optional<abi::kernel_library> library;
  const fast::kernel_info* kernel = nullptr;
  if (!o.library.empty()) {
    library = abi::kernel_library::load(o.library, o.isolation);
    for (const auto& k : library->kernels())
      if (k.name == name) kernel = &k;
    if (kernel == nullptr) throw bad_input("--kernel", "is not a kernel of the --kernel-lib library", name);
  } else {
    for (const auto& k : fast::kernel_registry())
      if (k.name == name) kernel = &k;
    if (const auto* m = mutants::find_mutant(name); kernel == nullptr && m != nullptr) kernel = &m->kernel;
    if (kernel == nullptr)
      throw bad_input("--kernel", "is neither a built-in kernel nor a mutant (give its library with --kernel-lib)", name);
  }
  const std::int64_t highest = *std::max_element(c.positions.begin(), c.positions.end());
  const std::int64_t lowest = *std::min_element(c.positions.begin(), c.positions.end());
  fmt::print("replay: {}/{} case of {} on {}: {} {} d={}/{} base={:a} scaling {} A={:a}, {} tokens (positions {} … {}), "
             "Q {} heads, K {} heads\n",
             c.property, to_string(c.storage), named, kernel->name, to_string(c.storage), to_string(c.pair), c.head_dim,
             c.rotary_dim, c.base, c.scaling, c.attention_factor, c.positions.size(), lowest, highest, c.q_heads,
             c.k_heads);
  std::fflush(stdout);  // printed before an in-process crash
  std::vector<double> outputs;
  try {
    outputs = properties::rerun_judged_case(*kernel, c);
  } catch (const std::runtime_error& e) {
    if (library) {
      if (const auto death = library->death_of(kernel->name)) {
        fmt::print("replay: {} — {}\n", death->verdict, death->cause);
        return exit_failed;
      }
    }
    fmt::print("replay: {}\n", e.what());
    return exit_failed;
  }
  std::vector<properties::judged_output> judged = c.outputs;
  std::size_t changed = 0;
  for (std::size_t n = 0; n < judged.size(); ++n) {
    if (std::bit_cast<std::uint64_t>(judged[n].kernel) != std::bit_cast<std::uint64_t>(outputs[n])) ++changed;
    judged[n].kernel = outputs[n];
  }
  std::vector<std::size_t> order(judged.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Worst first; a NaN ratio (an infinite error over an infinite bound) counts as the worst.
  const auto ratio = [&](std::size_t n) {
    const double r = judged[n].over_bound();
    return std::isnan(r) ? std::numeric_limits<double>::infinity() : r;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ratio(a) > ratio(b); });
  const auto beyond = static_cast<std::size_t>(std::count_if(
      judged.begin(), judged.end(), [](const properties::judged_output& j) { return !(j.error() <= j.bound); }));
  fmt::print("replay: {} outputs judged against {}; {} beyond their bound; worst first:\n", judged.size(),
             c.bound_source, beyond);
  const std::size_t shown = o.all ? judged.size() : std::min(judged.size(), beyond + 10);
  // "y[3]", or "‖(y[1], y[3])‖" for a pair's norm.
  const auto measure = [](const properties::judged_output& j) {
    return j.partner < 0 ? fmt::format("y[{}]", j.index) : fmt::format("‖(y[{}], y[{}])‖", j.index, j.partner);
  };
  for (std::size_t s = 0; s < shown; ++s) {
    const auto& j = judged[order[s]];
    fmt::print("  {} token {} (m={}) head {} {} j={}: error {} bound {} error/bound {} {}; kernel {} reference {}\n",
               j.key ? "K" : "Q", j.token, c.positions[static_cast<std::size_t>(j.token)], j.head, measure(j), j.pair,
               both(j.error()), both(j.bound), both(j.over_bound()), j.error() <= j.bound ? "within" : "BEYOND",
               both(j.kernel), both(j.reference));
  }
  if (shown < judged.size()) fmt::print("  … {} more within their bounds (--all shows every output)\n", judged.size() - shown);
  const auto& worst = judged[order.front()];
  fmt::print("replay: worst error {} error/bound {} at {} token {} head {} {}; {}\n", both(worst.error()),
             both(worst.over_bound()), worst.key ? "K" : "Q", worst.token, worst.head, measure(worst),
             changed == 0 ? "the kernel's outputs are the recorded ones, bit for bit"
                          : fmt::format("{} of the kernel's outputs differ from the recorded ones", changed));
  return beyond > 0 ? exit_failed : exit_pass;
}

int run_replay(const replay_options& o) {
  const nlohmann::json file = read_json_file(o.input);
  if (file.is_object() && file.contains("judged_case")) return replay_judged(o, file);
  if (o.library.empty())
    throw bad_input("--kernel-lib", "is needed to replay a saved C-ABI call (only a judged case runs a built-in)", "");
  abi::replayed_call replayed(saved_case(o, file).dump(), o.input);
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
  CLI::App* cmd = app.add_subcommand(
      "replay", "Run one saved case again: a failure's judged case (gate --cases-out), or a call that crashed "
                "or hung a kernel's process");
  cmd->add_option("CASE.json", o->input, "a judged case file (gate --cases-out), the gate's JSON report, or a kernel "
                                         "case file")->required();
  cmd->add_option("--kernel-lib", o->library,
                  "the kernel library (a judged case without it runs a built-in kernel or a mutant)");
  cmd->add_option("--kernel", o->kernel, "the kernel (default: the one the case names)");
  cmd->add_flag("--all", o->all, "judged case: print every output (default: those beyond their bound and ten more)");
  add_isolation_options(*cmd, o->isolation);
  cmd->callback([o, &exit_status] { exit_status = run_replay(*o); });
}

}  // namespace ropecheck::cli
