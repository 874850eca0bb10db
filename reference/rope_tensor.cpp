// rope_tensor: see rope_tensor.h. Threads share the rotary parameters read-only; each has its own
// working vectors. The matrix form builds R^d_{Θ,m} once per row and applies it in full to each
// head (d² products a vector: that form stays the slowest on purpose).
#include "reference/rope_tensor.h"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <stdexcept>
#include <thread>

#include "reference/real.h"
#include "reference/rope_forms.h"

namespace ropecheck::reference {

std::vector<double> rope_tensor(std::span<const double> x, tensor_shape shape,
                                std::span<const std::int64_t> positions, const rope_spec& spec,
                                reference_form form, reference_output output,
                                double output_scale) {
  const int d = spec.head_dim;
  const std::int64_t streams = position_stream_count(spec.streams);
  if (static_cast<std::int64_t>(positions.size()) != shape.rows * streams ||
      static_cast<std::int64_t>(x.size()) != shape.rows * shape.heads * d)
    throw std::logic_error("reference::rope_tensor: x, positions and shape disagree");
  std::int64_t length = 0;
  for (std::int64_t m : positions) length = std::max(length, m + 1);
  const auto params = params_from_spec<mp_real>(spec, length);
  std::vector<double> y(x.size());
  if (!(std::isfinite(output_scale) && output_scale > 0))
    throw std::logic_error("reference::rope_tensor: output_scale must be finite and > 0");
  auto convert = [&](const std::vector<mp_real>& out, std::size_t offset) {
    for (int c = 0; c < d; ++c) {
      const mp_real v = output_scale == 1 ? out[c] : mp_real(out[c] / output_scale);
      y[offset + c] = output == reference_output::float32
                          ? mpfr_get_flt(v.backend().data(), MPFR_RNDN)
                          : mpfr_get_d(v.backend().data(), MPFR_RNDN);
    }
  };
  // Each thread's rows: the form's per-position step once per row, then every head of the row.
  auto run_rows = [&](std::int64_t begin, std::int64_t end) {
    std::vector<mp_real> in(static_cast<std::size_t>(d));
    auto each_head = [&](std::int64_t row, const auto& rotate) {
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        const auto offset = static_cast<std::size_t>((row * shape.heads + h) * d);
        for (int c = 0; c < d; ++c) in[c] = x[offset + c];
        convert(rotate(std::span<const mp_real>(in)), offset);
      }
    };
    // Only the chosen form's θ_j are computed (once per thread).
    std::optional<elementwise_rotation<mp_real>> elementwise;
    std::optional<complex_rotation<mp_real>> complex;
    if (form == reference_form::elementwise) elementwise.emplace(params);
    if (form == reference_form::complex) complex.emplace(params);
    for (std::int64_t row = begin; row < end; ++row) {
      const std::int64_t position = positions[static_cast<std::size_t>(row)];
      if (streams > 1) {  // M-RoPE, 2-D vision: the position-stream form, whatever `form`
        std::int64_t p[4] = {};  // at most 4 streams (ggml's IMROPE: t, h, w, e)
        for (std::int64_t s = 0; s < streams; ++s)
          p[s] = positions[static_cast<std::size_t>(s * shape.rows + row)];
        each_head(row, [&](std::span<const mp_real> v) {
          return rope_streams<mp_real>(v, std::span<const std::int64_t>(p, static_cast<std::size_t>(streams)),
                                       params, spec.streams);
        });
      } else if (complex) {
        complex->at_position(position);
        each_head(row, *complex);
      } else if (elementwise) {
        elementwise->at_position(position);
        each_head(row, *elementwise);
      } else {
        const auto r = rotation_matrix(position, params);
        each_head(row, [&](std::span<const mp_real> v) { return r.apply(v); });
      }
    }
  };
  const auto workers = static_cast<std::int64_t>(
      std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 64));
  const std::int64_t parts = std::min(workers, shape.rows);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(std::max<std::int64_t>(parts, 1)));
  for (std::int64_t i = 1; i < parts; ++i) {
    threads.emplace_back([&, i, begin = shape.rows * i / parts, end = shape.rows * (i + 1) / parts] {
      try {
        run_rows(begin, end);
      } catch (...) {  // an exception must not end the process from a worker: rethrown below
        failed[static_cast<std::size_t>(i)] = std::current_exception();
      }
      // MPFR keeps per-thread caches (π, cos/sin constants); a worker frees its own before it
      // ends, or they leak with the thread.
      mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    });
  }
  try {
    run_rows(0, parts > 0 ? shape.rows / parts : shape.rows);
  } catch (...) {
    failed[0] = std::current_exception();
  }
  for (auto& t : threads) t.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  return y;
}

}  // namespace ropecheck::reference
