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
#include "audit/recipe_search.h"
#include "audit/sample.h"
#include "bounds/accuracy_contracts.h"
#include "recipes/recipe_catalog.h"

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

// The recipes a bug is looked for on top of, narrowest first: the one the audit fitted (when it
// is not a correct kernel's), then those of most real kernels — float32 angles, a float16 or
// bfloat16 cos/sin cache, both, and for an output of that 16-bit type both with its arithmetic
// (PyTorch's native 16-bit path: Hugging Face in float16 or bfloat16; its error allowed on
// another output would excuse that output's own bugs).
std::vector<recipes::recipe> suspected_recipes(const std::optional<recipes::recipe>& fitted, dtype judged) {
  std::vector<recipes::recipe> out;
  const recipes::recipe correct = recipes::correct_kernel_recipe(dtype::float32);
  const auto add = [&](recipes::recipe r) {
    r.output = dtype::float32;
    if (!(r == correct) && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  };
  if (fitted) add(*fitted);
  recipes::recipe angles = correct;
  angles.angle = dtype::float32, angles.trig = dtype::float32;
  add(angles);
  for (const dtype cache : {dtype::float16, dtype::bfloat16}) {
    recipes::recipe cached = correct, both = angles;
    cached.cache = cache, both.cache = cache;
    add(cached);
    add(both);
    both.arithmetic = cache;
    if (judged == cache) add(both);
  }
  return out;
}

std::optional<std::vector<reports::finding>> bug_under_a_recipe(diagnosis_context& c,
                                                                const reference::double_tier& tier,
                                                                const forensics_result& f) {
  for (const recipes::recipe& r : suspected_recipes(f.found, c.in.judged)) {
    const bounds::accuracy_contract contract = bounds::contract_of_recipe(bounds::recipe_spelling(r), "", r);
    c.recipe = &contract;
    // The recipe alone explains Y: no bug on top of it (the recipe's stages are the causes).
    const bool recipe_alone = diagnosis_context::explains(c.explain([&](const sampled_vector& v, std::span<double> ref) {
      diagnosis_context::rotate_at(tier, v, c.positions_of(v), ref);
    }));
    std::vector<reports::finding> found;
    if (!recipe_alone)
      for (const detector& d : detectors())
        if (d.under_recipes)
          if (auto finding = d.detect(c)) found.push_back(std::move(*finding));
    c.recipe = nullptr;
    if (found.empty()) continue;
    std::stable_sort(found.begin(), found.end(),
                     [](const reports::finding& a, const reports::finding& b) { return a.share > b.share; });
    for (auto& finding : found)
      finding.evidence += fmt::format("; with the error of the recipe {} allowed (docs/error-bounds.md §17)",
                                      contract.name);
    // Then the recipe's own stages, as fitted, or the suspected recipe when the fit named none.
    std::size_t stages = 0;
    for (const auto& finding : f.findings)
      if (finding.code != "output_rounding" && finding.code != "unexplained") found.push_back(finding), ++stages;
    if (stages == 0)
      found.push_back({"angle_precision",
                       fmt::format("the bug above sits on top of the recipe {}, whose error the audit allowed to "
                                   "recognise it", contract.name),
                       0, ""});
    return found;
  }
  return std::nullopt;
}

bool is_stage_code(const std::string& code) {
  const auto& stages = search_stages();
  return std::any_of(stages.begin(), stages.end(), [&](const search_stage& s) { return s.code == code; });
}

// The recipe fit and attribution under `spec` (a config neighbour Y matches): the sample's
// exact outputs recomputed under it, the rest of the audit's input as it is.
forensics_result refit_under(const audit_input& in, const sample& sampled, const diagnosis_context& c,
                             const rope_spec& spec) {
  audit_input corrected;  // the audit's input without its tensors (the sample holds the rows)
  corrected.spec = spec;
  corrected.positions = in.positions;
  corrected.stream_positions = in.stream_positions;
  corrected.heads = in.heads;
  corrected.tokens_per_sequence = in.tokens_per_sequence;
  corrected.judged = in.judged;
  corrected.tolerance_units = in.tolerance_units;
  corrected.contract = in.contract;
  corrected.output_scale = in.output_scale;
  const reference::double_tier tier(spec, c.sampled_positions());
  sample resampled = sampled;
  for (sampled_vector& v : resampled.vectors) diagnosis_context::rotate_at(tier, v, c.positions_of(v), v.ref);
  const diagnosis_context under{corrected, resampled,
                                tolerance_of(in, tier),
                                std::vector<double>(tier.inverse_frequencies().begin(), tier.inverse_frequencies().end()),
                                nullptr, std::nullopt};
  return attribute(under, tier);
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
                      tolerance_of(in, tier),
                      std::vector<double>(tier.inverse_frequencies().begin(), tier.inverse_frequencies().end()),
                      nullptr, std::nullopt};
  // The recipe fit (forensics.h) replays each recipe's roundings at each pair's stream position.
  const forensics_result f = attribute(c, tier);
  r.recipe = f.recipe;
  r.attribution = f.attribution;

  if (r.outputs_beyond_tolerance > 0) {
    for (const detector& d : detectors())
      if (auto finding = d.detect(c)) causes.push_back(std::move(*finding));
    std::stable_sort(causes.begin(), causes.end(),
                     [](const reports::finding& a, const reports::finding& b) { return a.share > b.share; });
    // A bug on top of a low-precision recipe: real kernels compute their angles in float32, and
    // their bugs sit on top of that. Under each suspected recipe that does not explain Y alone,
    // the detectors run again with the recipe's derived error allowed; a bug they then name is
    // the first cause, and the recipe's stages the next ones.
    if (causes.empty())
      if (auto under = bug_under_a_recipe(c, tier, f)) causes = std::move(*under);
    // A bug a detector names explains the output on its own: the recipe's stages are then not
    // causes (they were fitted to a rotation that is not the configured one).
    if (causes.empty()) {
      for (auto& finding : f.findings)
        if (finding.code != "output_rounding") causes.push_back(finding);
      std::stable_sort(causes.begin(), causes.end(),
                       [](const reports::finding& a, const reports::finding& b) { return a.share > b.share; });
      // The main cause is that of most failing outputs; the worst output's is stated beside it.
      if (!causes.empty() && f.worst_output)
        causes.front().message += causes.front().code == f.worst_output->code
                                      ? "; it is also the largest part at the worst output"
                                      : "; " + f.worst_output->sentence;
    }
    // A config field read wrong: the recipe is refitted under the spec Y matches, and its stages
    // follow the config_mismatch in place of those fitted to the audited spec's rotation.
    std::optional<forensics_result> corrected;
    if (!causes.empty() && causes.front().code == "config_mismatch" && c.matched_config) {
      corrected = refit_under(in, sampled, c, *c.matched_config);
      std::erase_if(causes, [](const reports::finding& x) { return is_stage_code(x.code); });
      for (const auto& finding : corrected->findings)
        if (finding.code != "output_rounding") causes.push_back(finding);
      r.recipe = corrected->recipe;
      r.attribution = corrected->attribution;
    }
    const forensics_result& fitted = corrected ? *corrected : f;
    const auto rounding = std::find_if(fitted.findings.begin(), fitted.findings.end(),
                                       [](const reports::finding& x) { return x.code == "output_rounding"; });
    if (causes.empty()) {
      double residual = 0;
      for (const auto& a : r.attribution)
        if (a.stage == "unexplained") residual = a.share;
      causes.push_back({"unexplained",
                        fmt::format("{} outputs exceed the tolerance and no recipe or known bug (pairing, position "
                                    "offset, scale factor, output scale, a config field read wrong, low-precision "
                                    "positions, frequencies, angles, cos/sin or arithmetic) reproduces them",
                                    r.outputs_beyond_tolerance),
                        residual,
                        r.recipe.fitted ? fmt::format("the closest recipe leaves {:.3g} units on average",
                                                      r.recipe.residual_units)
                                        : "no rotated output was sampled"});
    }
    // output_rounding: after every other cause, never the main one unless nothing else is.
    if (rounding != fitted.findings.end() && rounding->share >= 0.05) causes.push_back(*rounding);
  }
  r.diagnosis = std::move(causes);
  r.diagnosis.insert(r.diagnosis.end(), data.begin(), data.end());
}

}  // namespace ropecheck::audit
