// The gate report's renderers: terminal table, Markdown, JSON (docs/report-schema.md), JUnit
// XML and HTML; and the JSON reader used by `report` and `--baseline`.
#include "reports/gate_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "numeric/dtype.h"
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

}  // namespace

std::string verdict_of(const property_outcome& p) {
  return p.status.empty() ? verdict(p.passed) : p.status;
}

std::string verdict_of(const kernel_outcome& k) { return k.ended ? k.ended->verdict : verdict(k.passed); }

std::string describe(const served_domain& d) {
  std::vector<std::string> parts;
  if (d.nonnegative_positions) parts.push_back("positions m >= 0");
  if (d.max_position > 0) parts.push_back(fmt::format("|m| <= {}", d.max_position));
  if (!d.inverse) parts.push_back("no inverse direction");
  if (!d.attention_factor) parts.push_back("no attention factor (A = 1)");
  if (!d.partial_rotary) parts.push_back("no partial rotary (rotary_dim = head_dim)");
  if (!d.absent_tensor) parts.push_back("Q and K always together");
  if (parts.empty()) return "every call";
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

namespace {

json domain_json(const served_domain& d) {
  return {{"positions", d.nonnegative_positions ? "nonnegative" : "all"},
          {"max_position", d.max_position > 0 ? json(d.max_position) : json(nullptr)},
          {"inverse", d.inverse},
          {"attention_factor", d.attention_factor},
          {"partial_rotary", d.partial_rotary},
          {"absent_tensor", d.absent_tensor}};
}

served_domain domain_from_json(const json& j, const std::string& where) {
  if (!j.is_object())
    throw std::invalid_argument(fmt::format("{}: field 'domain': {} is not an object", where, detail::shown(j)));
  const std::string at = where + ".domain";
  served_domain d;
  const auto positions = field<std::string>(j, "positions", at);
  if (positions != "all" && positions != "nonnegative")
    throw std::invalid_argument(fmt::format("{}: field 'positions': \"{}\" is not all or nonnegative", at, positions));
  d.nonnegative_positions = positions == "nonnegative";
  const auto max_position = field<json>(j, "max_position", at);
  if (!max_position.is_null()) {
    d.max_position = field<std::int64_t>(j, "max_position", at);
    if (d.max_position < 1)
      throw std::invalid_argument(fmt::format("{}: field 'max_position': {} is not null or >= 1", at, d.max_position));
  }
  d.inverse = field<bool>(j, "inverse", at);
  d.attention_factor = field<bool>(j, "attention_factor", at);
  d.partial_rotary = field<bool>(j, "partial_rotary", at);
  d.absent_tensor = field<bool>(j, "absent_tensor", at);
  return d;
}

}  // namespace

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
      const auto point_list = [](const std::vector<std::pair<std::int64_t, double>>& list) {
        json out = json::array();
        for (const auto& [x, q] : list) out.push_back({x, q});
        return out;
      };
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
                            {"points", point_list(p.points)},
                            {"points_by_pair", point_list(p.pair_points)},
                            {"points_by_head_dim", point_list(p.head_dim_points)},
                            {"largest_call_token_heads", p.largest_call_token_heads}});
    }
    json kernel = {{"name", k.name}, {"verdict", verdict_of(k)}, {"properties", properties}};
    if (k.ended)
      kernel["ended"] = {{"cause", k.ended->cause},
                         {"property", k.ended->property},
                         {"call", k.ended->call},
                         {"replay", k.ended->replay},
                         {"case", json::parse(k.ended->case_json, nullptr, false)}};
    if (k.domain) kernel["domain"] = domain_json(*k.domain);
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
              {"contract",
               {{"name", r.contract}, {"statement", r.contract_statement}, {"derivation", r.contract_derivation}}},
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
    // The derivation came later: older reports lack it.
    if (contract.contains("derivation")) r.contract_derivation = field<std::string>(contract, "derivation", "contract");
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
    kernel_outcome k{field<std::string>(kernels[i], "name", where), true, {}, std::nullopt, std::nullopt};
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
    if (kernels[i].contains("domain")) k.domain = domain_from_json(kernels[i]["domain"], where);
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
        // Stated since the gate reports the calls' sizes and plots against j and head_dim;
        // absent from older reports.
        if (q.contains("points_by_pair"))
          o.pair_points = field<std::vector<std::pair<std::int64_t, double>>>(q, "points_by_pair", at);
        if (q.contains("points_by_head_dim"))
          o.head_dim_points = field<std::vector<std::pair<std::int64_t, double>>>(q, "points_by_head_dim", at);
        if (q.contains("largest_call_token_heads"))
          o.largest_call_token_heads = field<std::int64_t>(q, "largest_call_token_heads", at);
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
  if (!r.contract_derivation.empty() && r.contract != "exact")
    out += fmt::format("contract bound: the exact bound plus, per output, {}\n", r.contract_derivation);
  if (r.max_position > 0) out += fmt::format("max position: |m| <= {} (--max-position)\n", r.max_position);
  if (!r.selected_properties.empty()) {
    std::string list;
    for (const auto& p : r.selected_properties) list += (list.empty() ? "" : ", ") + p;
    out += fmt::format("properties: {} (the others not run)\n", list);
  }
  for (const auto& k : r.kernels)  // a kernel gated on less than every call says on what
    if (k.domain && !(*k.domain == served_domain{}))
      out += fmt::format("domain of {}: {}\n", k.name, describe(*k.domain));
  if (!r.baseline.empty()) out += fmt::format("baseline: {}\n", r.baseline);
  if (r.shard_count > 1)
    out += fmt::format("shard: {}/{} (block {} of {} of every property's cases{}; "
                       "`ropecheck report merge` joins the shards)\n",
                       r.shard_index, r.shard_count, r.shard_index, r.shard_count,
                       r.shard_index == 0 ? ", and the fixtures" : "");
  return out;
}


