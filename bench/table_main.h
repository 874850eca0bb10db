// table_main: the shared main() of the Google Benchmark table programs (ropecheck_benchmarks,
// ropecheck_audit_benchmarks): strips --all, --json and --repetitions=N (plus what the program's
// own `extra` accepts) before Google Benchmark sees the command line, runs the table, and
// prints its rows as text or JSON; a table whose options carry `min_ratio` exits 1 when a row's
// ratio is below it. Numeric flags are read as the ropecheck command reads them
// (io/decimal_text.h: plain decimals, checked, never clamped); a bad one is one line and exit 2.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "io/decimal_text.h"

namespace ropecheck::bench {

// The value of "--name=VALUE" if `arg` is that flag.
inline std::optional<std::string_view> flag_value(const char* arg, std::string_view name) {
  const std::string_view a = arg;
  if (a.size() <= name.size() || a.substr(0, name.size()) != name || a[name.size()] != '=') return std::nullopt;
  return a.substr(name.size() + 1);
}

// extra(argument, options) returns 1 if it took the argument, 0 if not, or −1 after printing
// why the argument is bad; it may also throw (ropecheck::bad_input). The program then exits 2.
template <class Options, class Run, class Json, class Text, class Extra>
int run_table_main(int argc, char** argv, Options options, Run run, Json json_of, Text text_of,
                   Extra extra) {
  bool json = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    try {
      if (std::strcmp(argv[i], "--all") == 0) {
        options.all = true;
      } else if (std::strcmp(argv[i], "--json") == 0) {
        json = true;
      } else if (const auto n = flag_value(argv[i], "--repetitions")) {
        options.repetitions = static_cast<int>(decimal_integer_flag("--repetitions", *n, 1, 100));
      } else if (const int took = extra(argv[i], options); took < 0) {
        return 2;
      } else if (took == 0) {
        argv[kept++] = argv[i];
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
      return 2;
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  options.console = !json;
  const auto rows = run(options);
  if (json) {
    std::printf("%s\n", json_of(rows).dump(2).c_str());
  } else {
    std::printf("\n%s", text_of(rows).c_str());
  }
  benchmark::Shutdown();
  // A table with a floor (options.min_ratio, e.g. the audit's ctest smoke guard) fails below it.
  if constexpr (requires { options.min_ratio; }) {
    if (rows.empty() && options.min_ratio > 0) {
      std::fprintf(stderr, "no row was measured, so --min-ratio could not be checked\n");
      return 1;
    }
    for (const auto& row : rows)
      if (row.ratio < options.min_ratio) {
        std::fprintf(stderr, "ratio %.4f at %lld bytes is below --min-ratio %.4f\n", row.ratio,
                     static_cast<long long>(row.bytes), options.min_ratio);
        return 1;
      }
  }
  return 0;
}

}  // namespace ropecheck::bench
