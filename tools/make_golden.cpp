// ropecheck_make_golden [DIR]: writes fixtures/golden/<name>.txt for every golden configuration
// the source tree's fixtures/model-configs/*.json declare (tools/golden.h), and every stream one.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tools/golden.h"

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? argv[1] : "fixtures/golden";
  const std::filesystem::path model_configs = ROPECHECK_SOURCE_DIR "/fixtures/model-configs";
  std::vector<std::string> names, texts;
  for (const auto& entry : std::filesystem::directory_iterator(model_configs)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    names.push_back(entry.path().filename().string());
    texts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::vector<ropecheck::golden::model_config_text> files;
  for (std::size_t i = 0; i < names.size(); ++i) files.push_back({names[i], texts[i]});
  for (const auto& config : ropecheck::golden::golden_configs(files)) {
    const auto path = dir / (config.name + ".txt");
    std::ofstream(path, std::ios::binary) << ropecheck::golden::golden_text(config);
    fmt::print("wrote {}\n", path.string());
  }
  for (const auto& config : ropecheck::golden::stream_golden_configs()) {
    const auto path = dir / (config.name + ".txt");
    std::ofstream(path, std::ios::binary)
        << ropecheck::golden::stream_golden_text(config, model_configs);
    fmt::print("wrote {}\n", path.string());
  }
  return 0;
}
