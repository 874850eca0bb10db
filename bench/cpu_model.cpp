// cpu_model: /proc/cpuinfo "model name" (what Linux and lscpu show), with the CPUID brand string
// (leaves 0x80000002–0x80000004, Intel SDM vol. 2A "CPUID") where /proc is not mounted.
#include "bench/cpu_model.h"

#include <cstring>
#include <fstream>
#include <sstream>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ropecheck::bench {

namespace {

// Words separated by one space, no space at either end; a byte that is not printable ASCII
// becomes '?' (the name goes into JSON, which must be UTF-8).
std::string collapse_spaces(std::string text) {
  for (char& c : text)
    if (c != ' ' && (c < '!' || c > '~')) c = c == '\t' ? ' ' : '?';
  std::istringstream words(text);
  std::string word, out;
  while (words >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

std::string proc_cpuinfo_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return collapse_spaces(line.substr(colon + 1));
  }
  return {};
}

std::string cpuid_brand() {
#if defined(__x86_64__)
  unsigned int highest = __get_cpuid_max(0x80000000u, nullptr);
  if (highest < 0x80000004u) return {};
  char brand[49] = {};
  for (unsigned int leaf = 0; leaf < 3; ++leaf) {
    unsigned int regs[4] = {};
    __get_cpuid(0x80000002u + leaf, &regs[0], &regs[1], &regs[2], &regs[3]);
    std::memcpy(brand + 16 * leaf, regs, 16);
  }
  return collapse_spaces(brand);
#else
  return {};
#endif
}

}  // namespace

std::string cpu_model() {
  static const std::string model = [] {
    std::string m = proc_cpuinfo_model();
    if (m.empty()) m = cpuid_brand();
    return m.empty() ? std::string("unknown CPU") : m;
  }();
  return model;
}

}  // namespace ropecheck::bench
