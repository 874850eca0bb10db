// cpu_model: the CPU a figure was measured on, recorded in every `ropecheck bench` table and
// JSON row, since a ratio to the copy differs by machine (an AMD EPYC's and an Intel Xeon's
// differ by 0.2 for the same kernel).
#pragma once

#include <string>

namespace ropecheck::bench {

// /proc/cpuinfo's first "model name", else the CPUID brand string (x86), else "unknown CPU";
// spaces collapsed.
std::string cpu_model();

}  // namespace ropecheck::bench
