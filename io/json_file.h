// json_file: the one strict JSON reader for files ropecheck reads (a spec, a saved report, a
// .safetensors header). Strict where nlohmann::json::parse is lenient or unhelpful:
//   * only a regular file of at most json_file_max_bytes is read (io/file_bytes.h: a FIFO, a
//     directory or /dev/zero is refused before a byte is read);
//   * a repeated key in one object is an error naming it (RFC 8259 §4 leaves duplicates to
//     the implementation; nlohmann keeps the last one silently);
//   * a number outside double's range (1e999) is an error naming the field path, not
//     "[json.exception.out_of_range.406]";
//   * nesting deeper than json_max_depth is refused.
// Every error is an io_error: "<file>: field '<path>': <problem> '<value>'", where <path> is
// the JSON path of the value (rope_scaling.factor, shape[2]), or "JSON" for a syntax error.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ropecheck {

// Far above any config.json or report ropecheck reads or writes (a gate report with every
// mutant is well under 1 MiB), far below what would exhaust memory.
inline constexpr std::size_t json_file_max_bytes = std::size_t{64} << 20;
inline constexpr int json_max_depth = 256;

nlohmann::json read_json_file(const std::filesystem::path& path,
                              std::size_t max_bytes = json_file_max_bytes);

// The same rules on text already in memory; `file` names it in messages. `part` names a JSON
// document inside a file (a .safetensors "header"): fields read "header field 'a.b'".
nlohmann::json parse_json_strict(std::string_view text, std::string_view file,
                                 std::string_view part = {});

}  // namespace ropecheck
