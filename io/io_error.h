// io_error: the one exception for unreadable or malformed tensor files and failed writes.
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

// `text` made safe for a one-line message: printable ASCII kept, everything else \xNN,
// cut to at most max_length characters of input with "..." appended.
std::string printable(std::string_view text, std::size_t max_length = 80);

}  // namespace ropecheck
