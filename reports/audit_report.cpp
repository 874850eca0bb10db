// The audit report's renderers: terminal, Markdown, JSON (docs/report-schema.md), JUnit XML
// and a self-contained HTML page with SVG plots; and the JSON reader `ropecheck report` uses.
#include "reports/audit_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

#include "reports/render_support.h"

namespace ropecheck::reports {
namespace {

using json = nlohmann::json;
using detail::field;
using detail::verdict;
using detail::verdict_field;
using detail::xml_escape;

// 2 added `output_scale` (docs/report-schema.md); version 1 reports are still read.
constexpr int audit_schema_version = 2;

json bucket_json(const error_bucket& b) {
  return {{"label", b.label}, {"first", b.first}, {"last", b.last}, {"outputs", b.outputs},
          {"max_units", b.max_units}};
}

error_bucket bucket_from(const json& j, const std::string& where) {
  return {field<std::string>(j, "label", where), field<std::int64_t>(j, "first", where),
          field<std::int64_t>(j, "last", where), field<std::int64_t>(j, "outputs", where),
          field<double>(j, "max_units", where)};
}

std::string units(double u) { return u < 1000 ? fmt::format("{:.3g}", u) : fmt::format("{:.3e}", u); }

// "0" or "2^k" under a |position| bucket whose smallest position is `first` (negative for
// negative positions: the bucket is of |m|).
std::string bucket_tick(std::int64_t first) {
  const double magnitude = std::fabs(static_cast<double>(first));
  return magnitude == 0 ? std::string("0") : fmt::format("2^{}", static_cast<int>(std::log2(magnitude)));
}

// A log-scale error-versus-position polyline with the tolerance as a dashed line.
std::string error_versus_position_svg(const audit_report& r) {
  constexpr int width = 640, height = 280, left = 60, bottom = 40, top = 20, right = 20;
  if (r.by_position.empty()) return "";
  double hi = std::max(r.tolerance_units, 1.0);
  for (const auto& b : r.by_position)
    if (std::isfinite(b.max_units)) hi = std::max(hi, b.max_units);  // an infinite error is drawn at the top
  const double log_hi = std::ceil(std::log10(hi)) + 0.5, log_lo = -1;
  const auto x_of = [&](std::size_t i) {
    return left + (r.by_position.size() == 1 ? 0.5 : static_cast<double>(i) / (r.by_position.size() - 1)) *
                      (width - left - right);
  };
  const auto y_of = [&](double u) {
    const double l = std::clamp(std::log10(std::max(u, 0.1)), log_lo, log_hi);
    return top + (log_hi - l) / (log_hi - log_lo) * (height - top - bottom);
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"error versus position\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      width, height);
  for (int d = static_cast<int>(log_lo); d <= static_cast<int>(log_hi); ++d) {
    svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"11\" text-anchor=\"end\">1e{5}</text>\n",
                       left, width - right, y_of(std::pow(10.0, d)), left - 4, y_of(std::pow(10.0, d)) + 4, d);
  }
  svg += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#c00\" "
                     "stroke-dasharray=\"6 4\"/><text x=\"{1}\" y=\"{3:.1f}\" font-size=\"11\" "
                     "text-anchor=\"end\" fill=\"#c00\">tolerance</text>\n",
                     left, width - right, y_of(r.tolerance_units), y_of(r.tolerance_units) - 4);
  // The line joins measured buckets only: it breaks at a bucket whose error is exactly 0 (drawn
  // as an open circle on the axis, not as a measurement) and across missing buckets (a dashed
  // gap: no positions there).
  const auto bucket_of = [](std::int64_t first) {
    const std::uint64_t a = first < 0 ? static_cast<std::uint64_t>(-(first + 1)) + 1 : static_cast<std::uint64_t>(first);
    return a == 0 ? 0 : 64 - __builtin_clzll(a);
  };
  std::string points;
  const auto flush = [&] {
    if (!points.empty()) svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#036\"/>\n", points);
    points.clear();
  };
  for (std::size_t i = 0; i < r.by_position.size(); ++i) {
    const error_bucket& b = r.by_position[i];
    if (i > 0 && bucket_of(b.first) > bucket_of(r.by_position[i - 1].first) + 1) {
      flush();
      const double x = (x_of(i - 1) + x_of(i)) / 2;
      svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#999\" "
                         "stroke-dasharray=\"2 3\"><title>no positions between {3} and {4}</title></line>"
                         "<text x=\"{0:.1f}\" y=\"{5}\" font-size=\"9\" text-anchor=\"middle\" fill=\"#999\">gap</text>\n",
                         x, top, height - bottom, r.by_position[i - 1].last, b.first, top + 10);
    }
    const std::string tick = bucket_tick(b.first);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"9\" text-anchor=\"middle\">{}</text>\n", x_of(i),
                       height - bottom + 14, tick);
    if (b.max_units == 0) {
      flush();
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"none\" stroke=\"#036\"><title>{}: every "
                         "output exact (0 units, below the axis)</title></circle>\n",
                         x_of(i), y_of(0), xml_escape(b.label));
      continue;
    }
    points += fmt::format("{:.1f},{:.1f} ", x_of(i), y_of(b.max_units));
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#036\"><title>{}: {} units</title></circle>\n",
                       x_of(i), y_of(b.max_units), xml_escape(b.label), units(b.max_units));
  }
  flush();
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">|position| bucket</text>"
                     "<text x=\"14\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 14 {})\" "
                     "text-anchor=\"middle\">max error, units of 2^-24 × pair norm</text>\n</svg>\n",
                     (left + width - right) / 2, height - 6, height / 2, height / 2);
  return svg;
}

