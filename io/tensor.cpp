// tensor: storage, copy-on-write and the float64 bridge (see tensor.h).
#include "io/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "io/io_error.h"
#include "numeric/fp8.h"
#include "numeric/half.h"

namespace ropecheck {

std::optional<std::int64_t> checked_element_count(std::span<const std::int64_t> shape,
                                                  std::size_t element_size) {
  const std::int64_t max_elements =
      std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(element_size);
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim == 0) {
      count = 0;
      continue;
    }
    // A later zero would make the product 0, but such a shape is still nonsense to write.
    if (count > max_elements / dim) return std::nullopt;
    count *= dim;
  }
  return count;
}

std::string format_shape(std::span<const std::int64_t> shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

namespace tensor_detail {
void throw_element_type_mismatch(dtype held, std::size_t requested_size) {
  throw std::invalid_argument(
      fmt::format("tensor holds {} elements; a typed view of {}-byte elements does not match",
                  to_string(held), requested_size));
}
}  // namespace tensor_detail

namespace {

std::size_t required_bytes(dtype type, std::span<const std::int64_t> shape) {
  const std::optional<std::int64_t> count = checked_element_count(shape, size_of(type));
  if (!count) {
    throw std::invalid_argument(
        fmt::format("tensor shape {} is negative or too large", format_shape(shape)));
  }
  return static_cast<std::size_t>(*count) * size_of(type);
}

std::shared_ptr<std::byte> allocate_zeroed(std::size_t size) {
  // operator new[] aligns to __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16), enough for every dtype.
  return std::shared_ptr<std::byte>(new std::byte[size == 0 ? 1 : size](),
                                    std::default_delete<std::byte[]>());
}

}  // namespace

tensor::tensor(dtype element_type, std::vector<std::int64_t> element_shape)
    : type(element_type), shape(std::move(element_shape)) {
  storage_size_ = required_bytes(type, shape);
  storage_ = allocate_zeroed(storage_size_);
  owns_storage_ = true;
}

tensor tensor::share(dtype type, std::vector<std::int64_t> shape,
                     std::shared_ptr<const std::byte> storage, std::size_t byte_size,
                     bool mapped_file) {
  const std::size_t needed = required_bytes(type, shape);
  if (byte_size != needed || (needed > 0 && storage == nullptr)) {
    throw std::invalid_argument(
        fmt::format("tensor::share: {} bytes given, shape {} of {} needs {}", byte_size,
                    format_shape(shape), to_string(type), needed));
  }
  if (reinterpret_cast<std::uintptr_t>(storage.get()) % size_of(type) != 0) {
    return copy_of(type, std::move(shape), {storage.get(), byte_size});
  }
  tensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.storage_ = std::move(storage);
  t.storage_size_ = byte_size;
  t.owns_storage_ = false;
  t.mapped_file_ = mapped_file;
  return t;
}

void tensor::release_pages(std::int64_t first, std::int64_t count) const {
  if (!mapped_file_ || count <= 0 || first < 0 || first >= elements()) return;
  count = std::min(count, elements() - first);
  const std::size_t size = size_of(type);
  const auto begin = reinterpret_cast<std::uintptr_t>(storage_.get()) + static_cast<std::size_t>(first) * size;
  const auto end = begin + static_cast<std::size_t>(count) * size;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t from = (begin + page - 1) / page * page;  // whole pages only: a page
  const std::uintptr_t to = end / page * page;                    // may hold other elements
  // Only a hint: if the kernel refuses, the pages simply stay resident.
  if (from < to) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

tensor tensor::copy_of(dtype type, std::vector<std::int64_t> shape,
                       std::span<const std::byte> bytes) {
  tensor t(type, std::move(shape));
  if (bytes.size() != t.storage_size_) {
    throw std::invalid_argument(
        fmt::format("tensor::copy_of: {} bytes given, shape {} of {} needs {}", bytes.size(),
                    format_shape(t.shape), to_string(type), t.storage_size_));
  }
  if (!bytes.empty()) std::memcpy(t.mutable_bytes().data(), bytes.data(), bytes.size());
  return t;
}

std::int64_t tensor::elements() const {
  const std::optional<std::int64_t> count = checked_element_count(shape, size_of(type));
  if (!count) {
    throw std::logic_error(
        fmt::format("tensor shape {} is negative or too large", format_shape(shape)));
  }
  return *count;
}

std::size_t tensor::byte_size() const {
  return static_cast<std::size_t>(elements()) * size_of(type);
}

std::span<const std::byte> tensor::bytes() const {
  const std::size_t size = byte_size();
  if (size != storage_size_) {
    throw std::logic_error(fmt::format("tensor shape {} of {} needs {} bytes but holds {}",
                                       format_shape(shape), to_string(type), size, storage_size_));
  }
  return {storage_.get(), size};
}

std::span<std::byte> tensor::mutable_bytes() {
  const std::span<const std::byte> current = bytes();
  if (!owns_storage_ || storage_.use_count() > 1) {
    std::shared_ptr<std::byte> copy = allocate_zeroed(current.size());
    if (!current.empty()) std::memcpy(copy.get(), current.data(), current.size());
    storage_ = std::move(copy);
    owns_storage_ = true;
    mapped_file_ = false;
  }
  // We allocated this buffer as mutable bytes; only the shared handle is const.
  return {const_cast<std::byte*>(storage_.get()), current.size()};
}

bool operator==(const tensor& a, const tensor& b) {
  if (a.type != b.type || a.shape != b.shape) return false;
  const std::span<const std::byte> x = a.bytes();
  const std::span<const std::byte> y = b.bytes();
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
}

void to_float64(const tensor& t, std::int64_t first, std::span<double> out,
                std::string_view name_for_messages) {
  const std::int64_t count = static_cast<std::int64_t>(out.size());
  if (first < 0 || count > t.elements() - first) {
    throw std::out_of_range(fmt::format("to_float64: elements [{}, {}) of {} outside {}", first,
                                        first + count, name_for_messages, t.elements()));
  }
  const auto convert = [&](auto values, auto to_double) {
    for (std::int64_t i = 0; i < count; ++i) out[i] = to_double(values[first + i]);
  };
  switch (t.type) {
    case dtype::float64: convert(t.values<double>(), [](double v) { return v; }); break;
    case dtype::float32: convert(t.values<float>(), [](float v) { return double{v}; }); break;
    case dtype::float16:
      convert(t.values<std::uint16_t>(), [](std::uint16_t v) { return double{float16_bits_to_float(v)}; });
      break;
    case dtype::bfloat16:
      convert(t.values<std::uint16_t>(), [](std::uint16_t v) { return double{bfloat16_bits_to_float(v)}; });
      break;
    case dtype::float8_e4m3fn:
    case dtype::float8_e5m2:
      convert(t.values<std::uint8_t>(), [&](std::uint8_t v) { return double{float8_bits_to_float(t.type, v)}; });
      break;
    case dtype::int32: convert(t.values<std::int32_t>(), [](std::int32_t v) { return double(v); }); break;
    case dtype::int64: {
      constexpr std::int64_t exact_limit = std::int64_t{1} << 53;
      const std::span<const std::int64_t> values = t.values<std::int64_t>();
      for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t v = values[first + i];
        if (v > exact_limit || v < -exact_limit) {
          throw io_error(name_for_messages, fmt::format("element [{}]", first + i),
                         "int64 value not exactly representable as float64", std::to_string(v),
                         "|v| > 2^53");
        }
        out[i] = static_cast<double>(v);
      }
      break;
    }
  }
}

std::vector<double> to_float64(const tensor& t, std::string_view name_for_messages) {
  std::vector<double> out(static_cast<std::size_t>(t.elements()));
  to_float64(t, 0, out, name_for_messages);
  return out;
}

namespace {

template <typename Int>
Int exact_integer(double v, std::size_t index, dtype type) {
  // The bounds are powers of two, exact as doubles; the upper one is exclusive.
  constexpr double lower = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double upper = -lower;
  if (!(v >= lower && v < upper) || std::trunc(v) != v) {
    throw std::invalid_argument(fmt::format("from_float64: element [{}] = {} is not a {} value",
                                            index, v, to_string(type)));
  }
  return static_cast<Int>(v);
}

}  // namespace

tensor from_float64(std::span<const double> values, std::vector<std::int64_t> shape, dtype type) {
  tensor t(type, std::move(shape));
  if (static_cast<std::size_t>(t.elements()) != values.size()) {
    throw std::invalid_argument(fmt::format("from_float64: {} values for shape {} ({} elements)",
                                            values.size(), format_shape(t.shape), t.elements()));
  }
  switch (type) {
    case dtype::float64: {
      const std::span<double> out = t.mutable_values<double>();
      std::copy(values.begin(), values.end(), out.begin());
      break;
    }
    case dtype::float32: {
      const std::span<float> out = t.mutable_values<float>();
      // The default (round-to-nearest-even) mode; ropecheck never changes it.
      for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
      break;
    }
    case dtype::float16: {
      const std::span<std::uint16_t> out = t.mutable_values<std::uint16_t>();
      for (std::size_t i = 0; i < values.size(); ++i) out[i] = double_to_float16_bits(values[i]);
      break;
    }
    case dtype::bfloat16: {
      const std::span<std::uint16_t> out = t.mutable_values<std::uint16_t>();
      for (std::size_t i = 0; i < values.size(); ++i) out[i] = double_to_bfloat16_bits(values[i]);
      break;
    }
    case dtype::float8_e4m3fn:
    case dtype::float8_e5m2: {
      const std::span<std::uint8_t> out = t.mutable_values<std::uint8_t>();
      for (std::size_t i = 0; i < values.size(); ++i) out[i] = double_to_float8_bits(type, values[i]);
      break;
    }
    case dtype::int32: {
      const std::span<std::int32_t> out = t.mutable_values<std::int32_t>();
      for (std::size_t i = 0; i < values.size(); ++i) {
        out[i] = exact_integer<std::int32_t>(values[i], i, type);
      }
      break;
    }
    case dtype::int64: {
      const std::span<std::int64_t> out = t.mutable_values<std::int64_t>();
      for (std::size_t i = 0; i < values.size(); ++i) {
        out[i] = exact_integer<std::int64_t>(values[i], i, type);
      }
      break;
    }
  }
  return t;
}

}  // namespace ropecheck
