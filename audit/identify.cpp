// identify (identify.h). The rotation of pair j at row r is y = x·A·e^{iφ} with x = x_a + i·x_b,
// so z = Σ_heads conj(x)·y = A·Σ|x|²·e^{iφ} gives φ = (m + offset)·θ_j (mod 2π) and A. θ_j comes
// from angle differences between rows — first across the smallest position gap, then refined
// against rows ever further away (each step's prediction error stays far below π, so the
// wrap-around is resolved) — and is independent of the offset. log θ_j is then fitted by a line
// in j (weighted by each θ_j's precision): its slope is the base, its intercept a linear factor.
#include "audit/identify.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>

#include "audit/audit.h"
#include "io/io_error.h"
#include "spec/pair_index.h"
#include "spec/spec_reader.h"

namespace ropecheck::audit {
namespace {

double wrap(double a) {  // into (−π, π]
  a = std::remainder(a, 2 * std::numbers::pi);
  return a;
}

struct vector_pair {
  std::int64_t position;
  std::vector<double> x, y;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

identification identify(const identify_input& in) {
  identification id;
  const int d = static_cast<int>(in.x.shape.back());
  id.head_dim = d;
  const auto rows = static_cast<std::int64_t>(in.positions.size());
  const std::int64_t row_count = std::min<std::int64_t>(rows, 4096), head_count = std::min<std::int64_t>(in.heads, 8);
  std::vector<vector_pair> vectors;
  for (std::int64_t i = 0; i < row_count; ++i) {
    const std::int64_t row = i * rows / row_count;
    for (std::int64_t k = 0; k < head_count; ++k) {
      const std::int64_t h = k * in.heads / head_count;
      vector_pair v{in.positions[row], std::vector<double>(d), std::vector<double>(d)};
      to_float64(in.x, (row * in.heads + h) * d, v.x, in.x_file);
      to_float64(in.y, (row * in.heads + h) * d, v.y, in.y_file);
      if (std::all_of(v.x.begin(), v.x.end(), [](double e) { return std::isfinite(e); }) &&
          std::all_of(v.y.begin(), v.y.end(), [](double e) { return std::isfinite(e); }))
        vectors.push_back(std::move(v));
    }
  }
  // Bad data, not a bug: io_error (exit 2), one line naming the file and what is wrong.
  if (vectors.empty())
    throw io_error(in.y_file, "values", "has no head vector where X and Y are both finite", "all",
                   "nothing to identify from");

  // Pass-through dims: the tail where Y is X bit for bit in every sampled vector.
  int rotary = d;
  while (rotary > 0 && std::all_of(vectors.begin(), vectors.end(), [&](const vector_pair& v) {
           return std::bit_cast<std::uint64_t>(v.x[rotary - 1]) == std::bit_cast<std::uint64_t>(v.y[rotary - 1]);
         }))
    --rotary;
  rotary += rotary % 2;
  if (rotary == 0)
    throw io_error(in.y_file, "values", "equal X bit for bit in every dim", "Y == X",
                   "nothing is rotated: is every position 0?");
  id.rotary_dim = rotary;
  {
    std::int64_t moved = 0, nonzero = 0;
    for (const auto& v : vectors)
      if (v.position != 0) ++nonzero, moved += v.x[rotary - 1] != v.y[rotary - 1] || v.x[rotary - 2] != v.y[rotary - 2];
    id.rotary_confidence = nonzero > 0 ? static_cast<double>(moved) / static_cast<double>(nonzero) : 0;
  }

  // Pairing: the one under which ‖(y_a, y_b)‖² / ‖(x_a, x_b)‖² is one constant, A².
  const double noise = 16 * std::ldexp(1.0, -precision_bits(in.judged));
  double best_fraction = -1, best_ratio = 1;
  for (const pairing p : {pairing::half_split, pairing::adjacent}) {
    std::vector<double> ratios;
    for (const auto& v : vectors)
      for (int j = 0; j < rotary / 2; ++j) {
        const auto [a, b] = pair_of(p, rotary, j);
        const double xn = v.x[a] * v.x[a] + v.x[b] * v.x[b];
        if (xn > 1e-6) ratios.push_back((v.y[a] * v.y[a] + v.y[b] * v.y[b]) / xn);
      }
    const double m = median(ratios);
    const auto agree = std::count_if(ratios.begin(), ratios.end(), [&](double r) { return std::fabs(r / m - 1) <= noise; });
    const double fraction = ratios.empty() ? 0 : static_cast<double>(agree) / static_cast<double>(ratios.size());
    if (fraction > best_fraction) best_fraction = fraction, best_ratio = m, id.pair = p;
  }
  id.pairing_confidence = best_fraction;
  id.attention_factor = std::sqrt(best_ratio);
  if (std::fabs(id.attention_factor - 1) <= noise) id.attention_factor = 1;
  {
    std::vector<double> spread;
    for (const auto& v : vectors)
      for (int j = 0; j < rotary / 2; ++j) {
        const auto [a, b] = pair_of(id.pair, rotary, j);
        const double xn = std::hypot(v.x[a], v.x[b]);
        if (xn > 1e-3) spread.push_back(std::fabs(std::hypot(v.y[a], v.y[b]) / xn / id.attention_factor - 1));
      }
    id.attention_spread = median(spread);
  }

  // z per distinct position and pair.
  std::map<std::int64_t, std::vector<std::complex<double>>> z;
  for (const auto& v : vectors) {
    auto& row = z[v.position];
    row.resize(static_cast<std::size_t>(rotary / 2));
    for (int j = 0; j < rotary / 2; ++j) {
      const auto [a, b] = pair_of(id.pair, rotary, j);
      row[j] += std::conj(std::complex<double>(v.x[a], v.x[b])) * std::complex<double>(v.y[a], v.y[b]);
    }
  }
  std::vector<std::int64_t> m;
  std::vector<std::vector<double>> phi;  // [position][pair]
  for (const auto& [position, row] : z) {
    m.push_back(position);
    std::vector<double> angles;
    for (const auto& c : row) angles.push_back(std::arg(c));
    phi.push_back(std::move(angles));
  }
  if (m.size() < 2)
    throw io_error(in.positions_file, "values", "hold one distinct position", std::to_string(m.front()),
                   "the frequencies cannot be told apart: give at least two positions");
  std::size_t ref = 0;
  for (std::size_t i = 1; i + 1 < m.size(); ++i)
    if (m[i + 1] - m[i] < m[ref + 1] - m[ref]) ref = i;
  const double gap = static_cast<double>(m[ref + 1] - m[ref]);
  std::vector<std::size_t> order(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::llabs(m[a] - m[ref]) < std::llabs(m[b] - m[ref]);
  });
  double reach = 0;  // the largest position difference used
  id.theta.assign(static_cast<std::size_t>(rotary / 2), 0);
  for (int j = 0; j < rotary / 2; ++j) {
    double t = wrap(phi[ref + 1][j] - phi[ref][j]) / gap;
    for (const std::size_t i : order) {
      const double delta = static_cast<double>(m[i] - m[ref]);
      if (i == ref || std::fabs(delta) <= gap) continue;
      t += wrap(phi[i][j] - phi[ref][j] - delta * t) / delta;
      reach = std::max(reach, std::fabs(delta));
    }
    id.theta[j] = std::fabs(t);
  }
  reach = std::max(reach, gap);

