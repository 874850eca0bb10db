// Sinusoidal absolute position encoding (Vaswani et al. 2017, §3.5; seed 001):
//   p_{k,2i} = sin(k·θ_i),  p_{k,2i+1} = cos(k·θ_i),  θ_i = base^(−2i/d),
// and its shift matrix T(Δ), block-diagonal with blocks [[cos Δθ_i, sin Δθ_i], [−sin Δθ_i, cos Δθ_i]],
// for which p_{k+Δ} = T(Δ)·p_k holds for every k (the angle-addition formulas).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/square_matrix.h"

namespace ropecheck::reference {

// d_model must be even and >= 2; base finite and > 1 (reference_error otherwise).
template <class Real>
std::vector<Real> sinusoidal_encoding(std::int64_t position, int d_model, const Real& base);

template <class Real>
square_matrix<Real> sinusoidal_shift_matrix(std::int64_t delta, int d_model, const Real& base);

}  // namespace ropecheck::reference
