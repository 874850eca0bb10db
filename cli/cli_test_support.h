// Test support for end-to-end tests of the ropecheck executable: run it, and a scratch folder.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ropecheck::testing {

struct run_result {
  int exit_code;
  std::string output;  // stdout and stderr
};

// Runs `prefix ROPECHECK_EXE args` in a shell, capturing stdout and stderr together.
inline run_result run_ropecheck_prefixed(const std::string& prefix, const std::string& args) {
  const std::string command = prefix + std::string(ROPECHECK_EXE) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

inline run_result run_ropecheck(const std::string& args) { return run_ropecheck_prefixed("", args); }

// Under timeout(1): a run that hangs ends with exit 124 instead of stalling the test.
inline run_result run_ropecheck_with_timeout(const std::string& args, int seconds) {
  return run_ropecheck_prefixed("timeout " + std::to_string(seconds) + " ", args);
}

// Exit 2, one line starting "ropecheck: " (the one-line contract of bad input), containing every
// fragment.
inline void expect_bad_input(const run_result& r, std::initializer_list<std::string> fragments) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("ropecheck: ", 0), 0u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  for (const auto& f : fragments) EXPECT_NE(r.output.find(f), std::string::npos) << "lacks \"" << f << "\": " << r.output;
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder per test and process, removed afterwards. The process id keeps two checkouts
// (or two ctest runs) that share /tmp from writing into each other's folder.
class scratch_dir_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ropecheck_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
            std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_text(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }
  std::filesystem::path dir_;
};

}  // namespace ropecheck::testing
