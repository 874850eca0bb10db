// The gate report's renderers: terminal table, Markdown, JSON (docs/report-schema.md), JUnit
// XML and HTML; and the JSON reader used by `report` and `--baseline`.
#include "reports/gate_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "reports/render_support.h"

namespace ropecheck::reports {
namespace {

using json = nlohmann::json;
using detail::field;
using detail::verdict;
using detail::verdict_field;
using detail::xml_escape;

std::string ratio(double worst_over_bound) {
  return worst_over_bound >= 1e5 ? fmt::format("{:.3e}", worst_over_bound)
                                 : fmt::format("{:.3f}", worst_over_bound);
}

// 3: the `shard` field (a shard report's cases are its block's only).
constexpr int schema_version = 3;

json location_json(const location& l) {
  if (l.text.empty()) return nullptr;
  return {{"dtype", l.dtype},       {"pairing", l.pairing},   {"head_dim", l.head_dim},
          {"rotary_dim", l.rotary_dim}, {"position", l.position}, {"pair", l.pair},
          {"units", l.units},       {"text", l.text}};
}

location location_from(const json& j, const std::string& where) {
  if (j.is_null()) return {};
  return {field<std::string>(j, "dtype", where),    field<std::string>(j, "pairing", where),
          field<int>(j, "head_dim", where),         field<int>(j, "rotary_dim", where),
          field<std::int64_t>(j, "position", where), field<int>(j, "pair", where),
          field<double>(j, "units", where),         field<std::string>(j, "text", where)};
}

// "worst/bound 7942 at float32 half d=512/512 … m=65535 j=3 (error 1.2e4·2^-24·A·‖pair‖)".
std::string where_text(const location& l) {
  if (l.text.empty()) return "-";
  return l.text;
}

bool shown_as_failure(const property_outcome& p) { return !p.passed; }

}  // namespace

std::string verdict_of(const property_outcome& p) {
  return p.status.empty() ? verdict(p.passed) : p.status;
}

std::string verdict_of(const kernel_outcome& k) { return k.ended ? k.ended->verdict : verdict(k.passed); }

void judge(gate_report& r) {
  r.passed = true;
  for (auto& k : r.kernels) {
    k.passed = !k.ended && std::none_of(k.properties.begin(), k.properties.end(),
                                        [](const property_outcome& p) { return !p.passed && p.status.empty(); });
    const std::string segment = "/" + k.name + "/";
    for (const auto& f : r.fixtures)
      if (!f.passed && f.name.find(segment) != std::string::npos) k.passed = false;
    r.passed = r.passed && k.passed;
  }
  for (const auto& f : r.fixtures) r.passed = r.passed && f.passed;
  for (const auto& m : r.mutants) r.passed = r.passed && m.killed;
}

json to_json(const gate_report& r) {
  json kernels = json::array();
  for (const auto& k : r.kernels) {
    json properties = json::array();
    for (const auto& p : k.properties) {
      json points = json::array();
      for (const auto& [m, q] : p.points) points.push_back({m, q});
      properties.push_back({{"name", p.name},
                            {"verdict", verdict_of(p)},
                            {"cases", p.cases},
                            {"failed_cases", p.failed_cases},
                            {"worst_over_bound", p.worst_over_bound},
                            {"worst", location_json(p.worst)},
                            {"message", p.message},
                            {"counterexample", p.counterexample},
                            {"counterexample_location", location_json(p.counterexample_location)},
                            {"replay", p.replay},
                            {"detail", p.detail},
                            {"points", points}});
    }
    json kernel = {{"name", k.name}, {"verdict", verdict_of(k)}, {"properties", properties}};
    if (k.ended)
      kernel["ended"] = {{"cause", k.ended->cause},
                         {"property", k.ended->property},
                         {"call", k.ended->call},
                         {"replay", k.ended->replay},
                         {"case", json::parse(k.ended->case_json, nullptr, false)}};
    kernels.push_back(std::move(kernel));
  }
  json fixtures = json::array();
  for (const auto& f : r.fixtures) {
    fixtures.push_back({{"name", f.name},
                        {"verdict", verdict(f.passed)},
                        {"values", f.values},
                        {"worst_over_bound", f.worst_over_bound},
                        {"detail", f.detail}});
  }
  json out = {{"report", "gate"},
              {"schema_version", schema_version},
              {"tool_version", r.tool_version},
              {"verdict", verdict(r.passed)},
              {"profile", r.profile},
              {"seed", r.seed},
              {"contract", {{"name", r.contract}, {"statement", r.contract_statement}}},
              {"max_position", r.max_position > 0 ? json(r.max_position) : json(nullptr)},
              {"selected_properties", r.selected_properties},
              {"baseline", r.baseline.empty() ? json(nullptr) : json(r.baseline)},
              {"shard", r.shard_count > 1 ? json{{"index", r.shard_index}, {"count", r.shard_count}}
                                          : json(nullptr)},
              {"kernels", kernels},
              {"fixtures", fixtures}};
  if (!r.mutants.empty()) {
    json mutants = json::array();
    for (const auto& m : r.mutants) {
      mutants.push_back({{"name", m.name},
                         {"imitates", m.imitates},
                         {"killed", m.killed},
                         {"killed_by", m.killed_by},
                         {"counterexamples", m.counterexamples}});
    }
    out["mutants"] = mutants;
  }
  return out;
}

gate_report gate_report_from_json(const json& j) {
  if (field<std::string>(j, "report", "report") != "gate")
    throw std::invalid_argument(fmt::format("report: field 'report': {} is not \"gate\"", detail::shown(j.at("report"))));
  gate_report r;
  const int version = field<int>(j, "schema_version", "report");
  if (version < 1 || version > schema_version)
    throw std::invalid_argument(fmt::format("report: field 'schema_version': {} is not 1, 2 or {}",
                                            version, schema_version));
  const bool v2 = version >= 2;  // version 1 has none of the fields below
  r.tool_version = field<std::string>(j, "tool_version", "report");
  r.passed = verdict_field(j, "report");
  r.profile = field<std::string>(j, "profile", "report");
  r.seed = field<std::uint64_t>(j, "seed", "report");
  if (v2) {
    const auto contract = field<json>(j, "contract", "report");
    r.contract = field<std::string>(contract, "name", "contract");
    r.contract_statement = field<std::string>(contract, "statement", "contract");
    const auto max_position = field<json>(j, "max_position", "report");
    r.max_position = max_position.is_null() ? 0 : field<std::int64_t>(j, "max_position", "report");
    r.selected_properties = field<std::vector<std::string>>(j, "selected_properties", "report");
    const auto baseline = field<json>(j, "baseline", "report");
    r.baseline = baseline.is_null() ? "" : field<std::string>(j, "baseline", "report");
  }
  if (version >= 3) {
    const auto shard = field<json>(j, "shard", "report");
    if (!shard.is_null()) {
      r.shard_index = field<int>(shard, "index", "shard");
      r.shard_count = field<int>(shard, "count", "shard");
      if (r.shard_count < 2 || r.shard_index < 0 || r.shard_index >= r.shard_count)
        throw std::invalid_argument(fmt::format(
            "report: field 'shard': {} is not {{\"index\": I, \"count\": N}} with 0 <= I < N, N >= 2",
            detail::shown(shard)));
    }
  }
  const json& kernels = detail::array_field(j, "kernels", "report");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string where = fmt::format("kernels[{}]", i);
    kernel_outcome k{field<std::string>(kernels[i], "name", where), true, {}, std::nullopt};
    const auto kernel_verdict = field<std::string>(kernels[i], "verdict", where);
    if (kernel_verdict == "crashed" || kernel_verdict == "timed_out") {
      const json& e = field<json>(kernels[i], "ended", where);
      const std::string at = where + ".ended";
      const json& saved_case = field<json>(e, "case", at);
      if (!saved_case.is_object())
        throw std::invalid_argument(fmt::format("{}: field 'case': {} is not an object", at, detail::shown(saved_case)));
      k.ended = kernel_ending{kernel_verdict, field<std::string>(e, "cause", at), field<std::string>(e, "property", at),
                              field<std::string>(e, "call", at), saved_case.dump(1) + "\n",
                              field<std::string>(e, "replay", at)};
      k.passed = false;
    } else {
      k.passed = verdict_field(kernels[i], where);
    }
    const json& properties = detail::array_field(kernels[i], "properties", where);
    for (std::size_t p = 0; p < properties.size(); ++p) {
      const std::string at = fmt::format("{}.properties[{}]", where, p);
      const json& q = properties[p];
      property_outcome o;
      o.name = field<std::string>(q, "name", at);
      const auto v = field<std::string>(q, "verdict", at);
      if (v == "pass" || v == "fail") {
        o.passed = v == "pass";
      } else if (v2 && (v == "known_failure" || v == "skipped" || v == "not_run")) {
        o.status = v;
        o.passed = v != "known_failure";
      } else {
        throw std::invalid_argument(fmt::format("{}: field 'verdict': \"{}\" is not {}", at, v,
                                                v2 ? "pass, fail, known_failure, skipped or not_run"
                                                   : "pass or fail"));
      }
      o.cases = field<std::int64_t>(q, "cases", at);
      o.worst_over_bound = field<double>(q, "worst_over_bound", at);
      o.counterexample = field<std::string>(q, "counterexample", at);
      o.replay = field<std::string>(q, "replay", at);
      if (v2) {
        o.failed_cases = field<std::int64_t>(q, "failed_cases", at);
        o.worst = location_from(field<json>(q, "worst", at), at + ".worst");
        o.message = field<std::string>(q, "message", at);
        o.counterexample_location =
            location_from(field<json>(q, "counterexample_location", at), at + ".counterexample_location");
        o.detail = field<std::string>(q, "detail", at);
        o.points = field<std::vector<std::pair<std::int64_t, double>>>(q, "points", at);
      }
      k.properties.push_back(std::move(o));
    }
    r.kernels.push_back(std::move(k));
  }
  const json& fixtures = detail::array_field(j, "fixtures", "report");
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    const std::string where = fmt::format("fixtures[{}]", i);
    r.fixtures.push_back({field<std::string>(fixtures[i], "name", where),
                          verdict_field(fixtures[i], where),
                          field<std::int64_t>(fixtures[i], "values", where),
                          field<double>(fixtures[i], "worst_over_bound", where),
                          field<std::string>(fixtures[i], "detail", where)});
  }
  if (j.contains("mutants")) {
    const json& mutants = detail::array_field(j, "mutants", "report");
    for (std::size_t i = 0; i < mutants.size(); ++i) {
      const std::string where = fmt::format("mutants[{}]", i);
      mutant_outcome m;
      m.name = field<std::string>(mutants[i], "name", where);
      m.imitates = field<std::string>(mutants[i], "imitates", where);
      m.killed = field<bool>(mutants[i], "killed", where);
      m.killed_by = field<std::vector<std::string>>(mutants[i], "killed_by", where);
      m.counterexamples = field<std::vector<std::string>>(mutants[i], "counterexamples", where);
      if (m.counterexamples.size() != m.killed_by.size())
        throw std::invalid_argument(fmt::format(
            "{}: field 'counterexamples': {} entries for {} in killed_by", where,
            m.counterexamples.size(), m.killed_by.size()));
      r.mutants.push_back(std::move(m));
    }
  }
  return r;
}

