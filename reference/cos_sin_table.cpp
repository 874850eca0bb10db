// The double tier's cos/sin table from MPFR anchors and double-double angle addition
// (cos_sin_table.h; error bound derived in docs/double-tier.md, "Building the table").
#include "reference/cos_sin_table.h"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "reference/double_double.h"

namespace ropecheck::reference {
namespace {

// Tolerance of the rounding test, in units of A: 4× the proven 16·2^-106 (docs/double-tier.md).
constexpr double combined_error = 0x1p-100;

// Runs work(first, last) over [0, count) in up to `threads` contiguous chunks.
template <class Work>
void parallel_for(std::size_t count, int threads, std::size_t min_chunk, Work work) {
  const std::size_t workers = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::max(threads, 1)), 1, std::max<std::size_t>(count / min_chunk, 1));
  const std::size_t chunk = (count + workers - 1) / workers;
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w)
    pool.emplace_back([&, w] {
      work(std::min(w * chunk, count), std::min((w + 1) * chunk, count));
      mpfr_free_cache();  // MPFR keeps per-thread constant caches (π)
    });
  work(0, std::min(chunk, count));
  for (auto& t : pool) t.join();
  mpfr_free_cache();
}

// A·cos and A·sin of `angle` at 266 bits (A = 1 skips the product).
void sin_cos(const mp_real& angle, const mp_real& factor, mp_real& c, mp_real& s) {
  mpfr_sin_cos(s.backend().data(), c.backend().data(), angle.backend().data(), MPFR_RNDN);
  if (factor != 1) {
    c *= factor;
    s *= factor;
  }
}

dd::number to_double_double(const mp_real& x) {
  const double hi = mpfr_get_d(x.backend().data(), MPFR_RNDN);
  const mp_real rest = x - hi;  // exact: x has 266 bits and hi is x's leading 53
  return {hi, mpfr_get_d(rest.backend().data(), MPFR_RNDN)};
}

// True when every real within `error` of v.hi + v.lo rounds to v.hi. Rounding is monotone and
// the half gaps are exact, so the comparisons, although rounded, never accept a wrong case.
bool rounds_to_hi(dd::number v, double error) {
  if (!(std::fabs(v.hi) >= 0x1p-1000 && std::fabs(v.hi) <= 0x1p1000)) return false;  // NaN too
  // The neighbours of a normal, non-extreme double are one step of its bits away (nextafter
  // without the call); which one is above depends on the sign.
  const auto bits = std::bit_cast<std::uint64_t>(v.hi);
  const double away = std::bit_cast<double>(bits + 1), toward = std::bit_cast<double>(bits - 1);
  const double above = v.hi > 0 ? away : toward, below = v.hi > 0 ? toward : away;
  const double up = above - v.hi, down = v.hi - below;
  return v.lo + error < up / 2 && v.lo - error > -down / 2;
}

// The k minimising (distinct h) + 2^k anchors per frequency, or 0 if that is not fewer than
// one evaluation per position.
int choose_split(std::span<const std::int64_t> positions) {
  const auto n = static_cast<std::int64_t>(positions.size());
  int best = 0;
  std::int64_t best_cost = n;
  for (int k = 1; k < 62 && (std::int64_t{1} << k) < n; ++k) {
    std::int64_t high_parts = 0;
    for (std::size_t r = 0; r < positions.size(); ++r)
      if (r == 0 || (positions[r] >> k) != (positions[r - 1] >> k)) ++high_parts;
    const std::int64_t cost = high_parts + (std::int64_t{1} << k);
    if (cost < best_cost) {
      best = k;
      best_cost = cost;
    }
  }
  return best;
}

struct anchor {
  dd::number c, s;
};

}  // namespace

