// error_exit: what main() does with an exception that ends a subcommand, and with a failed
// assertion. Bad input (io_error, spec_error, bad_input, kernel_library_error, any other
// std::runtime_error, and reference_error, the reference's refusal of parameters) is exit 2
// with its one line; a broken invariant — std::logic_error, std::bad_alloc after validation
// should have bounded every allocation, an abort() from a failed assertion, any other
// exception — is exit 3, "ropecheck: internal error: …" and a line asking for a bug report.
#pragma once

#include <exception>

namespace ropecheck::cli {

// Prints the exception's line(s) on stderr and returns the exit code (exit_codes.h).
int exit_for_exception(std::exception_ptr error);

// Turns SIGABRT (assert, std::terminate) into the internal-error lines and exit 3.
void install_internal_error_handler();

}  // namespace ropecheck::cli