// Frequency index (rows) × position bucket (columns), colour = log error relative to tolerance.
std::string heatmap_svg(const audit_report& r) {
  const auto& m = r.by_frequency_and_position;
  if (m.empty() || r.by_position.empty()) return "";
  const int cell_w = std::max(8, 560 / static_cast<int>(r.by_position.size()));
  const int cell_h = std::max(2, std::min(12, 480 / static_cast<int>(m.size())));
  const int left = 60, top = 10;
  const int width = left + cell_w * static_cast<int>(r.by_position.size()) + 10;
  const int height = top + cell_h * static_cast<int>(m.size()) + 56;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"error by frequency and position\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      width, height);
  for (std::size_t f = 0; f < m.size(); ++f) {
    for (std::size_t p = 0; p < m[f].size() && p < r.by_position.size(); ++p) {
      // 0 at ≤ 1% of tolerance, 1 at ≥ 100× tolerance; red past tolerance, blue within.
      const double scaled = (std::log10(std::max(m[f][p], 1e-12) / r.tolerance_units) + 2) / 4;
      const double t = std::isnan(scaled) ? 1.0 : std::clamp(scaled, 0.0, 1.0);  // NaN: as bad as it gets
      const int red = static_cast<int>(255 * t), blue = static_cast<int>(255 * (1 - t));
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb({},{},{})\">"
                         "<title>frequency {} × {}: {} units</title></rect>\n",
                         left + static_cast<int>(p) * cell_w, top + static_cast<int>(f) * cell_h, cell_w,
                         cell_h, red, 64, blue, f, xml_escape(r.by_position[p].label), units(m[f][p]));
    }
  }
  // Axes: frequency ticks every 8 pairs, the bucket under each column, and a colour scale with
  // its ticks in multiples of the tolerance.
  for (std::size_t f = 0; f < m.size(); f += 8)
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">freq {}</text>\n", left - 4,
                       top + static_cast<int>(f) * cell_h + std::min(cell_h, 10), f);
  for (std::size_t p = 0; p < r.by_position.size(); ++p) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\" text-anchor=\"middle\">{}</text>\n",
                       left + static_cast<int>(p) * cell_w + cell_w / 2, top + cell_h * static_cast<int>(m.size()) + 12,
                       bucket_tick(r.by_position[p].first));
  }
  const int scale_top = top + cell_h * static_cast<int>(m.size()) + 22;
  for (int k = 0; k <= 40; ++k) {
    const double t = k / 40.0;
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"6\" height=\"8\" fill=\"rgb({},64,{})\"/>", left + 6 * k,
                       scale_top, static_cast<int>(255 * t), static_cast<int>(255 * (1 - t)));
  }
  for (int e = -2; e <= 2; ++e)
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"9\" text-anchor=\"middle\">{}</text>", left + 60 * (e + 2),
                       scale_top + 18, e == 0 ? std::string("tolerance") : fmt::format("10^{} ×", e));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\">max error ÷ tolerance (log scale)</text>\n</svg>\n",
                     left + 250, scale_top + 8);
  return svg;
}

}  // namespace

