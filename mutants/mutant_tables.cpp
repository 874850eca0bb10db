// ropecheck_mutant_tables [GATE_REPORT.json]: the two Markdown tables of the mutant zoo (and,
// with --catalog-rows NAME..., the README's rows for those mutants, from the catalog alone) —
//  1. ropecheck's kill matrix summary, read from a `ropecheck gate --mutants --json` report;
//  2. peer-style verdicts (mutants/peer_style.h) for every mutant and every correct kernel,
//     measured here. A kernel with none of the dtypes the peer-style test has tolerances for
//     (the fp8-only mutants) is not run: its row says so and no count includes it
//     (scripts/mutant-tables.py refuses a table that counts an unmeasured row).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "fast/kernels.h"
#include "mutants/mutant_registry.h"
#include "mutants/peer_style.h"
#include "reports/gate_report.h"
#include "reports/saved_report.h"

namespace {

using namespace ropecheck;

// The property or fixture family a killer belongs to.
std::string family(const std::string& killer) {
  const auto slash = killer.find('/');
  std::string head = killer.substr(0, slash);
  if (head == "golden" && slash != std::string::npos) head = killer.substr(0, killer.find('/', slash + 1));
  return head;
}

void print_kill_table(const std::string& path) {
  // Read as `ropecheck report` reads it: schema and invariants checked (reports/saved_report.h).
  const auto report = reports::read_saved_gate_report(path);
  std::size_t killed = 0;
  for (const auto& m : report.mutants) killed += m.killed ? 1 : 0;
  fmt::print("### ropecheck gate --mutants (profile {}, seed {}): {} of {} mutants killed\n\n",
             report.profile, report.seed, killed, report.mutants.size());
  fmt::print("| mutant | imitates | killed | killed by (properties on any dtype; fixtures) |\n|---|---|---|---|\n");
  for (const auto& m : report.mutants) {
    std::vector<std::string> families;
    for (const auto& k : m.killed_by)
      if (std::find(families.begin(), families.end(), family(k)) == families.end())
        families.push_back(family(k));
    // The golden configurations collapse into one entry with their count.
    std::string by;
    std::size_t golden = 0;
    for (const auto& f : families) {
      if (f.starts_with("golden/")) {
        ++golden;
        continue;
      }
      by += (by.empty() ? "" : ", ") + fmt::format("`{}`", f);
    }
    if (golden > 0) by += (by.empty() ? "" : ", ") + fmt::format("`golden` ×{} configs", golden);
    fmt::print("| `{}` | {} | {} | {} |\n", m.name, m.imitates, m.killed ? "yes" : "**no**",
               by.empty() ? "—" : by);
  }
  std::size_t correct_failed = 0;
  for (const auto& k : report.kernels) correct_failed += k.passed ? 0 : 1;
  fmt::print("\nCorrect kernels gated in the same run: {}, failed: {}.\n\n", report.kernels.size(),
             correct_failed);
}

struct peer_row {
  std::string name;
  bool is_mutant = false;
  std::array<std::optional<mutants::peer_verdict>, 3> verdicts;  // float32, bfloat16, float16
  bool measured() const {
    return std::any_of(verdicts.begin(), verdicts.end(), [](const auto& v) { return v.has_value(); });
  }
};

constexpr std::array<dtype, 3> peer_dtypes{dtype::float32, dtype::bfloat16, dtype::float16};

peer_row measure(std::string_view name, const fast::kernel_info& k, mutants::frequencies_fn f,
                 bool is_mutant) {
  peer_row row{std::string(name), is_mutant, {}};
  for (std::size_t i = 0; i < peer_dtypes.size(); ++i)
    if (k.supports(peer_dtypes[i])) row.verdicts[i] = mutants::peer_style_check(k, peer_dtypes[i], f);
  return row;
}

void print_peer_table() {
  std::vector<peer_row> rows;
  for (const auto& k : fast::kernel_registry()) rows.push_back(measure(k.name, k, nullptr, false));
  rows.push_back(measure(mutants::defect_free_kernel().name, mutants::defect_free_kernel(), nullptr, false));
  for (const auto& m : mutants::mutant_registry())
    rows.push_back(measure(m.kernel.name, m.kernel, m.frequencies, true));
  // What a peer team ends up with when its own correct kernel fails: tolerances relaxed until
  // the correct kernels pass (per dtype, the correct kernels' worst ratio).
  std::array<double, 3> relaxed{1, 1, 1};
  for (const auto& r : rows)
    for (std::size_t i = 0; i < 3; ++i)
      if (!r.is_mutant && r.verdicts[i]) relaxed[i] = std::max(relaxed[i], r.verdicts[i]->worst_over_tolerance);

  fmt::print("### Peer-style test: allclose against a float32 copy of the recipe\n\n");
  fmt::print(
      "float32 atol 1e-5 / rtol 1.3e-6, bfloat16 atol 1e-3 / rtol 1.6e-2, float16 atol 1e-5 / rtol "
      "1e-3; base 1e4 unscaled (kernel and reference share the module's frequencies); d = 64, 128, 80 "
      "× rotary d and d/2 × both pairings; positions < 8192 (prefill 0–511, a 64-token block at an "
      "offset, 64 scattered); Q and K in one contiguous out-of-place forward call; N(0, 1) inputs. "
      "Cells: worst |y − ref| / (atol + rtol·|ref|) (> 1 fails). *Relaxed*: tolerances multiplied "
      "until the correct kernels pass (float32 ×{:.3g}, bfloat16 ×{:.3g}, float16 ×{:.3g}).\n\n",
      relaxed[0], relaxed[1], relaxed[2]);
  fmt::print("| kernel | float32 | bfloat16 | float16 | strict tolerances | relaxed tolerances |\n"
             "|---|---|---|---|---|---|\n");
  std::size_t through_strict = 0, through_relaxed = 0, mutant_count = 0;
  std::vector<std::string> not_run;
  for (const auto& r : rows) {
    if (!r.measured()) {  // no verdict to give: said so, and counted nowhere
      not_run.push_back(fmt::format("`{}`", r.name));
      fmt::print("| `{}`{} | not run | not run | not run | not run | not run |\n", r.name,
                 r.is_mutant ? "" : " (correct)");
      continue;
    }
    bool fail_strict = false, fail_relaxed = false;
    std::string cells;
    for (std::size_t i = 0; i < 3; ++i) {
      if (!r.verdicts[i]) {
        cells += " n/a |";
        continue;
      }
      const double w = r.verdicts[i]->worst_over_tolerance;
      fail_strict = fail_strict || w > 1;
      fail_relaxed = fail_relaxed || w > relaxed[i];
      cells += fmt::format(" {:.3g} |", w);
    }
    auto verdict = [&](bool fail) {
      if (r.is_mutant) return std::string(fail ? "caught" : "**lets it through**");
      return std::string(fail ? "**false alarm**" : "passes");
    };
    if (r.is_mutant) {
      ++mutant_count;
      through_strict += fail_strict ? 0 : 1;
      through_relaxed += fail_relaxed ? 0 : 1;
    }
    fmt::print("| `{}`{} |{} {} | {} |\n", r.name, r.is_mutant ? "" : " (correct)", cells,
               verdict(fail_strict), verdict(fail_relaxed));
  }
  std::string unmeasured;
  for (const auto& name : not_run) unmeasured += (unmeasured.empty() ? "" : ", ") + name;
  fmt::print("\nMutants the peer-style test lets through: {} of {} measured with strict tolerances "
             "(which also fail every correct kernel in float32), {} of {} with relaxed tolerances.{}\n",
             through_strict, mutant_count, through_relaxed, mutant_count,
             not_run.empty() ? std::string()
                             : fmt::format(" Not run ({} of {} kernels: only dtypes the peer-style "
                                           "test has no tolerance for): {}.",
                                           not_run.size(), rows.size(), unmeasured));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // --catalog-rows NAME...: the README's rows for those mutants, from the catalog.
    if (argc >= 2 && std::string(argv[1]) == "--catalog-rows") {
      for (int i = 2; i < argc; ++i) {
        const mutants::mutant* m = mutants::find_mutant(argv[i]);
        if (m == nullptr) throw std::runtime_error(std::string("no mutant '") + argv[i] + "'");
        fmt::print("{}\n", mutants::catalog_row(*m));
      }
      return 0;
    }
    if (argc > 2 || (argc == 2 && std::string(argv[1]).starts_with("-"))) {
      std::fprintf(stderr, "usage: ropecheck_mutant_tables [GATE_REPORT.json] | --catalog-rows MUTANT...\n");
      return 2;
    }
    if (argc == 2) print_kill_table(argv[1]);
    print_peer_table();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ropecheck_mutant_tables: %s\n", e.what());
    return 2;
  }
  return 0;
}
