// Sinusoidal encoding (seed 001): p_{k+Δ} = T(Δ)·p_k with one T(Δ) for every k, T orthogonal.
#include <gtest/gtest.h>

#include "reference/sinusoidal.h"
#include "reference/test_support.h"

namespace ropecheck::reference {
namespace {

using testing::relative_distance;
using testing::tight_tolerance;

TEST(Sinusoidal, FirstPositionsMatchTheDefinition) {
  // p_{0} alternates sin 0 = 0, cos 0 = 1; p_{1,0} = sin(1), p_{1,1} = cos(1) for any base.
  const auto p0 = sinusoidal_encoding<mp_real>(0, 16, mp_real(10000));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(p0[2 * i], 0);
    EXPECT_EQ(p0[2 * i + 1], 1);
  }
  const auto p1 = sinusoidal_encoding<mp_real>(1, 16, mp_real(10000));
  EXPECT_LT(abs(p1[0] - mp_real("0.84147098480789650665250232163029899962256306079837106567275170999191040439123966894863974354305269585434903790792067429325911892099189888119341032772921240948079")),
            tight_tolerance);
  EXPECT_LT(abs(p1[1] - mp_real("0.54030230586813971740093660744297660373231042061792222767009725538110039477447176451795185608718308934357173116791145114777174346371455302982179224874845174305209")),
            tight_tolerance);
}

TEST(Sinusoidal, ShiftMatrixMovesEveryPositionByDelta) {
  for (int d : {2, 16, 128}) {
    for (std::int64_t delta : {1LL, 7LL, -3LL, 65536LL, (1LL << 31) - 1}) {
      const auto t = sinusoidal_shift_matrix<mp_real>(delta, d, mp_real(10000));
      for (std::int64_t k : {0LL, 1LL, 100LL, -50LL, 123456789LL}) {
        const auto shifted = t.apply(sinusoidal_encoding<mp_real>(k, d, mp_real(10000)));
        const auto direct = sinusoidal_encoding<mp_real>(k + delta, d, mp_real(10000));
        EXPECT_LT(relative_distance(shifted, direct, mp_real(1)), tight_tolerance)
            << "d " << d << " k " << k << " delta " << delta;
      }
      const auto should_be_identity = t.transpose() * t;
      const auto id = square_matrix<mp_real>::identity(d);
      EXPECT_LT(relative_distance(should_be_identity.entries, id.entries, mp_real(1)),
                tight_tolerance);
    }
  }
}

}  // namespace
}  // namespace ropecheck::reference