namespace {

// The matrix's column of a killer: "<property>/<dtype>" → property; fixtures by family.
std::string kill_column(const std::string& killer) {
  const auto slash = killer.find('/');
  const std::string head = killer.substr(0, slash);
  if (head == "golden" && slash != std::string::npos) {
    const auto next = killer.find('/', slash + 1);
    return killer.substr(0, next);
  }
  return head;
}

std::vector<std::string> kill_columns(const gate_report& r) {
  std::vector<std::string> columns;
  for (const auto& m : r.mutants)
    for (const auto& k : m.killed_by) {
      const std::string c = kill_column(k);
      if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
    }
  return columns;
}

std::size_t mutants_killed(const gate_report& r) {
  std::size_t n = 0;
  for (const auto& m : r.mutants) n += m.killed ? 1 : 0;
  return n;
}

std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return text;
  const auto start = text.rfind('\n', end);
  const std::size_t from = start == std::string::npos ? 0 : start + 1;
  return text.substr(from, end - from + 1);
}

std::string killers_of(const mutant_outcome& m, const std::string& quote) {
  std::vector<std::string> columns;
  for (const auto& k : m.killed_by) {
    const std::string c = kill_column(k);
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  }
  std::string out;
  for (const auto& c : columns) out += (out.empty() ? "" : ", ") + quote + c + quote;
  return out.empty() ? "—" : out;
}

