// NumPy arrays ↔ tensors (arrays.h).
#include "python/arrays.h"

#include <fmt/format.h>

#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "numeric/dtype.h"

namespace py = pybind11;

namespace ropecheck::python {

tensor tensor_from_array(const py::array& array, const std::string& dtype_name,
                         const std::string& name) {
  const auto type = parse_dtype(dtype_name);
  if (!type)
    throw std::invalid_argument(fmt::format("{}: dtype '{}' is not one ropecheck reads", name, dtype_name));
  if (static_cast<std::size_t>(array.itemsize()) != size_of(*type))
    throw std::invalid_argument(fmt::format("{}: {}-byte elements cannot hold dtype '{}'", name,
                                            array.itemsize(), dtype_name));
  if (!(array.flags() & py::array::c_style))
    throw std::invalid_argument(fmt::format("{}: the array is not C-contiguous", name));
  std::vector<std::int64_t> shape(array.shape(), array.shape() + array.ndim());
  const auto* data = static_cast<const std::byte*>(array.data());
  return tensor::copy_of(*type, std::move(shape),
                         std::span<const std::byte>(data, static_cast<std::size_t>(array.nbytes())));
}

py::array array_from_tensor(const tensor& t) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  if (t.type == dtype::float64) {
    py::array_t<double> out(shape);
    std::memcpy(out.mutable_data(), t.bytes().data(), t.byte_size());
    return out;
  }
  if (t.type == dtype::float32) {
    py::array_t<float> out(shape);
    std::memcpy(out.mutable_data(), t.bytes().data(), t.byte_size());
    return out;
  }
  throw std::invalid_argument(fmt::format("no NumPy conversion for dtype {}", to_string(t.type)));
}

}  // namespace ropecheck::python
