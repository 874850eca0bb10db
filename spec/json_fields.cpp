// Typed reads of one JSON field (json_fields.h): each bad value is one spec_error line naming
// the file, the field's full path and the value.
#include "spec/json_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "spec/spec_reader.h"

namespace ropecheck::spec_fields {

std::string path(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : fmt::format("{}.{}", prefix, key);
}

void fail(std::string_view source, std::string_view field, const json& value,
          std::string_view problem) {
  throw spec_error(fmt::format("{}: field '{}': {} {}", source, field, value.dump(), problem));
}

void missing(std::string_view source, std::string_view field, std::string_view why) {
  throw spec_error(fmt::format("{}: field '{}': missing ({})", source, field, why));
}

const json* given(const json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> number(const json& object, std::string_view source, std::string_view prefix,
                             std::string_view key) {
  const json* v = given(object, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) fail(source, path(prefix, key), *v, "is not a number");
  return v->get<double>();
}

std::optional<double> positive(const json& object, std::string_view source,
                               std::string_view prefix, std::string_view key) {
  const auto d = number(object, source, prefix, key);
  if (d && (!std::isfinite(*d) || !(*d > 0)))
    fail(source, path(prefix, key), *given(object, key), "is not a finite number > 0");
  return d;
}

std::optional<double> non_negative(const json& object, std::string_view source,
                                   std::string_view prefix, std::string_view key) {
  const auto d = number(object, source, prefix, key);
  if (d && (!std::isfinite(*d) || *d < 0))
    fail(source, path(prefix, key), *given(object, key), "is not a finite number >= 0");
  return d;
}

std::optional<int> small_int(const json& object, std::string_view source, std::string_view prefix,
                             std::string_view key) {
  const json* v = given(object, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer() || v->get<std::int64_t>() < 1 || v->get<std::int64_t>() > (1 << 20))
    fail(source, path(prefix, key), *v, "is not an integer in [1, 1048576]");
  return static_cast<int>(v->get<std::int64_t>());
}

std::optional<std::int64_t> length(const json& object, std::string_view source,
                                   std::string_view prefix, std::string_view key) {
  const json* v = given(object, key);
  if (!v) return std::nullopt;
  if (!v->is_number() || !(v->get<double>() >= 1 && v->get<double>() <= 2147483648.0) ||
      v->get<double>() != std::floor(v->get<double>()))
    fail(source, path(prefix, key), *v, "is not an integer in [1, 2^31]");
  return static_cast<std::int64_t>(v->get<double>());
}

std::optional<bool> boolean(const json& object, std::string_view source, std::string_view prefix,
                            std::string_view key) {
  const json* v = given(object, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) fail(source, path(prefix, key), *v, "is not true or false");
  return v->get<bool>();
}

std::optional<std::string> text(const json& object, std::string_view source,
                                std::string_view prefix, std::string_view key) {
  const json* v = given(object, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail(source, path(prefix, key), *v, "is not a string");
  return v->get<std::string>();
}

}  // namespace ropecheck::spec_fields