std::string render_mutants_terminal(const gate_report& r) {
  if (r.mutants.empty()) return {};
  std::size_t name_width = 6;
  for (const auto& m : r.mutants) name_width = std::max(name_width, m.name.size());
  const auto columns = kill_columns(r);
  std::string out = "\nkill matrix (X: failed on the mutant)\n";
  for (std::size_t c = 0; c < columns.size(); ++c)
    out += fmt::format("{:>{}}  [{:>2}] {}\n", "", name_width + 8, c + 1, columns[c]);
  out += fmt::format("{:<{}}  {:>6} ", "mutant", name_width, "killed");
  for (std::size_t c = 0; c < columns.size(); ++c) out += fmt::format(" {:>2}", c + 1);
  out += "\n";
  for (const auto& m : r.mutants) {
    out += fmt::format("{:<{}}  {:>6} ", m.name, name_width, m.killed ? "yes" : "NO");
    for (const auto& column : columns) {
      bool hit = false;
      for (const auto& k : m.killed_by) hit = hit || kill_column(k) == column;
      out += fmt::format(" {:>2}", hit ? "X" : ".");
    }
    out += "\n";
  }
  out += "\ncounterexamples (the first killer of each mutant, shrunk):\n";
  for (const auto& m : r.mutants) {
    out += fmt::format("  {} — imitates: {}\n", m.name, m.imitates);
    if (m.killed_by.empty()) {
      out += "    NOT KILLED\n";
      continue;
    }
    out += fmt::format("    {}: {}\n", m.killed_by.front(), last_line(m.counterexamples.front()));
  }
  out += fmt::format("\nmutants: {} of {} killed\n", mutants_killed(r), r.mutants.size());
  return out;
}

