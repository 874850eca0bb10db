// Scaled frequencies at 266 bits (formulas in scaling.h and docs/scaling.md). Computed in
// mp_real whatever Real is, then rounded once, so the double instantiation is the correctly
// rounded (up to one rounding) value of the exact formula.
#include "reference/scaling.h"

#include <fmt/format.h>

#include <boost/math/constants/constants.hpp>
#include <variant>

#include "reference/real.h"
#include "reference/rotary_params.h"

namespace ropecheck::reference {
namespace {

// YaRN's magnitude correction g(s, m) = 0.1·m·ln s + 1 for s > 1, else 1 (Peng et al., eq. 22;
// HF get_mscale, DeepSeek yarn_get_mscale).
mp_real yarn_g(const mp_real& s, const mp_real& m) {
  if (s <= 1) return mp_real(1);
  return mp_real("0.1") * m * log(s) + 1;
}

std::int64_t effective_length(const rope_spec& spec, std::int64_t sequence_length) {
  const std::int64_t length = spec.sequence_length > 0 ? spec.sequence_length : sequence_length;
  if (depends_on_sequence_length(spec) && length < 1)
    throw reference_error(fmt::format(
        "sequence_length: {} is not >= 1, and rope_scaling \"{}\" depends on it (give "
        "'sequence_length' in the spec or a length in the call)",
        length, to_string(type_of(spec.scaling))));
  return length;
}

// θ_i = q^i with q = base^(-2/d), by repeated multiplication: one MPFR pow per spec instead of
// one per i (a pow costs ~10 µs at 266 bits, which made θ most of a property case's time).
// q is correctly rounded and each product rounds once, so θ_i is within 2i·2^-266 < d·2^-266
// relative of base^(-2i/d): 2^-257 at d = 512, far inside the 2^-200 the reference promises.
std::vector<mp_real> plain_theta(int d, const mp_real& base) {
  std::vector<mp_real> theta;
  theta.reserve(static_cast<std::size_t>(d / 2));
  const mp_real ratio = pow(base, mp_real(-2) / d);
  mp_real power(1);
  for (int i = 0; i < d / 2; ++i) {
    theta.push_back(power);
    power *= ratio;
  }
  return theta;
}

mp_real exact(const factor_ratio& s) { return mp_real(s.numerator) / mp_real(s.denominator); }

// One form per scaling type, chosen by the spec's rope_scaling alternative (overloads below).
struct form {
  const rope_spec& spec;
  std::int64_t length;  // the sequence length (only dynamic and longrope read it)

  scaled_rotation<mp_real> operator()(const no_scaling&) const {
    return {plain_theta(spec.rotary_dim, mp_real(spec.base)), 1};
  }

  scaled_rotation<mp_real> operator()(const linear_scaling& sc) const {
    scaled_rotation<mp_real> r;
    for (const auto& theta : plain_theta(spec.rotary_dim, mp_real(spec.base)))
      r.inverse_frequencies.push_back(theta / mp_real(sc.factor));
    return r;
  }

  scaled_rotation<mp_real> operator()(const ntk_scaling& sc) const {
    const int d = spec.rotary_dim;
    return {plain_theta(d, mp_real(spec.base) * pow(mp_real(sc.factor), mp_real(d) / (d - 2))), 1};
  }

  scaled_rotation<mp_real> operator()(const dynamic_scaling& sc) const {
    const int d = spec.rotary_dim;
    const mp_real s(sc.factor);
    const mp_real max_pos(sc.max_position_embeddings);
    // vLLM builds one static table for L = s·max_position_embeddings.
    const mp_real l = sc.convention == scaling_convention::vllm ? s * max_pos
                      : length > sc.max_position_embeddings    ? mp_real(length)
                                                               : max_pos;
    return {plain_theta(d, mp_real(spec.base) * pow(s * l / max_pos - (s - 1), mp_real(d) / (d - 2))), 1};
  }

  scaled_rotation<mp_real> operator()(const yarn_scaling& sc) const {
    const int d = spec.rotary_dim;
    const mp_real base(spec.base);
    const mp_real l0(sc.original_max_position_embeddings);
    const mp_real s = exact(sc.factor);

    // corr(r) = d·ln(L0/(2πr)) / (2 ln b): the dimension whose wavelength fits r times in L0.
    const mp_real two_pi = 2 * boost::math::constants::pi<mp_real>();
    auto corr = [&](double r) { return d * log(l0 / (two_pi * mp_real(r))) / (2 * log(base)); };
    mp_real low = corr(sc.beta_fast);
    mp_real high = corr(sc.beta_slow);
    // DeepSeek's and ggml's code always floor/ceil; Hugging Face's only with truncate (default).
    if (sc.truncate || sc.convention == scaling_convention::deepseek ||
        sc.convention == scaling_convention::ggml) {
      low = floor(low);
      high = ceil(high);
    }
    if (low < 0) low = 0;
    if (high > d - 1) high = mp_real(d - 1);
    mp_real span = high - low;
    if (sc.convention == scaling_convention::ggml) {
      if (span < mp_real("0.001")) span = mp_real("0.001");  // ggml: MAX(0.001f, high - low)
    } else if (high == low) {
      span = mp_real("0.001");  // HF / DeepSeek: high += 0.001 when high == low
    }
    const mp_real ext(sc.extrapolation_factor);

    scaled_rotation<mp_real> r;
    const auto theta = plain_theta(d, base);
    for (int i = 0; i < d / 2; ++i) {
      mp_real ramp = (mp_real(i) - low) / span;
      if (ramp < 0) ramp = 0;
      if (ramp > 1) ramp = 1;
      const mp_real e = (1 - ramp) * ext;
      r.inverse_frequencies.push_back(theta[i] / s * (1 - e) + theta[i] * e);
    }

    const mp_real attn(sc.attn_factor);
    if (sc.attention_factor) {
      r.attention_factor = mp_real(*sc.attention_factor);
    } else if (sc.convention == scaling_convention::deepseek) {
      r.attention_factor = yarn_g(s, mp_real(sc.mscale.value_or(1))) /
                           yarn_g(s, mp_real(sc.mscale_all_dim.value_or(0))) * attn;
    } else if (sc.convention == scaling_convention::ggml) {
      r.attention_factor = sc.extrapolation_factor != 0 ? attn * yarn_g(s, mp_real(1)) : attn;
    } else if (sc.mscale.value_or(0) != 0 && sc.mscale_all_dim.value_or(0) != 0) {
      // Hugging Face: the ratio only when both are given and non-zero (Python truthiness).
      r.attention_factor =
          yarn_g(s, mp_real(*sc.mscale)) / yarn_g(s, mp_real(*sc.mscale_all_dim)) * attn;
    } else {
      r.attention_factor = yarn_g(s, mp_real(1)) * attn;
    }
    return r;
  }