json to_json(const recipe_fit& rf) {
  if (!rf.fitted) return json(nullptr);
  return json{{"positions", rf.positions},
              {"inverse_frequencies", rf.inverse_frequencies},
              {"angle", rf.angle},
              {"trig", rf.trig},
              {"trig_cache", rf.trig_cache},
              {"cache_rounding", rf.cache_rounding},
              {"attention_factor", rf.attention_factor},
              {"arithmetic", rf.arithmetic},
              {"output_store", rf.output_store},
              {"output", rf.output},
              {"bit_exact", rf.bit_exact},
              {"residual_units", rf.residual_units},
              {"as_contract", rf.as_contract}};
}

std::string recipe_text(const recipe_fit& rf) {
  return fmt::format("positions {}, inverse frequencies {}, angle {}, cos/sin in {} kept in {} ({}, attention factor "
                     "{}), arithmetic {}, output {} ({})",
                     rf.positions, rf.inverse_frequencies, rf.angle, rf.trig, rf.trig_cache, rf.cache_rounding,
                     rf.attention_factor, rf.arithmetic, rf.output, rf.output_store);
}

json to_json(const audit_report& r) {
  json by_position = json::array(), by_frequency = json::array(), diagnosis = json::array();
  for (const auto& b : r.by_position) by_position.push_back(bucket_json(b));
  for (const auto& b : r.by_frequency) by_frequency.push_back(bucket_json(b));
  for (const auto& f : r.diagnosis)
    diagnosis.push_back({{"code", f.code}, {"message", f.message}, {"share", f.share}, {"evidence", f.evidence}});
  json attribution = json::array();
  for (const auto& a : r.attribution) attribution.push_back({{"stage", a.stage}, {"share", a.share}, {"units", a.units}});
  const json recipe = to_json(r.recipe);
  return {{"report", "audit"},
          {"schema_version", audit_schema_version},
          {"tool_version", r.tool_version},
          {"inputs", {{"spec", r.spec}, {"x", r.x}, {"positions", r.positions}, {"y", r.y}}},
          {"dtype", r.dtype},
          {"output_scale", r.output_scale},
          {"verdict", verdict(r.passed)},
          {"tolerance_units", r.tolerance_units},
          {"tolerance_terms",
           {{"relative", r.tolerance.derived ? "derived_bound" : "tolerance_units"},
            {"absolute", r.tolerance.absolute},
            {"oracle_units", r.tolerance.oracle_units},
            {"store_half_spacing", r.tolerance.store_half_spacing},
            {"contract", r.tolerance.contract.empty() ? json(nullptr) : json(r.tolerance.contract)},
            {"contract_derivation", r.tolerance.contract_derivation}}},
          {"outputs", r.outputs},
          {"outputs_beyond_tolerance", r.outputs_beyond_tolerance},
          {"max_abs_error", r.max_abs_error},
          {"max_rel_pair_error", r.max_rel_pair_error},
          {"max_rel_pair_error_units", r.max_rel_pair_error_units},
          {"max_rel_pair_error_dtype_units", r.max_rel_pair_error_dtype_units},
          {"ulp", {{"max", r.ulp_max}, {"mean", r.ulp_mean}, {"outputs", r.ulp_outputs}}},
          {"passthrough", {{"checked", r.passthrough_checked}, {"modified", r.passthrough_modified}}},
          {"non_finite", r.non_finite},
          {"worst",
           {{"batch", r.worst.batch}, {"token", r.worst.token}, {"head", r.worst.head},
            {"dim", r.worst.dim}, {"position", r.worst.position}, {"value", r.worst.value},
            {"error", r.worst.error}, {"allowed", r.worst.allowed},
            {"expected", r.worst.expected}}},
          {"by_position", by_position},
          {"by_frequency", by_frequency},
          {"by_frequency_and_position", r.by_frequency_and_position},
          {"diagnosis", diagnosis},
          {"recipe", recipe},
          {"attribution", attribution}};
}