// --- The order a maintainer reads failures in: what is new first, what was known apart. ---

// A "baseline/<kernel>/<property>" or "baseline/<fixture>" row: the ratchet's comparison of one
// property or fixture with the --baseline report (cli/command_gate.cpp apply_baseline). A
// failing row is a regression of the property or fixture it names.
constexpr std::string_view baseline_prefix = "baseline/";
bool is_baseline_row(const fixture_outcome& f) { return f.name.starts_with(baseline_prefix); }

// One failure to show in full: a property's (kernel and property set) or a fixture's; with the
// failing baseline row that makes it a regression, if it is one.
struct failure_item {
  const kernel_outcome* kernel = nullptr;
  const property_outcome* property = nullptr;
  const fixture_outcome* fixture = nullptr;
  const fixture_outcome* regression = nullptr;
};

struct failure_order {
  std::vector<failure_item> regressions;  // newly failing, or worst/bound grown > 10%
  std::vector<failure_item> failures;     // every other failure (no baseline, or not in it)
  std::vector<failure_item> known;        // failed in the baseline too, by no more
  std::vector<const fixture_outcome*> comparisons;  // every baseline row
};

// A fixture that failed in the baseline too, by no more (apply_baseline lets it pass, so saying).
bool known_fixture(const fixture_outcome& f) { return f.passed && f.detail.starts_with("known failure"); }
std::string fixture_verdict(const fixture_outcome& f) { return known_fixture(f) ? "known_failure" : verdict(f.passed); }

failure_order order_failures(const gate_report& r) {
  failure_order o;
  std::vector<const fixture_outcome*> regressed;
  for (const auto& f : r.fixtures) {
    if (!is_baseline_row(f)) continue;
    o.comparisons.push_back(&f);
    if (!f.passed) regressed.push_back(&f);
  }
  // The failing row that names `label`, taken from `regressed` (each names one thing).
  const auto regression_of = [&regressed](const std::string& label) -> const fixture_outcome* {
    const auto it = std::find_if(regressed.begin(), regressed.end(), [&label](const fixture_outcome* f) {
      return std::string_view(f->name).substr(baseline_prefix.size()) == label;
    });
    if (it == regressed.end()) return nullptr;
    const fixture_outcome* row = *it;
    regressed.erase(it);
    return row;
  };
  for (const auto& k : r.kernels)
    for (const auto& p : k.properties) {
      if (const fixture_outcome* row = regression_of(k.name + "/" + p.name)) {
        o.regressions.push_back({&k, &p, nullptr, row});
      } else if (p.status == "known_failure") {
        o.known.push_back({&k, &p, nullptr, nullptr});
      } else if (!p.passed) {
        o.failures.push_back({&k, &p, nullptr, nullptr});
      }
    }
  for (const auto& f : r.fixtures) {
    if (is_baseline_row(f)) continue;
    if (const fixture_outcome* row = regression_of(f.name)) o.regressions.push_back({nullptr, nullptr, &f, row});
    else if (!f.passed) o.failures.push_back({nullptr, nullptr, &f, nullptr});
    else if (known_fixture(f)) o.known.push_back({nullptr, nullptr, &f, nullptr});
  }
  // A failing row that names nothing in this report (one edited by hand) still shows.
  for (const fixture_outcome* row : regressed) o.regressions.push_back({nullptr, nullptr, row, row});
  return o;
}

// "<kernel> / <property>" or "fixture <name>".
std::string title_of(const failure_item& f) {
  return f.property != nullptr ? f.kernel->name + " / " + f.property->name : "fixture " + f.fixture->name;
}

// --- A failure without a ratio (bit-exact or status properties): the first differing bits. ---

// The bit fields of a storage dtype, from its most significant bit: sign, exponent, mantissa
// (IEEE 754 binary32/binary16, bfloat16, OCP FP8 E4M3/E5M2), from numeric/dtype.h's catalog:
// its width and its precision less the implicit bit.
struct bit_layout {
  int bits;
  int mantissa_bits;
};
std::optional<bit_layout> bit_layout_of(std::string_view name) {
  const std::optional<ropecheck::dtype> t = parse_dtype(name);
  if (!t || !is_storage(*t)) return std::nullopt;
  return bit_layout{static_cast<int>(size_of(*t)) * 8, precision_bits(*t) - 1};
}

