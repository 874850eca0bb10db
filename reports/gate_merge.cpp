// gate_merge: the shard reports of one gate run joined into one (gate_merge.h says how).
#include "reports/gate_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>

#include "io/io_error.h"
#include "reports/saved_report.h"

namespace ropecheck::reports {
namespace {

using shard_file = std::pair<std::string, gate_report>;

std::string list_text(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out.empty() ? "(none)" : out;
}

std::string shard_text(const gate_report& r) { return fmt::format("{}/{}", r.shard_index, r.shard_count); }

// Every report must be a shard of the same run as the first: refused naming the file, the field,
// the value and the first file's.
void check_same_run(const shard_file& first, const shard_file& other) {
  const gate_report& a = first.second;
  const gate_report& b = other.second;
  const auto same = [&](const char* field, const std::string& va, const std::string& vb) {
    if (va != vb)
      throw io_error(other.first, field, fmt::format("differs from {}'s {}", first.first, va), vb,
                     "not a shard of the same gate run");
  };
  same("tool_version", a.tool_version, b.tool_version);
  same("profile", a.profile, b.profile);
  same("seed", std::to_string(a.seed), std::to_string(b.seed));
  same("contract", a.contract, b.contract);
  same("max_position", std::to_string(a.max_position), std::to_string(b.max_position));
  same("selected_properties", list_text(a.selected_properties), list_text(b.selected_properties));
  same("baseline", a.baseline, b.baseline);
  same("shard.count", std::to_string(a.shard_count), std::to_string(b.shard_count));
  std::vector<std::string> ka, kb;
  for (const auto& k : a.kernels) ka.push_back(k.name);
  for (const auto& k : b.kernels) kb.push_back(k.name);
  same("kernels", list_text(ka), list_text(kb));
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    std::vector<std::string> pa, pb;
    for (const auto& p : a.kernels[i].properties) pa.push_back(p.name);
    for (const auto& p : b.kernels[i].properties) pb.push_back(p.name);
    same(fmt::format("kernels[{}].properties", i).c_str(), list_text(pa), list_text(pb));
    const auto domain_text = [](const std::optional<served_domain>& d) { return d ? describe(*d) : "not stated"; };
    same(fmt::format("kernels[{}].domain", i).c_str(), domain_text(a.kernels[i].domain),
         domain_text(b.kernels[i].domain));
  }
}

// The number a "<label> = <number>[<suffix>]" detail segment ends with, and its label and
// suffix (what must agree between shards).
struct measurement {
  bool ok = false;
  std::string label, suffix;
  double value = 0;
};

measurement measurement_of(const std::string& segment) {
  measurement m;
  const auto at = segment.rfind(" = ");
  if (at == std::string::npos) return m;
  const char* begin = segment.c_str() + at + 3;
  char* end = nullptr;
  m.value = std::strtod(begin, &end);
  if (end == begin) return m;
  m.ok = true;
  m.label = segment.substr(0, at);
  m.suffix = std::string(end);
  return m;
}

std::vector<std::string> segments(const std::string& detail) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (true) {
    const auto at = detail.find("; ", from);
    out.push_back(detail.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) return out;
    from = at + 2;
  }
}

// A detail line's "worst at <location>" head (properties/kernel_properties.cpp `describe`
// writes the worst case's location text there, "-" if none), and the rest.
std::pair<std::string, std::string> worst_head(const property_outcome& p) {
  const std::string head = "worst at " + (p.worst.text.empty() ? std::string("-") : p.worst.text);
  if (p.detail.rfind(head, 0) != 0) return {"", p.detail};
  std::string rest = p.detail.substr(head.size());
  if (rest.rfind("; ", 0) == 0) rest.erase(0, 2);
  return {head, rest};
}

