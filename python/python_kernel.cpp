// The Python-callable kernel (python_kernel.h).
#include "python/python_kernel.h"

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <utility>

#include "fast/call_checks.h"

namespace py = pybind11;

namespace ropecheck::python {
namespace {

// [tokens, heads, head_dim] elements of `t` packed into a NumPy array of the raw storage type
// (float32, or uint16 bit patterns for float16/bfloat16, uint8 bit patterns for fp8).
py::array gather(const fast::rope_call& call, const fast::rope_tensor& t) {
  const auto size = static_cast<std::int64_t>(size_of(call.storage));
  const std::vector<py::ssize_t> shape{call.tokens, t.heads, call.head_dim};
  py::array out = call.storage == dtype::float32 ? py::array(py::dtype::of<float>(), shape)
                  : is_float8(call.storage)      ? py::array(py::dtype::of<std::uint8_t>(), shape)
                                                 : py::array(py::dtype::of<std::uint16_t>(), shape);
  auto* dst = static_cast<std::byte*>(out.mutable_data());
  const auto* src = static_cast<const std::byte*>(t.input);
  const std::size_t row = static_cast<std::size_t>(call.head_dim * size);
  for (std::int64_t tok = 0; tok < call.tokens; ++tok)
    for (std::int64_t h = 0; h < t.heads; ++h, dst += row)
      std::memcpy(dst, src + (tok * t.input_token_stride + h * t.input_head_stride) * size, row);
  return out;
}

// The kernel's output for `t`, checked against the call (the Python layer already checked
// the dtype and shape; this is the last line before raw memory is written).
void scatter(const fast::rope_call& call, const fast::rope_tensor& t, const py::array& from,
             const char* which) {
  const auto size = static_cast<std::int64_t>(size_of(call.storage));
  const bool shape_ok = from.ndim() == 3 && from.shape(0) == call.tokens && from.shape(1) == t.heads &&
                        from.shape(2) == call.head_dim;
  if (!shape_ok || from.itemsize() != size || !(from.flags() & py::array::c_style))
    throw std::invalid_argument(fmt::format("{}: not a packed [{}, {}, {}] array of {}", which,
                                            call.tokens, t.heads, call.head_dim, to_string(call.storage)));
  const auto* src = static_cast<const std::byte*>(from.data());
  auto* dst = static_cast<std::byte*>(t.output);
  const std::size_t row = static_cast<std::size_t>(call.head_dim * size);
  for (std::int64_t tok = 0; tok < call.tokens; ++tok)
    for (std::int64_t h = 0; h < t.heads; ++h, src += row)
      std::memcpy(dst + (tok * t.output_token_stride + h * t.output_head_stride) * size, src, row);
}

}  // namespace

python_kernel::python_kernel(py::object adapter, std::string name, std::string description,
                             std::vector<dtype> dtypes, std::vector<pairing> pairings,
                             fast::kernel_domain domain, bool streams)
    : adapter_(std::move(adapter)),
      name_(std::move(name)),
      description_(std::move(description)),
      dtypes_(std::move(dtypes)),
      pairings_(std::move(pairings)) {
  // on_the_fly: the kernel gets θ_j (params["inv_freq"]), never a cos/sin table. Position
  // streams only to a kernel that declares them (else their properties are skipped); no fp8
  // output scale (output_scale_within_bound is skipped).
  info_ = {name_, description_, fast::angle_strategy::on_the_fly, dtypes_, pairings_,
           &python_kernel::call, this, false, streams, false};
  // What the kernel declared it serves (gate(serves=…)): the gate sends it nothing else.
  info_.domain = domain;
}

python_kernel::~python_kernel() {
  py::gil_scoped_acquire gil;
  pending_.reset();
  adapter_ = py::object();
}

void python_kernel::stop_if_raised() const {
  if (pending_) throw kernel_raised{};
}

void python_kernel::rethrow_pending() {
  if (!pending_) return;
  py::error_already_set e = std::move(*pending_);
  pending_.reset();
  throw e;
}

fast::status python_kernel::call(const void* context, const fast::rope_call& call,
                                 const fast::rope_angles& angles) {
  auto* self = const_cast<python_kernel*>(static_cast<const python_kernel*>(context));
  // After the kernel raised (KeyboardInterrupt, KernelTimeout, its own error), no check may run
  // on: a property counts failing cases rather than stopping, so the marker ends it here.
  if (self->pending_) throw kernel_raised{};
  if (fast::status s = fast::detail::check_call(call); !s.ok()) return s;
  if (call.output_scale != 1.0f)  // the adapter passes no scale: refused, never dropped
    return fast::status::error(fast::status_code::unsupported,
                               "a Python kernel takes no output_scale (its calls are unscaled)");
  if (static_cast<std::int64_t>(angles.frequencies().inverse_frequencies.size()) * 2 != call.rotary_dim)
    return fast::status::error(fast::status_code::invalid_argument,
                               "rotary_dim does not match the prepared frequencies");
  py::gil_scoped_acquire gil;
  try {
    return self->call_with_gil(call, angles);
  } catch (py::error_already_set& e) {
    self->pending_ = std::move(e);
  } catch (py::builtin_exception& e) {  // a bad return value (not a tuple of two arrays, ...)
    e.set_error();
    self->pending_ = py::error_already_set();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    self->pending_ = py::error_already_set();
  }
  return fast::status::error(fast::status_code::invalid_argument, "the Python kernel raised an exception");
}

fast::status python_kernel::call_with_gil(const fast::rope_call& call, const fast::rope_angles& angles) {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C ends the gate
  // A kernel that declares streams always gets [streams, tokens] (one stream: [1, tokens]) and
  // the stream of each pair, so that it has one signature.
  py::array_t<std::int64_t> positions =
      info_.multi_stream ? py::array_t<std::int64_t>({static_cast<py::ssize_t>(call.position_streams),
                                                      static_cast<py::ssize_t>(call.tokens)})
                         : py::array_t<std::int64_t>(call.tokens);
  auto* position = positions.mutable_data();
  for (std::int32_t s = 0; s < (info_.multi_stream ? call.position_streams : 1); ++s)
    for (std::int64_t i = 0; i < call.tokens; ++i) *position++ = fast::position_at(call, i, s);
  const auto& frequencies = angles.frequencies();
  py::array_t<double> inv_freq(static_cast<py::ssize_t>(frequencies.inverse_frequencies.size()));
  std::memcpy(inv_freq.mutable_data(), frequencies.inverse_frequencies.data(),
              frequencies.inverse_frequencies.size() * sizeof(double));
  py::dict params;
  params["rotary_dim"] = call.rotary_dim;
  params["pairing"] = call.pair == pairing::adjacent ? "adjacent" : "half";
  params["inv_freq"] = inv_freq;
  params["attention_factor"] = frequencies.attention_factor;
  params["inverse"] = call.dir == fast::direction::inverse;
  if (info_.multi_stream) {
    py::array_t<std::int32_t> pair_streams(call.rotary_dim / 2);
    for (std::int64_t j = 0; j < call.rotary_dim / 2; ++j)
      pair_streams.mutable_at(j) = call.position_streams > 1 && call.pair_streams != nullptr ? call.pair_streams[j] : 0;
    params["pair_streams"] = pair_streams;
  }
  const py::array q = gather(call, call.q);
  const py::array k = gather(call, call.k);
  const py::tuple out = adapter_(q, k, positions, params, std::string(to_string(call.storage)), check_);
  try {
    scatter(call, call.q, out[0].cast<py::array>(), "q_out");
    if (call.k.heads > 0) scatter(call, call.k, out[1].cast<py::array>(), "k_out");
  } catch (const std::invalid_argument& e) {
    throw py::value_error(fmt::format("kernel {}: {}", name_, e.what()));
  }
  return fast::status::success();
}

}  // namespace ropecheck::python