cos_sin_table_stats fill_cos_sin_table(std::span<const std::int64_t> positions,
                                       std::span<const mp_real> theta, const mp_real& factor,
                                       std::span<double> out, int threads) {
  const std::size_t pairs = theta.size();
  cos_sin_table_stats stats;
  stats.entries = static_cast<std::int64_t>(positions.size() * pairs);
  const double a = factor.convert_to<double>();
  // Far from 1, A would push the anchors' low words into gradual underflow.
  const int k = std::fabs(a) > 0x1p-500 && std::fabs(a) < 0x1p500 ? choose_split(positions) : 0;
  stats.split_bits = k;

  const auto direct = [&](std::size_t r, std::size_t j, mp_real& angle, mp_real& c, mp_real& s) {
    angle = mp_real(positions[r]) * theta[j];
    sin_cos(angle, factor, c, s);
    out[(r * pairs + j) * 2] = c.convert_to<double>();  // mpfr_get_d, round to nearest
    out[(r * pairs + j) * 2 + 1] = s.convert_to<double>();
  };
  if (k == 0) {
    parallel_for(positions.size(), threads, 256, [&](std::size_t first, std::size_t last) {
      mp_real angle, c, s;
      for (std::size_t r = first; r < last; ++r)
        for (std::size_t j = 0; j < pairs; ++j) direct(r, j, angle, c, s);
    });
    stats.mpfr_sin_cos = stats.entries;
    return stats;
  }

  // m = h·2^k + b with b in [0, 2^k): h = m >> k (floor, also for negative m).
  const std::int64_t low_count = std::int64_t{1} << k;
  std::vector<std::int64_t> highs;           // distinct h, ascending
  std::vector<std::size_t> high_of(positions.size());
  std::vector<char> low_used(static_cast<std::size_t>(low_count), 0);
  for (std::size_t r = 0; r < positions.size(); ++r) {
    const std::int64_t h = positions[r] >> k;
    if (highs.empty() || highs.back() != h) highs.push_back(h);
    high_of[r] = highs.size() - 1;
    low_used[static_cast<std::size_t>(positions[r] - h * low_count)] = 1;
  }
  std::vector<std::int64_t> lows;
  for (std::int64_t b = 0; b < low_count; ++b)
    if (low_used[static_cast<std::size_t>(b)]) lows.push_back(b);
  std::vector<std::size_t> low_index(static_cast<std::size_t>(low_count));
  for (std::size_t i = 0; i < lows.size(); ++i) low_index[static_cast<std::size_t>(lows[i])] = i;

  // Anchors: A·e^{i·h·2^k·θ_j} for every h, e^{i·b·θ_j} for every b used.
  std::vector<anchor> high_anchors(highs.size() * pairs), low_anchors(lows.size() * pairs);
  const mp_real one(1);
  const std::size_t anchor_count = highs.size() + lows.size();
  parallel_for(anchor_count, threads, 16, [&](std::size_t first, std::size_t last) {
    mp_real angle, c, s;
    for (std::size_t i = first; i < last; ++i) {
      const bool high = i < highs.size();
      const std::int64_t base = high ? highs[i] * low_count : lows[i - highs.size()];
      anchor* row = high ? &high_anchors[i * pairs] : &low_anchors[(i - highs.size()) * pairs];
      for (std::size_t j = 0; j < pairs; ++j) {
        angle = mp_real(base) * theta[j];
        sin_cos(angle, high ? factor : one, c, s);
        row[j] = {to_double_double(c), to_double_double(s)};
      }
    }
  });
  stats.mpfr_sin_cos = static_cast<std::int64_t>(anchor_count * pairs);

  // Products; entries whose rounding the product cannot decide are redone directly.
  const double error = combined_error * std::fabs(a);
  std::mutex fallback_mutex;
  std::vector<std::pair<std::size_t, std::size_t>> fallbacks;
  parallel_for(positions.size(), threads, 256, [&](std::size_t first, std::size_t last) {
    std::vector<std::pair<std::size_t, std::size_t>> undecided;
    for (std::size_t r = first; r < last; ++r) {
      const anchor* hr = &high_anchors[high_of[r] * pairs];
      const auto b = static_cast<std::size_t>(positions[r] - highs[high_of[r]] * low_count);
      const anchor* lr = &low_anchors[low_index[b] * pairs];
      for (std::size_t j = 0; j < pairs; ++j) {
        const anchor& h = hr[j];
        const anchor& l = lr[j];
        const dd::number c = dd::add(dd::mul(h.c, l.c), dd::neg(dd::mul(h.s, l.s)));
        const dd::number s = dd::add(dd::mul(h.s, l.c), dd::mul(h.c, l.s));
        if (rounds_to_hi(c, error) && rounds_to_hi(s, error)) {
          out[(r * pairs + j) * 2] = c.hi;
          out[(r * pairs + j) * 2 + 1] = s.hi;
        } else {
          undecided.emplace_back(r, j);
        }
      }
    }
    const std::lock_guard lock(fallback_mutex);
    fallbacks.insert(fallbacks.end(), undecided.begin(), undecided.end());
  });
  mp_real angle, c, s;
  for (const auto& [r, j] : fallbacks) direct(r, j, angle, c, s);
  stats.fallbacks = static_cast<std::int64_t>(fallbacks.size());
  stats.combined = stats.entries - stats.fallbacks;
  stats.mpfr_sin_cos += stats.fallbacks;
  return stats;
}

}  // namespace ropecheck::reference
