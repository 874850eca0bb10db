// spec_options: --spec, --layer-type, --layer and --tower, the flags every tensor-taking
// subcommand (reference, apply, audit, identify) reads its spec with, declared once over
// core/rope_inputs.h's rope_input_paths.
#pragma once

#include <CLI/CLI.hpp>

#include "core/rope_inputs.h"

namespace ropecheck::cli {

void add_spec_options(CLI::App& cmd, core::rope_input_paths& inputs);

}  // namespace ropecheck::cli
