// report_text: valid UTF-8 in every report file (see report_text.h).
#include "reports/report_text.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ropecheck::reports {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at the start of `text`, or of its longest
// well-formed prefix (≥ 1 byte) negated: Unicode Table 3-7's byte ranges.
int sequence_length(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  int continuation = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the byte after the lead
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuation = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuation = 2;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuation = 3;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return -1;  // 0x80…0xC1, 0xF5…0xFF never start a sequence
  }
  for (int k = 1; k <= continuation; ++k) {
    if (static_cast<std::size_t>(k) >= text.size()) return -k;
    const unsigned char c = byte(static_cast<std::size_t>(k));
    if (c < (k == 1 ? low : 0x80) || c > (k == 1 ? high : 0xBF)) return -k;
  }
  return continuation + 1;
}

void make_strings_valid(nlohmann::json& j) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    s = valid_utf8(s);
  } else if (j.is_structured()) {
    for (auto& child : j) make_strings_valid(child);
  }
}

// JSON has no infinity or NaN (nlohmann writes them as null, which nothing can read back).
void spell_non_finite_numbers(nlohmann::json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (std::isnan(v)) j = "NaN";
    else if (std::isinf(v)) j = v > 0 ? "Infinity" : "-Infinity";
    return;
  }
  if (j.is_structured())
    for (auto& child : j) spell_non_finite_numbers(child);
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const int n = sequence_length(text);
    if (n > 0) {
      out.append(text.substr(0, static_cast<std::size_t>(n)));
    } else {
      out.append(replacement);
    }
    text.remove_prefix(static_cast<std::size_t>(n > 0 ? n : -n));
  }
  return out;
}

std::string json_text(nlohmann::json j) {
  make_strings_valid(j);
  spell_non_finite_numbers(j);
  // Keys are ropecheck's own; `replace` keeps a stray byte in one from ending the run.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace ropecheck::reports
