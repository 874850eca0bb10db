// Reading a contract (contract_spelling.h). A stage a spelling or file does not give keeps the
// correct kernel's choice (recipes::correct_kernel_recipe), as `exact` does; an audit's recipe
// gives every stage, and one from an older ropecheck that lacks a stage is refused.
#include "core/contract_spelling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "audit/detector_catalog.h"
#include "io/io_error.h"
#include "io/json_file.h"
#include "recipes/recipe_catalog.h"

namespace ropecheck::core {
namespace {

using nlohmann::json;
using recipes::recipe;

std::string stage_names() {
  std::string out;
  for (const auto& s : recipes::recipe_stages()) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

std::string choice_names(const recipes::recipe_stage& stage) {
  std::string out;
  for (const auto& c : stage.choices) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The storage dtypes a kernel's recipe can be given for.
std::optional<dtype> storage_dtype(std::string_view name) {
  const auto t = parse_dtype(name);
  if (!t || *t == dtype::float64 || !is_floating(*t)) return std::nullopt;
  return t;
}

// 'STAGE=CHOICE,…' onto the correct kernel's recipe.
recipe recipe_of_spelling(const std::string& text, std::string_view flag) {
  recipe r = recipes::correct_kernel_recipe(dtype::float32);
  std::vector<std::string_view> seen;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trimmed(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty() || (comma != std::string_view::npos && trimmed(rest).empty()))
      throw bad_input(flag, "has an empty item (a stray comma)", text, "STAGE=CHOICE,…");
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw bad_input(flag, "is not STAGE=CHOICE", item, "stages: " + stage_names());
    const std::string_view stage_name = trimmed(item.substr(0, eq)), choice_name = trimmed(item.substr(eq + 1));
    const recipes::recipe_stage* stage = recipes::find_stage(stage_name);
    if (stage == nullptr) throw bad_input(flag, "is not a recipe stage", stage_name, "stages: " + stage_names());
    for (std::string_view s : seen)
      if (s == stage_name) throw bad_input(flag, "gives a stage twice", stage_name);
    seen.push_back(stage_name);
    const recipes::recipe_choice* choice = recipes::find_choice(*stage, choice_name);
    if (choice == nullptr)
      throw bad_input(flag, fmt::format("is not a choice of stage {}", stage_name), choice_name,
                      "choices: " + choice_names(*stage));
    choice->set(r);
  }
  if (seen.empty()) throw bad_input(flag, "gives no stage", text, "stages: " + stage_names());
  return r;
}

// A recipe object as the audit's JSON "recipe" writes it. `complete`: every stage required (an
// audit's); `storage`: the dtype it is for, which an "output" field must name.
recipe recipe_of_object(const json& j, const std::string& file, const std::string& at, bool complete,
                        std::optional<dtype> storage) {
  if (!j.is_object()) throw io_error(file, at, "is not an object", j.dump());
  recipe r = recipes::correct_kernel_recipe(dtype::float32);
  for (const auto& [key, value] : j.items()) {
    const std::string field = at + "." + key;
    if (key == "bit_exact" || key == "residual_units" || key == "as_contract") continue;  // the audit's fit
    if (key == "output") {
      const auto t = value.is_string() ? storage_dtype(value.get<std::string>()) : std::nullopt;
      if (!t) throw io_error(file, field, "is not a storage dtype", value.dump());
      if (storage && *t != *storage)
        throw io_error(file, field, fmt::format("is not the dtype the recipe is for, {}", to_string(*storage)),
                       value.dump());
      continue;
    }
    const recipes::recipe_stage* stage = recipes::find_stage(key);
    if (stage == nullptr)
      throw io_error(file, field, "is not a recipe stage", key, "stages: " + stage_names() + "; output");
    const recipes::recipe_choice* choice =
        value.is_string() ? recipes::find_choice(*stage, value.get<std::string>()) : nullptr;
    if (choice == nullptr)
      throw io_error(file, field, "is not a choice of this stage", value.dump(), "choices: " + choice_names(*stage));
    choice->set(r);
  }
  if (complete)
    for (const auto& stage : recipes::recipe_stages())
      if (!j.contains(stage.name))
        throw io_error(file, at + "." + std::string(stage.name), "is missing (an audit by an older ropecheck: "
                       "audit the dump again)", "null");
  return r;
}

}  // namespace

bounds::accuracy_contract contract_of_json(const json& j, const std::string& path, const std::string& origin) {
  if (!j.is_object()) throw io_error(path, "(top level)", "is not an object", j.dump());
  for (const auto& [key, value] : j.items())
    if (key != "name" && key != "statement" && key != "recipe" && key != "recipes" && key != "positions" &&
        key != "max_position")
      throw io_error(path, key, "is not a contract field", value.dump(),
                     "name, statement, recipe, recipes, positions, max_position");
  if (j.contains("recipe") == j.contains("recipes"))
    throw io_error(path, "recipe", "give exactly one of recipe (every dtype) and recipes (per dtype)",
                   j.contains("recipe") ? "both" : "neither");
  bounds::accuracy_contract c;
  if (j.contains("recipe")) {
    // A recipe for every dtype names none: an "output" would hold the others to its dtype's.
    if (j["recipe"].is_object() && j["recipe"].contains("output"))
      throw io_error(path, "recipe.output", "names a dtype in a recipe for every dtype (give it as recipes.<dtype>)",
                     j["recipe"]["output"].dump());
    c.for_all = recipe_of_object(j["recipe"], path, "recipe", false, std::nullopt);
  } else {
    const json& per = j["recipes"];
    if (!per.is_object() || per.empty()) throw io_error(path, "recipes", "is not an object of dtypes", per.dump());
    for (const auto& [name, value] : per.items()) {
      const auto t = storage_dtype(name);
      if (!t) throw io_error(path, "recipes." + name, "is not a storage dtype", name);
      c.by_dtype.emplace_back(*t, recipe_of_object(value, path, "recipes." + name, false, t));
    }
  }
  if (j.contains("positions")) {
    const json& v = j["positions"];
    if (v != "all" && v != "nonnegative") throw io_error(path, "positions", "is not all or nonnegative", v.dump());
    c.nonnegative_positions = v == "nonnegative";
  }
  if (j.contains("max_position")) {
    const json& v = j["max_position"];
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0)
      throw io_error(path, "max_position", "must be a positive integer", v.dump());
    c.max_position = v.get<std::int64_t>();
  }
  std::string spelled;
  if (c.for_all) spelled = bounds::recipe_spelling(*c.for_all);
  for (const auto& [t, r] : c.by_dtype)
    spelled += (spelled.empty() ? "" : "; ") + std::string(to_string(t)) + ": " + bounds::recipe_spelling(r);
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().empty())
      throw io_error(path, "name", "must be a non-empty string", j["name"].dump());
    c.name = j["name"].get<std::string>();
    if (bounds::find_contract(c.name) != nullptr)
      throw io_error(path, "name", "is the name of a catalog contract; give the file's contract its own", c.name);
  } else {
    c.name = spelled;
  }
  if (j.contains("statement") && !j["statement"].is_string())
    throw io_error(path, "statement", "must be a string", j["statement"].dump());
  c.statement = j.contains("statement") ? j["statement"].get<std::string>() : "recipe " + spelled + origin;
  return c;
}

