// diagnosis_context: what every detector and the recipe fit share — the audit's input, the
// sample, the tolerance rule and θ_j — and `explain`, the fraction of sampled outputs within
// tolerance of a reference recomputed the way a suspected bug would have made it, stored with
// the audited call's fp8 output scale σ (1 unless --output-scale) as the verdict judges it. With position
// streams (M-RoPE, 2-D vision) a sampled row has a position per stream: positions_of and
// rotate_at recompute at those, so every detector runs on stream inputs too.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "audit/audit.h"
#include "audit/sample.h"
#include "bounds/accuracy_contracts.h"
#include "audit/tolerance.h"
#include "reference/double_tier.h"
#include "spec/pair_index.h"

namespace ropecheck::audit {

struct explanation {
  double within = 0;     // fraction of sampled outputs within tolerance of the alternative
  double max_units = 0;  // worst error against it, units of 2^-24
};

struct diagnosis_context {
  const audit_input& in;
  const sample& sampled;
  tolerance_rule rule;
  std::vector<double> theta;  // θ'_j the double tier rotates by
  // A recipe the kernel is suspected to follow besides the bug (a float32-angle kernel with an
  // off-by-one): explain() then widens each output's tolerance by the recipe's derived extra
  // error (bounds/accuracy_contracts.h), so that a bug is recognised on top of a low-precision
  // recipe. Null: a correct kernel's tolerance.
  const bounds::accuracy_contract* recipe = nullptr;
  // The neighbouring spec config_mismatch last matched (detectors.cpp): the diagnosis refits the
  // recipe under it, since the one fitted under the audited spec fitted the wrong rotation.
  mutable std::optional<rope_spec> matched_config = {};

  // The sampled row's position in each stream of the spec's layout ({v.position} with one).
  std::vector<std::int64_t> positions_of(const sampled_vector& v) const;
  // Every sampled row's positions, every stream, each shifted by every k in `shifts`: the
  // positions a tier for a recomputation is built over.
  std::vector<std::int64_t> sampled_positions(std::span<const int> shifts = {}) const;
  // `tier`'s rotation of v.x at `positions` (one per stream of the tier's spec: a tier of another
  // layout reads the same streams differently).
  static void rotate_at(const reference::double_tier& tier, const sampled_vector& v,
                        std::span<const std::int64_t> positions, std::span<double> out);

  // alternative(vector, ref_out) writes the suspected reference for one sampled vector, unscaled;
  // it is compared with Y as stored with the call's fp8 output scale σ — sat(ref / σ), within
  // the tolerance of that σ — as the verdict judges (judge_pairs.h). `stored_scale` replaces σ
  // for a bug that applies the scale wrongly (detect_output_scale).
  using alternative_rotation = std::function<void(const sampled_vector&, std::span<double>)>;
  explanation explain(const alternative_rotation& alternative) const { return explain(alternative, in.output_scale); }
  explanation explain(const alternative_rotation& alternative, double stored_scale) const {
    return explain(alternative, stored_scale, in.spec.pair);
  }
  // `pairs`: the pairing the alternative rotates by, whose pair norms the tolerance scales with.
  explanation explain(const alternative_rotation& alternative, double stored_scale, pairing pairs) const {
    const int rotary = in.spec.rotary_dim;
    return explain(alternative, stored_scale, [pairs, rotary](int j) { return pair_of(pairs, rotary, j); });
  }
  // `pair_at(j)`: the two coordinates the alternative rotates as pair j (j < rotary_dim/2), the
  // outputs judged — for a pairing that is no spec's (a partner past the rotary dims).
  using pair_map = std::function<pair_index<int>(int)>;
  explanation explain(const alternative_rotation& alternative, double stored_scale, const pair_map& pair_at) const;
  static bool explains(const explanation& e) { return e.within >= 0.99; }
};

}  // namespace ropecheck::audit
