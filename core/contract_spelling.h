// contract_spelling: the accuracy contract of a gate run, read from what the user gave —
// `--contract NAME` (a catalog alias), `--contract 'STAGE=CHOICE,…'` (the stage and choice
// names of recipes/recipe_catalog.h, which the audit prints), `--contract FILE.json`
// ({"recipe": {…}} or {"recipes": {"float16": {…}, …}}, as the audit's JSON "recipe", with an
// optional position domain), or `--contract-from AUDIT.json` (repeatable: the recipe an audit
// found in a dump of the kernel's own output, one audit per dtype). Every refusal is one line
// naming the flag or file, the field and the value (exit 2).
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <string_view>
#include <vector>

#include "bounds/accuracy_contracts.h"
#include "fast/kernels.h"

namespace ropecheck::core {

// `flag` names `contract` in refusals (Python's gate names its argument `contract`).
bounds::accuracy_contract read_contract(const std::string& contract, const std::vector<std::string>& contract_from = {},
                                        std::string_view flag = "--contract");

// The contract a contract file's JSON gives (what read_contract reads from FILE.json), for a
// caller holding the object in memory (Python's gate(contract={...})). `source` stands for the
// file in refusals; `origin` ends the statement (a file's: " (PATH)").
bounds::accuracy_contract contract_of_json(const nlohmann::json& contract, const std::string& source,
                                           const std::string& origin);

// The contract audit reports give (what --contract-from reads from the files), each from its
// JSON (`ropecheck audit --json`): `source` stands for the file in refusals, `shown` names the
// audit in the statement ("found by the audit SHOWN"); `flag` is named when two audit one dtype.
struct audit_json {
  std::string source, shown;
  nlohmann::json report;
};
bounds::accuracy_contract contract_of_audit_json(const std::vector<audit_json>& audits, std::string_view flag);

// The domain a run narrows every kernel's to: the tightest of its maximum position, the
// contract's own (0: none) and the |m| past which the contract's bound no longer judges
// (bounds::contract_judged_max_position), and no negative position when `positions` ("all" or
// "nonnegative") or the contract says so.
fast::kernel_domain run_domain(const bounds::accuracy_contract& contract, std::int64_t max_position,
                               std::string_view positions);

}  // namespace ropecheck::core