// Indents every line of `text` by `pad`.
std::string indented(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out += pad;
  }
  return out;
}

std::string worst_line(const property_outcome& p) {
  std::string out = fmt::format("worst/bound {} over all {} cases at {}", ratio(p.worst_over_bound),
                                p.cases, where_text(p.worst));
  if (p.failed_cases > 0) out += fmt::format("; {} of {} cases failed", p.failed_cases, p.cases);
  return out;
}

std::string header_lines(const gate_report& r) {
  std::string out = fmt::format("contract: {}{}\n", r.contract,
                                r.contract_statement.empty() ? "" : " (" + r.contract_statement + ")");
  if (r.max_position > 0) out += fmt::format("max position: |m| <= {} (--max-position)\n", r.max_position);
  if (!r.selected_properties.empty()) {
    std::string list;
    for (const auto& p : r.selected_properties) list += (list.empty() ? "" : ", ") + p;
    out += fmt::format("properties: {} (the others not run)\n", list);
  }
  if (!r.baseline.empty()) out += fmt::format("baseline: {}\n", r.baseline);
  if (r.shard_count > 1)
    out += fmt::format("shard: {}/{} (block {} of {} of every property's cases{}; "
                       "`ropecheck report merge` joins the shards)\n",
                       r.shard_index, r.shard_count, r.shard_index, r.shard_count,
                       r.shard_index == 0 ? ", and the fixtures" : "");
  return out;
}

}  // namespace

