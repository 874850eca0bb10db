// Tests for io/tensor.h: storage and shape bookkeeping, typed views that check the dtype,
// copy-on-write sharing, and the float64 bridge (exact widening, single rounding back).
#include "io/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "io/io_error.h"
#include "io/test_support.h"
#include "numeric/half.h"

namespace ropecheck {
namespace {

using ropecheck::testing::expect_io_error;

TEST(tensor, default_is_an_empty_float64_vector) {
  const tensor t;
  EXPECT_EQ(t.type, dtype::float64);
  EXPECT_EQ(t.shape, std::vector<std::int64_t>{0});
  EXPECT_EQ(t.elements(), 0);
  EXPECT_TRUE(t.bytes().empty());
}

TEST(tensor, constructor_zero_fills_and_sizes_by_dtype) {
  for (const dtype type : {dtype::float64, dtype::float32, dtype::float16, dtype::bfloat16,
                           dtype::int32, dtype::int64}) {
    const tensor t(type, {2, 3, 4});
    EXPECT_EQ(t.elements(), 24);
    EXPECT_EQ(t.byte_size(), 24 * size_of(type));
    for (const std::byte b : t.bytes()) ASSERT_EQ(b, std::byte{0});
  }
  const tensor scalar(dtype::float32, {});
  EXPECT_EQ(scalar.elements(), 1);
  EXPECT_EQ(tensor(dtype::int32, {3, 0, 5}).elements(), 0);
}

TEST(tensor, rejects_negative_and_overflowing_shapes) {
  EXPECT_THROW(tensor(dtype::float32, {2, -1}), std::invalid_argument);
  EXPECT_THROW(tensor(dtype::float64, {std::int64_t{1} << 31, std::int64_t{1} << 31}),
               std::invalid_argument);
  EXPECT_FALSE(checked_element_count(std::vector<std::int64_t>{std::int64_t{1} << 62, 4}, 1));
  EXPECT_EQ(checked_element_count(std::vector<std::int64_t>{std::int64_t{1} << 62, 0}, 1), 0);
}

TEST(tensor, typed_views_check_the_dtype) {
  tensor t(dtype::float32, {4});
  EXPECT_EQ(t.values<float>().size(), 4u);
  EXPECT_THROW((void)t.values<double>(), std::invalid_argument);
  EXPECT_THROW((void)t.values<std::int32_t>(), std::invalid_argument);  // same size, wrong kind
  EXPECT_THROW((void)t.mutable_values<std::uint16_t>(), std::invalid_argument);
  EXPECT_EQ(tensor(dtype::bfloat16, {3}).values<std::uint16_t>().size(), 3u);
  EXPECT_EQ(tensor(dtype::float16, {3}).values<std::uint16_t>().size(), 3u);
}

TEST(tensor, edited_shape_that_storage_cannot_hold_is_caught) {
  tensor t(dtype::float32, {2, 3});
  t.shape = {3, 2};  // a reshape is fine
  EXPECT_EQ(t.values<float>().size(), 6u);
  t.shape = {7};
  EXPECT_THROW((void)t.bytes(), std::logic_error);
}

TEST(tensor, copies_share_until_written) {
  tensor a(dtype::int32, {3});
  a.mutable_values<std::int32_t>()[0] = 7;
  tensor b = a;
  EXPECT_EQ(a.bytes().data(), b.bytes().data());  // cheap copy
  b.mutable_values<std::int32_t>()[0] = 9;
  EXPECT_EQ(a.values<std::int32_t>()[0], 7);
  EXPECT_EQ(b.values<std::int32_t>()[0], 9);
  EXPECT_FALSE(a == b);
}

TEST(tensor, shared_external_storage_is_never_written) {
  auto buffer = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3});
  const std::shared_ptr<const std::byte> storage(
      buffer, reinterpret_cast<const std::byte*>(buffer->data()));
  tensor t = tensor::share(dtype::float32, {3}, storage, 12);
  EXPECT_EQ(t.values<float>()[2], 3.0f);
  t.mutable_values<float>()[2] = 5.0f;
  EXPECT_EQ((*buffer)[2], 3.0f);
  EXPECT_EQ(t.values<float>()[2], 5.0f);
  EXPECT_THROW(tensor::share(dtype::float32, {4}, storage, 12), std::invalid_argument);
}

TEST(tensor, misaligned_storage_is_copied_to_aligned_memory) {
  auto buffer = std::make_shared<std::vector<std::byte>>(1 + 2 * sizeof(double));
  const double values[2] = {1.5, -2.25};
  std::memcpy(buffer->data() + 1, values, sizeof values);
  const std::shared_ptr<const std::byte> storage(buffer, buffer->data() + 1);
  const tensor t = tensor::share(dtype::float64, {2}, storage, sizeof values);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.bytes().data()) % alignof(double), 0u);
  EXPECT_EQ(t.values<double>()[1], -2.25);
}

TEST(tensor, format_shape_spells_python_tuples) {
  EXPECT_EQ(format_shape(std::vector<std::int64_t>{}), "()");
  EXPECT_EQ(format_shape(std::vector<std::int64_t>{5}), "(5,)");
  EXPECT_EQ(format_shape(std::vector<std::int64_t>{2, 5, 8}), "(2, 5, 8)");
}

