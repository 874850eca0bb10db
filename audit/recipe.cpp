// Recipe simulation (recipe.h). Each rounding is written the way the implementations it models
// write it: Hugging Face's inv_freq = 1 / base^(arange(0, d, 2) / d) in float32, Meta's
// torch.polar cache, ggml's repeated product θ_j = θ_{j−1}·base^(−2/d), PyTorch's 16-bit
// products and sums (each op computed in float32, rounded to the 16-bit type).
#include "audit/recipe.h"

#include <cmath>
#include <vector>

#include "numeric/storage_element.h"
#include "spec/pair_index.h"
#include "spec/stream_layout.h"

namespace ropecheck::audit {
namespace {

// `v` rounded once to `t`; float64 keeps it.
double round_to(dtype t, double v) { return t == dtype::float64 ? v : round_to_storage(t, v); }

// The output's one rounding, as the recipe's store makes it.
double store(const recipe& r, double v) {
  if (r.output == dtype::float64) return v;
  switch (r.store) {
    case recipes::output_store::truncation: return truncate_to_storage(r.output, v);
    case recipes::output_store::flush_subnormals: return flush_subnormal(r.output, round_to_storage(r.output, v));
    case recipes::output_store::nearest_even: break;
  }
  return round_to_storage(r.output, v);
}

}  // namespace

recipe_simulator::recipe_simulator(const rope_spec& spec, const reference::double_tier& tier, float output_scale)
    : spec_(spec), tier_(tier), output_scale_(output_scale), exact_theta_(tier.inverse_frequencies().begin(), tier.inverse_frequencies().end()) {
  const int d = spec.rotary_dim;
  // Pair j rotates by θ_{f(j)} (a 2-D vision layout's frequency order; f(j) = j otherwise).
  for (int j = 0; j < d / 2; ++j) frequency_.push_back(frequency_of_pair(spec.streams, d, j));
  for (std::size_t j = 0; j < exact_theta_.size(); ++j) {
    const double plain = std::pow(spec.base, -2.0 * static_cast<double>(frequency_[j]) / d);
    scaling_ratio_.push_back(exact_theta_[j] / plain);
  }
  prepare(prepared_);
}

void recipe_simulator::prepare(const recipe& r) {
  prepared_ = r;
  const int d = spec_.rotary_dim;
  theta_.resize(exact_theta_.size());
  const bool scaled = type_of(spec_.scaling) != scaling_type::none;
  for (std::size_t j = 0; j < theta_.size(); ++j) {
    const auto f = static_cast<std::size_t>(frequency_[j]);
    double t = 0;
    if (r.frequencies == dtype::float64 && r.method != frequency_method::repeated_product) {
      theta_[j] = exact_theta_[j];
      continue;
    }
    if (r.method == frequency_method::rounded) {  // the kernel's (scaled) θ_j, rounded once
      theta_[j] = round_to(r.frequencies, exact_theta_[j]);
      continue;
    }
    if (r.method == frequency_method::pow) {
      if (r.frequencies == dtype::float64) {
        t = 1.0 / std::pow(spec_.base, static_cast<double>(2 * f) / d);
      } else {  // float32 (bfloat16 rounds the float32 value)
        const float exponent = static_cast<float>(2 * f) / static_cast<float>(d);
        t = 1.0f / std::pow(static_cast<float>(spec_.base), exponent);
      }
    } else if (r.frequencies == dtype::float64) {
      const double step = std::pow(spec_.base, -2.0 / d);
      t = 1;
      for (std::size_t i = 0; i < f; ++i) t *= step;
    } else {
      const float step = std::pow(static_cast<float>(spec_.base), -2.0f / static_cast<float>(d));
      float p = 1;
      for (std::size_t i = 0; i < f; ++i) p *= step;
      t = p;
    }
    t = round_to(r.frequencies, t);
    // A scaled spec multiplies the plain θ_j (docs/scaling.md), in the frequencies' type.
    theta_[j] = scaled ? round_to(r.frequencies, t * scaling_ratio_[j]) : t;
  }
}

void recipe_simulator::simulate(const recipe& r, std::span<const double> x, std::int64_t m,
                                std::span<double> y) const {
  simulate(r, x, std::span<const std::int64_t>(&m, 1), y);
}

void recipe_simulator::simulate(const recipe& r, std::span<const double> x, std::span<const std::int64_t> positions,
                                std::span<double> y) const {
  const int d = spec_.rotary_dim;
  const double a = tier_.attention_factor();
  const bool exact_trig = !r.angle_by_repeated_product && r.positions == dtype::float64 && r.frequencies == dtype::float64 &&
                          r.method == frequency_method::pow && r.angle == dtype::float64 && r.trig == dtype::float64;
  // ggml's angle: the position times base^(−2/d) once per pair, each product rounded to float32;
  // with position streams one running product per stream (ggml's M-RoPE keeps θ_t, θ_h, θ_w).
  // ggml's VISION mode (rows or columns first) restarts it at each axis's first pair and steps by
  // base^(−2/(d/2)) (ggml-cpu ops.cpp: n_dims = d/2, indep_sects); another vision order has no
  // ggml kernel and takes f(j) steps of base^(−2/d).
  const float step = std::pow(static_cast<float>(spec_.base), -2.0f / static_cast<float>(d));
  const bool axis_restarts = spec_.streams.rule == stream_rule::vision_rows_first ||
                             spec_.streams.rule == stream_rule::vision_columns_first;
  const float axis_step = std::pow(static_cast<float>(spec_.base), -2.0f / static_cast<float>(d / 2));
  float axis_running = 0;
  std::vector<double> rounded(positions.size());
  std::vector<float> running(positions.size());
  for (std::size_t k = 0; k < positions.size(); ++k) {
    rounded[k] = round_to(r.positions, static_cast<double>(positions[k]));
    running[k] = static_cast<float>(rounded[k]);
  }
  const bool scaled = type_of(spec_.scaling) != scaling_type::none;
  for (int j = 0; j < d / 2; ++j) {
    const auto stream = positions.size() == 1 ? std::size_t{0} : static_cast<std::size_t>(tier_.pair_stream(j));
    const std::int64_t m = positions[stream];
    const double p = rounded[stream];
    float product = running[stream];
    if (axis_restarts) {
      if (frequency_[static_cast<std::size_t>(j)] == 0) axis_running = static_cast<float>(p);
      product = axis_running;
      axis_running *= axis_step;
    } else if (spec_.streams.vision()) {
      product = static_cast<float>(p);
      for (int i = 0; i < frequency_[static_cast<std::size_t>(j)]; ++i) product *= step;
    }
    for (float& v : running) v *= step;
    double c = 0, s = 0;
    const bool after = r.factor == recipes::factor_placement::after_cache && a != 1;
    if (exact_trig) {
      c = tier_.cos_at(m, j);
      s = tier_.sin_at(m, j);
    } else {
      // ggml scales the repeated product's θ_j as the spec's scaling does (freq_scale, YaRN's
      // ramp): the product times θ'_j/θ_j, in float32.
      const float scaled_running =
          scaled ? product * static_cast<float>(scaling_ratio_[static_cast<std::size_t>(j)]) : product;
      const double phi = r.angle_by_repeated_product ? scaled_running
                         : r.angle == dtype::float64
                             ? p * theta_[j]
                             : static_cast<double>(static_cast<float>(p) * static_cast<float>(theta_[j]));
      // float32 evaluation (cosf) needs a float32 angle; of a float64 angle it is taken as the
      // double cos/sin rounded to float32, so that the angle's rounding stays the angle stage's.
      // A after the cache: cos/sin are evaluated (and cached) without it, × A when read.
      const double folded = after ? 1.0 : a;
      if (r.trig == dtype::float64 || r.angle == dtype::float64) {
        c = std::cos(phi) * folded;
        s = std::sin(phi) * folded;
        if (r.trig == dtype::float32) c = static_cast<float>(c), s = static_cast<float>(s);
      } else {
        const float pf = static_cast<float>(phi), af = static_cast<float>(folded);
        c = std::cos(pf) * af;
        s = std::sin(pf) * af;
      }
    }
    if (after && exact_trig) c /= a, s /= a;  // the tier's values carry A
    const auto cached = [&](double v) {
      return r.cache_round == recipes::cache_rounding::truncation && r.cache != dtype::float64
                 ? truncate_to_storage(r.cache, v)
                 : round_to(r.cache, v);
    };
    c = cached(c);
    s = cached(s);
    if (after) {
      const auto times_a = [&](double v) {
        if (r.arithmetic == dtype::float64) return v * a;
        const double p = static_cast<float>(v) * static_cast<float>(a);
        return r.arithmetic == dtype::float32 ? p : round_to(r.arithmetic, p);
      };
      c = times_a(c);
      s = times_a(s);
    }
    const auto [ia, ib] = pair_of(spec_.pair, d, j);
    const double xa = x[ia], xb = x[ib];
    double ya = 0, yb = 0;
    switch (r.arithmetic) {
      case dtype::float64:
        ya = xa * c - xb * s;
        yb = xb * c + xa * s;
        break;
      case dtype::float32: {
        const float fa = static_cast<float>(xa), fb = static_cast<float>(xb);
        const float fc = static_cast<float>(c), fs = static_cast<float>(s);
        if (r.fma) {
          ya = std::fma(fa, fc, -(fb * fs));
          yb = std::fma(fb, fc, fa * fs);
        } else {
          const float pa = fa * fc, pb = fb * fs, qa = fb * fc, qb = fa * fs;
          ya = pa - pb;
          yb = qa + qb;
        }
        break;
      }
      default: {  // 16-bit: each product and the sum computed in float32, rounded to the type
        const dtype t = r.arithmetic;
        const auto in_t = [t](double v) { return round_to(t, static_cast<float>(v)); };
        ya = in_t(in_t(xa * c) - in_t(xb * s));
        yb = in_t(in_t(xb * c) + in_t(xa * s));
      }
    }
    if (output_scale_ != 1.0f) {  // fl(y / σ): in float64 for float64 arithmetic, else in float32
      const auto divided = [&](double v) {
        return r.arithmetic == dtype::float64 ? v / output_scale_
                                              : static_cast<double>(static_cast<float>(v) / output_scale_);
      };
      ya = divided(ya);
      yb = divided(yb);
    }
    y[ia] = store(r, ya);
    y[ib] = store(r, yb);
  }
}

}  // namespace ropecheck::audit