std::string render_terminal(const gate_report& r) {
  std::size_t kernel_width = 6, property_width = 8, fixture_width = 7;
  for (const auto& k : r.kernels) {
    kernel_width = std::max(kernel_width, k.name.size());
    for (const auto& p : k.properties) property_width = std::max(property_width, p.name.size());
  }
  for (const auto& f : r.fixtures) fixture_width = std::max(fixture_width, f.name.size());
  std::string out = fmt::format("ropecheck gate — profile {}, seed {}\n", r.profile, r.seed);
  out += header_lines(r) + "\n";
  out += fmt::format("{:<{}}  {:<{}}  {:>13}  {:>7}  {:>11}\n", "kernel", kernel_width, "property",
                     property_width, "verdict", "cases", "worst/bound");
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      out += fmt::format("{:<{}}  {:<{}}  {:>13}  {:>7}  {:>11}", k.name, kernel_width, p.name,
                         property_width, verdict_of(p), p.cases, ratio(p.worst_over_bound));
      if (p.status == "skipped" || p.status == "not_run") out += "  " + p.detail;
      out += "\n";
    }
  }
  // A kernel whose process ended: how, during what, and the in-process replay (for a debugger).
  for (const auto& k : r.kernels) {
    if (!k.ended) continue;
    out += fmt::format("\n{}: {} — {} during {}\n  call: {}\n  replay: {}\n", k.name, k.ended->verdict,
                       k.ended->cause, k.ended->property, k.ended->call, k.ended->replay);
  }
  // Each failure (and known failure) in full: what failed, where the worst case is, the shrunk
  // counterexample, the replay line.
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      if (!shown_as_failure(p)) continue;
      out += fmt::format("\n{} / {}: {}\n", k.name, p.name, verdict_of(p));
      if (!p.message.empty()) out += fmt::format("  message: {}\n", p.message);
      if (p.worst_over_bound > 0) out += fmt::format("  {}\n", worst_line(p));
      if (!p.counterexample.empty())
        out += fmt::format("  counterexample (shrunk):\n{}\n", indented(p.counterexample, "    "));
      if (!p.replay.empty()) out += fmt::format("  replay: {}\n", p.replay);
    }
  }
  if (!r.fixtures.empty()) {
    out += fmt::format("\n{:<{}}  {:>7}  {:>7}  {:>11}\n", "fixture", fixture_width, "verdict",
                       "values", "worst/bound");
    for (const auto& f : r.fixtures) {
      out += fmt::format("{:<{}}  {:>7}  {:>7}  {:>11}\n", f.name, fixture_width, verdict(f.passed),
                         f.values, ratio(f.worst_over_bound));
      if (!f.passed) out += fmt::format("    {}\n", f.detail);
    }
  }
  std::size_t failed_kernels = 0, known = 0;
  for (const auto& k : r.kernels) {
    failed_kernels += k.passed ? 0 : 1;
    for (const auto& p : k.properties) known += p.status == "known_failure" ? 1 : 0;
  }
  if (known > 0) out += fmt::format("\n{} known failures (failed in the baseline too, worst/bound not grown by more than 10%)\n", known);
  out += render_mutants_terminal(r);
  out += fmt::format("\ngate: {} ({} kernels, {} failed; {} fixture checks)\n",
                     r.passed ? "PASS" : "FAIL", r.kernels.size(), failed_kernels, r.fixtures.size());
  return out;
}

std::string render_markdown(const gate_report& r) {
  std::string out = fmt::format("### ropecheck gate: {}\n\nProfile `{}`, seed `{}`, contract `{}`.",
                                r.passed ? "✅ pass" : "❌ fail", r.profile, r.seed, r.contract);
  if (r.max_position > 0) out += fmt::format(" Positions |m| ≤ {}.", r.max_position);
  if (!r.baseline.empty()) out += fmt::format(" Baseline `{}`.", r.baseline);
  if (r.shard_count > 1) out += fmt::format(" Shard {}/{} only.", r.shard_index, r.shard_count);
  out += "\n\n";
  out += "| kernel | verdict | worst/bound | failed properties |\n|---|---|---|---|\n";
  for (const auto& k : r.kernels) {
    double worst = 0;
    std::string failed;
    for (const auto& p : k.properties) {
      worst = std::max(worst, p.worst_over_bound);
      if (!p.passed)
        failed += (failed.empty() ? "" : ", ") +
                  fmt::format("`{}`{}", p.name, p.status == "known_failure" ? " (known)" : "");
    }
    if (k.ended) failed = fmt::format("{} during `{}` ({}){}", k.ended->verdict, k.ended->property, k.ended->cause,
                                      failed.empty() ? "" : "; " + failed);
    out += fmt::format("| `{}` | {} | {} | {} |\n", k.name, verdict_of(k), ratio(worst),
                       failed.empty() ? "—" : failed);
  }
  std::size_t fixtures_failed = 0;
  for (const auto& f : r.fixtures) fixtures_failed += f.passed ? 0 : 1;
  out += fmt::format("\nFixtures: {} checked, {} failed.\n", r.fixtures.size(), fixtures_failed);
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      if (p.passed) continue;
      out += fmt::format(
          "\n<details><summary>{} / {}: {}</summary>\n\n**Message:** {}\n\n**Worst case:** {}\n\n"
          "**Counterexample (shrunk):**\n\n```\n{}\n```\n\n**Replay:** `{}`\n</details>\n",
          k.name, p.name, verdict_of(p), p.message.empty() ? "—" : p.message, worst_line(p),
          p.counterexample, p.replay);
    }
  }
  if (!r.mutants.empty()) {
    out += fmt::format("\n#### Mutants: {} of {} killed\n\n| mutant | imitates | killed | killed by |\n|---|---|---|---|\n",
                       mutants_killed(r), r.mutants.size());
    for (const auto& m : r.mutants)
      out += fmt::format("| `{}` | {} | {} | {} |\n", m.name, m.imitates, m.killed ? "✅ yes" : "❌ no",
                         killers_of(m, "`"));
  }
  return out;
}

