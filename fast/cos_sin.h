// cos_sin: the float cos/sin values every fast kernel rotates by, computed one way for both
// angle strategies (the cache stores exactly what on-the-fly computes, bit for bit).
//
// For position m and inverse frequency θ_j, per value:
//   hi = fl(m·θ_j), lo = fma(m, θ_j, −hi)        (two-product: hi + lo = m·θ_j exactly)
//   (S, C) = sincos(hi) in double                  (SLEEF u35: ≤ 3.5 ulp of double, any |hi|)
//   cos = float(fl(fl(C − fl(lo·S)) · factor))     (first-order correction for lo, |lo| ≤
//   sin = float(fl(fl(S + fl(lo·C)) · factor))      2^-53·|hi|; one final rounding, RNE)
// The double stages sit ~2^-29 below a float ulp, so each cos/sin is within ~1.03× of the
// correctly rounded float even at m = 2^24 (the input-precision limit is θ_j's own
// rounding to double: |m|·θ_j·2^-53 rad). The peers' float(m)·float(θ) then sinf/cosf
// recipe instead loses ~1% at m = 131072.
#pragma once

#include <cstdint>

namespace ropecheck::fast {

// Row i (at rows + i·2·pairs) gets cos of pairs 0..pairs-1 then sin of pairs 0..pairs-1 for
// positions[i]. Uses SLEEF's AVX2 sincos when the CPU has AVX2+FMA, else SLEEF's scalar one.
void fill_cos_sin_rows(const std::int64_t* positions, std::int64_t count, const double* theta,
                       std::int64_t pairs, double attention_factor, float* rows);

// The same values by the portable (scalar SLEEF) path, whatever the CPU; for tests.
void fill_cos_sin_rows_portable(const std::int64_t* positions, std::int64_t count,
                                const double* theta, std::int64_t pairs,
                                double attention_factor, float* rows);

}  // namespace ropecheck::fast
