// Inverse frequencies of RoPE: θ_i = base^(−2i/d), i = 0 … d/2 − 1 (RoFormer, eq. 15;
// Meta LLaMA `precompute_freqs_cis`: 1 / theta ** (arange(0, dim, 2) / dim)).
#pragma once

#include <vector>

namespace ropecheck::reference {

// Throws reference_error for an odd or < 2 rotary_dim, or a base that is not finite and > 1.
template <class Real>
std::vector<Real> inverse_frequencies(int rotary_dim, const Real& base);

}  // namespace ropecheck::reference
