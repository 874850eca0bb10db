#include "reports/gate_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
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
  return {{"report", "gate"},
          {"schema_version", 1},
          {"tool_version", r.tool_version},
          {"verdict", verdict(r.passed)},
          {"profile", r.profile},
          {"seed", r.seed},
          {"kernels", kernels},
          {"fixtures", fixtures}};
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
  return r;
}

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
  return out;
}

std::string render_junit(const gate_report& r) {
  std::size_t tests = r.fixtures.size(), failures = 0;
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
  const auto write = detail::write_rendering;
  write(paths.json, to_json(report).dump(2) + "\n");
  write(paths.markdown, render_markdown(report));
  write(paths.html, render_html(report));
  write(paths.junit, render_junit(report));
}

}  // namespace ropecheck::reports
