// identify (identify.h). The rotation of pair j at row r is y = x·A·e^{iφ} with x = x_a + i·x_b,
// so z = Σ_heads conj(x)·y = A·Σ|x|²·e^{iφ} gives φ = (m + offset)·θ_j (mod 2π) and A. θ_j comes
// from angle differences between rows — first across the smallest position gap, then refined
// against rows ever further away (each step's prediction error stays far below π, so the
// wrap-around is resolved) — and is independent of the offset. The convention behind θ_j (a
// snapped base, a named scaling) is identify_conventions.h's; the offset is then read against
// its θ.
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
#include "audit/identify_conventions.h"
#include "io/io_error.h"
#include "spec/pair_index.h"
#include "spec/spec_reader.h"
#include "spec/stream_layout.h"

namespace ropecheck::audit {
namespace {

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

// How far one row's angle may sit from m·θ: the output's noise, plus what a float32 recipe
// leaves in the angle itself — m·θ rounded to float32 (half a unit of 2^-24 relative) and θ_j
// itself rounded — which grows with the angle (4 units of 2^-24 of |m·θ| covers both).
double angle_tolerance(double noise, double angle) { return noise + 4 * 0x1p-24 * std::fabs(angle); }

// Does pair j turn by p_s·θ at (nearly) every tuple? The angle of an output is within
// angle_tolerance of p_s·θ; that is far below what a wrong stream's position differences give
// wherever the streams differ by more than the tolerance's share of a turn.
bool follows(const tuple_angles& t, int s, int j, double theta, double noise) {
  std::size_t within = 0;
  for (std::size_t i = 0; i < t.p.size(); ++i) {
    const double angle = static_cast<double>(t.p[i][s]) * theta;
    within += std::fabs(wrap(std::arg(t.z[i][j]) - angle)) <= angle_tolerance(noise, angle);
  }
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
  } else if (streams == 4) {  // ggml's IMROPE (t, h, w, e): every section split, once per map
    std::vector<std::vector<std::int32_t>> seen;
    for (int s0 = 1; s0 <= pairs - 2; ++s0)
      for (int s1 = 1; s0 + s1 <= pairs - 1; ++s1) {
        const stream_layout l{stream_rule::mrope_interleaved_4, {s0, s1, pairs - s0 - s1}};
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
  if (streams < 1 || streams > 4)
    throw io_error(in.positions_file, "shape",
                   "does not give 1, 2 (row, column), 3 (t, h, w) or 4 (ggml's t, h, w, e) position streams",
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
    // A stream past the first at 0 in every row (llama.cpp's fourth IMROPE stream e): a pair
    // that turns by nothing at any row is that stream's, R(0), not a varying stream's at θ = 0
    // (RoPE has no zero frequency). Its θ_j cannot be read (unread below).
    for (int s = 1; s < streams; ++s) {
      if (!std::all_of(t.p.begin(), t.p.end(), [&](const std::vector<std::int64_t>& p) { return p[s] == 0; })) continue;
      for (int j = 0; j < pairs; ++j)
        if (std::all_of(t.z.begin(), t.z.end(), [&](const auto& row) { return std::fabs(std::arg(row[j])) <= noise; })) {
          for (int other = 0; other < streams; ++other) fitting[j][other] = other == s;
          per_stream[j][s] = theta_fit{0, 1};
        }
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
                     "mrope_interleaved, mrope_interleaved_4, vision rows/columns first, alternating)",
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
  // θ_j per pair (its stream's fit), how far each reached, and the largest |position| its
  // stream holds (a float32 recipe's angle error grows with it).
  id.theta.assign(static_cast<std::size_t>(pairs), 0);
  std::vector<double> reach(static_cast<std::size_t>(pairs)), farthest(static_cast<std::size_t>(pairs), 0);
  // A pair that turns by no more than the output's noise over its reach cannot be read (a
  // 16-bit output at close positions leaves its lowest frequencies unturned): its θ_j is set to
  // that resolution, which the evidence below then counts as unmeasured. No pair turning at all
  // is no rotation by the position.
  int unread = 0;
  id.theta_read.assign(static_cast<std::size_t>(pairs), true);
  for (int j = 0; j < pairs; ++j) {
    id.theta[j] = std::fabs(fits[j].theta);
    reach[j] = fits[j].reach;
    for (const auto& p : t.p) farthest[j] = std::max(farthest[j], std::fabs(static_cast<double>(p[stream_of[j]])));
    if (!(id.theta[j] * reach[j] > noise && std::isfinite(id.theta[j])))
      id.theta[j] = noise / reach[j], id.theta_read[j] = false, ++unread;
  }
  if (unread == pairs)
    throw io_error(in.y_file, "values", "turn pair 0 by the same angle at every position",
                   fmt::format("{}", std::fabs(fits[0].theta)),
                   "no pair's frequency can be read: is it rotated by the position?");

  // The evidence a named convention is judged on (identify_conventions.h). θ_j's relative
  // uncertainty is the angle tolerance at its farthest position over the widest difference it
  // was read across (the rows' differences give θ_j, so a decode block far from 0 is read as
  // well as one near it, only its float32 angle noise is larger); θ_j read to no better than 5%
  // (too few radians to tell) constrains nothing, and one read to 5% still tells a frequency
  // order apart (a vision layout's 0.75 from 1 in bfloat16). A model fits when it leaves at
  // most 4 such uncertainties plus what a float32 recipe's θ_j carries: (f(j) + 4) units of
  // 2^-23 (a repeated product of a float32 ratio, ggml's, rounds f(j) times; pow and a scaling
  // a few).
  const auto evidence_for = [&](const std::vector<int>& f) {
    frequency_evidence e;
    e.theta = id.theta, e.index = f, e.rotary_dim = rotary, e.head_dim = d;
    e.attention = id.attention_factor, e.attention_tolerance = noise;
    for (const auto& p : t.p)
      for (const std::int64_t m : p)
        e.sequence_length = std::max(e.sequence_length, m < std::numeric_limits<std::int64_t>::max() ? m + 1 : m);
    for (int j = 0; j < pairs; ++j) {
      // The line fit weighs pairs by the output's noise alone (a float64 kernel's θ_j are then
      // read to their full precision); the tolerance adds the float32 angle's.
      e.precision.push_back(noise / (id.theta[j] * reach[j]));
      const double precision = angle_tolerance(noise, farthest[j] * id.theta[j]) / (id.theta[j] * reach[j]);
      e.tolerance.push_back(precision > 0.05 ? std::numeric_limits<double>::infinity()
                                             : 4 * precision + (f[j] + 4) * 0x1p-23);
    }
    return e;
  };
  // The rule (among candidates sharing the stream map) whose frequency order a named
  // convention fits; none fitting leaves explicit θ_j (one candidate only).
  struct layout_fit {
    stream_layout layout;
    std::vector<int> f;
    named_convention convention;
  };
  std::vector<layout_fit> named;
  std::optional<layout_fit> fallback;
  for (const stream_layout& l : candidates) {
    layout_fit b{l, std::vector<int>(static_cast<std::size_t>(pairs)), {}};
    for (int j = 0; j < pairs; ++j) b.f[j] = streams == 1 ? j : frequency_of_pair(l, rotary, j);
    b.convention = name_convention(evidence_for(b.f));
    if (b.convention.type != "explicit") named.push_back(std::move(b));
    else if (!fallback) fallback = std::move(b);
  }
  if (named.size() > 1)
    throw io_error(in.y_file, "values", "fit the frequency order of more than one stream layout",
                   fmt::format("{} and {}", describe(named[0].layout), describe(named[1].layout)),
                   "a base fits either order: the layouts cannot be told apart");
  if (named.empty() && candidates.size() > 1)
    throw io_error(in.y_file, "values", "fit no base in the frequency order of any of the stream layouts",
                   fmt::format("{} or {}", describe(candidates[0]), describe(candidates[1])),
                   "with no named frequencies the order (rows first or alternating) cannot be told");
  const layout_fit chosen = named.empty() ? *fallback : named.front();
  const named_convention& c = chosen.convention;
  id.convention = c;
  id.layout = chosen.layout;
  id.base = c.base;
  id.linear_factor = c.type == "linear" ? c.factor : 1;
  id.explicit_frequencies = c.type == "explicit" || c.type == "longrope";
  id.base_undetermined = c.base_undetermined;
  id.frequency_residual = c.frequency_residual;
  // A named scaling's own attention factor (YaRN's 0.1·ln s + 1) is not written again; any
  // other is, as the spec's top-level attention_factor.
  if (c.type != "explicit" && std::fabs(id.attention_factor / c.attention_factor - 1) <= noise)
    id.attention_factor = c.attention_factor;
  else
    id.attention_written = true;

  // Offset: (φ − m·θ_j)/θ_j over the lowest frequencies, where it cannot wrap; m is the pair's
  // own stream's position. θ_j is the named convention's where it is taken as exact (a snapped
  // base, or a decided convention), else the measured one. A pair votes only where that reads
  // the offset to a quarter position: its angle tolerance over θ_j, plus for a measured θ_j its
  // uncertainty times the farthest position — the lowest frequencies of a 16-bit output, whose
  // angles are noise, do not vote.
  {
    const bool exact_model = !id.explicit_frequencies && (c.base_snapped || c.confidence == 1);
    const auto theta_of = [&](int j) {
      return exact_model ? c.model_theta[static_cast<std::size_t>(chosen.f[j])] : id.theta[j];
    };
    std::vector<int> lowest;
    for (int j = 0; j < pairs; ++j) {
      const double th = theta_of(j), tolerance = angle_tolerance(noise, farthest[j] * th);
      const double spread = tolerance / th + (exact_model ? 0 : tolerance / (th * reach[j]) * farthest[j]);
      if (id.theta_read[j] && spread <= 0.25) lowest.push_back(j);
    }
    std::stable_sort(lowest.begin(), lowest.end(), [&](int a, int b) { return chosen.f[a] > chosen.f[b]; });
    std::map<std::int64_t, int> votes;
    int cast = 0;
    for (std::size_t k = 0; k < lowest.size() && k < 8; ++k) {
      const int j = lowest[k];
      const double th = theta_of(j);
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
  const auto audit_under = [&](identification& candidate) {
    try {
      candidate.spec = parse_spec(spec_json(candidate), "identify");
    } catch (const spec_error& e) {
      throw io_error(in.y_file, "values", "do not determine a spec ropecheck can check", "the inferred spec", e.what());
    }
    audit_input a;
    a.spec = candidate.spec;
    a.x = in.x;
    a.y = in.y;
    a.heads = in.heads;
    a.tokens_per_sequence = rows;
    const auto shifted = [&](std::int64_t p) {
      std::int64_t out = 0;
      if (__builtin_add_overflow(p, candidate.offset, &out))
        throw io_error(in.positions_file, "values", "overflow int64 with the inferred position offset",
                       fmt::format("{} + {}", p, candidate.offset));
      return out;
    };
    for (std::int64_t r = 0; r < rows; ++r) a.positions.push_back(shifted(in.positions[static_cast<std::size_t>(r)]));
    if (streams > 1)
      for (const std::int64_t p : in.positions) a.stream_positions.push_back(shifted(p));
    a.judged = in.judged;
    a.x_file = in.x_file;
    a.y_file = in.y_file;
    const reports::audit_report r = run_audit(a);
    candidate.recipe = r.recipe;
    candidate.audit_passed = r.passed;
  };
  audit_under(id);
  // A snapped base (or linear factor) stands when the recipe search reproduces Y under it as
  // well as under the fitted value: ggml's float32 product of powf(10000, −2/d) is reproduced
  // under 10000, not under the 9999.98 it fits to. When the fitted value reproduces Y better (by
  // more than the recipe search's own 5%), the fit was the convention (an unconventional base
  // of a float64 kernel) and is kept, with the reason. A recipe that reproduces Y bit for bit
  // under the snap (99.9% of the sample) cannot be bettered: the second audit is skipped.
  if ((c.type == "none" || c.type == "linear") && (c.base_snapped || std::fabs(c.factor / c.raw_factor - 1) > 1e-12) &&
      id.recipe.bit_exact < 0.999) {
    identification fitted = id;
    fitted.base = fitted.convention.base = c.raw_base;
    fitted.convention.base_snapped = false;
    if (c.type == "linear") {
      fitted.linear_factor = fitted.convention.factor = c.raw_factor;
      fitted.convention.rope_scaling["factor"] = c.raw_factor;
    }
    audit_under(fitted);
    if (fitted.recipe.residual_units < 0.95 * id.recipe.residual_units) {
      fitted.convention.snap_refused =
          fmt::format("{} fits θ_j, but the recipe found reproduces Y to {:.3g} units under it and to {:.3g} under the fit",
                      describe(c), id.recipe.residual_units, fitted.recipe.residual_units);
      id = std::move(fitted);
    }
  }
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
    // Named LongRoPE: its context lengths give s = L_max / L0 and its attention factor.
    if (id.convention.type == "longrope") {
      j["rope_scaling"].erase("factor");
      j["rope_scaling"].update(id.convention.rope_scaling);
      j.update(id.convention.top_level);
    }
  } else if (!id.convention.rope_scaling.is_null()) {
    j["rope_scaling"] = id.convention.rope_scaling;
    if (id.convention.top_level.is_object()) j.update(id.convention.top_level);
  }
  // M-RoPE as a config writes it (mrope_section in the RoPE block); a vision layout as
  // ropecheck's own top-level "stream_layout" key (docs/scaling.md, "Spec keys").
  if (id.layout.vision()) {
    j["stream_layout"] = std::string(to_string(id.layout.rule));
  } else if (id.layout.multi()) {
    if (!j.contains("rope_scaling")) j["rope_scaling"] = {{"rope_type", "default"}};
    j["rope_scaling"]["mrope_section"] = id.layout.section;
    if (id.layout.rule != stream_rule::mrope_sections) j["rope_scaling"]["mrope_interleaved"] = true;
    if (id.layout.rule == stream_rule::mrope_interleaved_4) j["stream_layout"] = std::string(to_string(id.layout.rule));
  }
  if (id.attention_written) j["attention_factor"] = id.attention_factor;
  return j;
}

namespace {
nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
// θ_j as fitted, null where the pair turned too little to be read.
nlohmann::json measured_frequencies(const identification& id) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t j = 0; j < id.theta.size(); ++j)
    out.push_back(j < id.theta_read.size() && !id.theta_read[j] ? nlohmann::json(nullptr) : nlohmann::json(id.theta[j]));
  return out;
}
}  // namespace

nlohmann::json identification_json(const identification& id) {
  const reports::recipe_fit& rf = id.recipe;
  return {{"report", "identify"},
          {"schema_version", 1},
          {"head_dim", id.head_dim},
          {"rotary_dim", {{"value", id.rotary_dim}, {"confidence", id.rotary_confidence}}},
          // The report schema's spelling (half_split), as the audit's; the spec keeps the reader's ("half").
          {"pairing", {{"value", id.pair == pairing::adjacent ? "adjacent" : "half_split"}, {"confidence", id.pairing_confidence}}},
          {"base",
           {{"value", id.base},
            {"raw", id.convention.raw_base},
            {"snapped", id.convention.base_snapped},
            {"snap_refused", id.convention.snap_refused},
            {"relative_uncertainty", finite_or_null(id.convention.base_uncertainty)},
            {"frequency_residual", id.frequency_residual}}},
          {"scaling",
           {{"type", id.convention.type},
            {"factor", id.convention.factor},
            {"rope_scaling", id.convention.rope_scaling},
            {"confidence", id.convention.confidence},
            {"also_fit", id.convention.also_fit},
            {"undecided", id.convention.undecided}}},
          {"inverse_frequencies", measured_frequencies(id)},
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
  else if (id.convention.base_snapped)
    s += fmt::format("  base θ                   {:.9g} (snapped from the fit {:.12g}; the data allow ±{:.1e} of it; max "
                     "relative residual of θ_j {:.2e})\n", id.base, id.convention.raw_base,
                     id.convention.base_uncertainty, id.frequency_residual);
  else
    s += fmt::format("  base θ                   {:.9g} (max relative residual of θ_j {:.2e}){}\n", id.base,
                     id.frequency_residual, id.convention.snap_refused.empty() ? "" : "; not snapped: " + id.convention.snap_refused);
  if (id.convention.type == "longrope")
    s += fmt::format("  scaling                  longrope: per-pair factors as fitted, {} (confidence {:.2f})\n",
                     describe(id.convention), id.convention.confidence);
  else if (id.explicit_frequencies)
    s += "  scaling                  none named fits: explicit per-pair θ_j (longrope factors)\n";
  else
    s += fmt::format("  scaling                  {} (confidence {:.2f})\n",
                     id.convention.rope_scaling.is_null() ? std::string("none") : id.convention.rope_scaling.dump(),
                     id.convention.confidence);
  if (!id.convention.undecided.empty()) s += "  undecided                " + id.convention.undecided + "\n";
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
