// tensor: the one in-memory tensor every ropecheck tool uses — an owning, C-contiguous
// (row-major) host array of one dtype, plus the float64 bridge the checkers compute in.
//
// Copies are cheap: element storage is shared and copied on the first mutable access
// (copy-on-write), which is also how a tensor can point straight into a memory-mapped file
// (read_npy / read_safetensors) without copying a multi-GiB payload. Copy-on-write uses
// shared_ptr::use_count, so a tensor being mutated must not be copied concurrently.
//
// float16 and bfloat16 elements are held as their raw 16-bit patterns (std::uint16_t),
// float8_e4m3fn and float8_e5m2 as raw bytes (std::uint8_t); numeric/half.h and numeric/fp8.h
// convert them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "numeric/dtype.h"

namespace ropecheck {

// Number of elements of a shape (1 for the scalar shape ()), or nullopt if a dimension is
// negative or the byte size of such a tensor would not fit in std::int64_t.
std::optional<std::int64_t> checked_element_count(std::span<const std::int64_t> shape,
                                                  std::size_t element_size = 8);

// Python tuple spelling, as numpy prints shapes: (), (5,), (2, 5, 8).
std::string format_shape(std::span<const std::int64_t> shape);

namespace tensor_detail {
template <typename T>
constexpr bool element_type_matches(dtype t) {
  if constexpr (std::is_same_v<T, double>) {
    return t == dtype::float64;
  } else if constexpr (std::is_same_v<T, float>) {
    return t == dtype::float32;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return t == dtype::int32;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return t == dtype::int64;
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    return t == dtype::float16 || t == dtype::bfloat16;  // raw bit patterns
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return is_float8(t);  // raw bit patterns
  } else {
    static_assert(!sizeof(T), "tensor elements are double, float, int32, int64, uint16 or uint8 bits");
  }
}
[[noreturn]] void throw_element_type_mismatch(dtype held, std::size_t requested_size);
}  // namespace tensor_detail

struct tensor {
  dtype type = dtype::float64;
  std::vector<std::int64_t> shape{0};  // C order; {} is a scalar (one element)

  // An empty float64 tensor of shape (0,).
  tensor() = default;
  // Zero-filled. Throws std::invalid_argument for a negative or overflowing shape.
  tensor(dtype type, std::vector<std::int64_t> shape);

  // Shares `storage` (byte_size bytes, e.g. a region of a mapped file) instead of copying it;
  // `owner` keeps it alive. If storage is not aligned for the dtype it is copied instead, so
  // the typed accessors never read misaligned elements. `mapped_file`: storage lies in a
  // read-only private file mapping (io/file_bytes.h), whose pages release_pages may drop.
  static tensor share(dtype type, std::vector<std::int64_t> shape,
                      std::shared_ptr<const std::byte> storage, std::size_t byte_size,
                      bool mapped_file = false);
  // Copies `bytes` (which must be exactly the tensor's byte size).
  static tensor copy_of(dtype type, std::vector<std::int64_t> shape,
                        std::span<const std::byte> bytes);

  std::int64_t elements() const;
  std::size_t byte_size() const;

  // The elements' bytes. Throw std::logic_error if `type`/`shape` were edited to something
  // the storage does not hold.
  std::span<const std::byte> bytes() const;
  std::span<std::byte> mutable_bytes();  // copies first if storage is shared or mapped

  // Typed views; T must match the dtype (uint16_t for float16/bfloat16 bits, uint8_t for fp8),
  // otherwise
  // std::invalid_argument.
  template <typename T>
  std::span<const T> values() const {
    if (!tensor_detail::element_type_matches<T>(type)) {
      tensor_detail::throw_element_type_mismatch(type, sizeof(T));
    }
    const std::span<const std::byte> b = bytes();
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  template <typename T>
  std::span<T> mutable_values() {
    if (!tensor_detail::element_type_matches<T>(type)) {
      tensor_detail::throw_element_type_mismatch(type, sizeof(T));
    }
    const std::span<std::byte> b = mutable_bytes();
    return {reinterpret_cast<T*>(b.data()), b.size() / sizeof(T)};
  }

  // A hint from a reader streaming through the tensor once: elements [first, first + count)
  // are done with. For a tensor pointing into a mapped file, the whole pages inside that range
  // leave this process's resident memory (madvise MADV_DONTNEED; read again, they are mapped
  // back from the page cache, unchanged), so streaming a multi-GiB file does not keep it all
  // resident. Otherwise (owned storage) it does nothing.
  void release_pages(std::int64_t first, std::int64_t count) const;

  // Same dtype, shape and bytes (so NaNs compare by bit pattern).
  friend bool operator==(const tensor& a, const tensor& b);

 private:
  std::shared_ptr<const std::byte> storage_;
  std::size_t storage_size_ = 0;
  bool owns_storage_ = false;  // allocated by us, so writable once unshared
  bool mapped_file_ = false;   // storage lies in a read-only private file mapping
};

// Every element as a double: exact for all floating dtypes and int32; int64 elements must
// satisfy |v| <= 2^53, else io_error naming `name_for_messages` and the element index.
std::vector<double> to_float64(const tensor& t, std::string_view name_for_messages = "tensor");
// The same for out.size() elements starting at flat index `first` (std::out_of_range past the
// end): how checkers stream a large tensor row by row without a whole double copy.
void to_float64(const tensor& t, std::int64_t first, std::span<double> out,
                std::string_view name_for_messages = "tensor");

// A tensor of `type` from doubles, rounding each value ONCE, to nearest-even (float16 and
// bfloat16 via numeric/half.h; fp8 via numeric/fp8.h, saturating at ±max as the kernels do). Integer dtypes accept only integral, in-range values.
// Throws std::invalid_argument if values.size() does not match the shape.
tensor from_float64(std::span<const double> values, std::vector<std::int64_t> shape, dtype type);

}  // namespace ropecheck
