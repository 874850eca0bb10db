// layering: the house rule that each top-level folder is one role and uses only what the
// "Layout" table of docs/architecture.md lets it use. The table is read from that page itself (one
// file for the reader and for this check), and every #include of every C/C++ file below the source root is
// held to it: `#include "dir/…"` against the folders the row allows, `#include <lib/…>` of a
// known third-party library against the libraries it allows. Standard and system headers are
// always allowed.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ropecheck::layering {

// One row of the table: a folder ("audit"), what it may include from the project (folders,
// without the slash) and which third-party libraries (the names the table uses: "fmt",
// "RapidCheck", …). Tests in the folder may also use the test libraries (test_libraries()).
struct layer_rule {
  std::string folder;
  std::set<std::string> folders;
  std::set<std::string> libraries;
};

struct layout_table {
  std::map<std::string, layer_rule> rules;  // by folder
};

// One include the table does not allow, or a folder it does not list.
struct violation {
  std::string file;  // relative to the source root
  int line = 0;      // 0 for a folder that is not in the table
  std::string include;
  std::string rule;  // what was broken, in words
};

// Reads the "## Layout" table of a Markdown page (docs/architecture.md): rows `| \`folder/\` | role | may include |`, where
// the last column lists project folders in backticks (`numeric/`) and library names as plain
// words, separated by commas or semicolons ("—" for nothing). Throws std::runtime_error naming
// the file and the row it cannot read.
layout_table read_layout_table(const std::filesystem::path& page);

// The library a third-party #include <…> belongs to ("Boost.Multiprecision" for
// <boost/multiprecision/…>), or "" for the standard library and the system.
std::string library_of(const std::string& angle_include);

// GoogleTest and RapidCheck: what a test file (*_test.cpp, *test_support.h) may add to its
// folder's libraries.
const std::set<std::string>& test_libraries();

// Every violation below `root` (folders holding a CMakeCache.txt, hidden folders and folders the
// table marks as having no code are skipped).
std::vector<violation> check_tree(const std::filesystem::path& root, const layout_table& table);

// "file:line: includes \"x\": rule" — the one-line form the test prints.
std::string describe(const violation& v);

}  // namespace ropecheck::layering
