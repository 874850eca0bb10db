// kernel_cases: what the kernel properties generate and how they call a kernel — aligned
// storage buffers of any storage dtype, one generated case (shape, frequency scaling and
// attention factor, positions, Q and K rows), and rope_call construction through nothing but
// fast::kernel_info. Internal to properties/.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fast/kernels.h"
#include "bounds/error_bounds.h"
#include "properties/generators.h"
#include "properties/kernel_properties.h"
#include "properties/property_runner.h"
#include "reference/double_tier.h"
#include "reference/double_tier_memo.h"

namespace ropecheck::properties::kernel_support {

// n elements of a storage dtype, 64-byte aligned (plus `misalignment` elements, to put rows
// off vector boundaries). Move-only: the alignment belongs to the allocation.
class element_buffer {
 public:
  element_buffer() = default;
  element_buffer(dtype storage, std::int64_t count, std::int64_t misalignment = 0);
  element_buffer(element_buffer&&) = default;
  element_buffer& operator=(element_buffer&&) = default;
  element_buffer(const element_buffer&) = delete;
  element_buffer& operator=(const element_buffer&) = delete;

  element_buffer clone() const;
  dtype storage() const { return storage_; }
  std::int64_t count() const { return count_; }
  std::byte* data() { return bytes_.data() + offset_; }
  const std::byte* data() const { return bytes_.data() + offset_; }
  std::size_t byte_size() const { return static_cast<std::size_t>(count_) * size_of(storage_); }

  double get(std::int64_t i) const;
  void set(std::int64_t i, double value);  // value must be representable in the storage dtype
  void set_bits(std::int64_t i, std::uint32_t bits);  // raw pattern (low 16 bits for 16-bit dtypes)
  void fill_bytes(std::byte pattern);
  bool same_bytes(const element_buffer& other) const;
  // Index of the first element whose bits differ, or -1.
  std::int64_t first_difference(const element_buffer& other) const;

 private:
  dtype storage_ = dtype::float32;
  std::int64_t count_ = 0;
  std::vector<std::byte> bytes_;
  std::size_t offset_ = 0;
  std::int64_t misalignment_ = 0;
};

// Cache tables larger than this (floats; 4 MiB) are not built per case, in either profile:
// building one costs ~1 ns a float, the largest part of a cache-kernel case. Larger positions
// are the on-the-fly kernels' (strategies_agree ties the two strategies bit for bit).
inline constexpr std::int64_t cache_table_budget = std::int64_t{1} << 20;

// Bounds on what one case may contain (cost control and the range a property is stated for).
struct case_limits {
  std::int64_t position_limit = std::int64_t{1} << 24;  // |positions| ≤ this
  int max_head_dim = 512;
  int max_tokens = 20;      // > 16 crosses the kernels' token blocks now and then
  int max_heads = 3;
  std::int64_t max_rotated_pairs = 1024;  // tokens × heads × pairs per tensor (oracle cost)
  std::int64_t cache_table_floats = cache_table_budget;
  bool with_k = false;
  bool partial_rotation = false;  // force pass-through dims (gen::partial_shape)
  bool allow_negative_positions = true;  // only taken up by kernels that accept them
  bool allow_saturation = false;  // fp8: inputs up to max, so some exact outputs exceed it
  // The kernel's domain (fast::kernel_domain, set by within()): rotary_dim == head_dim only,
  // and no attention factor (A = 1) only.
  bool full_rotation_only = false;
  bool allow_attention_factor = true;
};

// One generated input: shape, spec (plain RoPE, or a rope_scaling and/or attention factor:
// scaling_cases.h), per-token positions, Q rows and optionally K rows (packed
// [tokens, heads, head_dim], values exact in the storage dtype).
struct kernel_case {
  rope_shape shape;
  rope_spec spec;                      // what the double tier rotates by (shape + scaling)
  fast::rope_frequencies frequencies;  // what the kernel rotates by: kernel_frequencies(spec)
  dtype storage = dtype::float32;
  std::vector<std::int64_t> positions;
  // Positions were drawn below this: [0, limit) for cache kernels (the table length drawn for
  // the case, pick_case), |m| < limit otherwise. Properties drawing more positions keep to it.
  std::int64_t position_limit = 1;
  int q_heads = 1;
  int k_heads = 0;
  value_rows q;
  value_rows k;

