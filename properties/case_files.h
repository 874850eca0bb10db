// case_files: `gate --cases-out DIR` — each failed property's worst case and shrunk
// counterexample written as judged case files (judged_case.h), named
// "<kernel>__<property>__<dtype>__worst.json" and "…__counterexample.json", for
// `ropecheck replay` (docs/cli.md). Only properties that judge each output against a reference
// keep their cases as calls (within_bound_of_reference, norm_preserved); the others are listed
// as having none.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "properties/kernel_properties.h"

namespace ropecheck::properties {

struct written_cases {
  std::vector<std::filesystem::path> files;
  std::vector<std::string> without_case;  // "<property>/<dtype>" failures that keep no case
};

// Writes the case files of a failed property of `kernel` into `dir` (created, with its parents,
// if absent), each atomically (io/atomic_file.h); nothing for one that passed or did not run.
// Throws io_error when a file cannot be written.
written_cases write_case_files(const std::filesystem::path& dir, std::string_view kernel, const property_result& p);

}  // namespace ropecheck::properties