std::string render_junit(const gate_report& r) {
  std::size_t tests = r.fixtures.size() + r.mutants.size(), failures = 0, skipped = 0;
  for (const auto& k : r.kernels) tests += k.properties.size();
  std::string cases;
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      cases += fmt::format("    <testcase classname=\"ropecheck.kernel.{}\" name=\"{}\">\n",
                           xml_escape(k.name), xml_escape(p.name));
      cases += fmt::format("      <system-out>{} cases {} worst_over_bound {}{}</system-out>\n",
                           verdict_of(p), p.cases, ratio(p.worst_over_bound),
                           p.detail.empty() ? "" : xml_escape("; " + p.detail));
      if (p.status == "skipped" || p.status == "not_run") {
        ++skipped;
        cases += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(p.detail));
      } else if (p.status == "known_failure") {
        cases += fmt::format("      <system-err>known failure: {}\n{}</system-err>\n",
                             xml_escape(p.message), xml_escape(worst_line(p)));
      } else if (!p.passed) {
        ++failures;
        cases += fmt::format("      <failure message=\"{}\">{}\n{}\n{}</failure>\n",
                             xml_escape(p.name + " failed: " + p.message), xml_escape(worst_line(p)),
                             xml_escape(p.counterexample), xml_escape(p.replay));
      }
      cases += "    </testcase>\n";
    }
  }
  for (const auto& f : r.fixtures) {
    cases += fmt::format("    <testcase classname=\"ropecheck.fixture\" name=\"{}\">\n",
                         xml_escape(f.name));
    if (!f.passed) {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\">{}</failure>\n",
                           xml_escape(f.name + " failed"), xml_escape(f.detail));
    }
    cases += "    </testcase>\n";
  }
  for (const auto& m : r.mutants) {
    cases += fmt::format("    <testcase classname=\"ropecheck.mutant\" name=\"{}\">\n",
                         xml_escape(m.name));
    cases += fmt::format("      <system-out>killed by {}</system-out>\n", xml_escape(killers_of(m, "")));
    if (!m.killed) {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\">{}</failure>\n",
                           xml_escape(m.name + " survived"), xml_escape(m.imitates));
    }
    cases += "    </testcase>\n";
  }
  return detail::junit_document("ropecheck.gate", tests, failures, cases, skipped);
}

namespace {

// One property's error against position over its cases (log-log, the bound as a dashed line at
// worst/bound = 1), in the style of the audit page's plot.
std::string error_versus_position_svg(const property_outcome& p) {
  constexpr int width = 640, height = 260, left = 64, bottom = 40, top = 16, right = 20;
  if (p.points.empty()) return "";
  double hi_ratio = 1, hi_position = 1;
  for (const auto& [m, q] : p.points) {
    if (std::isfinite(q)) hi_ratio = std::max(hi_ratio, q);  // an infinite ratio is drawn at the top
    hi_position = std::max(hi_position, std::fabs(static_cast<double>(m)));
  }
  const double y_hi = std::ceil(std::log10(hi_ratio)) + 0.5, y_lo = -4;
  const double x_hi = std::max(1.0, std::ceil(std::log2(hi_position + 1)));
  const auto x_of = [&](std::int64_t m) {
    return left + std::log2(std::fabs(static_cast<double>(m)) + 1) / x_hi * (width - left - right);
  };
  const auto y_of = [&](double q) {
    const double l = std::clamp(std::log10(std::max(q, 1e-4)), y_lo, y_hi);
    return top + (y_hi - l) / (y_hi - y_lo) * (height - top - bottom);
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"error over bound versus position\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      width, height);
  for (int d = static_cast<int>(y_lo); d <= static_cast<int>(y_hi); ++d)
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"11\" text-anchor=\"end\">1e{5}</text>\n",
                       left, width - right, y_of(std::pow(10.0, d)), left - 4, y_of(std::pow(10.0, d)) + 4, d);
  for (int e = 0; e <= static_cast<int>(x_hi); e += std::max(1, static_cast<int>(x_hi) / 8)) {
    const double x = left + e / x_hi * (width - left - right);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">2^{}</text>\n", x,
                       height - bottom + 14, e);
  }
  svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#c00\" "
                     "stroke-dasharray=\"6 4\"/><text x=\"{1}\" y=\"{3:.1f}\" font-size=\"11\" "
                     "text-anchor=\"end\" fill=\"#c00\">bound</text>\n",
                     left, width - right, y_of(1), y_of(1) - 4);
  for (const auto& [m, q] : p.points)
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>m = {}: {}</title></circle>\n",
                       x_of(m), y_of(q), q > 1 ? "#c00" : "#036", m, ratio(q));
  if (!p.worst.text.empty())
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"none\" stroke=\"#000\"><title>worst: {}</title></circle>\n",
                       x_of(p.worst.position), y_of(p.worst_over_bound), xml_escape(p.worst.text));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">|position m| (log scale)</text>"
                     "<text x=\"14\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 14 {})\" "
                     "text-anchor=\"middle\">worst error / bound of the case</text>\n</svg>\n",
                     (left + width - right) / 2, height - 6, height / 2, height / 2);
  return svg;
}

}  // namespace

