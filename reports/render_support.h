// render_support: what every report rendering shares — verdict words, XML escaping, reading a
// JSON field with an error that names it, and writing a rendering atomically (as valid UTF-8,
// report_text.h). Internal to reports/.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/atomic_file.h"
#include "reports/report_text.h"

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

inline double number_of(const nlohmann::json& j) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  if (!j.is_number()) throw nlohmann::json::type_error::create(302, "not a number", &j);
  return j.get<double>();
}

// A JSON value as an error message shows it: compact, at most 80 characters.
inline std::string shown(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 80) + "...";
  return text;
}

template <class T>
T value_of(const nlohmann::json& j) {
  if constexpr (std::is_same_v<T, double>) {
    return number_of(j);
  } else if constexpr (std::is_same_v<T, std::vector<std::vector<double>>>) {
    T out;
    for (const auto& row : j.get_ref<const nlohmann::json::array_t&>()) {
      out.emplace_back();
      for (const auto& v : row.get_ref<const nlohmann::json::array_t&>()) out.back().push_back(number_of(v));
    }
    return out;
  } else if constexpr (std::is_same_v<T, std::vector<std::pair<std::int64_t, double>>>) {
    // Plot points [position, ratio]: the position a whole number in range (get<> would cast
    // 1e300 to an integer), the ratio any number the writer spells (a failing case's "Infinity").
    T out;
    for (const auto& point : j.get_ref<const nlohmann::json::array_t&>()) {
      const auto& pair = point.get_ref<const nlohmann::json::array_t&>();
      if (pair.size() != 2) throw nlohmann::json::type_error::create(302, "not a [position, ratio] pair", &point);
      out.emplace_back(value_of<std::int64_t>(pair[0]), number_of(pair[1]));
    }
    return out;
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // get<T>() would truncate 1.5 to 1 and wrap -1 to 2^64 - 1: only a whole number in range.
    const bool fits = j.is_number_integer() &&
                      (std::is_signed_v<T> ? !j.is_number_unsigned() || j.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                                           : j.is_number_unsigned() && j.get<std::uint64_t>() <= std::numeric_limits<T>::max());
    if (!fits) throw nlohmann::json::type_error::create(302, "not an integer in range", &j);
    return j.get<T>();
  } else {
    return j.get<T>();
  }
}

template <class T>
T field(const nlohmann::json& j, const char* name, const std::string& where) {
  if (!j.is_object() || !j.contains(name))
    throw std::invalid_argument(fmt::format("{}: field '{}': missing", where, name));
  try {
    return value_of<T>(j.at(name));
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(
        fmt::format("{}: field '{}': {} has the wrong type", where, name, shown(j.at(name))));
  }
}

// A field that must be an array (of objects, read by index): a string or an object is refused
// here rather than indexed.
inline const nlohmann::json& array_field(const nlohmann::json& j, const char* name, const std::string& where) {
  if (!j.is_object() || !j.contains(name))
    throw std::invalid_argument(fmt::format("{}: field '{}': missing", where, name));
  const nlohmann::json& value = j.at(name);
  if (!value.is_array())
    throw std::invalid_argument(fmt::format("{}: field '{}': {} is not an array", where, name,
                                            shown(value)));
  return value;
}

inline bool verdict_field(const nlohmann::json& j, const std::string& where) {
  const auto v = field<std::string>(j, "verdict", where);
  if (v != "pass" && v != "fail")
    throw std::invalid_argument(
        fmt::format("{}: field 'verdict': \"{}\" is not pass or fail", where, v));
  return v == "pass";
}

// One rendering a REPORT FLAG asked for: its path (empty: not asked for) and how to make it.
struct rendering {
  const std::string& path;
  std::function<std::string()> render;
};

// Renders every requested file, as valid UTF-8 (report_text.h: a user's file name may not be),
// then writes them all or nothing (io/atomic_file.h write_files_together): a failure leaves no
// report file changed and no temporary behind.
inline void write_renderings(const std::vector<rendering>& renderings) {
  std::vector<planned_file> files;
  for (const auto& r : renderings) {
    if (r.path.empty()) continue;
    files.push_back({r.path, [text = valid_utf8(r.render())](std::ostream& out) {
                       out.write(text.data(), static_cast<std::streamsize>(text.size()));
                     }});
  }
  write_files_together(files);
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

}  // namespace ropecheck::reports::detail