TEST(to_float64, is_exact_for_every_floating_dtype_and_int32) {
  tensor h(dtype::float16, {3});
  h.mutable_values<std::uint16_t>()[0] = 0x0001;  // 2^-24
  h.mutable_values<std::uint16_t>()[1] = 0x7bff;  // 65504
  h.mutable_values<std::uint16_t>()[2] = 0xfc00;  // -inf
  EXPECT_EQ(to_float64(h), (std::vector<double>{0x1p-24, 65504.0, -HUGE_VAL}));

  tensor b(dtype::bfloat16, {1});
  b.mutable_values<std::uint16_t>()[0] = 0x3fc0;
  EXPECT_EQ(to_float64(b), std::vector<double>{1.5});

  tensor f(dtype::float32, {1});
  f.mutable_values<float>()[0] = 0x1.fffffep127f;
  EXPECT_EQ(to_float64(f), std::vector<double>{0x1.fffffep127});

  tensor i(dtype::int32, {2});
  i.mutable_values<std::int32_t>()[0] = std::numeric_limits<std::int32_t>::min();
  i.mutable_values<std::int32_t>()[1] = std::numeric_limits<std::int32_t>::max();
  EXPECT_EQ(to_float64(i), (std::vector<double>{-2147483648.0, 2147483647.0}));
}

TEST(to_float64, int64_must_be_exactly_representable) {
  tensor ok(dtype::int64, {2});
  ok.mutable_values<std::int64_t>()[0] = std::int64_t{1} << 53;
  ok.mutable_values<std::int64_t>()[1] = -(std::int64_t{1} << 53);
  EXPECT_EQ(to_float64(ok), (std::vector<double>{0x1p53, -0x1p53}));

  tensor bad(dtype::int64, {3});
  bad.mutable_values<std::int64_t>()[2] = (std::int64_t{1} << 53) + 1;
  expect_io_error([&] { (void)to_float64(bad, "positions.npy"); },
                  {"positions.npy", "element [2]", "'9007199254740993'"});
}

TEST(from_float64, rounds_once_to_the_target_dtype) {
  const double just_above_tie = 1.0 + 0x1p-11 + 0x1p-40;  // via float it would round down
  const std::vector<double> values{just_above_tie, -0.0, 65520.0};
  const tensor h = from_float64(values, {3}, dtype::float16);
  EXPECT_EQ(h.values<std::uint16_t>()[0], 0x3c01);
  EXPECT_EQ(h.values<std::uint16_t>()[1], 0x8000);
  EXPECT_EQ(h.values<std::uint16_t>()[2], 0x7c00);
  EXPECT_EQ(from_float64(values, {3}, dtype::bfloat16).values<std::uint16_t>()[0], 0x3f80);
  EXPECT_EQ(from_float64(std::vector<double>{1.0 + 0x1p-24}, {}, dtype::float32).values<float>()[0],
            1.0f);  // tie to even
  EXPECT_EQ(from_float64(values, {1, 3}, dtype::float64).values<double>()[0], just_above_tie);
}

TEST(from_float64, integer_dtypes_take_only_exact_integers) {
  const std::vector<double> ok{-2147483648.0, 2147483647.0};
  EXPECT_EQ(to_float64(from_float64(ok, {2}, dtype::int32)), ok);
  EXPECT_EQ(to_float64(from_float64(ok, {2}, dtype::int64)), ok);
  EXPECT_THROW(from_float64(std::vector<double>{2147483648.0}, {1}, dtype::int32),
               std::invalid_argument);
  EXPECT_THROW(from_float64(std::vector<double>{0.5}, {1}, dtype::int64), std::invalid_argument);
  EXPECT_THROW(from_float64(std::vector<double>{NAN}, {1}, dtype::int64), std::invalid_argument);
  EXPECT_THROW(from_float64(std::vector<double>{0x1p63}, {1}, dtype::int64), std::invalid_argument);
}

TEST(from_float64, value_count_must_match_the_shape) {
  EXPECT_THROW(from_float64(std::vector<double>{1, 2, 3}, {2, 2}, dtype::float32),
               std::invalid_argument);
}

TEST(io_error, message_is_one_line_and_escapes_untrusted_values) {
  const io_error e("X.npy", "header field 'descr'", "unsupported dtype", ">f4", "big-endian");
  EXPECT_STREQ(e.what(), "X.npy: header field 'descr': unsupported dtype '>f4' (big-endian)");
  EXPECT_EQ(e.file(), "X.npy");
  EXPECT_EQ(e.field(), "header field 'descr'");
  EXPECT_EQ(e.value(), ">f4");
  const io_error hostile("f", "header", "bad", std::string("a\nb\x93") + std::string(200, 'z'));
  EXPECT_EQ(std::string(hostile.what()).find('\n'), std::string::npos);
  EXPECT_NE(std::string(hostile.what()).find("a\\x0ab\\x93zz"), std::string::npos);
  EXPECT_NE(std::string(hostile.what()).find("z...'"), std::string::npos);
}

}  // namespace
}  // namespace ropecheck
