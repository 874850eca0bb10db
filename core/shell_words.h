// shell_words: a command line a person can paste into a POSIX shell and get exactly these
// words back (replay lines). Words of safe characters stay as they are; any other word is
// put in single quotes, with each ' written as '\'' (POSIX sh, "Quoting": nothing inside
// single quotes is special).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ropecheck::core {

inline std::string shell_quote(std::string_view word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_-.,/:=+@%") == std::string_view::npos;
  if (plain) return std::string(word);
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string shell_command(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

}  // namespace ropecheck::core