audit_report audit_report_from_json(const json& j) {
  const std::string at = "report";
  if (field<std::string>(j, "report", at) != "audit")
    throw std::invalid_argument(fmt::format("report: field 'report': {} is not \"audit\"", detail::shown(j.at("report"))));
  // Version 1 (before output_scale was recorded) is still read: its audits were unscaled, or
  // their scale is unknown — read as 1, as such a report was written before scales were judged
  // with a diagnosis. Version 2 must state it.
  const int version = field<int>(j, "schema_version", at);
  if (version < 1 || version > audit_schema_version)
    throw std::invalid_argument(
        fmt::format("report: field 'schema_version': {} is not 1 or {}", version, audit_schema_version));
  audit_report r;
  r.tool_version = field<std::string>(j, "tool_version", at);
  const auto inputs = field<json>(j, "inputs", at);
  r.spec = field<std::string>(inputs, "spec", "inputs");
  r.x = field<std::string>(inputs, "x", "inputs");
  r.positions = field<std::string>(inputs, "positions", "inputs");
  r.y = field<std::string>(inputs, "y", "inputs");
  r.dtype = field<std::string>(j, "dtype", at);
  if (version >= 2) {
    r.output_scale = field<double>(j, "output_scale", at);
    if (!(std::isfinite(r.output_scale) && r.output_scale > 0))  // as --output-scale accepts
      throw std::invalid_argument(
          fmt::format("report: field 'output_scale': {} is not a finite number > 0", r.output_scale));
  }
  r.passed = verdict_field(j, at);
  r.tolerance_units = field<double>(j, "tolerance_units", at);
  if (!(std::isfinite(r.tolerance_units) && r.tolerance_units > 0))  // the audit never writes another
    throw std::invalid_argument(
        fmt::format("report: field 'tolerance_units': {} is not a finite number > 0", r.tolerance_units));
  r.outputs = field<std::int64_t>(j, "outputs", at);
  r.outputs_beyond_tolerance = field<std::int64_t>(j, "outputs_beyond_tolerance", at);
  r.max_abs_error = field<double>(j, "max_abs_error", at);
  r.max_rel_pair_error = field<double>(j, "max_rel_pair_error", at);
  r.max_rel_pair_error_units = field<double>(j, "max_rel_pair_error_units", at);
  r.max_rel_pair_error_dtype_units = field<double>(j, "max_rel_pair_error_dtype_units", at);
  const auto ulp = field<json>(j, "ulp", at);
  r.ulp_max = field<double>(ulp, "max", "ulp");
  r.ulp_mean = field<double>(ulp, "mean", "ulp");
  r.ulp_outputs = field<std::int64_t>(ulp, "outputs", "ulp");
  const auto pass = field<json>(j, "passthrough", at);
  r.passthrough_checked = field<std::int64_t>(pass, "checked", "passthrough");
  r.passthrough_modified = field<std::int64_t>(pass, "modified", "passthrough");
  r.non_finite = field<std::int64_t>(j, "non_finite", at);
  const auto w = field<json>(j, "worst", at);
  r.worst = {field<std::int64_t>(w, "batch", "worst"), field<std::int64_t>(w, "token", "worst"),
             field<std::int64_t>(w, "head", "worst"),  field<std::int64_t>(w, "dim", "worst"),
             field<std::int64_t>(w, "position", "worst"), field<double>(w, "value", "worst"),
             field<double>(w, "expected", "worst")};
  // Reports written before the tolerance's terms were saved lack these: their zeros read as such.
  if (w.contains("error")) r.worst.error = field<double>(w, "error", "worst");
  if (w.contains("allowed")) r.worst.allowed = field<double>(w, "allowed", "worst");
  if (j.contains("tolerance_terms")) {
    const auto t = field<json>(j, "tolerance_terms", at);
    const auto relative = field<std::string>(t, "relative", "tolerance_terms");
    if (relative != "derived_bound" && relative != "tolerance_units")
      throw std::invalid_argument(fmt::format(
          "tolerance_terms: field 'relative': \"{}\" is not derived_bound or tolerance_units", relative));
    r.tolerance.derived = relative == "derived_bound";
    r.tolerance.absolute = field<double>(t, "absolute", "tolerance_terms");
    r.tolerance.oracle_units = field<double>(t, "oracle_units", "tolerance_terms");
    r.tolerance.store_half_spacing = field<bool>(t, "store_half_spacing", "tolerance_terms");
    if (t.contains("contract") && !t["contract"].is_null()) {
      r.tolerance.contract = field<std::string>(t, "contract", "tolerance_terms");
      r.tolerance.contract_derivation = field<std::string>(t, "contract_derivation", "tolerance_terms");
    }
  }
  const json& bp = detail::array_field(j, "by_position", at);
  for (std::size_t i = 0; i < bp.size(); ++i) r.by_position.push_back(bucket_from(bp[i], fmt::format("by_position[{}]", i)));
  const json& bf = detail::array_field(j, "by_frequency", at);
  for (std::size_t i = 0; i < bf.size(); ++i) r.by_frequency.push_back(bucket_from(bf[i], fmt::format("by_frequency[{}]", i)));
  r.by_frequency_and_position = field<std::vector<std::vector<double>>>(j, "by_frequency_and_position", at);
  const json& d = detail::array_field(j, "diagnosis", at);
  for (std::size_t i = 0; i < d.size(); ++i) {
    const std::string where = fmt::format("diagnosis[{}]", i);
    // share and evidence, recipe and attribution came later: older reports lack them.
    finding f{field<std::string>(d[i], "code", where), field<std::string>(d[i], "message", where), 0, ""};
    if (d[i].contains("share")) f.share = field<double>(d[i], "share", where);
    if (d[i].contains("evidence")) f.evidence = field<std::string>(d[i], "evidence", where);
    r.diagnosis.push_back(std::move(f));
  }
  const auto rj = j.contains("recipe") ? field<json>(j, "recipe", at) : json(nullptr);
  if (!rj.is_null()) {
    recipe_fit& rf = r.recipe;
    rf.fitted = true;
    rf.positions = field<std::string>(rj, "positions", "recipe");
    rf.inverse_frequencies = field<std::string>(rj, "inverse_frequencies", "recipe");
    rf.angle = field<std::string>(rj, "angle", "recipe");
    rf.trig = field<std::string>(rj, "trig", "recipe");
    rf.trig_cache = field<std::string>(rj, "trig_cache", "recipe");
    rf.arithmetic = field<std::string>(rj, "arithmetic", "recipe");
    // cache_rounding, attention_factor and output_store came later: older reports lack them
    // (and a contract read from such a report is refused: core/contract_spelling.cpp).
    for (auto [key, value] : {std::pair{"cache_rounding", &rf.cache_rounding},
                              std::pair{"attention_factor", &rf.attention_factor},
                              std::pair{"output_store", &rf.output_store}, std::pair{"as_contract", &rf.as_contract}})
      if (rj.contains(key)) *value = field<std::string>(rj, key, "recipe");
    rf.output = field<std::string>(rj, "output", "recipe");
    rf.bit_exact = field<double>(rj, "bit_exact", "recipe");
    rf.residual_units = field<double>(rj, "residual_units", "recipe");
  }
  const json aj = j.contains("attribution") ? detail::array_field(j, "attribution", at) : json::array();
  for (std::size_t i = 0; i < aj.size(); ++i) {
    const std::string where = fmt::format("attribution[{}]", i);
    r.attribution.push_back({field<std::string>(aj[i], "stage", where), field<double>(aj[i], "share", where),
                             field<double>(aj[i], "units", where)});
  }
  return r;
}

