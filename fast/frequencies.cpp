// θ_j = base^(−2j/rotary_dim) (RoFormer eq. 15), and the scaled θ'_j and attention factor of
// every rope_scaling type (docs/scaling.md), in long double, each rounded once to double.
#include "fast/frequencies.h"
#include "spec/stream_layout.h"

#include <algorithm>
#include <cmath>
#include <variant>

namespace ropecheck::fast {
namespace {

// Everything below runs in long double (64-bit significand on x86-64) and rounds once to
// double at the end: the scaled θ_j then stay within a couple of double ulps of exact.
using wide = long double;
constexpr wide two_pi = 6.283185307179586476925286766559005768L;

// θ_j by std::pow in long double. Doing it in double would first round the exponent −2j/d,
// and that error is multiplied by ln(base) (≈16 for 1e7) in θ_j and then by m in the angle: at
// m = 2^24 it reaches ~2^-25 rad, half an ulp of a float cos. In long double it stays far below
// the final rounding to double.
std::vector<wide> wide_theta(int d, wide base) {
  std::vector<wide> theta(static_cast<std::size_t>(std::max(d, 0) / 2));
  for (int i = 0; i < d / 2; ++i) theta[static_cast<std::size_t>(i)] = std::pow(base, -2.0L * i / d);
  return theta;
}

std::vector<double> rounded(const std::vector<wide>& theta) {
  return std::vector<double>(theta.begin(), theta.end());
}

// YaRN's g(s, m) = 0.1·m·ln s + 1 for s > 1, else 1.
wide yarn_g(wide s, wide m) { return s <= 1 ? 1.0L : 0.1L * m * std::log(s) + 1.0L; }

wide ratio(const factor_ratio& s) { return static_cast<wide>(s.numerator) / static_cast<wide>(s.denominator); }

// θ'_j and A of one scaling type (rope_spec.h's rope_scaling alternatives), one overload each.
struct scaled {
  std::vector<wide> theta;
  wide attention_factor = 1;
};

struct frequency_function {
  const rope_spec& spec;
  std::int64_t length;  // the sequence length (only dynamic and longrope read it)

  int d() const { return spec.rotary_dim > 0 ? spec.rotary_dim : 0; }
  wide base() const { return spec.base; }
  wide dim_ratio() const { return static_cast<wide>(d()) / (d() - 2); }  // d/(d−2), NTK's exponent

  scaled operator()(const no_scaling&) const { return {wide_theta(d(), base())}; }

  scaled operator()(const linear_scaling& sc) const {
    auto theta = wide_theta(d(), base());
    for (auto& t : theta) t /= sc.factor;
    return {theta};
  }

  scaled operator()(const ntk_scaling& sc) const {
    return {wide_theta(d(), base() * std::pow(static_cast<wide>(sc.factor), dim_ratio()))};
  }

  scaled operator()(const dynamic_scaling& sc) const {
    const wide s = sc.factor;
    const wide max_pos = static_cast<wide>(sc.max_position_embeddings);
    const wide l = sc.convention == scaling_convention::vllm ? s * max_pos
                   : length > sc.max_position_embeddings    ? static_cast<wide>(length)
                                                            : max_pos;
    return {wide_theta(d(), base() * std::pow(s * l / max_pos - (s - 1), dim_ratio()))};
  }

