// io_error: the one exception for unreadable or malformed input files and failed writes;
// bad_input: a command-line value that is not allowed (an unknown kernel, a tolerance that is
// not a finite positive number, a seed out of range). Both mean exit 2 (cli/error_exit.h).
// Its message is always a single line naming the file, the field and the offending value,
//   X.npy: header field 'descr': unsupported dtype '>f4' (big-endian)
// so a user can find the problem without a debugger. Values come from untrusted bytes, so
// they are escaped (control and non-ASCII bytes as \xNN) and truncated before printing.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace ropecheck {

class io_error : public std::runtime_error {
 public:
  // Message: "<file>: <field>: <problem> '<value>'" + (note.empty() ? "" : " (<note>)").
  io_error(std::string_view file, std::string_view field, std::string_view problem,
           std::string_view value, std::string_view note = {});

  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }  // escaped and truncated, as printed

 private:
  struct preformatted {};
  io_error(preformatted, std::string file, std::string field, std::string value,
           std::string message);

  std::string file_;
  std::string field_;
  std::string value_;
};

// A flag's value the command cannot use, as one line naming the flag and the value, in the
// form of io_error's: "<flag>: <problem> '<value>'" + (note.empty() ? "" : " (<note>)"), e.g.
//   --tolerance: is not a finite number > 0 'inf'
class bad_input : public std::runtime_error {
 public:
  bad_input(std::string_view flag, std::string_view problem, std::string_view value,
            std::string_view note = {});
};

// `text` made safe for a one-line message: printable ASCII kept, everything else \xNN,
// cut to at most max_length characters of input with "..." appended.
std::string printable(std::string_view text, std::size_t max_length = 80);

}  // namespace ropecheck