// A property's detail line over the shards: the "worst at" head of the shard with the worst
// case, every "… = x" measurement (all are maxima over the cases) from the shard with the
// largest, "outputs differ in bits" if any shard's did; other segments are the same in every
// shard.
std::string merged_detail(const std::vector<const property_outcome*>& parts, std::size_t worst_shard,
                          const std::vector<const shard_file*>& files, const std::string& field) {
  std::vector<std::vector<std::string>> split;
  std::vector<std::string> heads;
  for (const auto* p : parts) {
    auto [head, rest] = worst_head(*p);
    heads.push_back(head);
    split.push_back(rest.empty() ? std::vector<std::string>{} : segments(rest));
  }
  const auto refuse = [&](std::size_t shard, const std::string& why) {
    return io_error(files[shard]->first, field, why, parts[shard]->detail);
  };
  for (std::size_t s = 1; s < split.size(); ++s)
    if (split[s].size() != split[0].size() || heads[s].empty() != heads[0].empty())
      throw refuse(s, fmt::format("has another form than in {}", files[0]->first));
  std::string out = heads[worst_shard];
  for (std::size_t i = 0; i < split[0].size(); ++i) {
    std::string segment = split[0][i];
    bool all_equal = true;
    for (const auto& s : split) all_equal = all_equal && s[i] == segment;
    if (!all_equal) {
      if (segment == "all outputs bit-identical" || segment == "outputs differ in bits") {
        segment = "all outputs bit-identical";
        for (const auto& s : split)
          if (s[i] == "outputs differ in bits") segment = s[i];
      } else {
        const measurement first = measurement_of(segment);
        if (!first.ok) throw refuse(1, fmt::format("differs from {}'s in '{}'", files[0]->first, segment));
        double best = first.value;
        for (std::size_t s = 1; s < split.size(); ++s) {
          const measurement m = measurement_of(split[s][i]);
          if (!m.ok || m.label != first.label || m.suffix != first.suffix)
            throw refuse(s, fmt::format("differs from {}'s in '{}'", files[0]->first, segment));
          if (m.value > best) {  // the first of equal maxima, as the unsharded run keeps it
            best = m.value;
            segment = split[s][i];
          }
        }
      }
    }
    out += (out.empty() ? "" : "; ") + segment;
  }
  return out;
}

property_outcome merge_property(const std::vector<const property_outcome*>& parts,
                                const std::vector<const shard_file*>& files, const std::string& where) {
  property_outcome out = *parts[0];
  out.cases = 0;
  out.failed_cases = 0;
  out.passed = true;
  out.worst_over_bound = 0;
  out.worst = {};
  out.points.clear();
  out.pair_points.clear();
  out.head_dim_points.clear();
  out.largest_call_token_heads = 0;
  out.message.clear();
  out.counterexample.clear();
  out.counterexample_location = {};
  out.replay.clear();
  std::size_t worst_shard = 0;
  bool failed = false;
  for (std::size_t s = 0; s < parts.size(); ++s) {
    const property_outcome& p = *parts[s];
    if (p.status != parts[0]->status)
      throw io_error(files[s]->first, where + ".verdict",
                     fmt::format("differs from {}'s {}", files[0]->first, verdict_of(*parts[0])),
                     verdict_of(p), "shards of one run skip the same properties");
    // Sums of counts a shard report states (each checked ≥ 0): refused where int64 ends.
    const auto add = [&](std::int64_t& sum, std::int64_t n, const char* name) {
      if (__builtin_add_overflow(sum, n, &sum))
        throw io_error(files[s]->first, where + "." + name, "makes the sum over the shards exceed 2^63 - 1",
                       std::to_string(n));
    };
    add(out.cases, p.cases, "cases");
    add(out.failed_cases, p.failed_cases, "failed_cases");
    if (p.worst_over_bound > out.worst_over_bound) {
      out.worst_over_bound = p.worst_over_bound;
      out.worst = p.worst;
      worst_shard = s;
    }
    for (const auto& point : p.points)
      if (out.points.size() < max_points_per_property) out.points.push_back(point);
    for (const auto& point : p.pair_points)
      if (out.pair_points.size() < max_points_per_property) out.pair_points.push_back(point);
    for (const auto& point : p.head_dim_points)
      if (out.head_dim_points.size() < max_points_per_property) out.head_dim_points.push_back(point);
    out.largest_call_token_heads = std::max(out.largest_call_token_heads, p.largest_call_token_heads);
    if (p.passed) continue;
    out.passed = false;
    if (!failed) {
      failed = true;
      out.message = p.message;
      out.counterexample = p.counterexample;
      out.counterexample_location = p.counterexample_location;
      out.replay = p.replay;
    } else {
      out.counterexample += fmt::format(
          "\n\nAlso failed in shard {} ({}): {}\n\n{}\n\nreplay: {}", shard_text(files[s]->second),
          files[s]->first, p.message, p.counterexample, p.replay);
    }
  }
  out.detail = merged_detail(parts, worst_shard, files, where + ".detail");
  return out;
}

}  // namespace