  // log θ_j = −(2j/rotary)·log base − log s, weighted by (θ_j·reach)²: the angle noise over the
  // widest difference, relative to θ_j.
  const auto fit = [&](bool with_intercept) {
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int j = 0; j < rotary / 2; ++j) {
      const double x = -2.0 * j / rotary, y = std::log(id.theta[j]), w = std::pow(id.theta[j] * reach, 2);
      sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    if (!with_intercept) return std::pair{std::exp(sxy / sxx), 1.0};
    const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx), intercept = (sy - slope * sx) / sw;
    return std::pair{std::exp(slope), std::exp(-intercept)};
  };
  const auto residual = [&](double base, double s) {
    double worst = 0;
    for (int j = 0; j < rotary / 2; ++j) {
      const double precision = noise / (id.theta[j] * reach);  // relative uncertainty of θ_j
      if (precision > 1e-3) continue;                          // too few radians to tell
      const double model = std::pow(base, -2.0 * j / rotary) / s;
      worst = std::max(worst, std::fabs(id.theta[j] / model - 1) / std::max(precision, 1e-7));
    }
    return worst;  // in units of each θ_j's uncertainty
  };
  const auto [plain_base, one] = fit(false);
  const auto [scaled_base, factor] = fit(true);
  if (residual(plain_base, one) <= 8) {
    id.base = plain_base;
  } else if (residual(scaled_base, factor) <= 8) {
    id.base = scaled_base;
    id.linear_factor = factor;
  } else {
    id.base = plain_base;
    id.explicit_frequencies = true;
  }
  {
    double worst = 0;
    for (int j = 0; j < rotary / 2; ++j) {
      if (noise / (id.theta[j] * reach) > 1e-3) continue;
      const double model = std::pow(id.base, -2.0 * j / rotary) / id.linear_factor;
      worst = std::max(worst, std::fabs(id.theta[j] / model - 1));
    }
    id.frequency_residual = id.explicit_frequencies ? 0 : worst;
  }

