// identify_conventions (identify_conventions.h). Parameters are proposed from the data, then
// judged by the reference: a base from the weighted line log θ_j = −(2f(j)/d)·log b − log s
// (all pairs for none and linear; the high-frequency quarter, which YaRN and llama3 leave
// unscaled, for those two), a factor from that line or from the lowest measured pair (θ_j/s
// where YaRN and llama3 scale fully), each rounded to 1, 2 and 3 significant digits (every
// rope_theta in fixtures/model-configs has one), and the original context L0 from the powers of
// two configs use. NTK's b' = b·s^(d/(d−2)) is tried for the usual factors.
#include "audit/identify_conventions.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "reference/scaling.h"
#include "spec/scaling_readers.h"
#include "spec/spec_reader.h"

namespace ropecheck::audit {
namespace {

// The base written when the data cannot decide it (every pair at frequency index 0): the
// usual default; any base gives those pairs the same frequency.
constexpr double nominal_base = 10000;
// original_max_position_embeddings of the YaRN and llama3 configs (and dynamic NTK's L_max): the
// contexts published configs give (spec/scaling_readers.h).
const std::vector<std::int64_t>& context_lengths() {
  static const std::vector<std::int64_t> lengths = [] {
    std::vector<std::int64_t> out;
    for (const double l : spec_scaling::published_contexts()) out.push_back(static_cast<std::int64_t>(l));
    return out;
  }();
  return lengths;
}
// Static NTK factors tried (b' = b·s^(d/(d−2)) leaves no pair unscaled to read s from).
constexpr double ntk_factors[] = {2, 4, 8, 16, 32};

double round_to_digits(double v, int digits) {
  const int p = digits - 1 - static_cast<int>(std::floor(std::log10(v)));
  // Dividing by an exact power of ten gives the double nearest the decimal (0.25, not 0.25000000000000006).
  if (p >= 0) return std::round(v * std::pow(10.0, p)) / std::pow(10.0, p);
  return std::round(v / std::pow(10.0, -p)) * std::pow(10.0, -p);
}

// v rounded to 1, 2, 3 significant digits (distinct), each with its digit count.
std::vector<std::pair<double, int>> round_values(double v) {
  std::vector<std::pair<double, int>> out;
  if (!(std::isfinite(v) && v > 0)) return out;
  for (int k = 1; k <= 3; ++k) {
    const double r = round_to_digits(v, k);
    if (r > 0 && std::none_of(out.begin(), out.end(), [&](const auto& o) { return o.first == r; })) out.push_back({r, k});
  }
  return out;
}

struct line {
  double base = nominal_base, factor = 1;
  bool determined = false;  // some usable pair at a frequency index above 0
};

// The weighted line over usable pairs with index below `below` (weights 1/precision²).
line fit_line(const frequency_evidence& e, bool with_factor, int below = std::numeric_limits<int>::max()) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t j = 0; j < e.theta.size(); ++j) {
    if (!std::isfinite(e.tolerance[j]) || e.index[j] >= below) continue;
    const double x = -2.0 * e.index[j] / e.rotary_dim, y = std::log(e.theta[j]), w = 1 / (e.precision[j] * e.precision[j]);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  line l;
  if (sw == 0) return l;
  // Every usable pair at frequency index 0: θ = 1/s whatever the base.
  if (sxx == 0) {
    if (with_factor) l.factor = std::exp(-sy / sw);
    return l;
  }
  l.determined = true;
  if (!with_factor) {
    l.base = std::exp(sxy / sxx);
    return l;
  }
  const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx), intercept = (sy - slope * sx) / sw;
  l.base = std::exp(slope), l.factor = std::exp(-intercept);
  return l;
}

struct candidate {
  std::string type;
  double base = 0, raw_base = 0, factor = 1, raw_factor = 1;
  nlohmann::json scaling;  // null: none
  int rank = 0;            // simplicity: lower is tried first
  nlohmann::json top_level = nlohmann::json::object();
};

struct evaluated {
  candidate c;
  std::vector<double> theta;  // θ'_k per frequency index
  double attention = 1;
  double residual = std::numeric_limits<double>::infinity(), relative = 0;
  bool fits() const { return residual <= 1; }
  bool attention_fits = false;  // its A is the measured one
};