namespace {

// The tolerance as applied, every term written out: for tiny inputs the absolute term is the
// one that decides, and a reader must see it.
std::string tolerance_formula(const audit_report& r) {
  // tolerance_units is what the verdict used: the derived bound at its widest |m|·θ_j (or
  // --tolerance), with the oracle's own error already added in (audit/judging_loop.cpp).
  std::string out = fmt::format("{} × 2^-24 × A·‖pair‖", units(r.tolerance_units));
  out += r.tolerance.derived ? " (the derived bound at its widest |m|·θ_j" : " (--tolerance";
  if (r.tolerance.oracle_units > 0)
    out += fmt::format(", of which {:.3g} × 2^-24 for the oracle's own error", r.tolerance.oracle_units);
  out += ")";
  if (r.tolerance.absolute > 0) out += fmt::format(" + {:.4g} absolute (float32 underflow)", r.tolerance.absolute);
  if (r.tolerance.store_half_spacing) out += fmt::format(" + half the {} spacing at the output", r.dtype);
  if (!r.tolerance.contract.empty())
    out += fmt::format("; widened by the contract '{}': {}", r.tolerance.contract, r.tolerance.contract_derivation);
  return out;
}

// The judged dtype and, when there is one, the output scale: the call's settings as judged.
std::string judged_as(const audit_report& r) {
  return r.output_scale == 1 ? r.dtype
                             : fmt::format("{}, output scale {}: Y = round(y / {})", r.dtype, r.output_scale,
                                           r.output_scale);
}

}  // namespace

