// M-RoPE form (Qwen2-VL, Qwen2.5-VL, Qwen3-VL; transformers modeling_qwen2_vl.py
// apply_multimodal_rotary_pos_emb: cos/sin split by mrope_section and each chunk taken from
// stream i % 3; modeling_qwen3_vl.py apply_interleaved_mrope: height at j ≡ 1, width at j ≡ 2
// (mod 3) below 3·section). Pair j turns by p_{s(j)}·θ_j, with cos and sin of that angle from
// MPFR; the stream rule is written here again on purpose (reference/ shares no code with what
// it judges).
#include <fmt/format.h>

#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {

int mrope_stream(const mrope_layout& layout, int j) {
  const auto& s = layout.section;
  if (s.size() != 3) throw reference_error(fmt::format("mrope section: {} streams, not 3", s.size()));
  if (layout.interleaved) {
    if (j % 3 == 1 && j < 3 * s[1]) return 1;
    if (j % 3 == 2 && j < 3 * s[2]) return 2;
    return 0;
  }
  return j < s[0] ? 0 : j < s[0] + s[1] ? 1 : 2;
}

template <class Real>
std::vector<Real> rope_mrope(std::span<const Real> x, const std::array<std::int64_t, 3>& positions,
                             const rotary_params<Real>& params, const mrope_layout& layout) {
  validate_input(params, x, "x");
  using std::cos;
  using std::pow;
  using std::sin;
  const int d = params.rotary_dim;
  int pairs = 0;
  for (int n : layout.section) pairs += n;
  if (pairs != d / 2)
    throw reference_error(fmt::format("mrope section: {} pairs, not rotary_dim/2 = {}", pairs, d / 2));
  std::vector<Real> y(x.begin(), x.end());
  for (int j = 0; j < d / 2; ++j) {
    const Real theta = params.explicit_inverse_frequencies.empty()
                           ? pow(params.base, Real(-2 * j) / d)
                           : params.explicit_inverse_frequencies[j];
    const Real angle = Real(positions[static_cast<std::size_t>(mrope_stream(layout, j))]) * theta;
    const Real c = params.attention_factor * cos(angle);
    const Real s = params.attention_factor * sin(angle);
    const auto [a, b] = pair_of(params.pair, d, j);
    y[a] = x[a] * c - x[b] * s;
    y[b] = x[a] * s + x[b] * c;
  }
  return y;
}

template std::vector<mp_real> rope_mrope(std::span<const mp_real>, const std::array<std::int64_t, 3>&,
                                         const rotary_params<mp_real>&, const mrope_layout&);
template std::vector<double> rope_mrope(std::span<const double>, const std::array<std::int64_t, 3>&,
                                        const rotary_params<double>&, const mrope_layout&);

}  // namespace ropecheck::reference
