// io_error: one-line messages naming file, field and value (see io_error.h).
#include "io/io_error.h"

#include <fmt/format.h>

#include <algorithm>

namespace ropecheck {

namespace {
// File names and notes come from our own code or the user, so they may be long; values
// come from the file being read and are capped harder.
constexpr std::size_t long_text = 4096;
}  // namespace

std::string printable(std::string_view text, std::size_t max_length) {
  std::string out;
  const std::size_t kept = std::min(text.size(), max_length);
  out.reserve(kept + 3);
  for (const char ch : text.substr(0, kept)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(ch);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (kept < text.size()) out += "...";
  return out;
}

io_error::io_error(std::string_view file, std::string_view field, std::string_view problem,
                   std::string_view value, std::string_view note)
    : io_error(
          preformatted{}, printable(file, long_text), printable(field), printable(value),
          fmt::format("{}: {}: {} '{}'", printable(file, long_text), printable(field),
                      printable(problem, long_text), printable(value)) +
              (note.empty() ? std::string() : fmt::format(" ({})", printable(note, long_text)))) {}

io_error::io_error(preformatted, std::string file, std::string field, std::string value,
                   std::string message)
    : std::runtime_error(std::move(message)),
      file_(std::move(file)),
      field_(std::move(field)),
      value_(std::move(value)) {}

bad_input::bad_input(std::string_view flag, std::string_view problem, std::string_view value,
                     std::string_view note)
    : std::runtime_error(
          fmt::format("{}: {} '{}'", printable(flag, long_text), printable(problem, long_text),
                      printable(value, long_text)) +
          (note.empty() ? std::string() : fmt::format(" ({})", printable(note, long_text)))) {}

}  // namespace ropecheck
