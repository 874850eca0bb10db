// cos_sin_avx2: the AVX2+FMA build of fill_cos_sin_rows (cos_sin.h documents the values).
// Its .cpp alone is compiled with -mavx2 -mfma and includes no C++ library header with inline
// functions, so no AVX2 copy of a shared inline function can leak into portable code.
#pragma once

#include <cstdint>

namespace ropecheck::fast::detail {

// Call only when the CPU has AVX2 and FMA.
void fill_cos_sin_rows_avx2(const std::int64_t* positions, std::int64_t count,
                            const double* theta, std::int64_t pairs, double attention_factor,
                            float* rows);

}  // namespace ropecheck::fast::detail
