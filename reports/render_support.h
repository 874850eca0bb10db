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

// The JUnit document around one test suite's <testcase> elements (reports/junit.xsd): the
// preamble every report writes.
inline std::string junit_document(std::string_view suite, std::size_t tests, std::size_t failures,
                                  std::string_view cases, std::size_t skipped = 0) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"ropecheck\" tests=\"{0}\" failures=\"{1}\" errors=\"0\">\n"
      "  <testsuite name=\"{2}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{4}\">\n"
      "{3}  </testsuite>\n</testsuites>\n",
      tests, failures, suite, cases, skipped);
}

// A self-contained HTML page (no external assets): the shared preamble and style, then `body`.
// `title` is text (escaped here); `style` adds rules to the shared ones.
inline std::string html_page(std::string_view title, std::string_view style, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n"
      "<style>body{{font-family:sans-serif;margin:2em;max-width:72em}}table{{border-collapse:collapse}}"
      "td,th{{border:1px solid #ccc;padding:.2em .6em}}.fail{{color:#b00}}.pass{{color:#070}}"
      "pre{{background:#f6f6f6;padding:.5em;overflow-x:auto;white-space:pre-wrap}}{}</style></head>\n"
      "<body>\n{}</body></html>\n",
      xml_escape(title), style, body);
}

// Writes `text` to `path` atomically; an empty path means the rendering was not asked for.
inline void write_rendering(const std::string& path, const std::string& text) {
  if (path.empty()) return;
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace ropecheck::reports::detail
