// summarise_runs: a list of values as a person reads it — runs of three or more equal items
// written once with a count ("0x1p+0 ×80"), so that a counterexample of a 256-wide head does
// not print 256 equal numbers. Used by counterexamples and by the generators' showValue.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ropecheck::properties {

// Items separated by `separator`, equal neighbours counted: "a, a, a, b" → "a ×3, b".
inline std::string summarise_runs(std::string_view text, std::string_view separator = ", ") {
  std::vector<std::string_view> items;
  std::size_t from = 0;
  while (true) {
    const auto at = text.find(separator, from);
    items.push_back(text.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) break;
    from = at + separator.size();
  }
  std::string out;
  for (std::size_t i = 0; i < items.size();) {
    std::size_t run = 1;
    while (i + run < items.size() && items[i + run] == items[i]) ++run;
    if (!out.empty()) out += separator;
    if (run >= 3) {
      out += std::string(items[i]) + " ×" + std::to_string(run);
    } else {
      out += std::string(items[i]);
      for (std::size_t k = 1; k < run; ++k) out += std::string(separator) + std::string(items[i]);
    }
    i += run;
  }
  return out;
}

}  // namespace ropecheck::properties