gate_report merge_gate_reports(const std::vector<shard_file>& shards) {
  if (shards.empty()) throw bad_input("report merge", "needs the shards' reports", "");
  for (const auto& [file, report] : shards) {
    // A merge joins shards; a whole run's report has nothing to join (and alone it would be
    // passed through unchecked as "merged").
    if (report.shard_count < 2)
      throw io_error(file, "shard", "is null: the report of a whole run, not of a shard (report merge joins the "
                     "shard reports of one `gate --shard I/N` run; `ropecheck report` renders a whole run)",
                     "null");
    validate_report(report, file, report_use::merge_input);
  }
  for (std::size_t i = 1; i < shards.size(); ++i) check_same_run(shards[0], shards[i]);
  // Shard order, each shard once, none missing. The count is the file's, up to 2^31 - 1: no
  // table of that size is made for it.
  const int count = shards[0].second.shard_count;
  std::map<int, const shard_file*> by_index;
  for (const auto& s : shards) {
    const auto [slot, added] = by_index.emplace(s.second.shard_index, &s);
    if (!added)
      throw bad_input("report merge", fmt::format("shard {} is given twice ({} and {})",
                                                  shard_text(s.second), slot->second->first, s.first),
                      s.first);
  }
  if (by_index.size() != static_cast<std::size_t>(count)) {
    constexpr std::size_t named = 8;  // the first missing shards named; the rest counted
    std::vector<std::string> missing;
    for (int i = 0; i < count && missing.size() < named; ++i)
      if (by_index.count(i) == 0) missing.push_back(fmt::format("{}/{}", i, count));
    const std::size_t total = static_cast<std::size_t>(count) - by_index.size();
    const std::string list =
        list_text(missing) + (total > missing.size() ? fmt::format(" and {} more", total - missing.size()) : "");
    throw bad_input("report merge",
                    fmt::format("shard{} {} {} missing (every shard 0 ... {} of the run is needed)",
                                total > 1 ? "s" : "", list, total > 1 ? "are" : "is", count - 1),
                    list);
  }
  std::vector<const shard_file*> files;
  for (const auto& [index, file] : by_index) files.push_back(file);

  gate_report out = files[0]->second;
  out.shard_index = 0;
  out.shard_count = 1;
  out.kernels.clear();
  out.fixtures.clear();
  out.mutants.clear();
  const gate_report& first = files[0]->second;
  for (std::size_t k = 0; k < first.kernels.size(); ++k) {
    kernel_outcome kernel{first.kernels[k].name, true, {}, std::nullopt, first.kernels[k].domain};
    for (const auto* f : files)  // a process that ended in any shard ends the kernel's run
      if (!kernel.ended && f->second.kernels[k].ended) kernel.ended = f->second.kernels[k].ended;
    for (std::size_t p = 0; p < first.kernels[k].properties.size(); ++p) {
      std::vector<const property_outcome*> parts;
      for (const auto* f : files) parts.push_back(&f->second.kernels[k].properties[p]);
      kernel.properties.push_back(
          merge_property(parts, files, fmt::format("kernels[{}].properties[{}]", k, p)));
    }
    out.kernels.push_back(std::move(kernel));
  }
  for (const auto* f : files) {
    for (const auto& x : f->second.fixtures) out.fixtures.push_back(x);
    for (const auto& m : f->second.mutants) out.mutants.push_back(m);
  }
  judge(out);
  // The merged report is a whole run's: held to every rule a saved one is (a pass needs a case).
  validate_report(out, "report merge");
  return out;
}

}  // namespace ropecheck::reports
