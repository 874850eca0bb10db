// throughput_ratchet: reading a saved run strictly (io/json_file.h) and comparing ratios.
#include "bench/throughput_ratchet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "io/io_error.h"
#include "io/json_file.h"

namespace ropecheck::bench {

namespace {

std::string key_of(const std::string& source, const std::string& kernel, const std::string& dtype,
                   const std::string& pairing, std::int64_t threads, std::int64_t bytes, std::int64_t heads,
                   std::int64_t head_dim, double output_scale) {
  return fmt::format("{} {} {} {} threads {} bytes {} heads {} head_dim {} output_scale {}", source, kernel,
                     dtype, pairing, threads, bytes, heads, head_dim, output_scale);
}

}  // namespace

std::string row_key(const throughput_row& r) {
  return key_of(r.source, r.kernel, r.dtype, r.pairing, r.threads, r.bytes, r.heads, r.head_dim,
                r.output_scale);
}

std::map<std::string, saved_ratio> read_throughput_baseline(const std::filesystem::path& path) {
  const nlohmann::json saved = read_json_file(path);
  const std::string file = path.string();
  if (!saved.is_array() || saved.empty())
    throw io_error(file, "JSON", "is not a non-empty array of `ropecheck bench --json` rows",
                   saved.dump().substr(0, 60));
  std::map<std::string, saved_ratio> ratios;
  for (std::size_t i = 0; i < saved.size(); ++i) {
    const nlohmann::json& row = saved[i];
    const std::string at = fmt::format("[{}]", i);
    if (!row.is_object()) throw io_error(file, at, "is not an object", row.dump().substr(0, 60));
    auto field = [&](const char* name) -> const nlohmann::json& {
      if (!row.contains(name)) throw io_error(file, at + "." + name, "is missing", row.dump().substr(0, 60));
      return row.at(name);
    };
    auto text = [&](const char* name) {
      const nlohmann::json& v = field(name);
      if (!v.is_string()) throw io_error(file, at + "." + name, "is not a string", v.dump());
      return v.get<std::string>();
    };
    auto integer = [&](const char* name) {
      const nlohmann::json& v = field(name);
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
        throw io_error(file, at + "." + name, "is not an integer >= 0", v.dump());
      return v.get<std::int64_t>();
    };
    auto positive = [&](const char* name) {
      const nlohmann::json& v = field(name);
      if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
        throw io_error(file, at + "." + name, "is not a finite number > 0", v.dump());
      return v.get<double>();
    };
    // One field at a time, in this order, so that a message names the first missing one.
    const std::string source = text("source"), kernel = text("kernel"), dtype = text("dtype"),
                      pairing = text("pairing");
    const std::int64_t threads = integer("threads"), bytes = integer("bytes"), heads = integer("heads"),
                       head_dim = integer("head_dim");
    const double output_scale = positive("output_scale"), ratio = positive("ratio");
    const std::string key =
        key_of(source, kernel, dtype, pairing, threads, bytes, heads, head_dim, output_scale);
    if (const auto [it, fresh] = ratios.try_emplace(key, saved_ratio{ratio, i}); !fresh)
      throw io_error(file, at, fmt::format("repeats the row [{}]", it->second.index), key);
  }
  return ratios;
}

ratchet_verdict compare_to_baseline(const std::vector<throughput_row>& rows,
                                    const std::map<std::string, saved_ratio>& saved,
                                    const std::filesystem::path& path, double tolerance) {
  std::map<std::string, const throughput_row*> measured;
  for (const throughput_row& r : rows) measured.emplace(row_key(r), &r);
  for (const auto& [key, s] : saved)
    if (!measured.contains(key))
      throw io_error(path.string(), fmt::format("[{}]", s.index),
                     "was not measured in this run (other sizes, kernels or flags than the saved run's)",
                     key);
  ratchet_verdict verdict;
  for (const throughput_row& r : rows) {
    ratchet_line line{r, std::nullopt, false};
    if (const auto it = saved.find(row_key(r)); it != saved.end()) {
      line.saved_ratio = it->second.ratio;
      line.regressed = r.ratio < (1.0 - tolerance) * it->second.ratio;
      ++verdict.compared;
      verdict.regressed += line.regressed ? 1 : 0;
    }
    verdict.lines.push_back(std::move(line));
  }
  auto rank = [](const ratchet_line& l) { return l.regressed ? 0 : l.saved_ratio ? 1 : 2; };
  std::stable_sort(verdict.lines.begin(), verdict.lines.end(),
                   [&](const ratchet_line& a, const ratchet_line& b) { return rank(a) < rank(b); });
  return verdict;
}

std::string ratchet_text(const ratchet_verdict& verdict, const std::filesystem::path& path,
                         double tolerance) {
  std::string text = fmt::format(
      "throughput ratchet against {} (tolerance {}: a row regresses below {:.3f} × its saved ratio)\n",
      path.string(), tolerance, 1.0 - tolerance);
  auto shown = [](const throughput_row& r) {
    return r.source == "built-in" ? r.kernel : r.kernel + " (" + r.source + ")";
  };
  int width = 18;
  for (const ratchet_line& l : verdict.lines) width = std::max(width, static_cast<int>(shown(l.row).size()));
  text += fmt::format("{:<10} {:<{}} {:<13} {:<9} {:>7} {:>10} {:>7} {:>7} {:>8}\n", "verdict", "kernel",
                      width, "dtype", "pairing", "threads", "X bytes", "saved", "ratio", "ratio/saved");
  for (const ratchet_line& l : verdict.lines) {
    const throughput_row& r = l.row;
    const std::string verdict_word = l.regressed ? "regressed" : l.saved_ratio ? "ok" : "new";
    const std::string saved = l.saved_ratio ? fmt::format("{:.3g}", *l.saved_ratio) : "-";
    const std::string change = l.saved_ratio ? fmt::format("{:.3g}", r.ratio / *l.saved_ratio) : "-";
    text += fmt::format("{:<10} {:<{}} {:<13} {:<9} {:>7} {:>10} {:>7} {:>7.3g} {:>8}\n", verdict_word,
                        shown(r), width, r.dtype, r.pairing, r.threads, r.bytes, saved, r.ratio, change);
  }
  if (verdict.regressed > 0)
    text += fmt::format("ratchet: FAIL ({} of {} compared rows regressed by more than {})\n",
                        verdict.regressed, verdict.compared, tolerance);
  else
    text += fmt::format("ratchet: PASS ({} rows compared, none fell by more than {})\n", verdict.compared,
                        tolerance);
  return text;
}

}  // namespace ropecheck::bench