std::string field_of_bit(int bit, const bit_layout& l) {
  if (bit == l.bits - 1) return "sign";
  if (bit >= l.mantissa_bits) return fmt::format("exponent bit {}", bit - l.mantissa_bits);
  return fmt::format("mantissa bit {}", bit);
}

// The two bit patterns a bit-exact property's message names ("… bits 0x3f800000 vs … bits
// 0x3f800001", properties/kernel_properties_exact.cpp show_bits), as "0x3f800000 vs 0x3f800001:
// xor 0x00000001, highest differing bit 0 (mantissa bit 0)"; empty when the message names none.
std::string differing_bits(const property_outcome& p) {
  constexpr std::string_view key = "bits 0x";
  std::vector<unsigned long long> values;
  for (std::size_t at = p.message.find(key); at != std::string::npos && values.size() < 2;
       at = p.message.find(key, at + key.size())) {
    const std::size_t start = at + key.size();
    const std::size_t end = p.message.find_first_not_of("0123456789abcdefABCDEF", start);
    const std::string hex = p.message.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (hex.empty() || hex.size() > 16) return {};
    values.push_back(std::stoull(hex, nullptr, 16));
  }
  if (values.size() != 2 || values[0] == values[1]) return {};
  const std::string dtype = p.name.substr(p.name.rfind('/') + 1);
  const std::optional<bit_layout> layout = bit_layout_of(dtype);
  const int digits = layout ? layout->bits / 4 : 8;
  const unsigned long long x = values[0] ^ values[1];
  const int highest = 63 - __builtin_clzll(x);
  std::string out = fmt::format("0x{:0{}x} vs 0x{:0{}x}: xor 0x{:0{}x}, highest differing bit {}", values[0], digits,
                                values[1], digits, x, digits, highest);
  if (layout && highest < layout->bits)
    out += fmt::format(" ({} of {})", field_of_bit(highest, *layout), dtype);
  return out;
}

// The worst/bound column: a ratio, or for a failure that has none what failed instead.
std::string ratio_column(const property_outcome& p) {
  if (p.passed || p.worst_over_bound != 0) return ratio(p.worst_over_bound);
  return differing_bits(p).empty() ? "no ratio" : "bits differ";
}

// The line under a failure's message: where its worst case is, or the first differing bits.
std::string evidence_line(const property_outcome& p) {
  if (p.worst_over_bound > 0) return worst_line(p);
  const std::string bits = differing_bits(p);
  if (!bits.empty()) return "first differing bits: " + bits;
  return "";
}

// "2 regressions against the baseline, 1 other failure, 4 known failures".
std::string failure_counts(const failure_order& o, bool baseline) {
  const auto n = [](std::size_t count, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
  };
  std::vector<std::string> parts;
  if (baseline) parts.push_back(n(o.regressions.size(), "regression against the baseline", "regressions against the baseline"));
  if (!o.failures.empty() || !baseline)
    parts.push_back(n(o.failures.size(), baseline ? "other failure" : "failure", baseline ? "other failures" : "failures"));
  if (baseline) parts.push_back(n(o.known.size(), "known failure", "known failures"));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The comparison behind a regression: the baseline row's words ("newly fails; worst/bound 3.9 now,
// 0.91 in OLD.json").
std::string regression_text(const failure_item& f) {
  return f.regression == nullptr ? "" : f.regression->detail;
}

// "16384 token-heads": the largest call a property sent (tokens × (Q heads + K heads)).
std::string call_size_text(const property_outcome& p) {
  return fmt::format("{} token-heads", p.largest_call_token_heads);
}

// The table's column: "-" where the size is not known.
std::string call_size_column(const property_outcome& p) {
  return p.largest_call_token_heads > 0 ? std::to_string(p.largest_call_token_heads) : "-";
}

// One failure in full (`full`: with its shrunk counterexample) for the terminal.
std::string terminal_block(const failure_item& f, bool full) {
  std::string out;
  if (f.property != nullptr) {
    const property_outcome& p = *f.property;
    out += fmt::format("\n{}: {}{}\n", title_of(f), verdict_of(p), f.regression ? " — REGRESSION" : "");
    if (f.regression) out += fmt::format("  against the baseline: {}\n", regression_text(f));
    if (!p.message.empty()) out += fmt::format("  message: {}\n", p.message);
    if (const std::string e = evidence_line(p); !e.empty()) out += fmt::format("  {}\n", e);
    if (p.largest_call_token_heads > 0) out += fmt::format("  largest call: {}\n", call_size_text(p));
    if (full && !p.counterexample.empty())
      out += fmt::format("  counterexample (shrunk):\n{}\n", indented(p.counterexample, "    "));
    if (!p.replay.empty()) out += fmt::format("  replay: {}\n", p.replay);
  } else {
    out += fmt::format("\n{}: {}{}\n", title_of(f), fixture_verdict(*f.fixture), f.regression ? " — REGRESSION" : "");
    if (f.regression && f.regression != f.fixture)
      out += fmt::format("  against the baseline: {}\n", regression_text(f));
    out += fmt::format("  {}\n", f.fixture->detail);
  }
  return out;
}

// The same for Markdown: a <details> block, open for what is new.
std::string markdown_block(const failure_item& f, bool open) {
  std::string out = fmt::format("\n<details{}><summary>{}: {}{}</summary>\n\n", open ? " open" : "", title_of(f),
                                f.property != nullptr ? verdict_of(*f.property) : fixture_verdict(*f.fixture),
                                f.regression ? " — <b>regression</b>" : "");
  if (f.regression) out += fmt::format("**Against the baseline:** {}\n\n", regression_text(f));
  if (f.property != nullptr) {
    const property_outcome& p = *f.property;
    const std::string evidence = evidence_line(p);
    out += fmt::format("**Message:** {}\n\n", p.message.empty() ? "—" : p.message);
    if (!evidence.empty()) out += fmt::format("**{}:** {}\n\n", p.worst_over_bound > 0 ? "Worst case" : "Bits", evidence);
    if (p.largest_call_token_heads > 0) out += fmt::format("**Largest call:** {}\n\n", call_size_text(p));
    if (!p.counterexample.empty()) out += fmt::format("**Counterexample (shrunk):**\n\n```\n{}\n```\n\n", p.counterexample);
    if (!p.replay.empty()) out += fmt::format("**Replay:** `{}`\n", p.replay);
  } else if (f.fixture != f.regression) {
    out += fmt::format("```\n{}\n```\n", f.fixture->detail);
  }
  return out + "</details>\n";
}

}  // namespace

