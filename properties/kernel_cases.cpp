// kernel_cases: buffers, case generation and calls for the kernel properties.
#include "properties/kernel_cases.h"

#include "properties/summarise_runs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "numeric/half.h"
#include "numeric/storage_element.h"
#include "properties/scaling_cases.h"
#include "reference/double_tier_memo.h"

namespace ropecheck::properties::kernel_support {

// ---------------------------------------------------------------------------------------------
// element_buffer

element_buffer::element_buffer(dtype storage, std::int64_t count, std::int64_t misalignment)
    : storage_(storage), count_(count), misalignment_(misalignment) {
  constexpr std::size_t alignment = 64;
  const std::size_t element = size_of(storage);
  bytes_.resize(static_cast<std::size_t>(count + misalignment) * element + alignment);
  const auto address = reinterpret_cast<std::uintptr_t>(bytes_.data());
  offset_ = (alignment - address % alignment) % alignment +
            static_cast<std::size_t>(misalignment) * element;
}

element_buffer element_buffer::clone() const {
  element_buffer copy(storage_, count_, misalignment_);
  std::memcpy(copy.data(), data(), byte_size());
  return copy;
}

double element_buffer::get(std::int64_t i) const {
  return load_storage_element(storage_, data() + static_cast<std::size_t>(i) * size_of(storage_));
}

void element_buffer::set(std::int64_t i, double value) {
  std::byte* p = data() + static_cast<std::size_t>(i) * size_of(storage_);
  if (storage_ == dtype::float32) {
    const auto v = static_cast<float>(value);
    std::memcpy(p, &v, sizeof v);
    return;
  }
  if (is_float8(storage_)) {
    *p = static_cast<std::byte>(double_to_float8_bits(storage_, value));
    return;
  }
  const std::uint16_t bits = storage_ == dtype::float16 ? double_to_float16_bits(value)
                                                        : double_to_bfloat16_bits(value);
  std::memcpy(p, &bits, sizeof bits);
}

void element_buffer::set_bits(std::int64_t i, std::uint32_t bits) {
  std::byte* p = data() + static_cast<std::size_t>(i) * size_of(storage_);
  if (storage_ == dtype::float32) {
    std::memcpy(p, &bits, sizeof bits);
  } else if (is_float8(storage_)) {
    *p = static_cast<std::byte>(bits);
  } else {
    const auto half = static_cast<std::uint16_t>(bits);
    std::memcpy(p, &half, sizeof half);
  }
}

void element_buffer::fill_bytes(std::byte pattern) {
  std::memset(data(), static_cast<int>(pattern), byte_size());
}

bool element_buffer::same_bytes(const element_buffer& other) const {
  return first_difference(other) < 0;
}

std::int64_t element_buffer::first_difference(const element_buffer& other) const {
  if (storage_ != other.storage_ || count_ != other.count_) return 0;
  const std::size_t element = size_of(storage_);
  if (std::memcmp(data(), other.data(), byte_size()) == 0) return -1;
  for (std::int64_t i = 0; i < count_; ++i) {
    if (std::memcmp(data() + static_cast<std::size_t>(i) * element,
                    other.data() + static_cast<std::size_t>(i) * element, element) != 0)
      return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Cases

rope_spec plain_spec(const rope_shape& shape) {
  rope_spec s;
  s.head_dim = shape.head_dim;
  s.rotary_dim = shape.rotary_dim;
  s.base = shape.base;
  s.pair = shape.pair;
  s.source = "generated";
  return s;
}

std::int64_t cache_position_limit(std::int64_t pairs, std::int64_t table_floats) {
  return std::max<std::int64_t>(table_floats / (2 * pairs), 1);
}

kernel_case pick_case(const fast::kernel_info& kernel, dtype storage, const case_limits& limits) {
  // The kernel's own domain, besides what the run gave `limits` (within()).
  const fast::kernel_domain& served = kernel.domain;
  const bool full_rotation_only = limits.full_rotation_only || !served.partial_rotary;
  const bool attention_factor = limits.allow_attention_factor && served.attention_factor;
  if (limits.partial_rotation && full_rotation_only)  // the property needs partial_rotary: skipped
    throw std::logic_error("pick_case: pass-through dims asked of a kernel that serves none");
  std::int64_t position_limit = limits.position_limit;
  if (served.max_position > 0) position_limit = std::min(position_limit, served.max_position);
  kernel_case c;
  c.storage = storage;
  c.shape = limits.partial_rotation ? *gen::partial_shape(kernel.pairings, limits.max_head_dim)
                                     : *gen::shape(kernel.pairings, limits.max_head_dim);
  if (full_rotation_only) c.shape.rotary_dim = c.shape.head_dim;  // even: gen::shape's head dims are
  c.spec = (*gen::kernel_spec(c.shape, attention_factor)).spec;
  c.frequencies = kernel_frequencies(c.spec);
  if (!attention_factor && c.frequencies.attention_factor != 1)
    throw std::logic_error("pick_case: an attention factor for a kernel that serves none");
  const std::int64_t pairs = c.pairs();
  c.q_heads = static_cast<int>(*gen::uniform_int(1, limits.max_heads));
  c.k_heads = limits.with_k ? static_cast<int>(*gen::uniform_int(1, limits.max_heads)) : 0;
  const std::int64_t widest = std::max(c.q_heads, c.k_heads) * pairs;
  const std::int64_t max_tokens =
      std::clamp<std::int64_t>(limits.max_rotated_pairs / widest, 1, limits.max_tokens);
  const std::int64_t tokens = *gen::uniform_int(1, max_tokens);

  const bool cached = kernel.strategy == fast::angle_strategy::cache;
  std::int64_t limit = cached ? std::min(position_limit + 1,
                                         cache_position_limit(pairs, limits.cache_table_floats))
                              : position_limit + 1;
  // A cache kernel's table covers [0, max position]: filling it (~1 ns a float) was most of a
  // cache-kernel case when nearly every case reached the budget's last position. So the
  // table's length is drawn per case — the whole budget one case in eight, else
  // log-uniform — and the positions' edges (0, powers of two, the last position) now fall at
  // many table lengths.
  if (cached && limit > 1) {
    limit = *gen::weighted_one_of<std::int64_t>(
        {{1, rc::gen::just(limit)},
         {7, rc::gen::map(gen::unit_interval(), [limit](double t) {
            return std::clamp<std::int64_t>(
                static_cast<std::int64_t>(std::exp2(t * std::log2(static_cast<double>(limit)))), 1,
                limit);
          })}});
  }
  c.position_limit = limit;
  const auto theta = c.approximate_theta();
  c.positions = *gen::positions(tokens, limit, theta,
                                limits.allow_negative_positions && served.negative_positions && !cached);

  // Outputs have norm A·‖pair‖, and forward then inverse (the backward pass) gives A²·x: with
  // A > 1 the inputs stay 2^⌈log₂ A²⌉ further below the format's largest value, so no exact
  // result overflows (generators.h, value_range).
  value_range range = gen::full_range(storage);
  const double gain = c.frequencies.attention_factor * c.frequencies.attention_factor;
  // fp8 with saturation allowed: inputs up to the format's max (the top binade, clamped to max),
  // so a pair's exact outputs reach √2·max·A and some saturate (bounds::saturated_exact).
  if (limits.allow_saturation && is_float8(storage)) range.max_exponent = range.format.max_exponent();
  if (gain > 1) range.max_exponent -= static_cast<int>(std::ceil(std::log2(gain)));
  c.q = *gen::tensor_rows(storage, range, c.shape, c.q_heads, c.positions, theta);
  if (c.k_heads > 0) c.k = *gen::tensor_rows(storage, range, c.shape, c.k_heads, c.positions, theta);
  return c;
}

reference::double_tier_memo& oracle_memo() {
  static reference::double_tier_memo memo;
  return memo;
}

reference::double_tier oracle_tier(const kernel_case& c) {
  return oracle_memo().tier(c.spec, c.positions, 1);
}

fast::rope_angles prepare_angles(const fast::kernel_info& kernel, const kernel_case& c,
                                 std::int64_t extra_positions) {
  std::int64_t max_position = 0;
  for (std::int64_t m : c.positions) max_position = std::max(max_position, m + 1);
  auto prepared = kernel.prepare(c.frequencies, max_position + extra_positions);
  if (!prepared.ok()) {
    RC_FAIL("kernel " + std::string(kernel.name) +
            " refused to prepare angles: " + prepared.state.message);
  }
  return std::move(*prepared.value);
}

tensor_buffers packed_buffers(const value_rows& rows, dtype storage, int heads, int head_dim,
                              std::int64_t tokens) {
  tensor_buffers t;
  t.heads = heads;
  t.head_stride = head_dim;
  t.token_stride = static_cast<std::int64_t>(heads) * head_dim;
  const std::int64_t count = tokens * t.token_stride;
  t.input = element_buffer(storage, count);
  t.output = element_buffer(storage, count);
  for (std::int64_t i = 0; i < count; ++i) t.input.set(i, rows.values[static_cast<std::size_t>(i)]);
  t.output.fill_bytes(std::byte{0xA5});
  return t;
}

fast::rope_tensor tensor_of(tensor_buffers& t, bool in_place) {
  fast::rope_tensor r;
  r.input = t.input.data();
  r.output = in_place ? t.input.data() : t.output.data();
  r.heads = t.heads;
  r.input_token_stride = r.output_token_stride = t.token_stride;
  r.input_head_stride = r.output_head_stride = t.head_stride;
  return r;
}

fast::rope_call make_call(const kernel_case& c, fast::direction dir,
                          const std::vector<std::int64_t>& positions, tensor_buffers* q,
                          tensor_buffers* k) {
  return fast::make_call({c.storage, c.shape.pair, c.shape.head_dim, c.shape.rotary_dim}, positions,
                         q != nullptr ? tensor_of(*q) : fast::rope_tensor{},
                         k != nullptr ? tensor_of(*k) : fast::rope_tensor{}, dir);
}

fast::direction pick_direction(const run_settings& settings) {
  if (!settings.domain.inverse) return fast::direction::forward;
  return *rc::gen::arbitrary<bool>() ? fast::direction::inverse : fast::direction::forward;
}

fast::status apply_served(const fast::kernel_info& kernel, fast::rope_call call,
                          const fast::rope_angles& angles) {
  const bool q_present = call.q.heads > 0, k_present = call.k.heads > 0;
  if (kernel.domain.absent_tensor || q_present == k_present) return kernel.apply(call, angles);
  const fast::rope_tensor& present = q_present ? call.q : call.k;
  if (present.input == nullptr || call.tokens < 0 || call.head_dim <= 0 ||
      present.input_token_stride < 0 || present.input_head_stride < 0)
    return kernel.apply(call, angles);  // not a call the properties judge outputs of
  // The present tensor's input, from its first element to its last, and an output as large
  // (a call of 0 tokens, a token split's empty part, reads none of it).
  const std::int64_t extent = call.tokens == 0 ? 1
                                               : (call.tokens - 1) * present.input_token_stride +
                                                     (present.heads - 1) * present.input_head_stride +
                                                     call.head_dim;
  element_buffer input(call.storage, extent);
  element_buffer output(call.storage, extent);
  if (call.tokens > 0) std::memcpy(input.data(), present.input, input.byte_size());
  output.fill_bytes(std::byte{0xA5});
  const fast::rope_tensor companion{input.data(), output.data(), present.heads,
                                    present.input_token_stride, present.input_head_stride,
                                    present.input_token_stride, present.input_head_stride};
  (q_present ? call.k : call.q) = companion;
  return kernel.apply(call, angles);
}

void apply_or_fail(const fast::kernel_info& kernel, const fast::rope_call& call,
                   const fast::rope_angles& angles) {
  const fast::status s = apply_served(kernel, call, angles);
  if (!s.ok()) RC_FAIL("kernel " + std::string(kernel.name) + " refused a valid call: " + s.message);
}

std::string show_number(double v) {
  std::ostringstream os;
  os << std::setprecision(9) << v << " (" << std::hexfloat << v << ")";
  return os.str();
}

std::string describe_location(const kernel_case& c, std::int64_t token, std::int64_t head, int j) {
  std::ostringstream os;
  os << to_string(c.storage) << " " << to_string(c.shape.pair) << " d=" << c.shape.head_dim
     << "/" << c.shape.rotary_dim << " base=" << c.shape.base;
  if (type_of(c.spec.scaling) != scaling_type::none)
    os << " " << describe(c.spec.scaling) << " theta_j=" << show_number(c.theta()[static_cast<std::size_t>(j)]);
  if (c.frequencies.attention_factor != 1) os << " A=" << show_number(c.frequencies.attention_factor);
  os << " m=" << c.positions[static_cast<std::size_t>(token)] << " head=" << head << " j=" << j;
  return os.str();
}

case_location locate(const kernel_case& c, std::int64_t token, int j, double units, std::string text) {
  case_location l;
  l.dtype = std::string(to_string(c.storage));
  l.pairing = std::string(to_string(c.shape.pair));
  l.head_dim = c.shape.head_dim;
  l.rotary_dim = c.shape.rotary_dim;
  l.position = c.positions[static_cast<std::size_t>(token)];
  l.pair = j;
  l.units = units;
  l.text = std::move(text);
  return l;
}

namespace {

std::string rows_text(const value_rows& rows, int heads, std::int64_t tokens) {
  std::ostringstream os;
  const std::size_t width = static_cast<std::size_t>(std::max(rows.row_length, 1));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (int h = 0; h < heads; ++h) {
      const std::size_t start = (static_cast<std::size_t>(t) * static_cast<std::size_t>(heads) +
                                 static_cast<std::size_t>(h)) * width;
      if (start + width > rows.values.size()) break;
      std::ostringstream line;
      for (std::size_t i = 0; i < width; ++i)
        line << (i == 0 ? "" : ", ") << std::hexfloat << rows.values[start + i];
      os << "\n    token " << t << " head " << h << ": " << summarise_runs(line.str());
    }
  }
  return os.str();
}

}  // namespace

std::string describe_case(const kernel_case& c) {
  std::ostringstream os;
  os << "dtype: " << to_string(c.storage) << "\npairing: " << to_string(c.shape.pair)
     << "\nhead_dim: " << c.shape.head_dim << "\nrotary_dim: " << c.shape.rotary_dim
     << "\nbase: " << c.shape.base << "\nscaling: " << describe(c.spec.scaling);
  os << "\nattention factor A: " << c.frequencies.attention_factor;
  std::ostringstream positions;
  for (std::size_t t = 0; t < c.positions.size(); ++t) positions << (t == 0 ? "" : ", ") << c.positions[t];
  os << "\npositions (" << c.tokens() << " tokens): " << summarise_runs(positions.str());
  os << "\nQ (" << c.q_heads << " heads):" << rows_text(c.q, c.q_heads, c.tokens());
  if (c.k_heads > 0) os << "\nK (" << c.k_heads << " heads):" << rows_text(c.k, c.k_heads, c.tokens());
  return os.str();
}

void first_violation::raise(observation& seen) {
  if (message_.empty()) return;
  seen.failures[message_] = failed_case{where_, inputs_, data_};
  RC_FAIL(message_);
}

}  // namespace ropecheck::properties::kernel_support

namespace ropecheck::properties {

void clear_oracle_memo() { kernel_support::oracle_memo().clear(); }

}  // namespace ropecheck::properties
