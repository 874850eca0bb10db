// identify: the RoPE convention inferred from X, the positions and Y alone (`ropecheck
// identify`) — the pass-through dims, the pairing, the per-pair angles and from them
// θ_j, the base snapped to a conventional value and the named scaling as a config writes it
// (identify_conventions.h; explicit per-pair frequencies when none fits), the attention
// factor, a constant position offset, and the rounding recipe (an audit against the inferred
// spec). Each inference carries a confidence, and what the data cannot decide is said. The
// spec it writes is one `ropecheck audit` reads unchanged.
// With position streams ([3, tokens] M-RoPE, [2, tokens] 2-D vision positions)
// it also finds the stream layout (rope_spec.h stream_rule): which stream each pair's angle
// follows, from the per-pair angles, then the one known rule (and sections) that maps pairs to
// those streams; vision rows-first and alternating share that map and are told apart by which
// frequency order a named convention fits. The per-row angle tolerance follows a float32
// recipe's angle error, which grows with the position. Positions whose streams cannot be told
// apart (equal streams in every row, or several layouts fitting) are refused as bad input,
// never guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "audit/identify_conventions.h"
#include "io/tensor.h"
#include "numeric/dtype.h"
#include "reports/audit_report.h"
#include "spec/rope_spec.h"

namespace ropecheck::audit {

struct identify_input {
  tensor x, y;                          // [rows, heads, head_dim] (any leading shape), same shape
  std::vector<std::int64_t> positions;  // one per row; with streams > 1 streams × rows, stream-major
  int streams = 1;                      // position streams per token: 1, 3 (t, h, w) or 2 (row, col)
  std::int64_t heads = 1;
  dtype judged = dtype::float32;
  std::string x_file, positions_file, y_file;
};

struct identification {
  int head_dim = 0, rotary_dim = 0;
  double rotary_confidence = 0;   // fraction of sampled vectors whose pass-through dims equal X
  pairing pair = pairing::half_split;
  double pairing_confidence = 0;  // fraction of pairs whose norm the pairing preserves (× A²)
  std::vector<double> theta;      // fitted θ_j per pair (radians per position; θ_{f(j)} with streams)
  std::vector<bool> theta_read;   // false: the pair turned by no more than the noise (θ_j is that bound)
  int streams = 1;                // position streams given
  stream_layout layout;           // the stream rule found (single with one stream)
  int stream_distinct_pairs = 0;  // pairs whose stream the data determines alone
  double base = 0;                // rope_theta written (convention.base)
  bool base_undetermined = false; // every pair at frequency index 0 (one pair): base is nominal
  double linear_factor = 1;
  bool explicit_frequencies = false;  // no named scaling fits: the spec lists θ_j
  double frequency_residual = 0;  // max |θ_j / model − 1| over pairs with a precise θ_j
  named_convention convention;   // the base snapped, the scaling named (identify_conventions.h)
  double attention_factor = 1;
  bool attention_written = false; // not the named scaling's own A: the spec states it
  double attention_spread = 0;    // relative spread of ‖y‖/‖x‖ over pairs
  std::int64_t offset = 0;        // Y is the rotation at position + offset
  double offset_confidence = 0;   // fraction of low-frequency pairs agreeing on it
  rope_spec spec;                 // what the spec file says
  reports::recipe_fit recipe;     // from an audit of Y against `spec` at position + offset
  bool audit_passed = false;
};

identification identify(const identify_input& in);

// The spec file (rope_spec's JSON keys, as spec/spec_reader.cpp reads them).
nlohmann::json spec_json(const identification& id);
// The identification as a report: the inferences, their confidence, and the spec.
nlohmann::json identification_json(const identification& id);
std::string identification_text(const identification& id);

}  // namespace ropecheck::audit
