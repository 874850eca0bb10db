// arrays: NumPy arrays ↔ the one ropecheck::tensor (io/tensor.h). The Python layer
// (ropecheck/_bridge.py) hands over C-contiguous arrays of raw storage elements plus the dtype
// they hold, float16/bfloat16 as their 16-bit patterns, fp8 as their 8-bit patterns, so nothing
// is rounded on the way in.
#pragma once

#include <pybind11/numpy.h>

#include <string>

#include "io/tensor.h"

namespace ropecheck::python {

// A copy of `array` as a tensor of dtype `dtype_name` (float64, float32, float16, bfloat16,
// int32, int64). Throws std::invalid_argument naming `name` when the element size does not fit
// the dtype or the array is not C-contiguous.
tensor tensor_from_array(const pybind11::array& array, const std::string& dtype_name,
                         const std::string& name);

// A NumPy copy of a float64 or float32 tensor.
pybind11::array array_from_tensor(const tensor& t);

}  // namespace ropecheck::python
