// The gate report's renderers: terminal table, Markdown, JSON (docs/report-schema.md), JUnit
// XML and HTML; and the JSON reader used by `report` and `--baseline`.
#include "reports/gate_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <stdexcept>

#include "reports/render_support.h"

namespace ropecheck::reports {
namespace {

using json = nlohmann::json;
using detail::field;
using detail::verdict;
using detail::verdict_field;
using detail::xml_escape;

std::string ratio(double worst_over_bound) { return fmt::format("{:.3f}", worst_over_bound); }

}  // namespace

json to_json(const gate_report& r) {
  json kernels = json::array();
  for (const auto& k : r.kernels) {
    json properties = json::array();
    for (const auto& p : k.properties) {
      properties.push_back({{"name", p.name},
                            {"verdict", verdict(p.passed)},
                            {"cases", p.cases},
                            {"worst_over_bound", p.worst_over_bound},
                            {"counterexample", p.counterexample},
                            {"replay", p.replay}});
    }
    kernels.push_back({{"name", k.name}, {"verdict", verdict(k.passed)}, {"properties", properties}});
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
              {"schema_version", 1},
              {"tool_version", r.tool_version},
              {"verdict", verdict(r.passed)},
              {"profile", r.profile},
              {"seed", r.seed},
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
    throw std::invalid_argument(fmt::format("report: field 'report': {} is not \"gate\"", j["report"].dump()));
  gate_report r;
  r.tool_version = field<std::string>(j, "tool_version", "report");
  r.passed = verdict_field(j, "report");
  r.profile = field<std::string>(j, "profile", "report");
  r.seed = field<std::uint64_t>(j, "seed", "report");
  const auto kernels = field<json>(j, "kernels", "report");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string where = fmt::format("kernels[{}]", i);
    kernel_outcome k{field<std::string>(kernels[i], "name", where), verdict_field(kernels[i], where), {}};
    const auto properties = field<json>(kernels[i], "properties", where);
    for (std::size_t p = 0; p < properties.size(); ++p) {
      const std::string at = fmt::format("{}.properties[{}]", where, p);
      k.properties.push_back({field<std::string>(properties[p], "name", at),
                              verdict_field(properties[p], at),
                              field<std::int64_t>(properties[p], "cases", at),
                              field<double>(properties[p], "worst_over_bound", at),
                              field<std::string>(properties[p], "counterexample", at),
                              field<std::string>(properties[p], "replay", at)});
    }
    r.kernels.push_back(std::move(k));
  }
  const auto fixtures = field<json>(j, "fixtures", "report");
  for (std::size_t i = 0; i < fixtures.size(); ++i) {
    const std::string where = fmt::format("fixtures[{}]", i);
    r.fixtures.push_back({field<std::string>(fixtures[i], "name", where),
                          verdict_field(fixtures[i], where),
                          field<std::int64_t>(fixtures[i], "values", where),
                          field<double>(fixtures[i], "worst_over_bound", where),
                          field<std::string>(fixtures[i], "detail", where)});
  }
  if (j.contains("mutants")) {
    const auto mutants = field<json>(j, "mutants", "report");
    if (!mutants.is_array()) throw std::invalid_argument("report: field 'mutants': not an array");
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

}  // namespace

std::string render_terminal(const gate_report& r) {
  std::size_t kernel_width = 6, property_width = 8, fixture_width = 7;
  for (const auto& k : r.kernels) {
    kernel_width = std::max(kernel_width, k.name.size());
    for (const auto& p : k.properties) property_width = std::max(property_width, p.name.size());
  }
  for (const auto& f : r.fixtures) fixture_width = std::max(fixture_width, f.name.size());
  std::string out = fmt::format("ropecheck gate — profile {}, seed {}\n\n", r.profile, r.seed);
  out += fmt::format("{:<{}}  {:<{}}  {:>7}  {:>7}  {:>11}\n", "kernel", kernel_width, "property",
                     property_width, "verdict", "cases", "worst/bound");
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      out += fmt::format("{:<{}}  {:<{}}  {:>7}  {:>7}  {:>11}\n", k.name, kernel_width, p.name,
                         property_width, verdict(p.passed), p.cases, ratio(p.worst_over_bound));
      if (!p.passed) {
        out += fmt::format("    counterexample: {}\n", p.counterexample);
        if (!p.replay.empty()) out += fmt::format("    replay: {}\n", p.replay);
      }
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
  std::size_t failed_kernels = 0;
  for (const auto& k : r.kernels) failed_kernels += k.passed ? 0 : 1;
  out += render_mutants_terminal(r);
  out += fmt::format("\ngate: {} ({} kernels, {} failed; {} fixture checks)\n",
                     r.passed ? "PASS" : "FAIL", r.kernels.size(), failed_kernels, r.fixtures.size());
  return out;
}

std::string render_markdown(const gate_report& r) {
  std::string out = fmt::format("### ropecheck gate: {}\n\nProfile `{}`, seed `{}`.\n\n",
                                r.passed ? "✅ pass" : "❌ fail", r.profile, r.seed);
  out += "| kernel | verdict | worst/bound | failed properties |\n|---|---|---|---|\n";
  for (const auto& k : r.kernels) {
    double worst = 0;
    std::string failed;
    for (const auto& p : k.properties) {
      worst = std::max(worst, p.worst_over_bound);
      if (!p.passed) failed += (failed.empty() ? "" : ", ") + fmt::format("`{}`", p.name);
    }
    out += fmt::format("| `{}` | {} | {} | {} |\n", k.name, verdict(k.passed), ratio(worst),
                       failed.empty() ? "—" : failed);
  }
  std::size_t fixtures_failed = 0;
  for (const auto& f : r.fixtures) fixtures_failed += f.passed ? 0 : 1;
  out += fmt::format("\nFixtures: {} checked, {} failed.\n", r.fixtures.size(), fixtures_failed);
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      if (p.passed) continue;
      out += fmt::format("\n<details><summary>{} / {}</summary>\n\n```\n{}\n{}\n```\n</details>\n",
                         k.name, p.name, p.counterexample, p.replay);
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
  std::size_t tests = r.fixtures.size() + r.mutants.size(), failures = 0;
  for (const auto& k : r.kernels) tests += k.properties.size();
  std::string cases;
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      cases += fmt::format("    <testcase classname=\"ropecheck.kernel.{}\" name=\"{}\">\n",
                           xml_escape(k.name), xml_escape(p.name));
      cases += fmt::format("      <system-out>cases {} worst_over_bound {}</system-out>\n", p.cases,
                           ratio(p.worst_over_bound));
      if (!p.passed) {
        ++failures;
        cases += fmt::format("      <failure message=\"{}\">{}\n{}</failure>\n",
                             xml_escape(p.name + " failed"), xml_escape(p.counterexample),
                             xml_escape(p.replay));
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
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"ropecheck\" tests=\"{0}\" failures=\"{1}\" errors=\"0\">\n"
      "  <testsuite name=\"ropecheck.gate\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"0\">\n{2}  </testsuite>\n</testsuites>\n",
      tests, failures, cases);
}

std::string render_html(const gate_report& r) {
  std::string rows;
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      rows += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                          verdict(p.passed), xml_escape(k.name), xml_escape(p.name), verdict(p.passed),
                          p.cases, ratio(p.worst_over_bound));
    }
  }
  for (const auto& f : r.fixtures) {
    rows += fmt::format("<tr class=\"{}\"><td>fixture</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        verdict(f.passed), xml_escape(f.name), verdict(f.passed), f.values,
                        ratio(f.worst_over_bound));
  }
  for (const auto& m : r.mutants) {
    rows += fmt::format("<tr class=\"{}\"><td>mutant {}</td><td>{}</td><td>{}</td><td>{}</td><td></td></tr>\n",
                        verdict(m.killed), xml_escape(m.name), xml_escape(killers_of(m, "")),
                        m.killed ? "killed" : "survived", m.killed_by.size());
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ropecheck gate: {0}</title>\n"
      "<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}"
      "td,th{{border:1px solid #ccc;padding:.3em .6em}}tr.fail{{background:#fdd}}"
      "tr.pass td:nth-child(3){{color:#070}}</style></head>\n<body><h1>ropecheck gate: {0}</h1>\n"
      "<p>profile {1}, seed {2}</p>\n<table><tr><th>kernel</th><th>property / fixture</th>"
      "<th>verdict</th><th>cases</th><th>worst/bound</th></tr>\n{3}</table></body></html>\n",
      verdict(r.passed), xml_escape(r.profile), r.seed, rows);
}

void write_report_files(const gate_report& report, const report_paths& paths) {
  detail::write_renderings({{paths.json, [&] { return detail::json_text(to_json(report)); }},
                            {paths.markdown, [&] { return render_markdown(report); }},
                            {paths.html, [&] { return render_html(report); }},
                            {paths.junit, [&] { return render_junit(report); }}});
}

}  // namespace ropecheck::reports
