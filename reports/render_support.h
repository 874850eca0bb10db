// render_support: what every report rendering shares — verdict words, XML escaping, reading a
// JSON field with an error that names it, and writing a rendering atomically. Internal to reports/.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "io/atomic_file.h"

namespace ropecheck::reports::detail {

inline std::string verdict(bool passed) { return passed ? "pass" : "fail"; }

// XML 1.0 text: escape markup and drop control characters XML cannot carry.
inline std::string xml_escape(std::string_view text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t') out += ch;
    }
  }
  return out;
}

template <class T>
T field(const nlohmann::json& j, const char* name, const std::string& where) {
  if (!j.is_object() || !j.contains(name))
    throw std::invalid_argument(fmt::format("{}: field '{}': missing", where, name));
  try {
    return j.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(
        fmt::format("{}: field '{}': {} has the wrong type", where, name, j.at(name).dump()));
  }
}

inline bool verdict_field(const nlohmann::json& j, const std::string& where) {
  const auto v = field<std::string>(j, "verdict", where);
  if (v != "pass" && v != "fail")
    throw std::invalid_argument(
        fmt::format("{}: field 'verdict': \"{}\" is not pass or fail", where, v));
  return v == "pass";
}

// Writes `text` to `path` atomically; an empty path means the rendering was not asked for.
inline void write_rendering(const std::string& path, const std::string& text) {
  if (path.empty()) return;
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace ropecheck::reports::detail
