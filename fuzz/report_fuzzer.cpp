// libFuzzer target: saved reports as `ropecheck report`, `report merge` and `gate --baseline`
// read them (reports/saved_report.h), on arbitrary bytes. The input is up to four JSON
// documents separated by NUL bytes; each is read as a saved report (strict JSON reader, schema,
// invariants) and rendered as `report` renders it; the gate reports among them are merged as
// `report merge` merges shards, and so is a lone shard report with every other shard a copy of
// it. Only the documented refusals may come out — io_error (malformed JSON, a merge of reports
// of different runs, a sum beyond int64), bad_input (a shard missing or given twice) and
// saved_report_error (schema or invariant) — never a crash, a sanitizer finding or another
// exception.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "io/io_error.h"
#include "io/json_file.h"
#include "reports/gate_merge.h"
#include "reports/report_text.h"
#include "reports/saved_report.h"

namespace {

using namespace ropecheck;

// Everything `report` writes for a report it accepted.
template <class Report>
void render(const Report& r) {
  (void)reports::render_terminal(r);
  (void)reports::render_markdown(r);
  (void)reports::render_junit(r);
  (void)reports::render_html(r);
  (void)reports::json_text(reports::to_json(r));
}

void merge(const std::vector<std::pair<std::string, reports::gate_report>>& shards) {
  try {
    render(reports::merge_gate_reports(shards));
  } catch (const io_error&) {
  } catch (const bad_input&) {
  } catch (const reports::saved_report_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, reports::gate_report>> gates;
  std::size_t from = 0;
  for (int document = 0; document < 4 && from <= bytes.size(); ++document) {
    const std::size_t end = std::min(bytes.find('\0', from), bytes.size());
    const std::string name = "fuzz" + std::to_string(document) + ".json";
    try {
      const nlohmann::json j = parse_json_strict(bytes.substr(from, end - from), name);
      // A shard may have judged nothing: read as `report merge` reads its inputs.
      const auto report = reports::saved_report_from_json(j, name, reports::report_use::merge_input);
      std::visit([](const auto& r) { render(r); }, report);
      if (const auto* gate = std::get_if<reports::gate_report>(&report)) gates.emplace_back(name, *gate);
    } catch (const io_error&) {
    } catch (const reports::saved_report_error&) {
    }
    from = end + 1;
  }
  if (!gates.empty()) merge(gates);
  // One shard report of a small count: the merge of it and copies standing for the other shards.
  if (gates.size() == 1 && gates[0].second.shard_count > 1 && gates[0].second.shard_count <= 8) {
    std::vector<std::pair<std::string, reports::gate_report>> shards;
    for (int i = 0; i < gates[0].second.shard_count; ++i) {
      reports::gate_report copy = gates[0].second;
      copy.shard_index = i;
      if (i != 0) {
        copy.fixtures.clear();  // only shard 0 holds the fixtures and mutants
        copy.mutants.clear();
        reports::judge(copy);
      }
      shards.emplace_back("shard" + std::to_string(i) + ".json", std::move(copy));
    }
    merge(shards);
  }
  return 0;
}