std::string render_terminal(const gate_report& r) {
  std::size_t kernel_width = 6, property_width = 8, fixture_width = 7, comparison_width = 8;
  for (const auto& k : r.kernels) {
    kernel_width = std::max(kernel_width, k.name.size());
    for (const auto& p : k.properties) property_width = std::max(property_width, p.name.size());
  }
  for (const auto& f : r.fixtures)
    (is_baseline_row(f) ? comparison_width : fixture_width) =
        std::max(is_baseline_row(f) ? comparison_width : fixture_width, f.name.size());
  const failure_order o = order_failures(r);
  const bool baseline = !r.baseline.empty();
  std::string out = fmt::format("ropecheck gate — profile {}, seed {}\n", r.profile, r.seed);
  out += header_lines(r);
  // What is new first: the regressions (each with its own counterexample), then the other
  // failures; the table, the fixtures and the known failures after.
  if (!o.regressions.empty() || !o.failures.empty() || !o.known.empty())
    out += fmt::format("\nverdict: {} — {}\n", r.passed ? "PASS" : "FAIL", failure_counts(o, baseline));
  if (!o.regressions.empty())
    out += fmt::format("\nREGRESSIONS against the baseline {} (what is new):\n", r.baseline);
  for (const auto& f : o.regressions) out += terminal_block(f, true);
  if (baseline && !o.failures.empty()) out += "\nother failures (the baseline has nothing to compare them with):\n";
  for (const auto& f : o.failures) out += terminal_block(f, true);
  out += fmt::format("\n{:<{}}  {:<{}}  {:>13}  {:>7}  {:>11}  {:>12}\n", "kernel", kernel_width, "property",
                     property_width, "verdict", "cases", "worst/bound", "largest call");
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      out += fmt::format("{:<{}}  {:<{}}  {:>13}  {:>7}  {:>11}  {:>12}", k.name, kernel_width, p.name,
                         property_width, verdict_of(p), p.cases, ratio_column(p), call_size_column(p));
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
  if (r.fixtures.size() > o.comparisons.size()) {
    out += fmt::format("\n{:<{}}  {:>7}  {:>7}  {:>11}\n", "fixture", fixture_width, "verdict",
                       "values", "worst/bound");
    for (const auto& f : r.fixtures) {
      if (is_baseline_row(f)) continue;
      out += fmt::format("{:<{}}  {:>7}  {:>7}  {:>11}\n", f.name, fixture_width, verdict(f.passed),
                         f.values, ratio(f.worst_over_bound));
      // A fixture that judged nothing was not sent (its dtype or the kernel's domain): why.
      if (!f.passed || f.values == 0) out += fmt::format("    {}\n", f.detail);
    }
  }
  std::size_t failed_kernels = 0;
  for (const auto& k : r.kernels) failed_kernels += k.passed ? 0 : 1;
  // Known failures apart, after everything new: they do not fail the run.
  if (!o.known.empty()) {
    out += fmt::format("\n{} known failures (failed in the baseline too, worst/bound not grown by more than 10%):\n",
                       o.known.size());
    for (const auto& f : o.known) out += terminal_block(f, false);
  }
  if (!o.comparisons.empty()) {
    out += fmt::format("\nagainst the baseline {}: {} compared, {} regressed (now/before of worst/bound)\n",
                       r.baseline, o.comparisons.size(), o.regressions.size());
    for (const fixture_outcome* f : o.comparisons)
      if (!f->passed)
        out += fmt::format("{:<{}}  {:>7}  {:>10}  {}\n", f->name, comparison_width, verdict(f->passed),
                           ratio(f->worst_over_bound), f->detail);
  }
  out += render_mutants_terminal(r);
  out += fmt::format("\ngate: {} ({} kernels, {} failed; {} fixture checks)\n",
                     r.passed ? "PASS" : "FAIL", r.kernels.size(), failed_kernels, r.fixtures.size());
  return out;
}