  // Offset: (φ − m·θ_j)/θ_j over the lowest frequencies, where it cannot wrap.
  {
    std::map<std::int64_t, int> votes;
    int cast = 0;
    for (int j = rotary / 2 - 1; j >= 0 && j >= rotary / 2 - 8; --j) {
      const double t = id.explicit_frequencies || id.linear_factor != 1 ? id.theta[j]
                                                                         : std::pow(id.base, -2.0 * j / rotary);
      std::vector<double> c;
      for (std::size_t i = 0; i < m.size(); ++i) c.push_back(wrap(phi[i][j] - static_cast<double>(m[i]) * t) / t);
      ++votes[std::llround(median(c))];
      ++cast;
    }
    const auto best = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) { return a.second < b.second; });
    id.offset = best->first;
    id.offset_confidence = static_cast<double>(best->second) / cast;
  }

  // The spec, and an audit of Y against it at position + offset for the recipe.
  id.spec = parse_spec(spec_json(id), "identify");
  audit_input a;
  a.spec = id.spec;
  a.x = in.x;
  a.y = in.y;
  a.heads = in.heads;
  a.tokens_per_sequence = rows;
  for (const std::int64_t p : in.positions) a.positions.push_back(p + id.offset);
  a.judged = in.judged;
  a.x_file = in.x_file;
  a.y_file = in.y_file;
  const reports::audit_report r = run_audit(a);
  id.recipe = r.recipe;
  id.audit_passed = r.passed;
  return id;
}

nlohmann::json spec_json(const identification& id) {
  nlohmann::json j = {{"head_dim", id.head_dim},
                      {"rotary_dim", id.rotary_dim},
                      {"rope_theta", id.base},
                      {"pairing", id.pair == pairing::adjacent ? "adjacent" : "half"}};
  if (id.explicit_frequencies) {
    // Explicit θ_j as LongRoPE factors (θ'_j = θ_j / factor_j) in both regimes, factor 1.
    std::vector<double> factors;
    for (int k = 0; k < id.rotary_dim / 2; ++k)
      factors.push_back(std::pow(id.base, -2.0 * k / id.rotary_dim) / id.theta[k]);
    j["rope_scaling"] = {{"rope_type", "longrope"},
                         {"factor", 1.0},
                         {"long_factor", factors},
                         {"short_factor", factors},
                         {"original_max_position_embeddings", 1 << 20}};
  } else if (id.linear_factor != 1) {
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", id.linear_factor}};
  }
  if (id.attention_factor != 1 || id.explicit_frequencies) j["attention_factor"] = id.attention_factor;
  return j;
}

nlohmann::json identification_json(const identification& id) {
  const reports::recipe_fit& rf = id.recipe;
  return {{"report", "identify"},
          {"schema_version", 1},
          {"head_dim", id.head_dim},
          {"rotary_dim", {{"value", id.rotary_dim}, {"confidence", id.rotary_confidence}}},
          {"pairing", {{"value", std::string(to_string(id.pair))}, {"confidence", id.pairing_confidence}}},
          {"base", {{"value", id.base}, {"frequency_residual", id.frequency_residual}}},
          {"scaling",
           {{"type", id.explicit_frequencies ? "explicit" : id.linear_factor != 1 ? "linear" : "none"},
            {"factor", id.linear_factor}}},
          {"inverse_frequencies", id.theta},
          {"attention_factor", {{"value", id.attention_factor}, {"spread", id.attention_spread}}},
          {"offset", {{"value", id.offset}, {"confidence", id.offset_confidence}}},
          {"recipe",
           {{"positions", rf.positions}, {"inverse_frequencies", rf.inverse_frequencies}, {"angle", rf.angle},
            {"trig", rf.trig}, {"trig_cache", rf.trig_cache}, {"arithmetic", rf.arithmetic}, {"output", rf.output},
            {"bit_exact", rf.bit_exact}, {"residual_units", rf.residual_units}}},
          {"audit_passes", id.audit_passed},
          {"spec", spec_json(id)}};
}

std::string identification_text(const identification& id) {
  std::string s = "ropecheck identify\n\n";
  s += fmt::format("  rotary dims              {} of {} (confidence {:.3f})\n", id.rotary_dim, id.head_dim, id.rotary_confidence);
  s += fmt::format("  pairing                  {} (confidence {:.3f})\n", to_string(id.pair), id.pairing_confidence);
  s += fmt::format("  base θ                   {:.9g} (max relative residual of θ_j {:.2e})\n", id.base, id.frequency_residual);
  s += fmt::format("  scaling                  {}\n", id.explicit_frequencies ? "none named fits: explicit per-pair θ_j"
                                                      : id.linear_factor != 1 ? fmt::format("linear, factor {:.9g}", id.linear_factor)
                                                                              : std::string("none"));
  s += fmt::format("  attention factor         {:.9g} (spread {:.2e})\n", id.attention_factor, id.attention_spread);
  s += fmt::format("  position offset          {:+d} (confidence {:.3f})\n", id.offset, id.offset_confidence);
  const reports::recipe_fit& rf = id.recipe;
  s += fmt::format("  recipe                   positions {}, inverse frequencies {}, angle {}, cos/sin {} → {}, "
                   "arithmetic {}, output {} ({:.1f}% bit for bit)\n",
                   rf.positions, rf.inverse_frequencies, rf.angle, rf.trig, rf.trig_cache, rf.arithmetic, rf.output,
                   100 * rf.bit_exact);
  s += fmt::format("  audit against this spec  {}\n", id.audit_passed ? "pass" : "fail");
  return s;
}

}  // namespace ropecheck::audit