bounds::accuracy_contract contract_of_audit_json(const std::vector<audit_json>& audits, std::string_view flag) {
  bounds::accuracy_contract c;
  std::string names, statement;
  for (const auto& [path, shown, j] : audits) {
    if (!j.is_object() || j.value("report", json()) != "audit")
      throw io_error(path, "report", "is not an audit report (ropecheck audit --json)",
                     j.is_object() ? j.value("report", json()).dump() : j.dump());
    const json& dtype_field = j.value("dtype", json());
    const auto t = dtype_field.is_string() ? storage_dtype(dtype_field.get<std::string>()) : std::nullopt;
    if (!t) throw io_error(path, "dtype", "is not a storage dtype", dtype_field.dump());
    for (const auto& [seen, r] : c.by_dtype)
      if (seen == *t)
        throw bad_input(flag, fmt::format("gives a second audit of {} outputs", to_string(*t)), path,
                        "one audit per dtype");
    const json& rj = j.value("recipe", json());
    if (rj.is_null())
      throw io_error(path, "recipe", "is null: the audit sampled no rotated output, so found no recipe", "null");
    // A recipe fitted to a dump the audit blames on a bug (or cannot explain) is no recipe to hold
    // the kernel to: it would bless the bug.
    if (const json& d = j.value("diagnosis", json()); d.is_array() && !d.empty() && d[0].is_object()) {
      const std::string first = d[0].value("code", "");
      if (first == "unexplained" || std::any_of(audit::detectors().begin(), audit::detectors().end(),
                                                [&](const audit::detector& x) { return first == x.code; }))
        throw io_error(path, "diagnosis[0].code", "names a bug or an unexplained error, not a recipe: fix the kernel "
                       "(or gate it against a baseline) before taking a contract from its audit", first);
    }
    if (rj.contains("bit_exact") && !rj["bit_exact"].is_number())
      throw io_error(path, "recipe.bit_exact", "is not a number", rj["bit_exact"].dump());
    recipe r = recipe_of_object(rj, path, "recipe", true, t);
    // A float32 angle is evaluated by a float32 cos/sin, and two of them (glibc's cosf, a
    // vectorised libm's) differ by an ulp where the recipe fit cannot tell them from a correctly
    // rounded one: the contract allows any within 1 ulp (trig=float32's term, §17).
    if (r.angle == dtype::float32) r.trig = dtype::float32;
    c.by_dtype.emplace_back(*t, r);
    const std::string spelled = std::string(to_string(*t)) + ": " + bounds::recipe_spelling(r);
    names += (names.empty() ? "" : "; ") + spelled;
    const double bit_exact = rj.value("bit_exact", 0.0);
    statement += (statement.empty() ? "" : "; ") +
                 fmt::format("{} (found by the audit {}, reproducing {:.1f}% of its sampled outputs bit for bit)",
                             spelled, shown, 100 * bit_exact);
  }
  c.name = "audited " + names;
  c.statement = statement + "; dtypes with no audit: exact";
  return c;
}

