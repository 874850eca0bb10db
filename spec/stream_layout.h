// stream_layout maps: which position stream s(j) and which frequency index f(j) rotated pair j
// takes (rope_spec.h states each rule and its source). The one spelling of these maps outside
// reference/, which states them again on its own (reference/rope_streams.cpp) so that the oracle
// shares no code with what it judges.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "spec/rope_spec.h"

namespace ropecheck {

// stream_layout_problem: "" if the layout fits rotary_dim (M-RoPE sections of three positive
// counts summing to rotary_dim/2; vision: rotary_dim/2 even), else why not.
// stream_of_pair, frequency_of_pair: s(j) and f(j) for 0 <= j < rotary_dim/2 (the layout must fit).
// pair_streams: s(j) for every pair, the per-pair stream map kernels take (kernel_abi.h).
// pair_frequencies: θ_{f(j)} for every pair, from θ_i (i < rotary_dim/2) as 1-D RoPE has them.
// Header-only: fast/ uses them without linking spec/'s JSON reader.

inline std::string stream_layout_problem(const stream_layout& layout, int rotary_dim) {
  const int pairs = rotary_dim / 2;
  if (layout.vision()) {
    if (!layout.section.empty()) return "a vision layout has no sections";
    if (pairs % 2 != 0)
      return "a 2-D vision layout splits the " + std::to_string(pairs) +
             " pairs between rows and columns, which needs an even count (rotary_dim a multiple of 4)";
    return "";
  }
  if (layout.rule == stream_rule::single) return layout.section.empty() ? "" : "sections without M-RoPE";
  if (layout.section.size() != 3)
    return "M-RoPE needs 3 sections, got " + std::to_string(layout.section.size());
  int total = 0;
  for (int n : layout.section) {
    if (n < 1) return "M-RoPE section " + std::to_string(n) + " is not positive";
    total += n;
  }
  if (total != pairs)
    return "M-RoPE sections sum to " + std::to_string(total) + " pairs, not rotary_dim/2 = " +
           std::to_string(pairs);
  return "";
}

inline int stream_of_pair(const stream_layout& layout, int rotary_dim, int j) {
  const int half = rotary_dim / 4;  // vision: pairs per axis
  const auto& s = layout.section;
  switch (layout.rule) {
    case stream_rule::single: return 0;
    case stream_rule::mrope_sections: return j < s[0] ? 0 : j < s[0] + s[1] ? 1 : 2;
    case stream_rule::mrope_interleaved:
      if (j % 3 == 1 && j < 3 * s[1]) return 1;
      if (j % 3 == 2 && j < 3 * s[2]) return 2;
      return 0;
    case stream_rule::mrope_interleaved_4:  // the sections sum to the pairs: ggml's sector is j
      return j < 3 * s[static_cast<std::size_t>(j % 3)] ? j % 3 : 3;
    case stream_rule::vision_rows_first:
    case stream_rule::vision_alternating: return j < half ? 0 : 1;
    case stream_rule::vision_columns_first: return j < half ? 1 : 0;
  }
  return 0;
}

inline int frequency_of_pair(const stream_layout& layout, int rotary_dim, int j) {
  const int half = rotary_dim / 4;
  switch (layout.rule) {
    case stream_rule::vision_rows_first:
    case stream_rule::vision_columns_first: return 2 * (j % half);
    case stream_rule::vision_alternating: return j < half ? 2 * j : 2 * (j - half) + 1;
    default: return j;
  }
}

inline std::vector<std::int32_t> pair_streams(const stream_layout& layout, int rotary_dim) {
  std::vector<std::int32_t> map(static_cast<std::size_t>(rotary_dim / 2));
  for (int j = 0; j < rotary_dim / 2; ++j) map[static_cast<std::size_t>(j)] = stream_of_pair(layout, rotary_dim, j);
  return map;
}

inline std::vector<double> pair_frequencies(const stream_layout& layout, const std::vector<double>& theta) {
  if (!layout.vision()) return theta;  // f(j) = j
  const int rotary_dim = static_cast<int>(theta.size()) * 2;
  // The spec reader refuses a layout that does not fit; reaching here with one is a logic error.
  if (const std::string problem = stream_layout_problem(layout, rotary_dim); !problem.empty())
    throw std::logic_error("pair_frequencies: " + problem);
  std::vector<double> out(theta.size());
  for (int j = 0; j < rotary_dim / 2; ++j)
    out[static_cast<std::size_t>(j)] = theta[static_cast<std::size_t>(frequency_of_pair(layout, rotary_dim, j))];
  return out;
}

}  // namespace ropecheck