std::string render_html(const gate_report& r) {
  std::string rows;
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      rows += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          verdict_of(p), xml_escape(k.name), xml_escape(p.name), verdict_of(p),
                          p.cases, ratio(p.worst_over_bound),
                          xml_escape(p.passed ? p.detail : where_text(p.worst)));
    }
  }
  for (const auto& f : r.fixtures) {
    rows += fmt::format("<tr class=\"{}\"><td>fixture</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        verdict(f.passed), xml_escape(f.name), verdict(f.passed), f.values,
                        ratio(f.worst_over_bound), f.passed ? "" : xml_escape(f.detail));
  }
  for (const auto& m : r.mutants) {
    rows += fmt::format("<tr class=\"{}\"><td>mutant {}</td><td>{}</td><td>{}</td><td>{}</td><td></td><td></td></tr>\n",
                        verdict(m.killed), xml_escape(m.name), xml_escape(killers_of(m, "")),
                        m.killed ? "killed" : "survived", m.killed_by.size());
  }
  std::string failures;
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      if (!shown_as_failure(p)) continue;
      failures += fmt::format(
          "<section class=\"failure\"><h3>{} / {}: <span class=\"fail\">{}</span></h3>\n"
          "<p><b>Message:</b> {}</p>\n<p><b>Worst case:</b> {}</p>\n{}"
          "<p><b>Counterexample (shrunk):</b></p><pre>{}</pre>\n<p><b>Replay:</b></p><pre>{}</pre></section>\n",
          xml_escape(k.name), xml_escape(p.name), verdict_of(p),
          xml_escape(p.message.empty() ? "-" : p.message), xml_escape(worst_line(p)),
          error_versus_position_svg(p), xml_escape(p.counterexample), xml_escape(p.replay));
    }
  }
  for (const auto& f : r.fixtures)
    if (!f.passed)
      failures += fmt::format("<section class=\"failure\"><h3>fixture {}</h3><pre>{}</pre></section>\n",
                              xml_escape(f.name), xml_escape(f.detail));
  return detail::html_page(
      "ropecheck gate: " + verdict(r.passed),
      "tr.fail,tr.known_failure{background:#fdd}tr.skipped td,tr.not_run td{color:#888}"
      "section.failure{border-top:1px solid #ccc;margin-top:1.5em}",
      fmt::format("<h1>ropecheck gate: <span class=\"{0}\">{0}</span></h1>\n"
                  "<p>profile {1}, seed {2}</p>\n<pre>{3}</pre>\n"
                  "<table><tr><th>kernel</th><th>property / fixture</th><th>verdict</th><th>cases</th>"
                  "<th>worst/bound</th><th>worst case / note</th></tr>\n{4}</table>\n"
                  "<h2>Failures</h2>\n{5}",
                  verdict(r.passed), xml_escape(r.profile), r.seed, xml_escape(header_lines(r)), rows,
                  failures.empty() ? "<p>none</p>\n" : failures));
}

void write_report_files(const gate_report& report, const report_paths& paths) {
  detail::write_renderings({{paths.json, [&] { return json_text(to_json(report)); }},
                            {paths.markdown, [&] { return render_markdown(report); }},
                            {paths.html, [&] { return render_html(report); }},
                            {paths.junit, [&] { return render_junit(report); }}});
}

}  // namespace ropecheck::reports