std::string render_markdown(const gate_report& r) {
  const failure_order o = order_failures(r);
  std::string out = fmt::format("### ropecheck gate: {}\n\nProfile `{}`, seed `{}`, contract `{}`.",
                                r.passed ? "✅ pass" : "❌ fail", r.profile, r.seed, r.contract);
  if (r.max_position > 0) out += fmt::format(" Positions |m| ≤ {}.", r.max_position);
  if (!r.baseline.empty()) out += fmt::format(" Baseline `{}`.", r.baseline);
  if (r.shard_count > 1) out += fmt::format(" Shard {}/{} only.", r.shard_index, r.shard_count);
  out += "\n\n";
  if (!o.regressions.empty() || !o.failures.empty() || !o.known.empty())
    out += fmt::format("**{}.**\n", failure_counts(o, !r.baseline.empty()));
  if (!o.regressions.empty()) out += "\n#### Regressions against the baseline\n";
  for (const auto& f : o.regressions) out += markdown_block(f, true);
  if (!o.failures.empty()) out += r.baseline.empty() ? "\n#### Failures\n" : "\n#### Other failures\n";
  for (const auto& f : o.failures) out += markdown_block(f, true);
  out += "\n| kernel | verdict | worst/bound | largest call (token-heads) | failed properties |\n|---|---|---|---|---|\n";
  for (const auto& k : r.kernels) {
    double worst = 0;
    std::int64_t largest = 0;
    std::string failed;
    for (const auto& p : k.properties) {
      worst = std::max(worst, p.worst_over_bound);
      largest = std::max(largest, p.largest_call_token_heads);
      if (!p.passed)
        failed += (failed.empty() ? "" : ", ") +
                  fmt::format("`{}`{}", p.name, p.status == "known_failure" ? " (known)" : "");
    }
    if (k.ended) failed = fmt::format("{} during `{}` ({}){}", k.ended->verdict, k.ended->property, k.ended->cause,
                                      failed.empty() ? "" : "; " + failed);
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.name, verdict_of(k), ratio(worst),
                       largest > 0 ? std::to_string(largest) : "—", failed.empty() ? "—" : failed);
  }
  std::size_t fixtures_failed = 0;
  for (const auto& f : r.fixtures) fixtures_failed += !f.passed && !is_baseline_row(f) ? 1 : 0;
  out += fmt::format("\nFixtures: {} checked, {} failed.\n", r.fixtures.size() - o.comparisons.size(), fixtures_failed);
  if (!o.known.empty()) {
    out += fmt::format("\n#### Known failures ({}: failed in the baseline too, worst/bound not grown by more than 10%)\n",
                       o.known.size());
    for (const auto& f : o.known) out += markdown_block(f, false);
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
  const failure_order o = order_failures(r);
  std::size_t tests = 0, failures = 0, skipped = 0;
  std::string cases;
  // Regressions first, then the other failures, then every other test case in report order. A
  // baseline row is the comparison of one test case (shown in that case's failure), not a test.
  std::vector<const property_outcome*> shown_properties;
  std::vector<const fixture_outcome*> shown_fixtures;
  const auto property_case = [&](const kernel_outcome& k, const property_outcome& p, const fixture_outcome* regression) {
    ++tests;
    shown_properties.push_back(&p);
    cases += fmt::format("    <testcase classname=\"ropecheck.kernel.{}\" name=\"{}\">\n",
                         xml_escape(k.name), xml_escape(p.name));
    cases += fmt::format("      <system-out>{} cases {} worst_over_bound {}{}</system-out>\n",
                         verdict_of(p), p.cases, ratio(p.worst_over_bound),
                         p.detail.empty() ? "" : xml_escape("; " + p.detail));
    if (regression != nullptr) {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\">{}\n{}\n{}\n{}</failure>\n",
                           xml_escape(p.name + " regressed against the baseline: " + regression->detail +
                                      (p.message.empty() ? "" : "; " + p.message)),
                           xml_escape(regression->detail), xml_escape(evidence_line(p)),
                           xml_escape(p.counterexample), xml_escape(p.replay));
    } else if (p.status == "skipped" || p.status == "not_run") {
      ++skipped;
      cases += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(p.detail));
    } else if (p.status == "known_failure") {
      ++skipped;
      cases += fmt::format("      <skipped message=\"{}\"/>\n",
                           xml_escape("known failure (failed in the baseline too, not grown by more than 10%): " +
                                      p.message));
      cases += fmt::format("      <system-err>{}\n{}\n{}</system-err>\n", xml_escape(evidence_line(p)),
                           xml_escape(p.counterexample), xml_escape(p.replay));
    } else if (!p.passed) {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\">{}\n{}\n{}</failure>\n",
                           xml_escape(p.name + " failed: " + p.message), xml_escape(evidence_line(p)),
                           xml_escape(p.counterexample), xml_escape(p.replay));
    }
    cases += "    </testcase>\n";
  };
  const auto fixture_case = [&](const fixture_outcome& f, const fixture_outcome* regression) {
    ++tests;
    shown_fixtures.push_back(&f);
    cases += fmt::format("    <testcase classname=\"ropecheck.fixture\" name=\"{}\">\n", xml_escape(f.name));
    if (regression != nullptr) {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\">{}\n{}</failure>\n",
                           xml_escape(f.name + " regressed against the baseline: " + regression->detail),
                           xml_escape(regression->detail), xml_escape(f.detail));
    } else if (known_fixture(f)) {
      ++skipped;
      cases += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(f.detail));
    } else if (!f.passed) {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\">{}</failure>\n",
                           xml_escape(f.name + " failed"), xml_escape(f.detail));
    }
    cases += "    </testcase>\n";
  };
  for (const auto& list : {&o.regressions, &o.failures})
    for (const auto& f : *list) {
      if (f.property != nullptr) property_case(*f.kernel, *f.property, f.regression);
      else fixture_case(*f.fixture, f.regression);
    }
  const auto shown = [](const auto& list, const auto* item) {
    return std::find(list.begin(), list.end(), item) != list.end();
  };
  for (const auto& k : r.kernels)
    for (const auto& p : k.properties)
      if (!shown(shown_properties, &p)) property_case(k, p, nullptr);
  for (const auto& f : r.fixtures)
    if (!is_baseline_row(f) && !shown(shown_fixtures, &f)) fixture_case(f, nullptr);
  for (const auto& m : r.mutants) {
    ++tests;
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

// One property's worst error/bound per case against one coordinate of the case's worst output
// (log-scale ratio, the bound as a dashed line at worst/bound = 1), in the style of the audit
// page's plot: against |position m| and head_dim on a log2 axis, against the pair index j on a
// linear one.
struct plot_axis {
  std::string_view label;     // "|position m| (log scale)"
  std::string_view symbol;    // "m", in each point's title
  bool log2;                  // log2(|x| + 1) (positions, head_dim) or x (j)
  std::int64_t worst_x;       // the worst case's coordinate, circled
};

std::string ratio_scatter_svg(const property_outcome& p, const std::vector<std::pair<std::int64_t, double>>& points,
                              const plot_axis& axis) {
  constexpr int width = 640, height = 260, left = 64, bottom = 40, top = 16, right = 20;
  if (points.empty()) return "";
  double hi_ratio = 1, hi_x = 1;
  for (const auto& [x, q] : points) {
    if (std::isfinite(q)) hi_ratio = std::max(hi_ratio, q);  // an infinite ratio is drawn at the top
    hi_x = std::max(hi_x, std::fabs(static_cast<double>(x)));
  }
  const double y_hi = std::ceil(std::log10(hi_ratio)) + 0.5, y_lo = -4;
  const double x_hi = axis.log2 ? std::max(1.0, std::ceil(std::log2(hi_x + 1))) : std::max(1.0, hi_x);
  const auto scaled = [&](std::int64_t x) {
    const double v = std::fabs(static_cast<double>(x));
    return axis.log2 ? std::log2(v + 1) : v;
  };
  const auto x_of = [&](std::int64_t x) { return left + scaled(x) / x_hi * (width - left - right); };
  const auto y_of = [&](double q) {
    const double l = std::clamp(std::log10(std::max(q, 1e-4)), y_lo, y_hi);
    return top + (y_hi - l) / (y_hi - y_lo) * (height - top - bottom);
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"error over bound versus {}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      width, height, axis.label);
  for (int d = static_cast<int>(y_lo); d <= static_cast<int>(y_hi); ++d)
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"11\" text-anchor=\"end\">1e{5}</text>\n",
                       left, width - right, y_of(std::pow(10.0, d)), left - 4, y_of(std::pow(10.0, d)) + 4, d);
  const int ticks = static_cast<int>(x_hi);
  for (int e = 0; e <= ticks; e += std::max(1, ticks / 8)) {
    const double x = left + e / x_hi * (width - left - right);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}{}</text>\n", x,
                       height - bottom + 14, axis.log2 ? "2^" : "", e);
  }
  svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#c00\" "
                     "stroke-dasharray=\"6 4\"/><text x=\"{1}\" y=\"{3:.1f}\" font-size=\"11\" "
                     "text-anchor=\"end\" fill=\"#c00\">bound</text>\n",
                     left, width - right, y_of(1), y_of(1) - 4);
  for (const auto& [x, q] : points)
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{} = {}: {}</title></circle>\n",
                       x_of(x), y_of(q), q > 1 ? "#c00" : "#036", axis.symbol, x, ratio(q));
  if (!p.worst.text.empty() && axis.worst_x >= 0)
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"none\" stroke=\"#000\"><title>worst: {}</title></circle>\n",
                       x_of(axis.worst_x), y_of(p.worst_over_bound), xml_escape(p.worst.text));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>"
                     "<text x=\"14\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 14 {})\" "
                     "text-anchor=\"middle\">worst error / bound of the case</text>\n</svg>\n",
                     (left + width - right) / 2, height - 6, axis.label, height / 2, height / 2);
  return svg;
}