namespace {

bounds::accuracy_contract contract_of_file(const std::string& path) {
  return contract_of_json(read_json_file(path), path, " (" + path + ")");
}

bounds::accuracy_contract contract_of_audits(const std::vector<std::string>& paths) {
  std::vector<audit_json> audits;
  for (const std::string& path : paths)
    audits.push_back({path, std::filesystem::path(path).filename().string(), read_json_file(path)});
  return contract_of_audit_json(audits, "--contract-from");
}

}  // namespace

bounds::accuracy_contract read_contract(const std::string& contract, const std::vector<std::string>& contract_from,
                                        std::string_view flag) {
  if (!contract_from.empty()) {
    if (contract != "exact")
      throw bad_input("--contract-from", "cannot be combined with --contract", contract,
                      "the audits give the recipe");
    return contract_of_audits(contract_from);
  }
  if (const auto* c = bounds::find_contract(contract)) return *c;
  if (contract.find('=') != std::string::npos) {
    const recipe r = recipe_of_spelling(contract, flag);
    return bounds::contract_of_recipe(bounds::recipe_spelling(r), "recipe " + bounds::recipe_spelling(r), r);
  }
  std::error_code missing;
  if (!std::filesystem::exists(contract, missing)) {
    std::string names;
    for (const auto& c : bounds::contract_catalog()) names += (names.empty() ? "" : ", ") + c.name;
    throw bad_input(flag, "is neither a contract, a STAGE=CHOICE list nor a file", contract,
                    "contracts: " + names);
  }
  return contract_of_file(contract);
}

fast::kernel_domain run_domain(const bounds::accuracy_contract& c, std::int64_t max_position,
                               std::string_view positions) {
  fast::kernel_domain d = fast::kernel_domain{.max_position = max_position}.intersect(
      fast::kernel_domain{.max_position = c.max_position});
  d.negative_positions = positions == "all" && !c.nonnegative_positions;
  // Nothing passes vacuously: past this |m| the contract's bound would reach half the pair.
  d = d.intersect(fast::kernel_domain{.max_position = bounds::contract_judged_max_position(c)});
  // (float16 positions, which overflow at 65520, stop judging near |m| = 2^10: their rounding
  // alone moves the angle by up to 2^-11·|m|·θ_j.)
  return d;
}

}  // namespace ropecheck::core