std::string render_terminal(const audit_report& r) {
  std::string out = fmt::format("ropecheck audit — {} ({}) against the reference\n\n", r.y, judged_as(r));
  out += fmt::format("  verdict                  {} ({} of {} outputs beyond tolerance {} units)\n",
                     r.passed ? "PASS" : "FAIL", r.outputs_beyond_tolerance, r.outputs,
                     units(r.tolerance_units));
  out += fmt::format("  tolerance per output     {}\n", tolerance_formula(r));
  out += fmt::format("  max pair error           {:.3e} = {} × 2^-24 = {} × u({})\n", r.max_rel_pair_error,
                     units(r.max_rel_pair_error_units), units(r.max_rel_pair_error_dtype_units), r.dtype);
  out += fmt::format("  max abs error            {:.3e}\n", r.max_abs_error);
  out += fmt::format("  ulp (non-cancelling)     max {:.3g}, mean {:.3g} over {} outputs\n", r.ulp_max,
                     r.ulp_mean, r.ulp_outputs);
  out += fmt::format("  worst                    [b {}, t {}, h {}, d {}] position {}: {} vs {}\n",
                     r.worst.batch, r.worst.token, r.worst.head, r.worst.dim, r.worst.position,
                     r.worst.value, r.worst.expected);
  out += fmt::format("  at the worst output      error {:.4g}, allowed {:.4g} (all terms above)\n",
                     r.worst.error, r.worst.allowed);
  out += fmt::format("  pass-through dims        {} checked, {} modified\n", r.passthrough_checked,
                     r.passthrough_modified);
  if (r.non_finite > 0) out += fmt::format("  non-finite values        {}\n", r.non_finite);
  out += "\n  |position|            max error (units of 2^-24)\n";
  for (const auto& b : r.by_position)
    out += fmt::format("  {:<20}  {:>12}\n", b.label, units(b.max_units));
  out += "\ndiagnosis:\n";
  if (r.diagnosis.empty()) out += "  none (within tolerance)\n";
  for (const auto& f : r.diagnosis) {
    out += f.share > 0 ? fmt::format("  [{}] ({:.0f}% of the error) {}\n", f.code, 100 * f.share, f.message)
                       : fmt::format("  [{}] {}\n", f.code, f.message);
    if (!f.evidence.empty()) out += fmt::format("      evidence: {}\n", f.evidence);
  }
  if (r.recipe.fitted) {
    const recipe_fit& rf = r.recipe;
    out += fmt::format("\nrecipe that reproduces Y best ({:.1f}% of sampled outputs bit for bit, residual {} "
                       "units):\n  {}\n",
                       100 * rf.bit_exact, units(rf.residual_units), recipe_text(rf));
    if (!rf.as_contract.empty())
      out += fmt::format("  as a contract: ropecheck gate --contract '{}' (or --contract-from this audit's JSON)\n",
                         rf.as_contract);
    out += "  attribution:";
    for (const auto& a : r.attribution) out += fmt::format(" {} {:.0f}%", a.stage, 100 * a.share);
    out += "\n";
  }
  return out;
}

