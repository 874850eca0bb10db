// collecting_reporter: a Google Benchmark reporter that keeps the best bytes/s of each
// benchmark (by name) over its repetitions and forwards everything to another reporter (the
// console) if given. How every bench/ table pairs a measurement with its memcpy baseline from
// the same run. Internal to bench/.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace ropecheck::bench {

class collecting_reporter : public benchmark::BenchmarkReporter {
 public:
  explicit collecting_reporter(benchmark::BenchmarkReporter* forward) : forward_(forward) {}

  bool ReportContext(const Context& context) override {
    return forward_ == nullptr || forward_->ReportContext(context);
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      auto it = run.counters.find("bytes_per_second");
      // Best of the repetitions: other load on the machine only ever slows a run down.
      if (it != run.counters.end()) {
        double& best = bytes_per_second[run.run_name.function_name];
        best = std::max(best, it->second.value);
      }
    }
    if (forward_ != nullptr) forward_->ReportRuns(runs);
  }
  void Finalize() override {
    if (forward_ != nullptr) forward_->Finalize();
  }

  std::map<std::string, double> bytes_per_second;

 private:
  benchmark::BenchmarkReporter* forward_;
};

}  // namespace ropecheck::bench
