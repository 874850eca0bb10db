// A failing bit-exact property has no worst/bound (0): every rendering shows the first differing
// bits its message names instead (gate_report.cpp differing_bits). The bit patterns are IEEE 754
// constants written by hand: 1.0f is 0x3f800000, its successor 0x3f800001; bfloat16 1.0 is 0x3f80
// and -1.0 is 0xbf80.
#include <gtest/gtest.h>

#include <string>

#include "reports/gate_report.h"

namespace ropecheck::reports {
namespace {

gate_report bit_exact_failures() {
  property_outcome layout;
  layout.name = "layout_invariant/float32";
  layout.passed = false;
  layout.cases = 3;
  layout.failed_cases = 1;
  // The message as properties/kernel_properties_exact.cpp require_same_bits words it.
  layout.message = "layout_invariant violated: element 5 (token 0, head 0, coordinate 5, float32 half d=8/8): "
                   "packed 1 (0x1p+0) bits 0x3f800000 vs strided 1.00000012 (0x1.000002p+0) bits 0x3f800001";
  layout.counterexample = "Property: …\n\n" + layout.message;
  property_outcome sign = layout;
  sign.name = "in_place_equals_out_of_place/bfloat16";
  sign.message = "in_place_equals_out_of_place violated: element 0 (token 0, head 0, coordinate 0, bfloat16 half "
                 "d=2/2): out of place 1 (0x1p+0) bits 0x3f80 vs in place -1 (-0x1p+0) bits 0xbf80";
  property_outcome status = layout;  // a status check: no bits in its message
  status.name = "rejects_invalid_calls/float32";
  status.message = "rejects_invalid_calls violated: call with null_positions was accepted";
  gate_report r;
  r.profile = "quick";
  r.passed = false;
  r.kernels.push_back({"k", false, {layout, sign, status}, {}});
  return r;
}

TEST(BitExactReport, EveryRenderingShowsTheFirstDifferingBits) {
  const gate_report r = bit_exact_failures();
  const std::string float32_bits = "0x3f800000 vs 0x3f800001: xor 0x00000001, highest differing bit 0 "
                                   "(mantissa bit 0 of float32)";
  const std::string bfloat16_bits = "0x3f80 vs 0xbf80: xor 0x8000, highest differing bit 15 (sign of bfloat16)";
  for (const std::string& text : {render_terminal(r), render_markdown(r), render_html(r), render_junit(r)}) {
    EXPECT_NE(text.find(float32_bits), std::string::npos) << text;
    EXPECT_NE(text.find(bfloat16_bits), std::string::npos) << text;
  }
  // The table's worst/bound column says what failed instead of 0.000.
  const std::string terminal = render_terminal(r);
  const auto row = terminal.find("k       layout_invariant/float32");
  ASSERT_NE(row, std::string::npos) << terminal;
  const std::string line = terminal.substr(row, terminal.find('\n', row) - row);
  EXPECT_NE(line.find("bits differ"), std::string::npos) << line;
  EXPECT_EQ(line.find("0.000"), std::string::npos) << line;
  const auto status_row = terminal.find("k       rejects_invalid_calls/float32");
  ASSERT_NE(status_row, std::string::npos);
  EXPECT_NE(terminal.substr(status_row, terminal.find('\n', status_row) - status_row).find("no ratio"),
            std::string::npos);
}

}  // namespace
}  // namespace ropecheck::reports
