#include "layering/layering.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <utility>

namespace ropecheck::layering {
namespace {

namespace fs = std::filesystem;

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

std::vector<std::string> split_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {  // row[0] is the opening '|'
    if (row[i] == '|') {
      cells.push_back(trim(cell));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return cells;
}

// "`numeric/`, `spec/`; fmt, nlohmann-json" → folders {numeric, spec}, libraries {fmt, nlohmann-json}.
layer_rule parse_allowances(const std::string& folder, const std::string& cell) {
  layer_rule rule{folder, {}, {}};
  std::string item;
  auto take = [&] {
    std::string word = trim(item);
    item.clear();
    if (word.empty() || word == "—") return;
    if (word.size() > 3 && word.front() == '`' && word.back() == '`' && word[word.size() - 2] == '/') {
      rule.folders.insert(word.substr(1, word.size() - 3));
    } else {
      rule.libraries.insert(word);
    }
  };
  for (char c : cell) {
    if (c == ',' || c == ';') {
      take();
    } else {
      item += c;
    }
  }
  take();
  return rule;
}

bool is_test_file(const std::string& name) {
  auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with("_test.cpp") || ends_with("test_support.h") || ends_with("_test.h");
}

bool is_source(const fs::path& p) {
  static const std::array<std::string, 5> extensions{".h", ".hpp", ".cpp", ".cc", ".c"};
  return std::find(extensions.begin(), extensions.end(), p.extension().string()) != extensions.end();
}

std::string join(const std::set<std::string>& items, const std::string& prefix, const std::string& suffix) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + prefix + i + suffix;
  return out.empty() ? "nothing" : out;
}

}  // namespace

layout_table read_layout_table(const fs::path& page) {
  std::ifstream in(page);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot be read", page.string()));
  layout_table table;
  std::string line;
  bool in_layout = false;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("## ", 0) == 0) {
      if (in_layout) break;
      in_layout = line == "## Layout";
      continue;
    }
    if (!in_layout || line.rfind("| `", 0) != 0) continue;
    const auto cells = split_cells(line);
    if (cells.size() != 3 || cells[0].size() < 4 || cells[0].back() != '`')
      throw std::runtime_error(fmt::format("{}:{}: a Layout row needs 3 cells, `folder/` first: '{}'",
                                           page.string(), number, line));
    std::string folder = cells[0].substr(1, cells[0].size() - 2);
    if (folder.back() != '/')
      throw std::runtime_error(
          fmt::format("{}:{}: a Layout folder ends with '/': '{}'", page.string(), number, cells[0]));
    folder.pop_back();
    if (folder.find('/') != std::string::npos) folder = folder.substr(0, folder.find('/'));
    table.rules[folder] = parse_allowances(folder, cells[2]);
  }
  if (table.rules.empty())
    throw std::runtime_error(fmt::format("{}: no '## Layout' table found", page.string()));
  return table;
}

std::string library_of(const std::string& include) {
  static const std::vector<std::pair<std::string, std::string>> prefixes{
      {"boost/multiprecision", "Boost.Multiprecision"},
      {"boost/math/", "Boost.Math"},
      {"boost/", "Boost"},
      {"mpfr.h", "MPFR"},
      {"mpc.h", "MPFR"},
      {"gmp.h", "MPFR"},
      {"rapidcheck", "RapidCheck"},
      {"gtest/", "GoogleTest"},
      {"gmock/", "GoogleTest"},
      {"hwy/", "Highway"},
      {"nlohmann/", "nlohmann-json"},
      {"fmt/", "fmt"},
      {"CLI/", "CLI11"},
      {"benchmark/", "Google Benchmark"},
      {"libxml/", "libxml2"},
      {"pybind11/", "pybind11"},
      {"Python.h", "pybind11"},
  };
  for (const auto& [prefix, library] : prefixes)
    if (include.rfind(prefix, 0) == 0) return library;
  return "";
}

const std::set<std::string>& test_libraries() {
  static const std::set<std::string> libraries{"GoogleTest", "RapidCheck"};
  return libraries;
}

// The target of an `#include <x>` or `#include "x"` line, and whether it was quoted; nullopt for
// any other line. (A hand parser: std::regex trips GCC 12's maybe-uninitialized under ASan.)
struct include_target {
  bool quoted;
  std::string path;
};
std::optional<include_target> parse_include(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return std::nullopt;
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return std::nullopt;
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || (line[i] != '<' && line[i] != '"')) return std::nullopt;
  const bool quoted = line[i] == '"';
  const std::size_t end = line.find(quoted ? '"' : '>', i + 1);
  if (end == std::string::npos || end == i + 1) return std::nullopt;
  return include_target{quoted, line.substr(i + 1, end - i - 1)};
}

std::vector<violation> check_tree(const fs::path& root, const layout_table& table) {
  std::vector<violation> found;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    if (it->is_directory()) {
      if (p.filename().string().front() == '.' || fs::exists(p / "CMakeCache.txt")) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_source(p)) files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& path : files) {
    const fs::path relative = fs::relative(path, root);
    const std::string file = relative.generic_string();
    if (std::distance(relative.begin(), relative.end()) < 2) continue;  // nothing lives at the root
    const std::string folder = relative.begin()->string();
    const auto rule_it = table.rules.find(folder);
    if (rule_it == table.rules.end()) {
      found.push_back({file, 0, "", fmt::format("{}/ is not a row of the Layout table", folder)});
      continue;
    }
    const layer_rule& rule = rule_it->second;
    const bool test = is_test_file(path.filename().string());
    std::ifstream in(path);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      const auto include = parse_include(line);
      if (!include) continue;
      const std::string& target = include->path;
      if (include->quoted) {
        const auto slash = target.find('/');
        if (slash == std::string::npos) continue;  // beside the including file
        std::string used = target.substr(0, slash);
        if (used == "ropecheck") used = "include";  // the public ABI header, include/ropecheck/
        if (used == folder || rule.folders.count(used)) continue;
        found.push_back({file, number, target,
                         fmt::format("{}/ may not use {}/ (it may use {})", folder, used,
                                     join(rule.folders, "", "/"))});
      } else {
        const std::string library = library_of(target);
        if (library.empty() || rule.libraries.count(library) || (test && test_libraries().count(library)))
          continue;
        found.push_back({file, number, target,
                         fmt::format("{}/ may not use {} (its libraries: {})", folder, library,
                                     join(rule.libraries, "", ""))});
      }
    }
  }
  return found;
}

std::string describe(const violation& v) {
  if (v.line == 0) return fmt::format("{}: {}", v.file, v.rule);
  return fmt::format("{}:{}: includes \"{}\": {}", v.file, v.line, v.include, v.rule);
}

}  // namespace ropecheck::layering
