// Exit codes from exceptions (cli/error_exit.h): bad input is 2 with its one line; a broken
// invariant (std::logic_error, std::bad_alloc, a non-std exception) is 3 with "internal
// error" and a line asking for a bug report.
#include "cli/error_exit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>

#include "cli/exit_codes.h"
#include "io/io_error.h"
#include "reference/rotary_params.h"
#include "spec/spec_reader.h"

namespace ropecheck::cli {
namespace {

struct outcome {
  int code;
  std::string printed;
};

template <class E>
outcome exit_for(E error) {
  ::testing::internal::CaptureStderr();
  const int code = exit_for_exception(std::make_exception_ptr(error));
  return {code, ::testing::internal::GetCapturedStderr()};
}

TEST(ErrorExit, BadInputIsExit2WithItsOneLine) {
  for (const auto& o : {exit_for(io_error("x.npy", "shape", "bad", "(3,)")),
                        exit_for(spec_error("s.json: field 'head_dim': 0 is not >= 2")),
                        exit_for(bad_input("--seed", "is not an integer", "-1")),
                        exit_for(reference::reference_error("base: 1 is not a finite number > 1")),
                        exit_for(std::runtime_error("RC_PARAMS: bad"))}) {
    EXPECT_EQ(o.code, exit_bad_input) << o.printed;
    EXPECT_EQ(o.printed.rfind("ropecheck: ", 0), 0u) << o.printed;
    EXPECT_EQ(o.printed.find("internal error"), std::string::npos) << o.printed;
    EXPECT_EQ(std::count(o.printed.begin(), o.printed.end(), '\n'), 1) << o.printed;
  }
}

TEST(ErrorExit, ABrokenInvariantIsExit3AskingForABugReport) {
  for (const auto& o : {exit_for(std::logic_error("tensor shape [2] needs 8 bytes but holds 4")),
                        exit_for(std::invalid_argument("from_float64: 3 values for shape [2]")),
                        exit_for(std::out_of_range("to_float64: elements outside")),
                        exit_for(std::bad_alloc()), exit_for(42)}) {
    EXPECT_EQ(o.code, exit_internal) << o.printed;
    EXPECT_EQ(o.printed.rfind("ropecheck: internal error: ", 0), 0u) << o.printed;
    EXPECT_NE(o.printed.find("please report it"), std::string::npos) << o.printed;
  }
}

TEST(ErrorExit, AFailedAssertionIsExit3) {
  install_internal_error_handler();
  EXPECT_EXIT(std::abort(), ::testing::ExitedWithCode(exit_internal), "internal error");
}

}  // namespace
}  // namespace ropecheck::cli
