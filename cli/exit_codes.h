// The exit codes every ropecheck subcommand uses (CI scripts depend on them; docs/cli.md,
// "Exit codes").
#pragma once

namespace ropecheck::cli {

enum exit_code : int {
  exit_pass = 0,         // success; the gate or audit passed
  exit_failed = 1,       // the gate failed, or the audit found errors beyond tolerance
  exit_bad_input = 2,    // bad input or usage: unreadable/malformed file, invalid spec, bad flags
  exit_internal = 3,     // a bug in ropecheck: a broken invariant, not the user's input
};

}  // namespace ropecheck::cli