std::string render_markdown(const audit_report& r) {
  std::string out = fmt::format("### ropecheck audit: {} — `{}` ({})\n\n", r.passed ? "✅ pass" : "❌ fail",
                                r.y, judged_as(r));
  out += "| measure | value |\n|---|---|\n";
  out += fmt::format("| tolerance per output | {} |\n", tolerance_formula(r));
  out += fmt::format("| max pair error | {} × 2^-24 ({:.3e}) |\n", units(r.max_rel_pair_error_units), r.max_rel_pair_error);
  out += fmt::format("| outputs beyond tolerance | {} of {} |\n", r.outputs_beyond_tolerance, r.outputs);
  out += fmt::format("| worst | position {}, dim {}: {} vs {} (error {:.4g}, allowed {:.4g}) |\n", r.worst.position,
                     r.worst.dim, r.worst.value, r.worst.expected, r.worst.error, r.worst.allowed);
  for (const auto& f : r.diagnosis) out += fmt::format("\n- **`{}`**: {}", f.code, f.message);
  return out + "\n";
}

std::string render_junit(const audit_report& r) {
  std::string body =
      r.passed ? "" : fmt::format("      <failure message=\"{} outputs beyond tolerance\">{}</failure>\n",
                                  r.outputs_beyond_tolerance,
                                  xml_escape(render_markdown(r)));
  // A passing audit can still carry findings (position_outside_context): shown as output.
  if (r.passed && !r.diagnosis.empty()) {
    std::string findings;
    for (const auto& f : r.diagnosis) findings += fmt::format("[{}] {}\n", f.code, f.message);
    body = fmt::format("      <system-out>{}</system-out>\n", xml_escape(findings));
  }
  return detail::junit_document(
      "ropecheck.audit", 1, r.passed ? 0 : 1,
      fmt::format("    <testcase classname=\"ropecheck.audit\" name=\"{}\">\n{}    </testcase>\n",
                  xml_escape(r.y), body));
}

