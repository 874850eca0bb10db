// The working real type of the reference tier: MPFR through Boost.Multiprecision.
//
// Why MPFR and why >= 256 bits: positions reach 2^31 and the angle m·θ must stay exact far
// below float resolution after the 31 bits the product costs; MPFR's sin/cos are correctly
// rounded for any argument (cpp_bin_float's trig loses accuracy as |x| grows). 80 decimal
// digits give 266 significand bits, leaving > 2^-230 relative accuracy at |m| = 2^31.
#pragma once

#include <boost/multiprecision/mpc.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <limits>

namespace ropecheck::reference {

// allocate_stack: the 5 limbs live inside the number, so the many temporaries of a tensor's
// rotation cost no malloc/free (which took about half of `ropecheck reference`'s time).
using mp_real = boost::multiprecision::number<
    boost::multiprecision::mpfr_float_backend<80, boost::multiprecision::allocate_stack>,
    boost::multiprecision::et_off>;
using mp_complex = boost::multiprecision::number<boost::multiprecision::mpc_complex_backend<80>,
                                                 boost::multiprecision::et_off>;

static_assert(std::numeric_limits<mp_real>::digits >= 256, "the reference needs >= 256 bits");

}  // namespace ropecheck::reference
