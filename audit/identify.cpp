// identify (identify.h). The rotation of pair j at row r is y = x·A·e^{iφ} with x = x_a + i·x_b,
// so z = Σ_heads conj(x)·y = A·Σ|x|²·e^{iφ} gives φ = (m + offset)·θ_j (mod 2π) and A. θ_j comes
// from angle differences between rows — first across the smallest position gap, then refined
// against rows ever further away (each step's prediction error stays far below π, so the
// wrap-around is resolved) — and is independent of the offset. log θ_j is then fitted by a line
// in j (weighted by each θ_j's precision): its slope is the base, its intercept a linear factor.
#include "audit/identify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>

#include "audit/audit.h"
#include "io/io_error.h"
#include "spec/pair_index.h"
#include "spec/spec_reader.h"
#include "spec/stream_layout.h"

namespace ropecheck::audit {
namespace {

// The base written when the data cannot decide it (every pair at frequency index 0): the
// usual default; any base gives those pairs the same frequency.
constexpr double nominal_base = 10000;

double wrap(double a) {  // into (−π, π]
  a = std::remainder(a, 2 * std::numbers::pi);
  return a;
}

struct vector_pair {
  std::vector<std::int64_t> p;  // the row's position in each stream
  std::vector<double> x, y;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// θ of one pair from the angles φ_i = m_i·θ (mod 2π) at distinct sorted positions m_i: first
// across the smallest gap, then refined against positions ever further away. `reach` is the
// largest position difference used. Signed: a pair that does not follow these positions gets a
// θ that the residual check below rejects.
struct theta_fit {
  double theta = 0, reach = 0;
};

theta_fit fit_theta(const std::vector<std::int64_t>& m, const std::vector<double>& phi) {
  std::size_t ref = 0;
  for (std::size_t i = 1; i + 1 < m.size(); ++i)
    if (m[i + 1] - m[i] < m[ref + 1] - m[ref]) ref = i;
  const double gap = static_cast<double>(m[ref + 1] - m[ref]);
  std::vector<std::size_t> order(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::llabs(m[a] - m[ref]) < std::llabs(m[b] - m[ref]);
  });
  theta_fit f{wrap(phi[ref + 1] - phi[ref]) / gap, gap};
  for (const std::size_t i : order) {
    const double delta = static_cast<double>(m[i] - m[ref]);
    if (i == ref || std::fabs(delta) <= gap) continue;
    f.theta += wrap(phi[i] - phi[ref] - delta * f.theta) / delta;
    f.reach = std::max(f.reach, std::fabs(delta));
  }
  return f;
}

// Rows with the same position tuple, their z = Σ_heads conj(x)·y per pair summed.
struct tuple_angles {
  std::vector<std::vector<std::int64_t>> p;        // [tuple][stream]
  std::vector<std::vector<std::complex<double>>> z;  // [tuple][pair]
};

// θ of pair j when its angle follows stream s: rows grouped by their stream-s position (z
// summed, so rows that disagree on the angle cancel rather than mislead), then fit_theta.
std::optional<theta_fit> stream_theta(const tuple_angles& t, int s, int j) {
  std::map<std::int64_t, std::complex<double>> by_position;
  for (std::size_t i = 0; i < t.p.size(); ++i) by_position[t.p[i][s]] += t.z[i][j];
  if (by_position.size() < 2) return std::nullopt;
  std::vector<std::int64_t> m;
  std::vector<double> phi;
  for (const auto& [position, sum] : by_position) m.push_back(position), phi.push_back(std::arg(sum));
  return fit_theta(m, phi);
}

// Does pair j turn by p_s·θ at (nearly) every tuple? The angle of a correctly rounded output is
// within a few units of 2^-p of the exact one; `tolerance` is far above that and far below
// what a wrong stream's position differences give.
bool follows(const tuple_angles& t, int s, int j, double theta, double tolerance) {
  std::size_t within = 0;
  for (std::size_t i = 0; i < t.p.size(); ++i)
    within += std::fabs(wrap(std::arg(t.z[i][j]) - static_cast<double>(t.p[i][s]) * theta)) <= tolerance;
  return static_cast<double>(within) >= 0.999 * static_cast<double>(t.p.size());
}

// Every stream layout of `streams` streams over `pairs` pairs (rope_spec.h), once per distinct
// map j → s(j): M-RoPE contiguous sections in every split, interleaved with every height and
// width count (the counts of pairs on each stream, which is what the map determines); the
// three vision rules (rows first and alternating share a map).
std::vector<stream_layout> candidate_layouts(int streams, int pairs) {
  std::vector<stream_layout> out;
  if (streams == 3) {
    for (int s0 = 1; s0 <= pairs - 2; ++s0)
      for (int s1 = 1; s0 + s1 <= pairs - 1; ++s1)
        out.push_back({stream_rule::mrope_sections, {s0, s1, pairs - s0 - s1}});
    std::vector<std::vector<std::int32_t>> seen;
    for (int s1 = 1; s1 < pairs; ++s1)
      for (int s2 = 1; s1 + s2 < pairs; ++s2) {
        const stream_layout l{stream_rule::mrope_interleaved, {pairs - s1 - s2, s1, s2}};
        auto map = pair_streams(l, 2 * pairs);
        if (std::find(seen.begin(), seen.end(), map) != seen.end()) continue;
        seen.push_back(std::move(map));
        out.push_back(l);
      }
  } else if (streams == 2 && pairs % 2 == 0) {
    for (const stream_rule r :
         {stream_rule::vision_rows_first, stream_rule::vision_columns_first, stream_rule::vision_alternating})
      out.push_back({r, {}});
  }
  return out;
}

std::string describe(const stream_layout& l) {
  if (l.section.empty()) return std::string(to_string(l.rule));
  return fmt::format("{} [{}]", to_string(l.rule), fmt::join(l.section, ", "));
}

}  // namespace

identification identify(const identify_input& in) {
  identification id;
  const int d = static_cast<int>(in.x.shape.back());
  id.head_dim = d;
  const int streams = in.streams;
  id.streams = streams;
  if (streams != 1 && streams != 2 && streams != 3)
    throw io_error(in.positions_file, "shape", "does not give 1, 2 (row, column) or 3 (t, h, w) position streams",
                   std::to_string(streams));
  const auto rows = static_cast<std::int64_t>(in.positions.size()) / streams;
  const std::int64_t row_count = std::min<std::int64_t>(rows, 4096), head_count = std::min<std::int64_t>(in.heads, 8);
  std::vector<vector_pair> vectors;
  for (std::int64_t i = 0; i < row_count; ++i) {
    const std::int64_t row = i * rows / row_count;
    std::vector<std::int64_t> p;
    for (int s = 0; s < streams; ++s) p.push_back(in.positions[static_cast<std::size_t>(s * rows + row)]);
    for (std::int64_t k = 0; k < head_count; ++k) {
      const std::int64_t h = k * in.heads / head_count;
      vector_pair v{p, std::vector<double>(d), std::vector<double>(d)};
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
  // Data that cannot decide the convention is refused here, naming the file and why, rather
  // than fitted into a spec with no meaning (a base of 0/0).
  const auto every_vector = [&](const auto& holds) { return std::all_of(vectors.begin(), vectors.end(), holds); };
  if (every_vector([](const vector_pair& v) { return std::all_of(v.x.begin(), v.x.end(), [](double e) { return e == 0; }); }))
    throw io_error(in.x_file, "values", "are all zero", "0", "no angle can be read: any rotation of zero is zero");
  if (every_vector([](const vector_pair& v) {
        for (std::size_t i = 0; i < v.x.size(); ++i)
          if (v.y[i] != -v.x[i]) return false;
        return true;
      }))
    throw io_error(in.y_file, "values", "are -X: every pair is turned by pi at every position", "Y = -X",
                   "no angle changes with the position, so no frequency can be read");
  // Every threshold on a norm is relative to X's scale: a subnormal X is read like any other.
  double x_scale = 0;
  for (const auto& v : vectors)
    for (const double e : v.x) x_scale = std::max(x_scale, std::fabs(e));

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
  const int pairs = rotary / 2;
  {
    std::int64_t moved = 0, nonzero = 0;
    for (const auto& v : vectors)
      if (std::any_of(v.p.begin(), v.p.end(), [](std::int64_t m) { return m != 0; }))
        ++nonzero, moved += v.x[rotary - 1] != v.y[rotary - 1] || v.x[rotary - 2] != v.y[rotary - 2];
    id.rotary_confidence = nonzero > 0 ? static_cast<double>(moved) / static_cast<double>(nonzero) : 0;
  }

  // Pairing: the one under which ‖(y_a, y_b)‖² / ‖(x_a, x_b)‖² is one constant, A².
  const double noise = 16 * std::ldexp(1.0, -precision_bits(in.judged));
  double best_fraction = -1, best_ratio = 1;
  for (const pairing p : {pairing::half_split, pairing::adjacent}) {
    std::vector<double> ratios;
    for (const auto& v : vectors)
      for (int j = 0; j < pairs; ++j) {
        const auto [a, b] = pair_of(p, rotary, j);
        const double xn = v.x[a] * v.x[a] + v.x[b] * v.x[b];
        if (xn > 1e-6 * x_scale * x_scale) ratios.push_back((v.y[a] * v.y[a] + v.y[b] * v.y[b]) / xn);
      }
    const double m = median(ratios);
    const auto agree = std::count_if(ratios.begin(), ratios.end(), [&](double r) { return std::fabs(r / m - 1) <= noise; });
    const double fraction = ratios.empty() ? 0 : static_cast<double>(agree) / static_cast<double>(ratios.size());
    if (fraction > best_fraction) best_fraction = fraction, best_ratio = m, id.pair = p;
  }
  if (!(best_ratio > 0))
    throw io_error(in.y_file, "values", "are zero in most pairs where X is not", "0",
                   "no angle can be read from a zero output");
  id.pairing_confidence = best_fraction;
  id.attention_factor = std::sqrt(best_ratio);
  if (std::fabs(id.attention_factor - 1) <= noise) id.attention_factor = 1;
  {
    std::vector<double> spread;
    for (const auto& v : vectors)
      for (int j = 0; j < pairs; ++j) {
        const auto [a, b] = pair_of(id.pair, rotary, j);
        const double xn = std::hypot(v.x[a], v.x[b]);
        if (xn > 1e-3 * x_scale) spread.push_back(std::fabs(std::hypot(v.y[a], v.y[b]) / xn / id.attention_factor - 1));
      }
    id.attention_spread = median(spread);
  }

  // z per distinct position tuple and pair.
  tuple_angles t;
  {
    std::map<std::vector<std::int64_t>, std::vector<std::complex<double>>> z;
    for (const auto& v : vectors) {
      auto& row = z[v.p];
      row.resize(static_cast<std::size_t>(pairs));
      for (int j = 0; j < pairs; ++j) {
        const auto [a, b] = pair_of(id.pair, rotary, j);
        row[j] += std::conj(std::complex<double>(v.x[a], v.x[b])) * std::complex<double>(v.y[a], v.y[b]);
      }
    }
    for (auto& [p, row] : z) t.p.push_back(p), t.z.push_back(std::move(row));
  }
  if (t.p.size() < 2)
    throw io_error(in.positions_file, "values", "hold one distinct position", fmt::format("{}", fmt::join(t.p.front(), ", ")),
                   "the frequencies cannot be told apart: give at least two positions");
  for (int j = 0; j < pairs; ++j) {
    if (std::any_of(t.z.begin(), t.z.end(), [&](const auto& row) { return row[j] != 0.0; })) continue;
    const auto [a, b] = pair_of(id.pair, rotary, j);
    const bool x_zero = every_vector([&](const vector_pair& v) { return v.x[a] == 0 && v.x[b] == 0; });
    throw io_error(x_zero ? in.x_file : in.y_file, "values",
                   fmt::format("are zero in pair {} (dims {} and {}) of every sampled head vector", j, a, b),
                   "0", "that pair's angle cannot be read");
  }

  // The stream of each pair: with one stream, stream 0; with several, the streams whose
  // positions explain the pair's angle at every tuple, then the one layout consistent with them.
  std::vector<int> stream_of(static_cast<std::size_t>(pairs), 0);
  std::vector<theta_fit> fits(static_cast<std::size_t>(pairs));
  std::vector<stream_layout> candidates = {stream_layout{}};  // sharing one map j → s(j)
  if (streams == 1) {
    for (int j = 0; j < pairs; ++j) fits[j] = *stream_theta(t, 0, j);
  } else {
    if (std::all_of(t.p.begin(), t.p.end(), [](const std::vector<std::int64_t>& p) {
          return std::all_of(p.begin(), p.end(), [&](std::int64_t m) { return m == p.front(); });
        }))
      throw io_error(in.positions_file, "values", "hold equal streams in every row (text tokens only)",
                     fmt::format("{} streams", streams),
                     "any stream layout fits such rows: give rows whose streams differ (image or video tokens)");
    std::vector<std::vector<std::optional<theta_fit>>> per_stream(static_cast<std::size_t>(pairs));
    std::vector<std::vector<bool>> fitting(static_cast<std::size_t>(pairs), std::vector<bool>(streams, false));
    for (int j = 0; j < pairs; ++j)
      for (int s = 0; s < streams; ++s) {
        per_stream[j].push_back(stream_theta(t, s, j));
        if (per_stream[j][s]) fitting[j][s] = follows(t, s, j, per_stream[j][s]->theta, noise);
      }
    for (int j = 0; j < pairs; ++j)
      id.stream_distinct_pairs += std::count(fitting[j].begin(), fitting[j].end(), true) == 1;
    std::vector<stream_layout> consistent;
    std::vector<std::vector<std::int32_t>> maps;
    for (const stream_layout& l : candidate_layouts(streams, pairs)) {
      const auto map = pair_streams(l, rotary);
      bool ok = true;
      for (int j = 0; j < pairs && ok; ++j) ok = fitting[j][map[j]];
      if (ok) consistent.push_back(l), maps.push_back(map);
    }
    // Vision rows-first and alternating take the same streams: left to the frequency fit.
    const bool one_map = !maps.empty() && std::all_of(maps.begin(), maps.end(), [&](const auto& m) { return m == maps.front(); });
    if (consistent.empty()) {
      std::string found;
      for (int j = 0; j < pairs; ++j) {
        std::string which;
        for (int s = 0; s < streams; ++s)
          if (fitting[j][s]) which += std::to_string(s);
        found += (j ? " " : "") + (which.empty() ? std::string("-") : which);
      }
      throw io_error(in.y_file, "values", "follow no stream layout ropecheck knows (mrope_sections, "
                     "mrope_interleaved, vision rows/columns first, alternating)",
                     "streams per pair: " + found,
                     "'-': no stream's positions explain that pair's angle (a position offset, or not RoPE)");
    }
    if (!one_map) {
      std::string listed;
      for (std::size_t i = 0; i < consistent.size() && i < 4; ++i) listed += (i ? "; " : "") + describe(consistent[i]);
      throw io_error(in.positions_file, "values", "do not tell the stream layouts apart",
                     fmt::format("{} layouts fit Y: {}{}", consistent.size(), listed, consistent.size() > 4 ? "; …" : ""),
                     fmt::format("only {} of {} pairs follow one stream alone: give rows whose streams differ more "
                                 "(or a wider dtype)", id.stream_distinct_pairs, pairs));
    }
    candidates = consistent;
    for (int j = 0; j < pairs; ++j) {
      stream_of[j] = maps.front()[j];
      fits[j] = *per_stream[j][stream_of[j]];
    }
  }
  // θ_j per pair (its stream's fit) and how far each reached.
  id.theta.assign(static_cast<std::size_t>(pairs), 0);
  std::vector<double> reach(static_cast<std::size_t>(pairs));
  for (int j = 0; j < pairs; ++j) {
    id.theta[j] = std::fabs(fits[j].theta);
    reach[j] = fits[j].reach;
    if (!(id.theta[j] > 0 && std::isfinite(id.theta[j])))
      throw io_error(in.y_file, "values", fmt::format("turn pair {} by the same angle at every position", j),
                     fmt::format("{}", id.theta[j]), "its frequency cannot be read: is it rotated by the position?");
  }

  // log θ_j = −(2 f(j)/rotary)·log base − log s, weighted by (θ_j·reach_j)²: the angle noise over
  // the widest difference, relative to θ_j. f(j) is the pair's frequency index (j, or the vision
  // rule's, spec/stream_layout.h).
  const auto fit = [&](const std::vector<int>& f, bool with_intercept) {
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int j = 0; j < pairs; ++j) {
      const double x = -2.0 * f[j] / rotary, y = std::log(id.theta[j]), w = std::pow(id.theta[j] * reach[j], 2);
      sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    // Every pair at frequency index 0 (one pair): θ_j = 1/s whatever the base, which the data
    // cannot decide; the base is then a nominal one and only the factor is fitted.
    if (sxx == 0) return std::pair{nominal_base, with_intercept ? std::exp(-sy / sw) : 1.0};
    if (!with_intercept) return std::pair{std::exp(sxy / sxx), 1.0};
    const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx), intercept = (sy - slope * sx) / sw;
    return std::pair{std::exp(slope), std::exp(-intercept)};
  };
  const auto residual = [&](const std::vector<int>& f, double base, double s) {
    double worst = 0;
    for (int j = 0; j < pairs; ++j) {
      const double precision = noise / (id.theta[j] * reach[j]);  // relative uncertainty of θ_j
      if (precision > 1e-3) continue;                              // too few radians to tell
      const double model = std::pow(base, -2.0 * f[j] / rotary) / s;
      const double off = std::fabs(id.theta[j] / model - 1) / std::max(precision, 1e-7);
      if (!std::isfinite(off)) return std::numeric_limits<double>::infinity();  // a model of 0 or inf fits nothing
      worst = std::max(worst, off);
    }
    return worst;  // in units of each θ_j's uncertainty
  };
  // The rule (among candidates sharing the stream map) whose frequency order a base fits:
  // plainly, else with a linear factor; no rule fitting leaves explicit θ_j (one candidate only).
  struct base_fit {
    stream_layout layout;
    std::vector<int> f;
    double base = 0, factor = 1;
    bool named = false;
  };
  std::vector<base_fit> named;
  base_fit fallback;
  for (const stream_layout& l : candidates) {
    base_fit b{l, std::vector<int>(static_cast<std::size_t>(pairs))};
    for (int j = 0; j < pairs; ++j) b.f[j] = streams == 1 ? j : frequency_of_pair(l, rotary, j);
    const auto [plain_base, one] = fit(b.f, false);
    const auto [scaled_base, factor] = fit(b.f, true);
    // A spec's base is finite and > 1, its factor finite and > 0: a fit outside that (θ_j
    // growing with j, all equal) is no named scaling, and the spec lists θ_j.
    const auto valid = [](double base, double s) { return std::isfinite(base) && base > 1 && std::isfinite(s) && s > 0; };
    if (valid(plain_base, one) && residual(b.f, plain_base, one) <= 8) {
      b.base = plain_base, b.named = true;
    } else if (valid(scaled_base, factor) && residual(b.f, scaled_base, factor) <= 8) {
      b.base = scaled_base, b.factor = factor, b.named = true;
    } else {
      b.base = valid(plain_base, 1) ? plain_base : nominal_base;
    }
    if (b.named) named.push_back(b);
    else if (fallback.f.empty()) fallback = b;
  }
  if (named.size() > 1)
    throw io_error(in.y_file, "values", "fit the frequency order of more than one stream layout",
                   fmt::format("{} and {}", describe(named[0].layout), describe(named[1].layout)),
                   "a base fits either order: the layouts cannot be told apart");
  if (named.empty() && candidates.size() > 1)
    throw io_error(in.y_file, "values", "fit no base in the frequency order of any of the stream layouts",
                   fmt::format("{} or {}", describe(candidates[0]), describe(candidates[1])),
                   "with no named frequencies the order (rows first or alternating) cannot be told");
  const base_fit chosen = named.empty() ? fallback : named.front();
  id.layout = chosen.layout;
  id.base = chosen.base;
  id.linear_factor = chosen.factor;
  id.explicit_frequencies = !chosen.named;
  id.base_undetermined = std::all_of(chosen.f.begin(), chosen.f.end(), [](int f) { return f == 0; });
  {
    double worst = 0;
    for (int j = 0; j < pairs; ++j) {
      if (noise / (id.theta[j] * reach[j]) > 1e-3) continue;
      const double model = std::pow(id.base, -2.0 * chosen.f[j] / rotary) / id.linear_factor;
      worst = std::max(worst, std::fabs(id.theta[j] / model - 1));
    }
    id.frequency_residual = id.explicit_frequencies ? 0 : worst;
  }

  // Offset: (φ − m·θ_j)/θ_j over the lowest frequencies, where it cannot wrap; m is the pair's
  // own stream's position.
  {
    std::vector<int> lowest(static_cast<std::size_t>(pairs));
    for (int j = 0; j < pairs; ++j) lowest[j] = j;
    std::stable_sort(lowest.begin(), lowest.end(), [&](int a, int b) { return chosen.f[a] > chosen.f[b]; });
    std::map<std::int64_t, int> votes;
    int cast = 0;
    for (int k = 0; k < pairs && k < 8; ++k) {
      const int j = lowest[k];
      const double th = id.explicit_frequencies || id.linear_factor != 1 ? id.theta[j]
                                                                           : std::pow(id.base, -2.0 * chosen.f[j] / rotary);
      std::vector<double> c;
      for (std::size_t i = 0; i < t.p.size(); ++i)
        c.push_back(wrap(std::arg(t.z[i][j]) - static_cast<double>(t.p[i][stream_of[j]]) * th) / th);
      // An offset beyond 2^53 positions is no offset a pipeline uses; such a vote is noise.
      const double offset = median(c);
      if (std::fabs(offset) <= 0x1p53) ++votes[std::llround(offset)];
      ++cast;
    }
    const auto best = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) { return a.second < b.second; });
    id.offset = best == votes.end() ? 0 : best->first;
    id.offset_confidence = best == votes.end() ? 0 : static_cast<double>(best->second) / cast;
  }

