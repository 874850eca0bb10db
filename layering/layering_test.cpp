// The `layering` ctest: every #include of the project against docs/architecture.md's Layout table, and the
// checker itself on a small tree that breaks each kind of rule once.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "layering/layering.h"

namespace ropecheck::layering {
namespace {

namespace fs = std::filesystem;

TEST(layering, every_include_of_the_project_is_allowed_by_the_layout_table) {
  const fs::path root = ROPECHECK_SOURCE_DIR;
  const layout_table table = read_layout_table(root / "docs" / "architecture.md");
  std::string report;
  for (const violation& v : check_tree(root, table)) report += describe(v) + "\n";
  EXPECT_EQ(report, "") << "docs/architecture.md's Layout table is the rule; fix the include or the table";
}

TEST(layering, the_table_lists_the_roles_the_house_depends_on) {
  const layout_table table = read_layout_table(fs::path(ROPECHECK_SOURCE_DIR) / "docs" / "architecture.md");
  ASSERT_TRUE(table.rules.count("fast") && table.rules.count("reference") && table.rules.count("audit"));
  // The oracle never borrows from what it judges, and the judge never from the tests.
  EXPECT_FALSE(table.rules.at("reference").folders.count("fast"));
  EXPECT_FALSE(table.rules.at("fast").libraries.count("Boost.Multiprecision"));
  EXPECT_FALSE(table.rules.at("audit").folders.count("fast"));
  EXPECT_FALSE(table.rules.at("audit").folders.count("properties"));
  EXPECT_FALSE(table.rules.at("audit").libraries.count("RapidCheck"));
}

class scratch_tree : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("ropecheck_layering_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    write("architecture.md",
          "# x\n\n## Layout\n\n| folder | role | may include |\n| --- | --- | --- |\n"
          "| `numeric/` | numbers | — |\n"
          "| `fast/` | kernels | `numeric/`; Highway |\n"
          "| `audit/` | judge | `numeric/`, `io/`; fmt |\n\n## Next\n\n| `ignored/` | x | y |\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  std::vector<std::string> violations() {
    std::vector<std::string> out;
    for (const auto& v : check_tree(root_, read_layout_table(root_ / "architecture.md"))) out.push_back(describe(v));
    return out;
  }
  fs::path root_;
};

TEST_F(scratch_tree, an_allowed_tree_has_no_violation) {
  write("numeric/ulp.h", "#include <cmath>\n#include \"numeric/dtype.h\"\n#include \"local.h\"\n");
  write("fast/kernels.cpp", "#include \"numeric/ulp.h\"\n#include <hwy/highway.h>\n#include <vector>\n");
  write("audit/audit_test.cpp", "#include <gtest/gtest.h>\n#include <fmt/format.h>\n");
  EXPECT_EQ(violations(), std::vector<std::string>{});
}

TEST_F(scratch_tree, a_forbidden_folder_is_named_with_file_line_and_rule) {
  write("audit/audit.cpp", "// judge\n#include \"numeric/ulp.h\"\n#include \"fast/kernels.h\"\n");
  EXPECT_EQ(violations(), std::vector<std::string>{
                              "audit/audit.cpp:3: includes \"fast/kernels.h\": audit/ may not use fast/ "
                              "(it may use io/, numeric/)"});
}

TEST_F(scratch_tree, a_forbidden_library_is_named) {
  write("fast/kernels.cpp", "#include <boost/multiprecision/mpfr.hpp>\n");
  write("audit/audit.cpp", "  #  include <rapidcheck.h>\n");
  EXPECT_EQ(violations(),
            (std::vector<std::string>{
                "audit/audit.cpp:1: includes \"rapidcheck.h\": audit/ may not use RapidCheck (its libraries: fmt)",
                "fast/kernels.cpp:1: includes \"boost/multiprecision/mpfr.hpp\": fast/ may not use "
                "Boost.Multiprecision (its libraries: Highway)"}));
}

TEST_F(scratch_tree, only_tests_may_use_the_test_libraries) {
  write("numeric/ulp_test.cpp", "#include <gtest/gtest.h>\n#include <rapidcheck/gtest.h>\n");
  write("numeric/ulp.h", "#include <gtest/gtest.h>\n");
  EXPECT_EQ(violations(), std::vector<std::string>{
                              "numeric/ulp.h:1: includes \"gtest/gtest.h\": numeric/ may not use GoogleTest "
                              "(its libraries: nothing)"});
}

TEST_F(scratch_tree, a_folder_outside_the_table_and_build_folders) {
  write("newrole/thing.cpp", "int x;\n");
  write("build/CMakeCache.txt", "");
  write("build/generated.cpp", "#include \"fast/kernels.h\"\n");
  write(".hidden/x.cpp", "#include \"fast/kernels.h\"\n");
  EXPECT_EQ(violations(),
            std::vector<std::string>{"newrole/thing.cpp: newrole/ is not a row of the Layout table"});
}

TEST(layering, a_malformed_table_is_refused_naming_the_row) {
  const fs::path dir = fs::temp_directory_path() / ("ropecheck_layering_bad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "architecture.md") << "## Layout\n\n| `fast/` | kernels |\n";
  try {
    read_layout_table(dir / "architecture.md");
    ADD_FAILURE() << "accepted a two-cell row";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("architecture.md:3: a Layout row needs 3 cells"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(layering, library_of_knows_the_third_party_headers) {
  EXPECT_EQ(library_of("boost/multiprecision/mpfr.hpp"), "Boost.Multiprecision");
  EXPECT_EQ(library_of("hwy/highway.h"), "Highway");
  EXPECT_EQ(library_of("rapidcheck/gtest.h"), "RapidCheck");
  EXPECT_EQ(library_of("vector"), "");
  EXPECT_EQ(library_of("sys/stat.h"), "");
}

}  // namespace
}  // namespace ropecheck::layering