std::string render_html(const audit_report& r) {
  std::string findings;
  for (const auto& f : r.diagnosis)
    findings += fmt::format("<li><code>{}</code>{}: {}{}</li>\n", xml_escape(f.code),
                            f.share > 0 ? fmt::format(" ({:.0f}% of the error)", 100 * f.share) : "",
                            xml_escape(f.message),
                            f.evidence.empty() ? "" : "<br><small>evidence: " + xml_escape(f.evidence) + "</small>");
  if (findings.empty()) findings = "<li>none: the output is within tolerance</li>\n";
  // The recipe found and the attribution, one bar per stage (its share of the error).
  std::string recipe;
  if (r.recipe.fitted) {
    const recipe_fit& rf = r.recipe;
    recipe = fmt::format(
        "<h2>Recipe</h2>\n<p>The rounding pipeline that reproduces Y best ({:.1f}% of sampled outputs bit for bit, "
        "residual {} × 2<sup>-24</sup>): positions {}, inverse frequencies {}, angle {}, cos/sin computed in {} "
        "and kept in {} ({}, attention factor {}), arithmetic {}, one rounding to {} ({}).</p>\n<table><tr>"
        "<th>stage</th><th>share of the error</th><th>units of 2<sup>-24</sup></th></tr>\n",
        100 * rf.bit_exact, units(rf.residual_units), xml_escape(rf.positions), xml_escape(rf.inverse_frequencies),
        xml_escape(rf.angle), xml_escape(rf.trig), xml_escape(rf.trig_cache), xml_escape(rf.cache_rounding),
        xml_escape(rf.attention_factor), xml_escape(rf.arithmetic), xml_escape(rf.output), xml_escape(rf.output_store));
    for (const auto& a : r.attribution)
      recipe += fmt::format(
          "<tr><td>{}</td><td style=\"text-align:left\"><svg width=\"204\" height=\"12\"><rect width=\"{:.0f}\" "
          "height=\"12\" fill=\"#47a\"/></svg> {:.0f}%</td><td>{}</td></tr>\n",
          xml_escape(a.stage), 200 * a.share, 100 * a.share, units(a.units));
    recipe += "</table>\n";
  }

  std::string rows;
  for (const auto& b : r.by_position)
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", xml_escape(b.label), b.outputs, units(b.max_units));
  return detail::html_page(
      "ropecheck audit: " + verdict(r.passed), "td,th{text-align:right}",
      fmt::format(
          "<h1>ropecheck audit: <span class=\"{0}\">{0}</span></h1>\n"
          "<p><code>{1}</code> ({2}) against the reference's double tier; tolerance per output {3}.</p>\n"
          "<p>Max pair error {4} × 2<sup>-24</sup> ({5:.3e}); {6} of {7} outputs beyond tolerance; "
          "worst at position {8}, dim {9}: {10} vs {11}.</p>\n<h2>Diagnosis</h2>\n<ul>\n{12}</ul>\n{16}"
          "<h2>Error versus position</h2>\n{13}\n<h2>Error by frequency and position</h2>\n{14}\n<p>Row j is frequency pair j, rotated by "
          "m·θ_j with θ_j = base<sup>−2j/d</sup> (scaled under rope_scaling): j = 0 turns fastest, one radian per "
          "position; the last row slowest. Columns are |position| buckets.</p>\n"
          "<h2>By position</h2>\n<table><tr><th>|position|</th><th>outputs</th><th>max units</th></tr>\n{15}</table>\n",
          verdict(r.passed), xml_escape(r.y), xml_escape(judged_as(r)), xml_escape(tolerance_formula(r)),
          units(r.max_rel_pair_error_units), r.max_rel_pair_error, r.outputs_beyond_tolerance, r.outputs,
          r.worst.position, r.worst.dim, r.worst.value, r.worst.expected, findings,
          error_versus_position_svg(r), heatmap_svg(r), rows, recipe));
}

void write_report_files(const audit_report& report, const report_paths& paths) {
  detail::write_renderings({{paths.json, [&] { return json_text(to_json(report)); }},
                            {paths.markdown, [&] { return render_markdown(report); }},
                            {paths.html, [&] { return render_html(report); }},
                            {paths.junit, [&] { return render_junit(report); }}});
}

}  // namespace ropecheck::reports
