// ropecheck_make_golden [DIR]: writes fixtures/golden/<name>.txt for every golden configuration.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "tools/golden.h"

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? argv[1] : "fixtures/golden";
  for (const auto& config : ropecheck::golden::golden_configs()) {
    const auto path = dir / (config.name + ".txt");
    std::ofstream(path, std::ios::binary) << ropecheck::golden::golden_text(config);
    fmt::print("wrote {}\n", path.string());
  }
  const std::filesystem::path model_configs = ROPECHECK_SOURCE_DIR "/fixtures/model-configs";
  for (const auto& config : ropecheck::golden::stream_golden_configs()) {
    const auto path = dir / (config.name + ".txt");
    std::ofstream(path, std::ios::binary)
        << ropecheck::golden::stream_golden_text(config, model_configs);
    fmt::print("wrote {}\n", path.string());
  }
  return 0;
}