// The three plots of a failure: against position, pair index j and head_dim.
std::string error_plots_svg(const property_outcome& p) {
  const bool per_pair = p.worst.pair >= 0;
  // The position plot circles the worst case whatever the measure; the others only a per-pair one.
  return ratio_scatter_svg(p, p.points, {"|position m| (log scale)", "m", true, p.worst.position}) +
         ratio_scatter_svg(p, p.pair_points, {"pair index j", "j", false, per_pair ? p.worst.pair : -1}) +
         ratio_scatter_svg(p, p.head_dim_points, {"head_dim (log scale)", "head_dim", true, per_pair ? p.worst.head_dim : -1});
}

}  // namespace

namespace {

// One failure as an HTML section, anchored `id` (the compact table links to it).
std::string html_section(const failure_item& f, const std::string& id, std::string_view kind) {
  std::string out = fmt::format("<section class=\"failure {}\" id=\"{}\"><h3>{}: <span class=\"fail\">{}</span>{}</h3>\n",
                                kind, id, xml_escape(title_of(f)),
                                f.property != nullptr ? verdict_of(*f.property) : fixture_verdict(*f.fixture),
                                f.regression ? " <span class=\"tag\">regression</span>" : "");
  if (f.regression) out += fmt::format("<p class=\"against\"><b>Against the baseline:</b> {}</p>\n", xml_escape(regression_text(f)));
  if (f.property == nullptr) {
    if (f.fixture != f.regression) out += fmt::format("<pre>{}</pre>\n", xml_escape(f.fixture->detail));
    return out + "</section>\n";
  }
  const property_outcome& p = *f.property;
  out += fmt::format("<p><b>Message:</b> {}</p>\n", xml_escape(p.message.empty() ? "-" : p.message));
  if (const std::string e = evidence_line(p); !e.empty())
    out += fmt::format("<p><b>{}:</b> {}</p>\n", p.worst_over_bound > 0 ? "Worst case" : "Bits", xml_escape(e));
  if (p.largest_call_token_heads > 0)
    out += fmt::format("<p><b>Largest call:</b> {}</p>\n", call_size_text(p));
  out += error_plots_svg(p);
  if (!p.counterexample.empty())
    out += fmt::format("<p><b>Counterexample (shrunk):</b></p><pre>{}</pre>\n", xml_escape(p.counterexample));
  if (!p.replay.empty()) out += fmt::format("<p><b>Replay:</b></p><pre class=\"replay\">{}</pre>\n", xml_escape(p.replay));
  return out + "</section>\n";
}

}  // namespace

