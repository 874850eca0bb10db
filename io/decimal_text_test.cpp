// The plain-decimal rule for numbers given as text (decimal_text.h): what it accepts, what it
// refuses, and that a refusal names the flag and the value on one line.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "io/decimal_text.h"

namespace ropecheck {
namespace {

TEST(plain_decimal_digits, accepts_digits_without_a_leading_zero_only) {
  for (const char* good : {"0", "7", "10", "18446744073709551615"}) EXPECT_TRUE(plain_decimal_digits(good)) << good;
  for (const char* bad : {"", "00", "010", "0x10", " 5", "5 ", "+5", "-5", "5.0", "1e3", "５"})
    EXPECT_FALSE(plain_decimal_digits(bad)) << bad;
}

TEST(decimal_number_syntax, accepts_a_fraction_and_an_exponent_but_no_other_spelling) {
  for (const char* good : {"0", "0.5", "-2.25", "1e-3", "1E+3", "2.5e0", "10", "-0"})
    EXPECT_TRUE(decimal_number_syntax(good)) << good;
  for (const char* bad : {"", "010", "00.5", ".5", "5.", "1.e3", "1e", "1e+", "+5", "--5", "0x10", "0x1p3",
                          "inf", "nan", "-inf", " 5", "5 ", "5x", "1_000"})
    EXPECT_FALSE(decimal_number_syntax(bad)) << bad;
}

TEST(decimal_integer_flag, is_never_clamped_or_wrapped) {
  EXPECT_EQ(decimal_integer_flag("--n", "18446744073709551615", 0, std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(decimal_integer_flag("--n", "100", 1, 100), 100u);
  for (const char* bad : {"18446744073709551616", "101", "0", "", "010"}) {
    try {
      decimal_integer_flag("--n", bad, 1, 100);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const bad_input& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--n: is not an integer in 1 ... 100", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(decimal_number_flag, refuses_values_beyond_double_and_non_positive_ones_where_asked) {
  EXPECT_EQ(decimal_number_flag("--x", "2.5e0"), 2.5);
  EXPECT_THROW(decimal_number_flag("--x", "1e999"), bad_input);
  EXPECT_THROW(decimal_number_flag("--x", "1e-999"), bad_input);
  EXPECT_EQ(positive_number_flag("--x", "0.25"), 0.25);
  for (const char* bad : {"0", "-1", "-0"}) EXPECT_THROW(positive_number_flag("--x", bad), bad_input) << bad;
  EXPECT_EQ(positive_float32_flag("--s", "3"), 3.0f);
  EXPECT_THROW(positive_float32_flag("--s", "1e39"), bad_input);  // past float32's range
}

}  // namespace
}  // namespace ropecheck
