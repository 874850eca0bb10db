// The spec flags of the tensor-taking subcommands (cli/spec_options.h).
#include "cli/spec_options.h"

#include <cstdint>

#include "cli/decimal_options.h"

namespace ropecheck::cli {

void add_spec_options(CLI::App& cmd, core::rope_input_paths& inputs) {
  cmd.add_option("--spec", inputs.spec, "RoPE spec (a Hugging Face config.json works)")->required();
  cmd.add_option("--layer-type", inputs.layer_type,
                 "the layer type whose RoPE to use, when the config has one per layer type "
                 "(e.g. full_attention, sliding_attention)");
  add_decimal_option(cmd, "--layer", inputs.layer, std::int64_t{0}, std::int64_t{2147483647},
                 "the layer (0-based) whose RoPE to use: refused when the config does not give "
                 "num_hidden_layers, when it is past the last layer, or when that layer applies no "
                 "RoPE (Llama 4's NoPE layers, Cohere2's full-attention layers)");
  cmd.add_option("--tower", inputs.tower,
                 "vision: the 2-D RoPE of the config's vision_config (positions [2, tokens]: row, "
                 "column); text (default): the text model's RoPE")
      ->check(CLI::IsMember({"text", "vision"}));
}

}  // namespace ropecheck::cli
