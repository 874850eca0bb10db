// Typed reads of one JSON field for the spec reader, each refusing a bad value with one line
// that names the file, the field (its full path, e.g. 'text_config.rope_parameters.factor') and
// the value. Absent and null read as "not given" (std::nullopt), as a config.json means them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ropecheck::spec_fields {

using json = nlohmann::json;

// "prefix.key", or "key" when prefix is empty.
std::string path(std::string_view prefix, std::string_view key);

[[noreturn]] void fail(std::string_view source, std::string_view field, const json& value,
                       std::string_view problem);
[[noreturn]] void missing(std::string_view source, std::string_view field, std::string_view why);

// The value of `key` in `object`, or nullptr when absent or null.
const json* given(const json& object, std::string_view key);

std::optional<double> number(const json& object, std::string_view source,
                             std::string_view prefix, std::string_view key);
// A finite number > 0.
std::optional<double> positive(const json& object, std::string_view source,
                               std::string_view prefix, std::string_view key);
// A finite number >= 0 (ggml's ext_factor 0 turns the YaRN ramp off; DeepSeek mscale_all_dim 0).
std::optional<double> non_negative(const json& object, std::string_view source,
                                   std::string_view prefix, std::string_view key);
// An integer in [1, 2^20] (head widths, rotary dims).
std::optional<int> small_int(const json& object, std::string_view source, std::string_view prefix,
                             std::string_view key);
// An integer in [1, 2^31]; integral-valued floats (8192.0) are accepted, as some configs are
// re-saved through Python floats.
std::optional<std::int64_t> length(const json& object, std::string_view source,
                                   std::string_view prefix, std::string_view key);
std::optional<bool> boolean(const json& object, std::string_view source, std::string_view prefix,
                            std::string_view key);
std::optional<std::string> text(const json& object, std::string_view source,
                                std::string_view prefix, std::string_view key);

}  // namespace ropecheck::spec_fields
