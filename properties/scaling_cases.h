// scaling_cases: generated RoPE specs with frequency scaling (docs/scaling.md) and attention
// factors, written as the JSON a config.json carries and read by the spec reader, so the
// properties see exactly what a user's spec produces. Realistic parameters: every type of the
// scaling catalog (spec/scaling_readers.h) and every scaling_convention, each parameter at the
// values published configs give it (factors 2–64, original contexts 2K–128K, YaRN's mscale /
// beta / truncate variants, Llama 3.1's band factors, LongRoPE factor lists), sequence lengths at and around the regime switches (L0, L0 + 1, L0 + 2, L_max), and now and
// then an explicit `attention_factor` (any A in [1/4, 4], including A just above a power of
// two, where error_bounds.h §16's coefficient is largest). Shown in a counterexample as the
// JSON itself.
#pragma once

#include <rapidcheck.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "properties/generators.h"
#include "spec/rope_spec.h"

namespace ropecheck::properties {

struct generated_spec {
  nlohmann::json config;  // what a config.json would say
  rope_spec spec;         // parse_spec(config)
};

inline void showValue(const generated_spec& g, std::ostream& os) { os << g.config.dump(); }

namespace gen {

// A spec for `shape` with a rope_scaling of any type (sequence_length always given, so θ'_j and
// A do not depend on the call), sometimes with an explicit attention_factor.
rc::Gen<generated_spec> scaled_spec(const rope_shape& shape);

// What a kernel case rotates by: plain RoPE (3 in 6), plain RoPE with an explicit attention
// factor (1 in 6), or a scaled spec (2 in 6). Shrinks toward plain RoPE. Without
// `with_attention_factor` every spec has A = 1: plain (3 in 5) or scaled with attention_factor 1.
rc::Gen<generated_spec> kernel_spec(const rope_shape& shape, bool with_attention_factor = true);

}  // namespace gen
}  // namespace ropecheck::properties