  // The spec, and an audit of Y against it at position + offset for the recipe.
  try {
    id.spec = parse_spec(spec_json(id), "identify");
  } catch (const spec_error& e) {
    throw io_error(in.y_file, "values", "do not determine a spec ropecheck can check", "the inferred spec", e.what());
  }
  audit_input a;
  a.spec = id.spec;
  a.x = in.x;
  a.y = in.y;
  a.heads = in.heads;
  a.tokens_per_sequence = rows;
  const auto shifted = [&](std::int64_t p) {
    std::int64_t out = 0;
    if (__builtin_add_overflow(p, id.offset, &out))
      throw io_error(in.positions_file, "values", "overflow int64 with the inferred position offset",
                     fmt::format("{} + {}", p, id.offset));
    return out;
  };
  for (std::int64_t r = 0; r < rows; ++r) a.positions.push_back(shifted(in.positions[static_cast<std::size_t>(r)]));
  if (streams > 1)
    for (const std::int64_t p : in.positions) a.stream_positions.push_back(shifted(p));
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
  const int pairs = id.rotary_dim / 2;
  if (id.explicit_frequencies) {
    // Explicit θ_k as LongRoPE factors (θ'_k = θ_k / factor_k) in both regimes, factor 1; k is
    // the frequency index pair j takes (j itself unless a vision layout reorders them), and an
    // index no pair takes keeps factor 1.
    std::vector<double> factors(static_cast<std::size_t>(pairs), 1.0);
    for (int p = 0; p < pairs; ++p) {
      const int k = id.layout.vision() ? frequency_of_pair(id.layout, id.rotary_dim, p) : p;
      factors[k] = std::pow(id.base, -2.0 * k / id.rotary_dim) / id.theta[p];
    }
    j["rope_scaling"] = {{"rope_type", "longrope"},
                         {"factor", 1.0},
                         {"long_factor", factors},
                         {"short_factor", factors},
                         {"original_max_position_embeddings", 1 << 20}};
  } else if (id.linear_factor != 1) {
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", id.linear_factor}};
  }
  // M-RoPE as a config writes it (mrope_section in the RoPE block); a vision layout as
  // ropecheck's own top-level "stream_layout" key (docs/scaling.md, "Spec keys").
  if (id.layout.vision()) {
    j["stream_layout"] = std::string(to_string(id.layout.rule));
  } else if (id.layout.multi()) {
    if (!j.contains("rope_scaling")) j["rope_scaling"] = {{"rope_type", "default"}};
    j["rope_scaling"]["mrope_section"] = id.layout.section;
    if (id.layout.rule == stream_rule::mrope_interleaved) j["rope_scaling"]["mrope_interleaved"] = true;
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
          {"position_streams",
           {{"count", id.streams},
            {"layout", std::string(to_string(id.layout.rule))},
            {"section", id.layout.section},
            {"pairs_on_one_stream_only", id.stream_distinct_pairs}}},
          {"attention_factor", {{"value", id.attention_factor}, {"spread", id.attention_spread}}},
          {"offset", {{"value", id.offset}, {"confidence", id.offset_confidence}}},
          {"recipe", reports::to_json(rf)},
          {"audit_passes", id.audit_passed},
          {"spec", spec_json(id)}};
}