std::optional<evaluated> evaluate(const frequency_evidence& e, const candidate& c) {
  nlohmann::json spec = c.top_level;
  spec.update({{"head_dim", e.head_dim}, {"rotary_dim", e.rotary_dim}, {"rope_theta", c.base}});
  if (!c.scaling.is_null()) spec["rope_scaling"] = c.scaling;
  evaluated v{c, {}};
  try {
    const auto r = reference::scaled_frequencies<double>(parse_spec(spec, "identify"), std::max<std::int64_t>(e.sequence_length, 1));
    v.theta = r.inverse_frequencies, v.attention = r.attention_factor;
  } catch (const std::exception&) {
    return std::nullopt;  // parameters the spec reader or the reference refuses (base ≤ 1, …)
  }
  v.residual = 0;
  for (std::size_t j = 0; j < e.theta.size(); ++j) {
    if (!std::isfinite(e.tolerance[j])) continue;
    const double off = std::fabs(e.theta[j] / v.theta[static_cast<std::size_t>(e.index[j])] - 1);
    if (!std::isfinite(off)) return std::nullopt;
    v.residual = std::max(v.residual, off / e.tolerance[j]);
    v.relative = std::max(v.relative, off);
  }
  v.attention_fits = std::fabs(e.attention / v.attention - 1) <= e.attention_tolerance;
  return v;
}

// A pair whose tolerance is above this is not measured to 10^-3 (4 uncertainties of 10^-3).
constexpr double measured_tolerance = 4e-3;

// Does `b` describe other frequencies than `a` — by more than θ_j's tolerance, or 10^-3 where
// that is wider — so that an audit under one would judge the other?
bool differs(const frequency_evidence& e, const evaluated& a, const evaluated& b) {
  for (std::size_t j = 0; j < e.theta.size(); ++j) {
    const auto k = static_cast<std::size_t>(e.index[j]);
    if (std::fabs(b.theta[k] / a.theta[k] - 1) > std::min(e.tolerance[j], 1e-3)) return true;
  }
  return false;
}

std::vector<candidate> propose(const frequency_evidence& e, const line& plain, const line& scaled) {
  std::vector<candidate> out;
  const int d = e.rotary_dim;
  for (const auto& [b, k] : round_values(plain.base)) out.push_back({"none", b, plain.base, 1, 1, nullptr, k});
  out.push_back({"none", std::round(plain.base), plain.base, 1, 1, nullptr, 50});
  out.push_back({"none", plain.base, plain.base, 1, 1, nullptr, 60});
  const auto linear = [](double s) { return nlohmann::json{{"rope_type", "linear"}, {"factor", s}}; };
  for (const auto& [b, kb] : round_values(scaled.base))
    for (const auto& [s, ks] : round_values(scaled.factor))
      if (s != 1) out.push_back({"linear", b, scaled.base, s, scaled.factor, linear(s), 10 + kb + ks});
  if (scaled.factor != 1)
    out.push_back({"linear", scaled.base, scaled.base, scaled.factor, scaled.factor, linear(scaled.factor), 70});
  for (const double s : ntk_factors) {
    const double raw = plain.base / std::pow(s, d / (d - 2.0));
    for (const auto& [b, k] : round_values(raw))
      if (k <= 2) out.push_back({"ntk", b, raw, s, s, {{"rope_type", "ntk"}, {"factor", s}}, 20 + k});
    // Dynamic NTK at this length L (max position + 1), past the config's L_max:
    // b' = b·(s·L/L_max − (s − 1))^(d/(d−2)).
    for (const std::int64_t l_max : context_lengths()) {
      const double stretch = s * static_cast<double>(e.sequence_length) / static_cast<double>(l_max) - (s - 1);
      if (!(stretch > 1)) continue;
      const double raw_dynamic = plain.base / std::pow(stretch, d / (d - 2.0));
      for (const auto& [b, k] : round_values(raw_dynamic))
        if (k <= 2) {
          candidate c{"dynamic", b, raw_dynamic, s, s, {{"rope_type", "dynamic"}, {"factor", s}}, 25 + k};
          c.top_level = {{"max_position_embeddings", l_max}};
          out.push_back(std::move(c));
        }
    }
  }

  // YaRN and llama3 leave the high frequencies as they are and divide the lowest by s.
  const int pairs = d / 2;
  const line high = fit_line(e, false, std::max(2, pairs / 4));
  std::optional<std::size_t> lowest;
  for (std::size_t j = 0; j < e.theta.size(); ++j)
    if (std::isfinite(e.tolerance[j]) && (!lowest || e.index[j] > e.index[*lowest])) lowest = j;
  if (!high.determined || !lowest) return out;
  for (const auto& [b, kb] : round_values(high.base)) {
    if (kb > 2) continue;
    const double ratio = std::pow(b, -2.0 * e.index[*lowest] / d) / e.theta[*lowest];
    std::vector<std::pair<double, int>> factors;
    for (const auto& f : round_values(ratio))
      if (f.second <= 2 && f.first > 1) factors.push_back(f);
    for (const auto& [s, ks] : factors)
      for (const std::int64_t l0 : context_lengths()) {
        // Llama 3.1/3.2 (low 1, high 4); Llama 4 (low = high = 1: no smoothed band).
        for (const double high_freq_factor : {4.0, 1.0})
          out.push_back({"llama3", b, high.base, s, s,
                         {{"rope_type", "llama3"}, {"factor", s}, {"low_freq_factor", 1.0},
                          {"high_freq_factor", high_freq_factor}, {"original_max_position_embeddings", l0}},
                         30 + kb + ks + (high_freq_factor == 1.0)});
        const nlohmann::json yarn = {{"rope_type", "yarn"}, {"factor", s}, {"original_max_position_embeddings", l0}};
        out.push_back({"yarn", b, high.base, s, s, yarn, 40 + kb + ks});
        nlohmann::json untruncated = yarn;
        untruncated["truncate"] = false;  // gpt-oss: the correction range unrounded
        out.push_back({"yarn", b, high.base, s, s, untruncated, 41 + kb + ks});
        // DeepSeek-V3: mscale = mscale_all_dim = 1, so A = g(s, 1)/g(s, 1) = 1.
        nlohmann::json deepseek = yarn;
        deepseek["mscale"] = 1.0, deepseek["mscale_all_dim"] = 1.0;
        out.push_back({"yarn", b, high.base, s, s, deepseek, 42 + kb + ks});
      }
  }
  return out;
}

}  // namespace

