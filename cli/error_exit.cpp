// error_exit: exceptions and aborts to exit codes 2 and 3 (see error_exit.h).
#include "cli/error_exit.h"

#include <fmt/core.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "cli/exit_codes.h"
#include "reference/rotary_params.h"

namespace ropecheck::cli {
namespace {

constexpr const char* bug_report_line =
    "ropecheck: this is a bug in ropecheck, not in your input; please report it with the command "
    "line and the input files";

// One line: a message from deep inside a library may carry newlines.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

int internal_error(const std::string& what) {
  fmt::print(stderr, "ropecheck: internal error: {}\n{}\n", one_line(what), bug_report_line);
  return exit_internal;
}

extern "C" void on_abort(int) {
  // Only async-signal-safe calls here: write(2) and _exit(2).
  constexpr const char text[] =
      "ropecheck: internal error: aborted (a failed assertion or an unhandled exception)\n"
      "ropecheck: this is a bug in ropecheck, not in your input; please report it with the "
      "command line and the input files\n";
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, text, sizeof text - 1);
  ::_exit(exit_internal);
}

}  // namespace

int exit_for_exception(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const reference::reference_error& e) {
    // Parameters the reference refuses come from the user's spec or flags.
    fmt::print(stderr, "ropecheck: {}\n", one_line(e.what()));
    return exit_bad_input;
  } catch (const std::bad_alloc&) {
    return internal_error("out of memory (every input's size is checked before allocating)");
  } catch (const std::logic_error& e) {
    return internal_error(e.what());
  } catch (const std::runtime_error& e) {
    fmt::print(stderr, "ropecheck: {}\n", one_line(e.what()));
    return exit_bad_input;
  } catch (const std::exception& e) {
    return internal_error(e.what());
  } catch (...) {
    return internal_error("an exception that is not a std::exception");
  }
}

void install_internal_error_handler() { std::signal(SIGABRT, on_abort); }

}  // namespace ropecheck::cli