std::string render_html(const gate_report& r) {
  const failure_order o = order_failures(r);
  // The failures first, each anchored; the compact table links to them.
  std::string sections;
  std::vector<std::pair<const void*, std::string>> anchors;  // property or fixture → section id
  const auto add = [&](const std::vector<failure_item>& items, std::string_view heading, std::string_view kind) {
    if (items.empty()) return;
    sections += fmt::format("<h2>{}</h2>\n", heading);
    for (const auto& f : items) {
      const std::string id = fmt::format("failure-{}", anchors.size() + 1);
      anchors.emplace_back(f.property != nullptr ? static_cast<const void*>(f.property) : f.fixture, id);
      sections += html_section(f, id, kind);
    }
  };
  const bool baseline = !r.baseline.empty();
  add(o.regressions, "Regressions against the baseline", "regression");
  add(o.failures, baseline ? "Other failures" : "Failures", "new");
  add(o.known, "Known failures (failed in the baseline too, not grown by more than 10%)", "known");
  const auto link = [&anchors](const void* item, const std::string& text) {
    for (const auto& [what, id] : anchors)
      if (what == item) return fmt::format("<a href=\"#{}\">{}</a>", id, text);
    return text;
  };
  // The compact table: what ran, failing rows linked; skipped and not-run rows folded below it.
  std::string rows, folded;
  std::size_t folded_count = 0;
  for (const auto& k : r.kernels) {
    for (const auto& p : k.properties) {
      const bool fold = p.status == "skipped" || p.status == "not_run";
      const bool regressed = std::any_of(o.regressions.begin(), o.regressions.end(),
                                         [&p](const failure_item& f) { return f.property == &p; });
      (fold ? folded : rows) += fmt::format(
          "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
          regressed ? "regression" : verdict_of(p),
          xml_escape(k.name), link(&p, xml_escape(p.name)), verdict_of(p), p.cases, ratio_column(p), call_size_column(p),
          xml_escape(p.passed && p.status.empty() ? p.detail : p.worst_over_bound > 0 ? where_text(p.worst)
                                                               : fold ? p.detail : evidence_line(p)));
      folded_count += fold ? 1 : 0;
    }
  }
  for (const auto& f : r.fixtures) {
    if (is_baseline_row(f)) continue;
    rows += fmt::format("<tr class=\"{}\"><td>fixture</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td></td><td>{}</td></tr>\n",
                        known_fixture(f) ? "known_failure" : verdict(f.passed), link(&f, xml_escape(f.name)),
                        verdict(f.passed), f.values, ratio(f.worst_over_bound),
                        f.passed && !known_fixture(f) ? "" : xml_escape(f.detail));
  }
  for (const auto& m : r.mutants) {
    rows += fmt::format("<tr class=\"{}\"><td>mutant {}</td><td>{}</td><td>{}</td><td>{}</td><td></td><td></td><td></td></tr>\n",
                        verdict(m.killed), xml_escape(m.name), xml_escape(killers_of(m, "")),
                        m.killed ? "killed" : "survived", m.killed_by.size());
  }
  const std::string head = "<tr><th>kernel</th><th>property / fixture</th><th>verdict</th><th>cases</th>"
                           "<th>worst/bound</th><th>largest call (token-heads)</th><th>worst case / note</th></tr>\n";
  std::string table = "<h2>Results</h2>\n<table>" + head + rows + "</table>\n";
  if (folded_count > 0)
    table += fmt::format("<details><summary>{} skipped or not run</summary>\n<table>{}{}</table></details>\n",
                         folded_count, head, folded);
  // The ratchet's comparisons: now against before, apart from the fixtures.
  if (!o.comparisons.empty()) {
    table += fmt::format("<h2>Against the baseline {}</h2>\n<table><tr><th>property / fixture</th><th>verdict</th>"
                         "<th>worst/bound now / before</th><th>comparison</th></tr>\n",
                         xml_escape(r.baseline));
    for (const fixture_outcome* f : o.comparisons)
      table += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", verdict(f->passed),
                           xml_escape(std::string_view(f->name).substr(baseline_prefix.size())),
                           f->passed ? "unchanged" : "regressed", ratio(f->worst_over_bound), xml_escape(f->detail));
    table += "</table>\n";
  }
  const std::string counts = o.regressions.empty() && o.failures.empty() && o.known.empty()
                                 ? "every property and fixture passed"
                                 : failure_counts(o, baseline);
  return detail::html_page(
      "ropecheck gate: " + verdict(r.passed),
      "tr.fail,tr.regression{background:#fdd}tr.known_failure{background:#f4f0e0}tr.skipped td,tr.not_run td{color:#888}"
      "section.failure{border-top:1px solid #ccc;margin-top:1.5em}section.regression{border-left:6px solid #b00;padding-left:.8em}"
      "section.known{border-left:6px solid #ccb;padding-left:.8em;color:#555}section.known .fail{color:#876}"
      ".tag{background:#b00;color:#fff;padding:0 .4em;border-radius:.2em;font-size:80%}"
      "p.verdict{font-size:120%}pre.replay{word-break:break-all}section.failure pre{white-space:pre-wrap}h1{margin-bottom:.2em}",
      fmt::format("<h1>ropecheck gate: <span class=\"{0}\">{0}</span></h1>\n"
                  "<p class=\"verdict\"><b class=\"{0}\">{1}</b>: {2}.</p>\n"
                  "<details><summary>profile {3}, seed {4}, contract {5}{6}</summary><pre>{7}</pre></details>\n"
                  "{8}{9}",
                  verdict(r.passed), r.passed ? "PASS" : "FAIL", xml_escape(counts), xml_escape(r.profile), r.seed,
                  xml_escape(r.contract), baseline ? ", baseline " + xml_escape(r.baseline) : "",
                  xml_escape(header_lines(r)), sections.empty() ? "<h2>Failures</h2>\n<p>none</p>\n" : sections, table));
}

void write_report_files(const gate_report& report, const report_paths& paths) {
  detail::write_renderings({{paths.json, [&] { return json_text(to_json(report)); }},
                            {paths.markdown, [&] { return render_markdown(report); }},
                            {paths.html, [&] { return render_html(report); }},
                            {paths.junit, [&] { return render_junit(report); }}});
}

}  // namespace ropecheck::reports
