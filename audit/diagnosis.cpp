// The diagnosis (diagnosis.h): detectors, the recipe fit, and the findings about the data.
#include "audit/diagnosis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "audit/detector_catalog.h"
#include "audit/forensics.h"
#include "audit/sample.h"

namespace ropecheck::audit {
namespace {

// position_outside_context: positions no model sequence has (negative), or at or past the
// context the config declares (max_position_embeddings; dynamic NTK is built to go past it).
// A property of the data, stated without changing the verdict: the rotation there is still
// judged against the reference, which is defined for every |m| <= 2^31 - 1. With position
// streams (M-RoPE [3, tokens], 2-D vision) every stream is checked, not only the first (the one
// reports show): a row counts once, whichever of its streams is out of range, and the message
// names the streams.
struct out_of_range {
  std::int64_t rows = 0;
  std::optional<std::int64_t> extreme;  // lowest negative, or highest past the context
  std::vector<bool> in_stream;
  std::string where(int streams) const {
    if (streams == 1) return "";
    std::vector<int> which;
    for (int s = 0; s < streams; ++s)
      if (in_stream[static_cast<std::size_t>(s)]) which.push_back(s);
    return fmt::format("; in stream{} {} of {}", which.size() > 1 ? "s" : "", fmt::join(which, ", "), streams);
  }
};

void diagnose_context(const audit_input& in, std::vector<reports::finding>& out) {
  const std::int64_t context =
      type_of(in.spec.scaling) == scaling_type::dynamic ? 0 : in.spec.max_position_embeddings;
  const auto rows = static_cast<std::int64_t>(in.positions.size());
  const int streams = in.stream_positions.empty() ? 1 : in.spec.streams.streams();
  out_of_range negative, past;
  negative.in_stream.assign(static_cast<std::size_t>(streams), false);
  past.in_stream = negative.in_stream;
  for (std::int64_t row = 0; row < rows; ++row) {
    bool row_negative = false, row_past = false;
    for (int s = 0; s < streams; ++s) {
      const std::int64_t m = streams == 1 ? in.positions[static_cast<std::size_t>(row)]
                                          : in.stream_positions[static_cast<std::size_t>(s * rows + row)];
      if (m < 0) {
        row_negative = true;
        negative.extreme = std::min(negative.extreme.value_or(m), m);
        negative.in_stream[static_cast<std::size_t>(s)] = true;
      } else if (context > 0 && m >= context) {
        row_past = true;
        past.extreme = std::max(past.extreme.value_or(m), m);
        past.in_stream[static_cast<std::size_t>(s)] = true;
      }
    }
    negative.rows += row_negative;
    past.rows += row_past;
  }
  if (negative.rows > 0)
    out.push_back({"position_outside_context",
                   fmt::format("{} of {} rows have negative positions (lowest {}{}): no model sequence has them (an "
                               "underflowed position offset?); they were judged as rotations by R(m), m < 0",
                               negative.rows, rows, *negative.extreme, negative.where(streams)),
                   0, ""});
  if (past.rows > 0)
    out.push_back({"position_outside_context",
                   fmt::format("{} of {} rows have positions at or past max_position_embeddings {} (highest {}{}): "
                               "beyond the context the model is configured for; the rotation there was still "
                               "judged against the reference", past.rows, rows, context, *past.extreme,
                               past.where(streams)),
                   0, ""});
}

}  // namespace

void diagnose(const audit_input& in, const reference::double_tier& tier, const sample& sampled,
              reports::audit_report& r) {
  std::vector<reports::finding> causes, data;
  if (r.non_finite > 0)
    data.push_back({"non_finite", fmt::format("{} non-finite values (NaN or infinity) in the input or output",
                                              r.non_finite),
                    0, ""});
  if (r.passthrough_modified > 0)
    data.push_back({"passthrough_modified",
                    fmt::format("{} of {} pass-through dims (past rotary_dim {}) differ from {}",
                                r.passthrough_modified, r.passthrough_checked, in.spec.rotary_dim,
                                in.output_scale == 1.0f
                                    ? std::string("the input; they must be copied bit for bit")
                                    : fmt::format("round(x / {}); with an output scale they are stored scaled, as "
                                                  "the rotated dims", in.output_scale)),
                    0, ""});
  diagnose_context(in, data);
  diagnosis_context c{in, sampled,
                      tolerance_rule{in.tolerance_units, in.judged, bounds::attention_scale_for(tier.attention_factor()),
                                     in.output_scale},
                      std::vector<double>(tier.inverse_frequencies().begin(), tier.inverse_frequencies().end())};
  // The recipe fit (forensics.h) replays each recipe's roundings at one position per row; with
  // position streams it would round the wrong angles, so it is not run and the report says so
  // (the detectors below do run: they recompute at every stream's position).
  const bool streams = !in.stream_positions.empty();
  forensics_result f;
  if (!streams) {
    f = attribute(c, tier);
    r.recipe = f.recipe;
    r.attribution = f.attribution;
  }

  if (r.outputs_beyond_tolerance > 0) {
    for (const detector& d : detectors())
      if (auto finding = d.detect(c)) causes.push_back(std::move(*finding));
    // A bug a detector names explains the output on its own: the recipe's stages are then not
    // causes (they were fitted to a rotation that is not the configured one).
    if (causes.empty())
      for (auto& finding : f.findings)
        if (finding.code != "output_rounding") causes.push_back(std::move(finding));
    std::stable_sort(causes.begin(), causes.end(),
                     [](const reports::finding& a, const reports::finding& b) { return a.share > b.share; });
    const auto rounding = std::find_if(f.findings.begin(), f.findings.end(),
                                       [](const reports::finding& x) { return x.code == "output_rounding"; });
    if (causes.empty() && streams) {
      causes.push_back({"unexplained",
                        fmt::format("{} outputs exceed the tolerance and no known bug (pairing, position offset, "
                                    "scale factor, output scale, stream layout) reproduces them; the recipe fit (positions, "
                                    "frequencies, angles, cos/sin, arithmetic) replays one position per row and "
                                    "is not run on position streams ({} layout)",
                                    r.outputs_beyond_tolerance, to_string(in.spec.streams.rule)),
                        1, "no recipe fitted"});
    }
    if (causes.empty()) {
      double residual = 0;
      for (const auto& a : r.attribution)
        if (a.stage == "unexplained") residual = a.share;
      causes.push_back({"unexplained",
                        fmt::format("{} outputs exceed the tolerance and no recipe or known bug (pairing, position "
                                    "offset, scale factor, output scale, low-precision positions, frequencies, angles, cos/sin "
                                    "or arithmetic) reproduces them", r.outputs_beyond_tolerance),
                        residual,
                        r.recipe.fitted ? fmt::format("the closest recipe leaves {:.3g} units on average",
                                                      r.recipe.residual_units)
                                        : "no rotated output was sampled"});
    }
    // output_rounding: after every other cause, never the main one unless nothing else is.
    if (rounding != f.findings.end() && rounding->share >= 0.05) causes.push_back(*rounding);
  }
  r.diagnosis = std::move(causes);
  r.diagnosis.insert(r.diagnosis.end(), data.begin(), data.end());
}

}  // namespace ropecheck::audit
