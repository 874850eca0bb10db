// case_files: the judged cases of a kernel's failures, one file each (case_files.h).
#include "properties/case_files.h"

#include <system_error>

#include "io/atomic_file.h"
#include "io/io_error.h"

namespace ropecheck::properties {

written_cases write_case_files(const std::filesystem::path& dir, std::string_view kernel, const property_result& p) {
  written_cases out;
  if (p.passed || p.state != run_state::ran) return out;
  if (!p.worst_data && !p.counterexample_data) {
    out.without_case.push_back(p.name + "/" + p.dtype);
    return out;
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw io_error(dir.string(), "--cases-out", "cannot be created: " + error.message(), dir.string());
  for (const auto& [data, role] : {std::pair{&p.worst_data, "worst"}, std::pair{&p.counterexample_data, "counterexample"}}) {
    if (!*data) continue;
    const std::filesystem::path file =
        dir / (std::string(kernel) + "__" + p.name + "__" + p.dtype + "__" + role + ".json");
    const std::string text = judged_case_json(**data, std::string(kernel), role);
    write_file_atomically(file, [&text](std::ostream& os) { os << text; });
    out.files.push_back(file);
  }
  return out;
}

}  // namespace ropecheck::properties