named_convention name_convention(const frequency_evidence& e) {
  named_convention n;
  const line plain = fit_line(e, false), scaled = fit_line(e, true);
  n.base_undetermined = std::all_of(e.index.begin(), e.index.end(), [](int f) { return f == 0; });
  n.raw_base = plain.base;
  // A relative change δ of the base moves θ_j by (2f(j)/d)·δ.
  n.base_uncertainty = std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < e.theta.size(); ++j)
    if (std::isfinite(e.tolerance[j]) && e.index[j] > 0)
      n.base_uncertainty = std::min(n.base_uncertainty, e.tolerance[j] * e.rotary_dim / (2.0 * e.index[j]));

  std::vector<evaluated> fitting;
  auto proposed = propose(e, plain, scaled);
  std::stable_sort(proposed.begin(), proposed.end(), [](const candidate& a, const candidate& b) { return a.rank < b.rank; });
  for (const candidate& c : proposed)
    if (auto v = evaluate(e, c); v && v->fits()) fitting.push_back(std::move(*v));
  const std::size_t unusable = static_cast<std::size_t>(
      std::count_if(e.tolerance.begin(), e.tolerance.end(), [](double t) { return !(t <= measured_tolerance); }));
  // Unmeasured pairs (the lowest frequencies, which YaRN, llama3 and LongRoPE change) leave a
  // scaling of theirs possible whatever the others fit, and explicit frequencies unknown there:
  // the confidence is at most the measured fraction, and the reason is said.
  const auto pairs = static_cast<double>(e.theta.size());
  const std::string unmeasured =
      unusable == 0 ? "" : fmt::format("{} of {} pairs turn too little over these positions to be measured to 10^-3, so "
                                       "a scaling of those frequencies is not ruled out: give positions further apart "
                                       "(or a wider dtype)", unusable, e.theta.size());
  if (fitting.empty()) {
    // No named scaling: explicit θ_j, relative to the simplest base the high frequencies give
    // (LongRoPE's factors are near 1 there), else all pairs.
    n.type = "explicit";
    const line high = fit_line(e, false, std::max(2, e.rotary_dim / 8));
    const line& basis = high.determined ? high : plain;
    n.base = basis.determined && basis.base > 1 && std::isfinite(basis.base) ? round_to_digits(basis.base, 1) : nominal_base;
    if (!(n.base > 1)) n.base = nominal_base;
    n.model_theta.assign(static_cast<std::size_t>(e.rotary_dim / 2), 0);
    for (std::size_t j = 0; j < e.theta.size(); ++j) n.model_theta[static_cast<std::size_t>(e.index[j])] = e.theta[j];
    n.confidence = (pairs - static_cast<double>(unusable)) / pairs;
    n.undecided = unmeasured;
    // LongRoPE: per-pair factors with its own attention factor sqrt(1 + ln s / ln L0), s =
    // L_max / L0 (powers of two in Phi-3's configs); named when exactly one (L0, L_max) gives
    // the measured A, else A is written as it is.
    std::vector<std::pair<std::int64_t, std::int64_t>> contexts;
    for (const std::int64_t l0 : context_lengths())
      for (int k = 1; k <= 6; ++k) {
        const double a = std::sqrt(1 + k * std::log(2.0) / std::log(static_cast<double>(l0)));
        if (std::fabs(e.attention / a - 1) <= e.attention_tolerance) contexts.push_back({l0, l0 << k});
      }
    if (contexts.size() == 1) {
      n.type = "longrope";
      n.rope_scaling = {{"rope_type", "longrope"}, {"original_max_position_embeddings", contexts[0].first}};
      n.top_level = {{"max_position_embeddings", contexts[0].second}};
      n.factor = static_cast<double>(contexts[0].second / contexts[0].first);
      n.attention_factor = std::sqrt(1 + std::log(n.factor) / std::log(static_cast<double>(contexts[0].first)));
    }
    return n;
  }
  // The simplest candidate whose attention factor is the measured one too, else the simplest
  // (the spec then states A: identify.cpp).
  const auto same_attention = std::find_if(fitting.begin(), fitting.end(), [](const evaluated& v) { return v.attention_fits; });
  if (same_attention != fitting.end()) std::rotate(fitting.begin(), same_attention, same_attention + 1);
  const evaluated& best = fitting.front();
  n.type = best.c.type;
  n.base = best.c.base;
  n.raw_base = best.c.raw_base;
  // Within double rounding of the fit is no snap worth stating.
  n.base_snapped = !n.base_undetermined && std::fabs(n.base / n.raw_base - 1) > 1e-12;
  if (n.base_undetermined) n.base = nominal_base;
  n.rope_scaling = best.c.scaling;
  n.top_level = best.c.top_level;
  n.factor = best.c.factor;
  n.raw_factor = best.c.raw_factor;
  n.attention_factor = best.attention;
  n.model_theta = best.theta;
  n.residual = best.residual;
  n.frequency_residual = best.relative;
  // Up to 4 other fitting configs, simplest first, each describing other frequencies than the
  // chosen one and than those already listed (a base the data cannot pin, a scaling of
  // unmeasured pairs).
  std::vector<const evaluated*> listed = {&best};
  for (const evaluated& v : fitting) {
    if (listed.size() > 4 || std::any_of(listed.begin(), listed.end(), [&](const evaluated* l) { return !differs(e, *l, v); }))
      continue;
    listed.push_back(&v);
    named_convention alt;
    alt.type = v.c.type, alt.base = v.c.base, alt.rope_scaling = v.c.scaling;
    n.also_fit.push_back(describe(alt));
  }
  n.confidence = (pairs - static_cast<double>(unusable)) / pairs / static_cast<double>(1 + n.also_fit.size());
  if (!n.also_fit.empty())
    n.undecided = fmt::format("{} fits, and so do {}{}", describe(n), fmt::join(n.also_fit, "; "),
                              unmeasured.empty() ? ": the positions given do not tell them apart" : ": " + unmeasured);
  else
    n.undecided = unmeasured;
  return n;
}

std::string describe(const named_convention& c) {
  std::string s = fmt::format("rope_theta {:.9g}", c.base);
  if (c.type == "explicit") return s + ", explicit frequencies";
  if (c.rope_scaling.is_null()) return s;
  s += ", " + c.rope_scaling.value("rope_type", std::string("?"));
  for (const auto& [key, value] : c.rope_scaling.items())
    if (key != "rope_type") s += fmt::format(" {} {}", key, value.dump());
  if (c.top_level.is_object())
    for (const auto& [key, value] : c.top_level.items()) s += fmt::format(", {} {}", key, value.dump());
  return s;
}

}  // namespace ropecheck::audit
