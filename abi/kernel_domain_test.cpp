// Declared domains through the C ABI (include/ropecheck/kernel_abi.h v3): a v3 library's
// `limits` and `max_position` reach fast::kernel_info::domain in process and through the
// worker's listing, read at the v3 stride; a library built before v3 (its v2 descriptor array
// has the shorter stride) and one built for v1 still load, serving every call; a limit bit no
// version defines is refused at load, naming the kernel and the bits.
// The libraries: abi/test_libraries/domain_kernels.c.
#include <gtest/gtest.h>

#include <string>

#include "abi/kernel_library.h"

namespace ropecheck::abi {
namespace {

std::string library(const std::string& variant) {
  return std::string(DOMAIN_LIB_DIR) + "/libdomain_" + variant + ".so";
}

const isolation in_process{.isolate = false};
const isolation in_worker{};

TEST(KernelDomain, AV3LibrarysDeclaredDomainsReachTheKernelInfo) {
  for (const isolation& how : {in_process, in_worker}) {
    SCOPED_TRACE(how.isolate ? "in a worker" : "in process");
    const auto loaded = kernel_library::load(library("declared"), how);
    ASSERT_EQ(loaded.kernels().size(), 2u);
    const fast::kernel_info& limited = loaded.kernels()[0];
    EXPECT_EQ(limited.name, "domain_limited");
    EXPECT_FALSE(limited.domain.negative_positions);
    EXPECT_EQ(limited.domain.max_position, 1000000);
    EXPECT_FALSE(limited.domain.inverse);
    EXPECT_FALSE(limited.domain.attention_factor);
    EXPECT_FALSE(limited.domain.partial_rotary);
    EXPECT_FALSE(limited.domain.absent_tensor);
    // The second descriptor, read at the v3 stride: nonnegative positions only.
    const fast::kernel_info& nonnegative = loaded.kernels()[1];
    EXPECT_EQ(nonnegative.name, "refuses_negatives");
    EXPECT_EQ(nonnegative.description, "refuses negative positions");
    fast::kernel_domain expected;
    expected.negative_positions = false;
    EXPECT_EQ(nonnegative.domain, expected);
    EXPECT_TRUE(nonnegative.multi_stream);
  }
  // Declaring nothing is serving everything, as a v2 kernel does.
  const auto undeclared = kernel_library::load(library("undeclared"), in_process);
  for (const fast::kernel_info& k : undeclared.kernels()) EXPECT_EQ(k.domain, fast::kernel_domain{}) << k.name;
}

TEST(KernelDomain, AV2LibraryLoadsAtItsOwnStrideAndServesEverything) {
  for (const isolation& how : {in_process, in_worker}) {
    SCOPED_TRACE(how.isolate ? "in a worker" : "in process");
    const auto loaded = kernel_library::load(library("v2"), how);
    ASSERT_EQ(loaded.kernels().size(), 2u);
    EXPECT_EQ(loaded.kernels()[0].name, "v2_first");
    EXPECT_EQ(loaded.kernels()[1].name, "v2_second");
    EXPECT_EQ(loaded.kernels()[1].description, "the same, the second descriptor of the v2 array");
    for (const fast::kernel_info& k : loaded.kernels()) {
      EXPECT_EQ(k.domain, fast::kernel_domain{}) << k.name;
      EXPECT_TRUE(k.multi_stream) << k.name;  // v2 has position streams
    }
    // The built-ins as a v1 library: the same layout, asked for version 1.
    const auto v1 = kernel_library::load(ROPECHECK_KERNELS_V1_LIB, how);
    ASSERT_GE(v1.kernels().size(), 2u);
    for (const fast::kernel_info& k : v1.kernels()) {
      EXPECT_EQ(k.domain, fast::kernel_domain{}) << k.name;
      EXPECT_EQ(fast::find_kernel(k.name) != nullptr, true) << k.name;
    }
  }
}

TEST(KernelDomain, AnUnknownLimitBitIsRefusedNamingTheKernelAndTheBits) {
  for (const isolation& how : {in_process, in_worker}) {
    SCOPED_TRACE(how.isolate ? "in a worker" : "in process");
    try {
      (void)kernel_library::load(library("unknown_bit"), how);
      FAIL() << "a limit bit no version defines was accepted";
    } catch (const kernel_library_error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("libdomain_unknown_bit.so"), std::string::npos) << message;
      EXPECT_NE(message.find("'domain_limited'"), std::string::npos) << message;
      EXPECT_NE(message.find("'limits'"), std::string::npos) << message;
      EXPECT_NE(message.find("0x80"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace ropecheck::abi
