// test_support: helpers shared by the io tests only — a scratch directory that cleans up
// after itself and an assertion that an io_error names what it should, on one line.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "io/io_error.h"

namespace ropecheck::testing {

class scratch_dir {
 public:
  scratch_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ropecheck-io-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

  // Every entry's file name, to check that no temporary files were left behind.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

// Runs `action`, which must throw io_error whose one-line message contains every fragment.
template <typename Action>
void expect_io_error(Action&& action, std::initializer_list<std::string_view> fragments) {
  try {
    action();
  } catch (const io_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string_view fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "message lacks \"" << fragment << "\": " << message;
    }
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected io_error, got another exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected io_error, nothing was thrown";
}

inline std::vector<std::byte> to_bytes(std::string_view text) {
  std::vector<std::byte> bytes;
  for (const char c : text) bytes.push_back(static_cast<std::byte>(c));
  return bytes;
}

inline void append(std::vector<std::byte>& out, std::string_view text) {
  for (const char c : text) out.push_back(static_cast<std::byte>(c));
}

inline void append_le(std::vector<std::byte>& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
}

}  // namespace ropecheck::testing
