// store_policy (store_policy.h): the last-level cache size and the streaming threshold.
#include "fast/store_policy.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <system_error>
#include <utility>

namespace ropecheck::fast {
namespace {

std::atomic<std::int64_t> threshold_override{0};
std::atomic<std::int64_t> streamed{0};

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::int64_t parse_cache_size(const std::string& text) {
  std::size_t i = 0;
  std::int64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0 && value < (std::int64_t{1} << 40))
    value = value * 10 + (text[i++] - '0');
  if (i == 0) return 0;
  const std::string unit = text.substr(i);
  if (unit.empty() || unit == "B") return value;
  if (unit == "K") return value << 10;
  if (unit == "M") return value << 20;
  if (unit == "G") return value << 30;
  return 0;
}

last_level_cache last_level_cache_from(const std::filesystem::path& cache_dir) {
  int best_level = 0;
  std::int64_t best_bytes = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, error)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    if (first_line(entry.path() / "type") == "Instruction") continue;
    const std::string level_text = first_line(entry.path() / "level");
    const int level = level_text.empty() ? 0 : std::atoi(level_text.c_str());
    const std::int64_t bytes = parse_cache_size(first_line(entry.path() / "size"));
    if (level > best_level && bytes > 0) {
      best_level = level;
      best_bytes = bytes;
    }
  }
  if (best_bytes > 0)
    return {best_bytes, "L" + std::to_string(best_level) + " from " + cache_dir.string()};
  return {fallback_last_level_cache_bytes, "fallback (no cache size found)"};
}

last_level_cache find_last_level_cache() {
  last_level_cache found = last_level_cache_from("/sys/devices/system/cpu/cpu0/cache");
  if (found.source.rfind("fallback", 0) != 0) return found;
  for (const auto& [name, level] : {std::pair{_SC_LEVEL3_CACHE_SIZE, 3}, std::pair{_SC_LEVEL2_CACHE_SIZE, 2}}) {
    const long bytes = sysconf(name);
    if (bytes > 0) return {bytes, "L" + std::to_string(level) + " from sysconf"};
  }
  return found;
}

std::int64_t streaming_threshold_bytes() {
  if (const std::int64_t set = threshold_override.load(std::memory_order_relaxed); set > 0) return set;
  static const std::int64_t llc = find_last_level_cache().bytes;
  return llc;
}

void set_streaming_threshold_bytes(std::int64_t bytes) {
  threshold_override.store(bytes > 0 ? bytes : 0, std::memory_order_relaxed);
}

std::int64_t streamed_chunks() { return streamed.load(std::memory_order_relaxed); }

namespace detail {
void count_streamed_chunk() { streamed.fetch_add(1, std::memory_order_relaxed); }
}  // namespace detail

}  // namespace ropecheck::fast
