// identify_conventions: the named convention behind fitted inverse frequencies θ_j (used by
// identify.h) — a conventional base snapped from the fit, and a named rope_scaling (linear,
// ntk, dynamic, llama3, yarn) written as a config writes it, or explicit frequencies when none
// fits (LongRoPE factors; named longrope when its attention factor gives its context lengths).
// Each candidate is a config the spec reader parses and whose θ'_k the reference computes
// (reference/scaling.h, docs/scaling.md): the formulas live in one place, identify only
// proposes parameters. A candidate fits when every usable θ_j is within its tolerance (what
// the data's angle noise and a float32 recipe's frequency rounding leave). Candidates are
// tried simplest first (the fewest significant digits, default parameters); a candidate of
// another type that fits too is reported with the reason, never hidden.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ropecheck::audit {

struct frequency_evidence {
  std::vector<double> theta;      // θ_j as fitted, per pair
  std::vector<int> index;         // f(j): the frequency index pair j takes (j, or a vision rule's)
  std::vector<double> precision;  // relative uncertainty of θ_j from the output's noise (line-fit weights)
  std::vector<double> tolerance;  // |θ_j / model − 1| a fitting model may leave; +inf: too imprecise
  int rotary_dim = 0, head_dim = 0;
  double attention = 1;            // A as measured (‖y‖/‖x‖)
  double attention_tolerance = 0;  // relative: A's a named scaling may differ from it by this
  std::int64_t sequence_length = 0;  // max position + 1: the length dynamic NTK scales to
};

struct named_convention {
  std::string type = "none";        // none, linear, ntk, dynamic, llama3, yarn; longrope or
                                    // explicit: per-pair θ_j (longrope: its A named too)
  double base = 0;                  // rope_theta as written
  double raw_base = 0;              // the fitted base before snapping (plain or the scaling's own)
  bool base_snapped = false;        // base != raw_base: a conventional value the data allow
  double base_uncertainty = 0;      // relative half-width of the bases a plain fit allows
  bool base_undetermined = false;   // every pair at frequency index 0: the base is nominal
  nlohmann::json rope_scaling;      // the rope_scaling block (null for none and explicit)
  nlohmann::json top_level;         // other spec keys the scaling needs (dynamic: max_position_embeddings)
  double factor = 1;                // the scaling's s (1 for none)
  double raw_factor = 1;            // linear: the fitted s before snapping
  std::string snap_refused;         // why identify kept the fitted base (identify.cpp), "" if not
  double attention_factor = 1;      // A the named scaling implies
  std::vector<double> model_theta;  // θ'_k per frequency index (rotary_dim/2 entries)
  double residual = 0;              // max over usable pairs |θ_j / model − 1| / tolerance_j
  double frequency_residual = 0;    // max over usable pairs |θ_j / model − 1|
  double confidence = 0;            // 1 when no other named type fits; 1/(1 + others) else
  std::vector<std::string> also_fit;  // other types' simplest fitting configs
  std::string undecided;            // why the data cannot decide ("" when they do)
};

named_convention name_convention(const frequency_evidence& e);

// "rope_theta 10000, yarn factor 4, original_max_position_embeddings 4096": one line.
std::string describe(const named_convention& c);

}  // namespace ropecheck::audit
