// report_text: what every report file a user reads holds to — valid UTF-8. File names, tensor
// names and labels are the user's bytes (a file name on Linux may hold 0xff); JSON, HTML,
// Markdown and JUnit XML are UTF-8 documents, so each byte that is not part of a well-formed
// UTF-8 sequence is written as U+FFFD, the replacement character (docs/report-schema.md).
// One rule for every report writer: json_text for JSON, valid_utf8 for everything else.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ropecheck::reports {

// `text` with every maximal ill-formed subsequence (Unicode §3.9, as browsers and Python's
// errors="replace" do) replaced by U+FFFD; well-formed text comes back unchanged.
std::string valid_utf8(std::string_view text);

// The text of a JSON report: strings made valid UTF-8 (as valid_utf8), every number readable
// back (a non-finite number as "Infinity", "-Infinity" or "NaN"), two-space indented, one
// final newline.
std::string json_text(nlohmann::json j);

}  // namespace ropecheck::reports
