// The C ABI round trip: the built-in kernels, exported through libropecheck_kernels.so and
// loaded back with kernel_library, give the same bits as calling them directly.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include "abi/kernel_library.h"
#include "numeric/fp8.h"

namespace ropecheck::abi {
namespace {

TEST(KernelLibrary, BuiltInsRoundTripBitForBit) {
  const auto library = kernel_library::load(ROPECHECK_KERNELS_LIB);
  const auto registry = fast::kernel_registry();
  ASSERT_EQ(library.kernels().size(), registry.size());
  const rope_spec spec{64, 48, 500000, pairing::half_split, "test"};
  const int tokens = 5, heads = 3;
  std::vector<float> x(tokens * heads * 64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3;
  const std::vector<std::int64_t> positions = {0, 1, 17, 4095, 100000};
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const auto& direct = registry[i];
    const auto& loaded = library.kernels()[i];
    EXPECT_EQ(direct.name, loaded.name);
    std::vector<float> y_direct(x.size()), y_loaded(x.size());
    for (auto [kernel, y] : {std::pair{&direct, &y_direct}, std::pair{&loaded, &y_loaded}}) {
      const fast::rope_call call =
          fast::make_call({dtype::float32, spec.pair, 64, 48},
                          std::span(positions.data(), static_cast<std::size_t>(tokens)),
                          fast::packed_tensor(x.data(), y->data(), heads, 64));
      const auto angles = kernel->prepare(fast::unscaled_frequencies(spec), 100001);
      ASSERT_TRUE(angles.ok());
      const auto s = kernel->apply(call, *angles.value);
      ASSERT_TRUE(s.ok()) << s.message;
    }
    EXPECT_EQ(0, std::memcmp(y_direct.data(), y_loaded.data(), x.size() * sizeof(float))) << direct.name;
  }
}

// M-RoPE through the ABI (v2): Qwen2.5-VL-like sections on 32 dims, three distinct streams,
// the loaded kernels give the direct call's bits; a v1 library loads, is marked single-stream,
// refuses the three-stream call as unsupported and still rotates a 1-D call bit for bit.
TEST(KernelLibrary, PositionStreamsRoundTripAndV1LibrariesGetOneStream) {
  const auto library = kernel_library::load(ROPECHECK_KERNELS_LIB);
  const auto v1 = kernel_library::load(ROPECHECK_KERNELS_V1_LIB);
  const auto registry = fast::kernel_registry();
  ASSERT_EQ(v1.kernels().size(), registry.size());
  rope_spec spec{32, 32, 1000000, pairing::half_split, "test"};
  spec.streams = {stream_rule::mrope_sections, {4, 6, 6}};
  const std::vector<std::int32_t> map = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
  const int tokens = 4, heads = 2;
  std::vector<float> x(tokens * heads * 32);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.71f * static_cast<float>(i)) * 2;
  const std::vector<std::int64_t> positions = {5, 6, 6, 6, 5, 6, 7, 7, 5, 6, 7, 8};  // [3, 4]
  const std::vector<std::int64_t> one_d = {5, 6, 9, 9};
  for (std::size_t i = 0; i < registry.size(); ++i) {
    EXPECT_TRUE(library.kernels()[i].multi_stream);
    EXPECT_FALSE(v1.kernels()[i].multi_stream);
    std::vector<float> y_direct(x.size()), y_loaded(x.size()), y_v1(x.size()), y_v1_1d(x.size()),
        y_1d(x.size());
    const auto run = [&](const fast::kernel_info& kernel, std::span<const std::int64_t> pos,
                         int streams, std::vector<float>& y) {
      const fast::rope_call call = fast::with_streams(
          fast::make_call({dtype::float32, spec.pair, 32, 32}, pos,
                          fast::packed_tensor(x.data(), y.data(), heads, 32)),
          pos, streams, map);
      const auto angles = kernel.prepare(fast::unscaled_frequencies(spec), 10);
      return kernel.apply(call, *angles.value);
    };
    ASSERT_TRUE(run(registry[i], positions, 3, y_direct).ok());
    const auto s = run(library.kernels()[i], positions, 3, y_loaded);
    ASSERT_TRUE(s.ok()) << s.message;
    EXPECT_EQ(0, std::memcmp(y_direct.data(), y_loaded.data(), x.size() * sizeof(float)));
    const auto refused = run(v1.kernels()[i], positions, 3, y_v1);
    EXPECT_EQ(refused.code, fast::status_code::unsupported);
    EXPECT_NE(refused.message.find("ABI v1"), std::string::npos) << refused.message;
    ASSERT_TRUE(run(registry[i], one_d, 1, y_1d).ok());
    ASSERT_TRUE(run(v1.kernels()[i], one_d, 1, y_v1_1d).ok());
    EXPECT_EQ(0, std::memcmp(y_1d.data(), y_v1_1d.data(), x.size() * sizeof(float)));
  }
}

// The fp8 output scale through the ABI (v2's last field): the loaded kernels store the direct
// call's bits for a scale of 3 (not a power of two); the refusal of a scale with float32 comes
// back as unsupported; a v1 library is refused a scale != 1 (its calls have no such field, so
// it would otherwise store unscaled values) and still serves scale 1 bit for bit.
TEST(KernelLibrary, OutputScaleRoundTripsAndV1LibrariesAreRefusedAScale) {
  const auto library = kernel_library::load(ROPECHECK_KERNELS_LIB);
  const auto v1 = kernel_library::load(ROPECHECK_KERNELS_V1_LIB);
  const auto registry = fast::kernel_registry();
  ASSERT_EQ(v1.kernels().size(), registry.size());
  const rope_spec spec{16, 16, 10000, pairing::adjacent, "test"};
  const int tokens = 3, heads = 2, n = tokens * heads * 16;
  const dtype storage = dtype::float8_e4m3fn;
  std::vector<std::uint8_t> x(n);
  for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = float_to_float8_bits(storage, 40 * std::sin(0.37f * static_cast<float>(i)));
  const std::vector<std::int64_t> positions = {0, 7, 300};
  for (std::size_t i = 0; i < registry.size(); ++i) {
    if (!registry[i].supports(storage)) continue;
    const auto run = [&](const fast::kernel_info& kernel, dtype t, float scale, void* y) {
      fast::rope_call call = fast::make_call({t, spec.pair, 16, 16}, positions,
                                             fast::packed_tensor(x.data(), y, heads, 16));
      call.output_scale = scale;
      const auto angles = kernel.prepare(fast::unscaled_frequencies(spec), 301);
      return kernel.apply(call, *angles.value);
    };
    std::vector<std::uint8_t> y_direct(n), y_loaded(n), y_v1(n), y_unscaled(n);
    ASSERT_TRUE(run(registry[i], storage, 3.0f, y_direct.data()).ok());
    const auto s = run(library.kernels()[i], storage, 3.0f, y_loaded.data());
    ASSERT_TRUE(s.ok()) << s.message;
    EXPECT_EQ(y_direct, y_loaded) << registry[i].name;
    ASSERT_TRUE(run(registry[i], storage, 1.0f, y_unscaled.data()).ok());
    EXPECT_NE(y_direct, y_unscaled) << "the scale must change the stored bits";
    const auto refused = run(v1.kernels()[i], storage, 3.0f, y_v1.data());
    EXPECT_EQ(refused.code, fast::status_code::unsupported);
    EXPECT_NE(refused.message.find("ABI v1"), std::string::npos) << refused.message;
    ASSERT_TRUE(run(v1.kernels()[i], storage, 1.0f, y_v1.data()).ok());
    EXPECT_EQ(y_unscaled, y_v1);
    std::vector<float> x32(n), y32(n);
    const auto not_fp8 = [&] {
      fast::rope_call call = fast::make_call({dtype::float32, spec.pair, 16, 16}, positions,
                                             fast::packed_tensor(x32.data(), y32.data(), heads, 16));
      call.output_scale = 2.0f;
      const auto angles = library.kernels()[i].prepare(fast::unscaled_frequencies(spec), 301);
      return library.kernels()[i].apply(call, *angles.value);
    }();
    EXPECT_EQ(not_fp8.code, fast::status_code::unsupported) << not_fp8.message;
  }
}

TEST(KernelLibrary, ErrorsComeBackWithTheKernelsMessage) {
  const auto library = kernel_library::load(ROPECHECK_KERNELS_LIB);
  const auto& kernel = library.kernels()[0];
  const rope_spec spec{8, 8, 10000, pairing::half_split, "test"};
  fast::rope_call call;
  call.head_dim = 8;
  call.rotary_dim = 8;
  call.tokens = 1;
  std::vector<float> x(8), y(8);
  call.q = fast::packed_tensor(x.data(), y.data(), 1, 8);
  call.positions = nullptr;
  const auto angles = kernel.prepare(fast::unscaled_frequencies(spec), 4);
  const auto s = kernel.apply(call, *angles.value);
  EXPECT_EQ(s.code, fast::status_code::invalid_argument);
  EXPECT_NE(s.message.find("positions"), std::string::npos) << s.message;
}

TEST(KernelLibrary, LoadFailuresNameTheFile) {
  try {
    kernel_library::load("/nonexistent/libkernel.so");
    FAIL();
  } catch (const kernel_library_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libkernel.so: cannot load"), std::string::npos);
  }
  try {
    kernel_library::load("/lib/x86_64-linux-gnu/libm.so.6");  // loads; no ropecheck_kernels
    FAIL();
  } catch (const kernel_library_error& e) {
    EXPECT_NE(std::string(e.what()).find("symbol 'ropecheck_kernels'"), std::string::npos) << e.what();
  }
}

std::string load_error(const std::string& path) {
  try {
    kernel_library::load(path);
  } catch (const kernel_library_error& e) {
    return e.what();
  }
  return "no error";
}

// kernel_abi.h: names are [A-Za-z0-9_.-] and unique within a library.
TEST(KernelLibrary, AKernelNameOutsideTheAbisCharactersIsRefused) {
  const std::string message = load_error(MISNAMED_BAD_NAME_LIB);
  EXPECT_NE(message.find(MISNAMED_BAD_NAME_LIB), std::string::npos) << message;
  EXPECT_NE(message.find("kernel [1]: field 'name'"), std::string::npos) << message;
  EXPECT_NE(message.find("'bad name; rm -rf /\\x0a<script>'"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(KernelLibrary, TwoKernelsOfOneNameAreRefused) {
  const std::string message = load_error(MISNAMED_DUPLICATE_LIB);
  EXPECT_NE(message.find("kernel [1]: field 'name': a second kernel of this name"), std::string::npos)
      << message;
  EXPECT_NE(message.find("'fine_name'"), std::string::npos) << message;
}

TEST(KernelLibrary, AFifoIsRefusedWithoutBlocking) {
  const std::string fifo = (std::filesystem::temp_directory_path() /
                            ("ropecheck_abi_fifo_" + std::to_string(::getpid()) + ".so")).string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string message = load_error(fifo);
  std::filesystem::remove(fifo);
  EXPECT_NE(message.find("is a FIFO"), std::string::npos) << message;
}

}  // namespace
}  // namespace ropecheck::abi