std::string identification_text(const identification& id) {
  std::string s = "ropecheck identify\n\n";
  s += fmt::format("  rotary dims              {} of {} (confidence {:.3f})\n", id.rotary_dim, id.head_dim, id.rotary_confidence);
  s += fmt::format("  pairing                  {} (confidence {:.3f})\n", to_string(id.pair), id.pairing_confidence);
  if (id.base_undetermined)
    s += fmt::format("  base θ                   {:.9g} (nominal: every pair is at frequency index 0, which any base gives "
                     "the same frequency)\n", id.base);
  else
    s += fmt::format("  base θ                   {:.9g} (max relative residual of θ_j {:.2e})\n", id.base, id.frequency_residual);
  s += fmt::format("  scaling                  {}\n", id.explicit_frequencies ? "none named fits: explicit per-pair θ_j"
                                                      : id.linear_factor != 1 ? fmt::format("linear, factor {:.9g}", id.linear_factor)
                                                                              : std::string("none"));
  if (id.streams > 1)
    s += fmt::format("  position streams         {}: {} ({} of {} pairs follow one stream alone)\n", id.streams,
                     describe(id.layout), id.stream_distinct_pairs, id.rotary_dim / 2);
  s += fmt::format("  attention factor         {:.9g} (spread {:.2e})\n", id.attention_factor, id.attention_spread);
  s += fmt::format("  position offset          {:+d} (confidence {:.3f})\n", id.offset, id.offset_confidence);
  const reports::recipe_fit& rf = id.recipe;
  s += fmt::format("  recipe                   {} ({:.1f}% bit for bit)\n", reports::recipe_text(rf),
                   100 * rf.bit_exact);
  s += fmt::format("  audit against this spec  {}\n", id.audit_passed ? "pass" : "fail");
  return s;
}

}  // namespace ropecheck::audit