  scaled_rotation<mp_real> operator()(const llama3_scaling& sc) const {
    const mp_real s(sc.factor), lf(sc.low_freq_factor), hf(sc.high_freq_factor);
    const mp_real l0(sc.original_max_position_embeddings);
    const mp_real two_pi = 2 * boost::math::constants::pi<mp_real>();
    scaled_rotation<mp_real> r;
    for (const mp_real& theta : plain_theta(spec.rotary_dim, mp_real(spec.base))) {
      const mp_real wavelength = two_pi / theta;
      if (wavelength < l0 / hf) {
        r.inverse_frequencies.push_back(theta);  // high frequency: kept
      } else if (wavelength > l0 / lf || hf == lf) {
        // Low frequency: interpolated. With hf = lf (Llama 4) the smoothing band is empty; its
        // one boundary point, where the reference implementations divide 0 by 0, goes here.
        r.inverse_frequencies.push_back(theta / s);
      } else {
        const mp_real smooth = (l0 / wavelength - lf) / (hf - lf);
        r.inverse_frequencies.push_back((1 - smooth) * theta / s + smooth * theta);
      }
    }
    return r;
  }

  scaled_rotation<mp_real> operator()(const longrope_scaling& sc) const {
    const mp_real l0(sc.original_max_position_embeddings);
    const mp_real s = exact(sc.factor);  // Phi-3: max_position_embeddings / L0 (the reader's)
    // Hugging Face: long factors when the sequence length exceeds L0; vLLM: when a position does.
    const bool long_regime = sc.convention == scaling_convention::vllm
                                 ? length - 1 > sc.original_max_position_embeddings
                                 : length > sc.original_max_position_embeddings;
    const auto& f = long_regime ? sc.long_factor : sc.short_factor;
    const int d = spec.rotary_dim;
    const mp_real base(spec.base);
    scaled_rotation<mp_real> r;
    for (int i = 0; i < d / 2; ++i)
      r.inverse_frequencies.push_back(1 / (mp_real(f[i]) * pow(base, mp_real(2 * i) / d)));
    const auto regime_mscale = long_regime ? sc.long_mscale : sc.short_mscale;
    if (sc.attention_factor) r.attention_factor = mp_real(*sc.attention_factor);
    else if (regime_mscale) r.attention_factor = mp_real(*regime_mscale);
    else if (s <= 1) r.attention_factor = 1;
    else r.attention_factor = sqrt(1 + log(s) / log(l0));
    return r;
  }

  // Gemma 4 (transformers _compute_proportional_rope_parameters): the whole head's θ_i / s for
  // the first rotated_pairs pairs, 0 (cos 1, sin 0: pass-through) for the rest.
  scaled_rotation<mp_real> operator()(const proportional_scaling& sc) const {
    const int d = spec.rotary_dim;
    scaled_rotation<mp_real> r{plain_theta(d, mp_real(spec.base)), 1};
    for (int i = 0; i < d / 2; ++i)
      r.inverse_frequencies[static_cast<std::size_t>(i)] =
          i < sc.rotated_pairs ? r.inverse_frequencies[static_cast<std::size_t>(i)] / mp_real(sc.factor)
                               : mp_real(0);
    return r;
  }
};

scaled_rotation<mp_real> exact(const rope_spec& spec, std::int64_t sequence_length) {
  scaled_rotation<mp_real> r = std::visit(form{spec, effective_length(spec, sequence_length)}, spec.scaling);
  if (spec.attention_factor) r.attention_factor = mp_real(*spec.attention_factor);
  return r;
}

}  // namespace

template <class Real>
scaled_rotation<Real> scaled_frequencies(const rope_spec& spec, std::int64_t sequence_length) {
  validate(rotary_params<mp_real>{spec.head_dim, spec.rotary_dim, mp_real(spec.base), spec.pair});
  const scaled_rotation<mp_real> r = exact(spec, sequence_length);
  if constexpr (std::is_same_v<Real, mp_real>) {
    return r;
  } else {
    scaled_rotation<Real> out;
    for (const auto& theta : r.inverse_frequencies)
      out.inverse_frequencies.push_back(theta.template convert_to<Real>());
    out.attention_factor = r.attention_factor.template convert_to<Real>();
    return out;
  }
}

template scaled_rotation<mp_real> scaled_frequencies(const rope_spec&, std::int64_t);
template scaled_rotation<double> scaled_frequencies(const rope_spec&, std::int64_t);

}  // namespace ropecheck::reference