  std::int64_t tokens() const { return static_cast<std::int64_t>(positions.size()); }
  std::int64_t pairs() const { return shape.rotary_dim / 2; }
  const std::vector<double>& theta() const { return frequencies.inverse_frequencies; }
  // A rope_scaling or an attention factor ≠ 1 (else plain RoPE).
  bool scaled() const {
    return type_of(spec.scaling) != scaling_type::none || frequencies.attention_factor != 1;
  }
  // A, and the bounds' coefficients at A (error_bounds.h §16).
  bounds::attention_scale scale() const { return bounds::attention_scale_for(frequencies.attention_factor); }
  // θ_j as the generators aim positions and cancelling pairs at them.
  std::vector<long double> approximate_theta() const {
    return {frequencies.inverse_frequencies.begin(), frequencies.inverse_frequencies.end()};
  }
};

// `limits` within what a run allows: its domain (the kernel's declared one narrowed by
// --positions and --max-position) caps the position limit, keeps positions nonnegative, and
// rules out pass-through dims or an attention factor.
inline case_limits within(const run_settings& settings, case_limits limits) {
  const fast::kernel_domain& d = settings.domain;
  if (d.max_position > 0) limits.position_limit = std::min(limits.position_limit, d.max_position);
  limits.allow_negative_positions = limits.allow_negative_positions && d.negative_positions;
  limits.full_rotation_only = limits.full_rotation_only || !d.partial_rotary;
  limits.allow_attention_factor = limits.allow_attention_factor && d.attention_factor;
  return limits;
}

// A direction the run's domain serves: forward or inverse, forward only without the inverse.
fast::direction pick_direction(const run_settings& settings);

// Plain RoPE for a shape (no scaling, A = 1).
rope_spec plain_spec(const rope_shape& shape);

// Picks a case with RapidCheck (call only inside a property): every pick shows up in the
// counterexample. Positions respect the kernel's strategy: cache kernels get [0, table size).
// The case keeps to the kernel's declared domain (kernel_info::domain) as well as `limits`.
kernel_case pick_case(const fast::kernel_info& kernel, dtype storage, const case_limits& limits);

// The positions a cache kernel's table can cover for `pairs` pairs within the budget.
std::int64_t cache_position_limit(std::int64_t pairs, std::int64_t table_floats);

// One memo of the oracle's 266-bit work for the process (reference/double_tier_memo.h): the
// gate and the test binaries run many kernels, dtypes and cases over the same shapes. Bounded
// (32 MiB of rows, 1 024 specs), so a deep run stays flat.
reference::double_tier_memo& oracle_memo();

// θ_j (θ'_j under rope_scaling) and A as the kernels get them: each the double nearest the
// 266-bit value (reference::scaled_frequencies), so the kernels' input error is the one §4 and
// §16 of docs/error-bounds.md assume. From oracle_memo(), per frequency spec: the θ_j and A
// the oracle's tables are built from.
fast::rope_frequencies kernel_frequencies(const rope_spec& spec);

// The oracle for a case: the double tier (docs/double-tier.md) at the case's positions, its
// tables from the process's memo (reference/double_tier_memo.h). Every output it gives is
// within bounds::oracle_output_bound of exact, which the properties add to what they check.
reference::double_tier oracle_tier(const kernel_case& c);

// Angles for this kernel's strategy; cache tables cover [0, max(positions) + 1). RC_FAILs
// (with the kernel's message) if the kernel refuses.
fast::rope_angles prepare_angles(const fast::kernel_info& kernel, const kernel_case& c,
                                 std::int64_t extra_positions = 0);

// A tensor's storage: input and output buffers and its layout (strides in elements).
struct tensor_buffers {
  int heads = 0;
  std::int64_t token_stride = 0;
  std::int64_t head_stride = 0;
  element_buffer input;
  element_buffer output;
};

// Packed [tokens, heads, head_dim] buffers holding `rows`; the output filled with a pattern
// that no kernel writes by accident (0xA5 bytes).
tensor_buffers packed_buffers(const value_rows& rows, dtype storage, int heads, int head_dim,
                              std::int64_t tokens);

// The fast::rope_tensor for buffers (in place when `in_place`, output := input).
fast::rope_tensor tensor_of(tensor_buffers& t, bool in_place = false);

// A call with Q (and K when given); positions as int64.
fast::rope_call make_call(const kernel_case& c, fast::direction dir,
                          const std::vector<std::int64_t>& positions, tensor_buffers* q,
                          tensor_buffers* k);

// Runs the kernel on a call as its domain serves it: a kernel that takes Q and K only together
// (kernel_domain::absent_tensor false) is given, for an absent Q or K, a companion — a copy of
// the present tensor's rows in buffers of their own, whose outputs nothing reads. Calling Q and
// K together gives each the bits of separate calls (q_and_k_together_equal_separate, for the
// kernels that take separate calls), so the present tensor is judged the same either way.
fast::status apply_served(const fast::kernel_info& kernel, fast::rope_call call,
                          const fast::rope_angles& angles);

// Runs the kernel (apply_served); RC_FAILs with the kernel's message if it refuses a valid call.
void apply_or_fail(const fast::kernel_info& kernel, const fast::rope_call& call,
                   const fast::rope_angles& angles);

// Element index of (token, head, coordinate) in a tensor's layout.
inline std::int64_t element_index(const tensor_buffers& t, std::int64_t token, std::int64_t head,
                                  std::int64_t coordinate) {
  return token * t.token_stride + head * t.head_stride + coordinate;
}

// "float16 half d=…/… base=… [yarn A=…] m=… head=… j=…" style location for messages.
std::string describe_location(const kernel_case& c, std::int64_t token, std::int64_t head, int j);

// A location for reports (kernel_properties.h case_location): `text` the one-line description,
// `units` the error in 2^-24·A·‖pair‖ (−1: not a per-pair measure).
case_location locate(const kernel_case& c, std::int64_t token, int j, double units, std::string text);

// The case's inputs, labelled, one item a line, runs of equal values summarised: what a
// counterexample shows instead of RapidCheck's unlabelled dump.
std::string describe_case(const kernel_case& c);

// The first violation of a case, kept while the case goes on measuring every output (so that
// its worst/bound does not depend on where it first failed); raise() fails the case with it.
class first_violation {
 public:
  template <class Message>
  void note(const kernel_case& c, case_location where, Message&& message) {
    if (!message_.empty()) return;
    message_ = message();
    inputs_ = describe_case(c);
    where_ = std::move(where);
  }
  void raise(observation& seen);  // RC_FAILs if a violation was noted
  bool noted() const { return !message_.empty(); }
  // The case as a call to run again (judged_case.h), kept with the failure raise() records.
  void attach(std::shared_ptr<const judged_case> data) { data_ = std::move(data); }

 private:
  std::shared_ptr<const judged_case> data_;
  std::string message_;
  std::string inputs_;
  case_location where_;
};

// Hex and decimal, for messages.
std::string show_number(double v);

}  // namespace ropecheck::properties::kernel_support