  scaled operator()(const yarn_scaling& sc) const {
    scaled r{wide_theta(d(), base())};
    const wide l0 = static_cast<wide>(sc.original_max_position_embeddings);
    const wide s = ratio(sc.factor);
    const wide log_base = std::log(base());
    const auto corr = [&](wide r) { return d() * std::log(l0 / (two_pi * r)) / (2 * log_base); };
    wide low = corr(sc.beta_fast);
    wide high = corr(sc.beta_slow);
    if (sc.truncate || sc.convention == scaling_convention::deepseek ||
        sc.convention == scaling_convention::ggml) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0L);
    high = std::min(high, static_cast<wide>(d() - 1));
    wide span = high - low;
    if (sc.convention == scaling_convention::ggml) span = std::max(span, 0.001L);
    else if (high == low) span = 0.001L;
    for (std::size_t i = 0; i < r.theta.size(); ++i) {
      const wide ramp = std::clamp((static_cast<wide>(i) - low) / span, 0.0L, 1.0L);
      const wide e = (1 - ramp) * sc.extrapolation_factor;
      r.theta[i] = r.theta[i] / s * (1 - e) + r.theta[i] * e;
    }
    const wide attn = sc.attn_factor;
    wide& factor = r.attention_factor;
    if (sc.attention_factor) factor = *sc.attention_factor;
    else if (sc.convention == scaling_convention::deepseek)
      factor = yarn_g(s, sc.mscale.value_or(1)) / yarn_g(s, sc.mscale_all_dim.value_or(0)) * attn;
    else if (sc.convention == scaling_convention::ggml)
      factor = sc.extrapolation_factor != 0 ? attn * yarn_g(s, 1) : attn;
    else if (sc.mscale.value_or(0) != 0 && sc.mscale_all_dim.value_or(0) != 0)
      factor = yarn_g(s, *sc.mscale) / yarn_g(s, *sc.mscale_all_dim) * attn;
    else factor = yarn_g(s, 1) * attn;
    return r;
  }

  scaled operator()(const llama3_scaling& sc) const {
    scaled r{wide_theta(d(), base())};
    const wide s = sc.factor;
    const wide l0 = static_cast<wide>(sc.original_max_position_embeddings);
    const wide lf = sc.low_freq_factor, hf = sc.high_freq_factor;
    for (auto& t : r.theta) {
      const wide wavelength = two_pi / t;
      if (wavelength < l0 / hf) continue;
      if (wavelength > l0 / lf || hf == lf) t /= s;  // hf = lf (Llama 4): the band is empty
      else {
        const wide smooth = (l0 / wavelength - lf) / (hf - lf);
        t = (1 - smooth) * t / s + smooth * t;
      }
    }
    return r;
  }

  scaled operator()(const longrope_scaling& sc) const {
    const std::int64_t l0 = sc.original_max_position_embeddings;
    const wide s = ratio(sc.factor);  // Phi-3: max_position_embeddings / L0 (the reader's)
    const bool long_regime = sc.convention == scaling_convention::vllm ? length - 1 > l0 : length > l0;
    const auto& f = long_regime ? sc.long_factor : sc.short_factor;
    scaled r{std::vector<wide>(static_cast<std::size_t>(d() / 2))};
    for (int i = 0; i < d() / 2 && static_cast<std::size_t>(i) < f.size(); ++i)
      r.theta[static_cast<std::size_t>(i)] = 1 / (f[static_cast<std::size_t>(i)] * std::pow(base(), 2.0L * i / d()));
    const auto regime_mscale = long_regime ? sc.long_mscale : sc.short_mscale;
    if (sc.attention_factor) r.attention_factor = *sc.attention_factor;
    else if (regime_mscale) r.attention_factor = *regime_mscale;
    else r.attention_factor = s <= 1 ? 1.0L : std::sqrt(1 + std::log(s) / std::log(static_cast<wide>(l0)));
    return r;
  }

  scaled operator()(const proportional_scaling& sc) const {  // θ_j / s for rotated_pairs, then 0
    scaled r{wide_theta(d(), base())};
    for (std::size_t i = 0; i < r.theta.size(); ++i)
      r.theta[i] = static_cast<int>(i) < sc.rotated_pairs ? r.theta[i] / sc.factor : 0.0L;
    return r;
  }
};

}  // namespace

rope_frequencies scaled_frequencies(const rope_spec& spec, std::int64_t sequence_length) {
  const std::int64_t length = spec.sequence_length > 0 ? spec.sequence_length : sequence_length;
  scaled r = std::visit(frequency_function{spec, length}, spec.scaling);
  if (spec.attention_factor) r.attention_factor = *spec.attention_factor;
  return {pair_frequencies(spec.streams, rounded(r.theta)), static_cast<double>(r.attention_factor)};
}

std::vector<double> inverse_frequencies(const rope_spec& spec) {
  return rounded(wide_theta(spec.rotary_dim, spec.base));
}

rope_frequencies unscaled_frequencies(const rope_spec& spec) {
  return {pair_frequencies(spec.streams, inverse_frequencies(spec)), 1.0};
}

}  // namespace ropecheck::fast
