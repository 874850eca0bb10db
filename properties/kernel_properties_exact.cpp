// The kernel properties that hold bit for bit, or concern statuses: in place = out of place,
// pass-through dims copied exactly, Q and K together = separately, any layout / position type /
// token split / call size gives the same bits, and invalid calls are refused without a write.
// Bit-exact because nothing in those changes may change the arithmetic of a pair (the kernel
// contract, fast/rotation.h: one operation sequence in every path).
#include <algorithm>
#include <cstring>
#include <sstream>

#include "properties/kernel_cases.h"
#include "properties/kernel_property_catalog.h"

namespace ropecheck::properties {

namespace {

using namespace kernel_support;

constexpr std::int64_t int32_position_limit = (std::int64_t{1} << 31) - 1;

std::string show_bits(const element_buffer& b, std::int64_t i) {
  std::ostringstream os;
  os << show_number(b.get(i)) << " bits 0x" << std::hex;
  // The element's own bytes, whatever its width (4, 2 or 1), little-endian.
  const std::size_t width = size_of(b.storage());
  std::uint32_t bits = 0;
  std::memcpy(&bits, b.data() + static_cast<std::size_t>(i) * width, width);
  os << bits;
  return os.str();
}

// Fails naming the first element whose bits differ between two outputs of the same rows.
void require_same_bits(std::string_view property, const kernel_case& c, const tensor_buffers& t,
                       const element_buffer& expected, const element_buffer& actual,
                       std::string_view expected_name, std::string_view actual_name) {
  const std::int64_t i = expected.first_difference(actual);
  if (i < 0) return;
  const std::int64_t token = i / t.token_stride;
  const std::int64_t head = (i % t.token_stride) / t.head_stride;
  const std::int64_t coordinate = (i % t.token_stride) % t.head_stride;
  std::ostringstream os;
  os << property << " violated: element " << i << " (token " << token << ", head " << head
     << ", coordinate " << coordinate << ", " << to_string(c.storage) << " "
     << to_string(c.shape.pair) << " d=" << c.shape.head_dim << "/" << c.shape.rotary_dim
     << "): " << expected_name << " " << show_bits(expected, i) << " vs " << actual_name << " "
     << show_bits(actual, i);
  RC_FAIL(os.str());
}

// Exactly-sized clone of a tensor's buffers with a fresh, pattern-filled output.
tensor_buffers fresh_copy(const tensor_buffers& t) {
  tensor_buffers copy;
  copy.heads = t.heads;
  copy.token_stride = t.token_stride;
  copy.head_stride = t.head_stride;
  copy.input = t.input.clone();
  copy.output = element_buffer(t.output.storage(), t.output.count());
  copy.output.fill_bytes(std::byte{0xA5});
  return copy;
}

// --------------------------------------------------------------------------------------------
// in_place_equals_out_of_place: output == input (same strides) gives the same bits as a
// separate output, for Q and K independently in place or not.

void in_place_equals_out_of_place(const fast::kernel_info& kernel, dtype storage,
                                  const run_settings& settings, observation&) {
  case_limits limits = case_limits{.position_limit = int32_position_limit};
  limits.with_k = true;
  const kernel_case c = pick_case(kernel, storage, within(settings, limits));
  const auto q_in_place = *rc::gen::arbitrary<bool>();
  const auto k_in_place = *rc::gen::arbitrary<bool>();
  const auto dir = pick_direction(settings);
  const fast::rope_angles angles = prepare_angles(kernel, c);

  tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  tensor_buffers k = packed_buffers(c.k, storage, c.k_heads, c.shape.head_dim, c.tokens());
  tensor_buffers q2 = fresh_copy(q);
  tensor_buffers k2 = fresh_copy(k);
  apply_or_fail(kernel, make_call(c, dir, c.positions, &q, &k), angles);
  fast::rope_call call = make_call(c, dir, c.positions, &q2, &k2);
  call.q = tensor_of(q2, q_in_place);
  call.k = tensor_of(k2, k_in_place);
  apply_or_fail(kernel, call, angles);
  require_same_bits("in_place_equals_out_of_place", c, q, q.output,
                    q_in_place ? q2.input : q2.output, "out of place", q_in_place ? "in place" : "out of place (with K in place)");
  require_same_bits("in_place_equals_out_of_place", c, k, k.output,
                    k_in_place ? k2.input : k2.output, "out of place", k_in_place ? "in place" : "out of place (with Q in place)");
}

// --------------------------------------------------------------------------------------------
// pass_through_bit_exact: dims [rotary_dim, head_dim) come out with the input's bits — any
// bits: NaNs with payloads, infinities, subnormals, −0 — out of place and in place.

void pass_through_bit_exact(const fast::kernel_info& kernel, dtype storage,
                            const run_settings& settings, observation&) {
  case_limits limits = case_limits{.position_limit = int32_position_limit};
  limits.partial_rotation = true;
  const kernel_case c = pick_case(kernel, storage, within(settings, limits));
  const int pass_through = c.shape.head_dim - c.shape.rotary_dim;
  const std::int64_t rows = c.tokens() * c.q_heads;
  const auto max_bits = static_cast<std::uint32_t>((std::int64_t{1} << (8 * size_of(storage))) - 1);
  const auto raw = *gen::bit_patterns(rows * pass_through, max_bits);
  const auto in_place = *rc::gen::arbitrary<bool>();
  const fast::rope_angles angles = prepare_angles(kernel, c);

  tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  for (std::int64_t r = 0; r < rows; ++r)
    for (int i = 0; i < pass_through; ++i)
      q.input.set_bits(r * c.shape.head_dim + c.shape.rotary_dim + i,
                       raw[static_cast<std::size_t>(r * pass_through + i)]);
  const element_buffer original = q.input.clone();
  fast::rope_call call = make_call(c, fast::direction::forward, c.positions, &q, nullptr);
  call.q = tensor_of(q, in_place);
  apply_or_fail(kernel, call, angles);
  const element_buffer& out = in_place ? q.input : q.output;
  const std::size_t element = size_of(storage);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t first = r * c.shape.head_dim + c.shape.rotary_dim;
    if (std::memcmp(out.data() + first * static_cast<std::int64_t>(element),
                    original.data() + first * static_cast<std::int64_t>(element),
                    static_cast<std::size_t>(pass_through) * element) != 0) {
      for (int i = 0; i < pass_through; ++i) {
        if (std::memcmp(out.data() + (first + i) * static_cast<std::int64_t>(element),
                        original.data() + (first + i) * static_cast<std::int64_t>(element),
                        element) != 0) {
          RC_FAIL("pass_through_bit_exact violated (" + std::string(in_place ? "in place" : "out of place") +
                  ") at row " + std::to_string(r) + " dim " + std::to_string(c.shape.rotary_dim + i) +
                  ": input " + show_bits(original, first + i) + ", output " + show_bits(out, first + i));
        }
      }
    }
  }
}

// --------------------------------------------------------------------------------------------
// q_and_k_together_equal_separate: one call rotating Q and K (different head counts) gives the
// bits of two calls rotating each alone.

void q_and_k_together_equal_separate(const fast::kernel_info& kernel, dtype storage,
                                     const run_settings& settings, observation&) {
  case_limits limits = case_limits{.position_limit = int32_position_limit};
  limits.with_k = true;
  const kernel_case c = pick_case(kernel, storage, within(settings, limits));
  const auto dir = pick_direction(settings);
  const fast::rope_angles angles = prepare_angles(kernel, c);
  tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  tensor_buffers k = packed_buffers(c.k, storage, c.k_heads, c.shape.head_dim, c.tokens());
  tensor_buffers q_alone = fresh_copy(q);
  tensor_buffers k_alone = fresh_copy(k);
  apply_or_fail(kernel, make_call(c, dir, c.positions, &q, &k), angles);
  apply_or_fail(kernel, make_call(c, dir, c.positions, &q_alone, nullptr), angles);
  apply_or_fail(kernel, make_call(c, dir, c.positions, nullptr, &k_alone), angles);
  require_same_bits("q_and_k_together_equal_separate", c, q, q.output, q_alone.output,
                    "Q with K", "Q alone");
  require_same_bits("q_and_k_together_equal_separate", c, k, k.output, k_alone.output,
                    "K with Q", "K alone");
}

// --------------------------------------------------------------------------------------------
// layout_invariant: padded token/head strides, rows off vector alignment, int32 positions and
// the tokens split over several calls give the packed single call's bits; padding and inputs
// are untouched.

struct strided_layout {
  std::int64_t head_padding = 0;
  std::int64_t token_padding = 0;
  std::int64_t misalignment = 0;
  bool int32_positions = false;
  std::vector<std::int64_t> split_points;  // token indices where a new call starts
};

void showValue(const strided_layout& l, std::ostream& os) {
  os << "head_padding=" << l.head_padding << " token_padding=" << l.token_padding
     << " misalignment=" << l.misalignment << " positions=" << (l.int32_positions ? "int32" : "int64")
     << " calls start at tokens [";
  for (std::size_t i = 0; i < l.split_points.size(); ++i) os << (i ? ", " : "") << l.split_points[i];
  os << "]";
}

tensor_buffers strided_copy(const tensor_buffers& packed, const strided_layout& l, int head_dim,
                            std::int64_t tokens) {
  tensor_buffers t;
  t.heads = packed.heads;
  t.head_stride = head_dim + l.head_padding;
  t.token_stride = t.heads * t.head_stride + l.token_padding;
  const dtype storage = packed.input.storage();
  t.input = element_buffer(storage, tokens * t.token_stride, l.misalignment);
  t.output = element_buffer(storage, tokens * t.token_stride, l.misalignment);
  t.input.fill_bytes(std::byte{0x5A});
  t.output.fill_bytes(std::byte{0xA5});
  for (std::int64_t tok = 0; tok < tokens; ++tok)
    for (int h = 0; h < t.heads; ++h)
      std::memcpy(t.input.data() + element_index(t, tok, h, 0) * static_cast<std::int64_t>(size_of(storage)),
                  packed.input.data() + element_index(packed, tok, h, 0) * static_cast<std::int64_t>(size_of(storage)),
                  static_cast<std::size_t>(head_dim) * size_of(storage));
  return t;
}

void layout_invariant(const fast::kernel_info& kernel, dtype storage, const run_settings& settings,
                      observation&) {
  case_limits limits = case_limits{.position_limit = int32_position_limit};
  limits.with_k = true;
  const kernel_case c = pick_case(kernel, storage, within(settings, limits));
  const auto l = *rc::gen::apply(
      [tokens = c.tokens()](std::int64_t head_padding, std::int64_t token_padding,
                            std::int64_t misalignment, bool int32_positions,
                            std::vector<std::int64_t> cuts) {
        strided_layout layout{head_padding, token_padding, misalignment, int32_positions, {0}};
        for (std::int64_t cut : cuts)
          if (cut < tokens) layout.split_points.push_back(cut);
        std::sort(layout.split_points.begin(), layout.split_points.end());
        layout.split_points.erase(
            std::unique(layout.split_points.begin(), layout.split_points.end()),
            layout.split_points.end());
        return layout;
      },
      gen::uniform_int(0, 5), gen::uniform_int(0, 9), gen::uniform_int(0, 3),
      rc::gen::arbitrary<bool>(),
      rc::gen::mapcat(gen::uniform_int(0, 2), [tokens = c.tokens()](std::int64_t n) {
        return rc::gen::container<std::vector<std::int64_t>>(
            static_cast<std::size_t>(n), gen::uniform_int(1, std::max<std::int64_t>(tokens - 1, 1)));
      }));
  const auto dir = pick_direction(settings);
  const fast::rope_angles angles = prepare_angles(kernel, c);

  tensor_buffers q = packed_buffers(c.q, storage, c.q_heads, c.shape.head_dim, c.tokens());
  tensor_buffers k = packed_buffers(c.k, storage, c.k_heads, c.shape.head_dim, c.tokens());
  apply_or_fail(kernel, make_call(c, dir, c.positions, &q, &k), angles);

  tensor_buffers qs = strided_copy(q, l, c.shape.head_dim, c.tokens());
  tensor_buffers ks = strided_copy(k, l, c.shape.head_dim, c.tokens());
  const std::vector<std::int32_t> positions32(c.positions.begin(), c.positions.end());
  fast::rope_call whole = make_call(c, dir, c.positions, &qs, &ks);
  if (l.int32_positions) {
    whole.positions = positions32.data();
    whole.position_type = dtype::int32;
  }
  const element_buffer q_input_before = qs.input.clone();
  const element_buffer k_input_before = ks.input.clone();
  for (std::size_t s = 0; s < l.split_points.size(); ++s) {
    const std::int64_t end = s + 1 < l.split_points.size() ? l.split_points[s + 1] : c.tokens();
    apply_or_fail(kernel, fast::slice_tokens(whole, l.split_points[s], end), angles);
  }
  // Out of place, the inputs are read only.
  if (!qs.input.same_bytes(q_input_before) || !ks.input.same_bytes(k_input_before))
    RC_FAIL("layout_invariant violated: an out-of-place call wrote to its input");

  const std::size_t element = size_of(storage);
  for (auto [packed, strided, name] : {std::tuple{&q, &qs, "Q"}, std::tuple{&k, &ks, "K"}}) {
    for (std::int64_t tok = 0; tok < c.tokens(); ++tok) {
      for (int h = 0; h < packed->heads; ++h) {
        for (int i = 0; i < c.shape.head_dim; ++i) {
          const std::int64_t a = element_index(*packed, tok, h, i);
          const std::int64_t b = element_index(*strided, tok, h, i);
          if (std::memcmp(packed->output.data() + a * static_cast<std::int64_t>(element),
                          strided->output.data() + b * static_cast<std::int64_t>(element), element) != 0) {
            RC_FAIL(std::string("layout_invariant violated: ") + name + " token " + std::to_string(tok) +
                    " head " + std::to_string(h) + " dim " + std::to_string(i) + ": packed " +
                    show_bits(packed->output, a) + ", strided " + show_bits(strided->output, b));
          }
        }
      }
    }
    // Padding between rows must keep the fill pattern: a kernel writes its rows only.
    for (std::int64_t e = 0; e < strided->output.count(); ++e) {
      const std::int64_t within_token = e % strided->token_stride;
      const bool in_row = within_token < strided->heads * strided->head_stride &&
                          within_token % strided->head_stride < c.shape.head_dim;
      if (in_row) continue;
      for (std::size_t byte = 0; byte < element; ++byte) {
        if (strided->output.data()[static_cast<std::size_t>(e) * element + byte] != std::byte{0xA5})
          RC_FAIL(std::string("layout_invariant violated: ") + name + " padding element " +
                  std::to_string(e) + " was written");
      }
    }
  }
}

// --------------------------------------------------------------------------------------------
// rejects_invalid_calls: a malformed call returns invalid_argument, a position outside the
// angles out_of_range, and neither writes a byte.

enum class corruption {
  invalid_rotary_dim,
  position_out_of_range,
  null_positions,
  output_overlaps_input,
  negative_heads,
  null_input,
};

void showValue(corruption k, std::ostream& os) {
  constexpr const char* names[] = {"invalid_rotary_dim",    "position_out_of_range",
                                   "null_positions",        "output_overlaps_input",
                                   "negative_heads",        "null_input"};
  os << names[static_cast<int>(k)];
}

void rejects_invalid_calls(const fast::kernel_info& kernel, dtype storage,
                           const run_settings& settings, observation&) {
  case_limits limits = case_limits{.position_limit = int32_position_limit};
  limits.max_head_dim = 64;
  limits.max_tokens = 4;
  const auto kind = *gen::element_of(std::vector<corruption>{
      corruption::invalid_rotary_dim, corruption::position_out_of_range, corruption::null_positions,
      corruption::output_overlaps_input, corruption::negative_heads, corruption::null_input});
  // A kernel that takes Q and K only together gets both, so that its refusal is of the
  // corruption, not of an absent tensor (K is valid: the corruptions are Q's).
  limits.with_k = !kernel.domain.absent_tensor;
  const kernel_case c = pick_case(kernel, storage, within(settings, limits));
  const fast::rope_angles angles = prepare_angles(kernel, c);
  kernel_case shaped = c;
  std::vector<std::int64_t> positions = c.positions;
  fast::status_code expected = fast::status_code::invalid_argument;
  if (kind == corruption::invalid_rotary_dim) {
    const auto dims = *gen::invalid_dims_for(64);
    shaped.shape.head_dim = dims.head_dim;
    shaped.shape.rotary_dim = dims.rotary_dim;
    shaped.q.row_length = dims.head_dim;
    shaped.q.values.assign(static_cast<std::size_t>(c.tokens() * c.q_heads * dims.head_dim), 1.0);
    shaped.k.row_length = dims.head_dim;
    shaped.k.values.assign(static_cast<std::size_t>(c.tokens() * c.k_heads * dims.head_dim), 1.0);
  }
  if (kind == corruption::position_out_of_range) {
    expected = fast::status_code::out_of_range;
    const bool cached = kernel.strategy == fast::angle_strategy::cache;
    const std::int64_t beyond = cached ? angles.max_position() + *gen::uniform_int(0, 3)
                                       : (std::int64_t{1} << 31) + 1 + *gen::uniform_int(0, 3);
    const auto which = static_cast<std::size_t>(*gen::uniform_int(0, c.tokens() - 1));
    positions[which] = *rc::gen::arbitrary<bool>() || cached ? beyond : -beyond;
  }
  tensor_buffers q = packed_buffers(shaped.q, storage, c.q_heads, shaped.shape.head_dim, c.tokens());
  // Overlap needs one buffer holding both: input at element 0, output one element later.
  element_buffer shared(storage, q.input.count() + 1);
  std::memcpy(shared.data(), q.input.data(), q.input.byte_size());
  const element_buffer input_before = q.input.clone();
  const element_buffer output_before = q.output.clone();
  const element_buffer shared_before = shared.clone();

  tensor_buffers k = packed_buffers(shaped.k, storage, c.k_heads, shaped.shape.head_dim, c.tokens());
  const element_buffer k_output_before = k.output.clone();
  fast::rope_call call = make_call(shaped, fast::direction::forward, positions, &q, c.k_heads > 0 ? &k : nullptr);
  switch (kind) {
    case corruption::null_positions: call.positions = nullptr; break;
    case corruption::output_overlaps_input:
      call.q.input = shared.data();
      call.q.output = shared.data() + size_of(storage);
      break;
    case corruption::negative_heads: call.q.heads = -*gen::uniform_int(1, 4); break;
    case corruption::null_input: call.q.input = nullptr; break;
    default: break;
  }
  const fast::status s = kernel.apply(call, angles);
  std::ostringstream what;
  what << "rejects_invalid_calls violated: call with ";
  showValue(kind, what);
  if (s.ok()) RC_FAIL(what.str() + " was accepted");
  if (s.code != expected)
    RC_FAIL(what.str() + " returned status " + std::to_string(static_cast<int>(s.code)) + " (" +
            s.message + "), expected " + std::to_string(static_cast<int>(expected)));
  if (s.message.empty()) RC_FAIL(what.str() + " returned an error without a message");
  if (!q.input.same_bytes(input_before) || !q.output.same_bytes(output_before) ||
      !shared.same_bytes(shared_before) || !k.output.same_bytes(k_output_before))
    RC_FAIL(what.str() + " was refused (" + s.message + ") but wrote to its buffers");
}

// --------------------------------------------------------------------------------------------
// call_size_invariant: a large call (≥ 16 MiB of output, where many kernels switch to streaming
// stores, and ≥ 16 384 token-heads, past the dispatch thresholds of real kernels) gives the bits
// of the same rows rotated in small calls — with the whole head or half of it rotated, with or
// without K. (The built-in kernels stream only past the last-level cache, fast/store_policy.h,
// often larger; fast/store_policy_test holds that path to the cached one bit for bit.)

constexpr std::int64_t large_output_bytes = (std::int64_t{1} << 24) + (std::int64_t{1} << 16);

// A case moves ≥ 64 MiB (input, output, small-call output, pattern fills) and takes ~50 ms, so
// 10^6 of them would be 14 CPU-hours for this one property; its deep budget is 1 200 cases
// (100 per kernel and dtype of the registry), each of 4–8 million elements.
constexpr int call_size_deep_cases = 1'200;

void call_size_invariant(const fast::kernel_info& kernel, dtype storage,
                         const run_settings& settings, observation&) {
  // Nothing here shrinks: every shrink attempt would be another 16 MiB case, and a failure
  // would take minutes to shrink value by value; the message names the first differing element.
  using rc::gen::noShrink;
  const int head_dim = *noShrink(gen::element_of(std::vector<int>{64, 80, 96, 128, 256}));
  // Half the calls rotate half the head (GPT-NeoX, Phi, GLM): a kernel's large-call path has
  // its own partial-rotary branch (vLLM's multi-token-head kernel, a real bug there).
  const bool partial = kernel.domain.intersect(settings.domain).partial_rotary && *noShrink(gen::element_of(std::vector<bool>{false, true}));
  const int rotary_dim = partial ? head_dim / 2 : head_dim;
  const int heads = static_cast<int>(*noShrink(gen::uniform_int(1, 8)));
  // Half the calls carry K too, with fewer heads (GQA): size thresholds count Q and K heads.
  const int k_heads = *noShrink(gen::element_of(std::vector<bool>{false, true}))
                          ? static_cast<int>(*noShrink(gen::uniform_int(1, std::max(heads / 2, 1))))
                          : 0;
  const pairing pair = kernel.pairings[static_cast<std::size_t>(
      *noShrink(gen::uniform_int(0, static_cast<std::int64_t>(kernel.pairings.size()) - 1)))];
  const double base = *noShrink(gen::element_of(std::vector<double>{1e4, 5e5, 1e6}));
  const std::int64_t misalignment = *noShrink(gen::weighted_element<std::int64_t>({{3, 0}, {1, 1}}));
  const std::int64_t row_bytes = static_cast<std::int64_t>(heads) * head_dim *
                                 static_cast<std::int64_t>(size_of(storage));
  const std::int64_t tokens = (large_output_bytes + row_bytes - 1) / row_bytes;

  kernel_case c;
  c.storage = storage;
  c.shape = rope_shape{head_dim, rotary_dim, base, pair};
  c.spec = plain_spec(c.shape);
  c.frequencies = kernel_frequencies(c.spec);
  c.q_heads = heads;
  c.k_heads = k_heads;
  const bool cached = kernel.strategy == fast::angle_strategy::cache;
  std::int64_t limit = cached ? cache_position_limit(c.pairs(), cache_table_budget)
                              : int32_position_limit + 1;
  // Positions in [0, limit): within the domain's maximum (the run's and the kernel's).
  for (const std::int64_t bound : {settings.domain.max_position, kernel.domain.max_position})
    if (bound > 0) limit = std::min(limit, bound + 1);
  const auto seeds = *noShrink(gen::positions(8, limit, c.approximate_theta()));
  c.positions.resize(static_cast<std::size_t>(tokens));
  for (std::int64_t t = 0; t < tokens; ++t)  // the generated positions, walked forward
    c.positions[static_cast<std::size_t>(t)] = (seeds[static_cast<std::size_t>(t % 8)] + t / 8) % limit;
  // A few generated rows, tiled over the whole tensor.
  const auto sample = *noShrink(gen::tensor_rows(storage, gen::full_range(storage), c.shape, 1,
                                                 std::vector<std::int64_t>(seeds.begin(), seeds.begin() + 4),
                                                 c.approximate_theta()));
  const fast::rope_angles angles = prepare_angles(kernel, c);

  tensor_buffers big;
  big.heads = heads;
  big.head_stride = head_dim;
  big.token_stride = static_cast<std::int64_t>(heads) * head_dim;
  big.input = element_buffer(storage, tokens * big.token_stride, misalignment);
  big.output = element_buffer(storage, tokens * big.token_stride, misalignment);
  // Tile the sample rows: write them once, then double the filled prefix with memcpy.
  const std::int64_t sample_count = std::min<std::int64_t>(
      static_cast<std::int64_t>(sample.values.size()), big.input.count());
  for (std::int64_t i = 0; i < sample_count; ++i) big.input.set(i, sample.values[static_cast<std::size_t>(i)]);
  const std::size_t element = size_of(storage);
  for (std::int64_t filled = sample_count; filled < big.input.count();) {
    const std::int64_t chunk = std::min(filled, big.input.count() - filled);
    std::memcpy(big.input.data() + static_cast<std::size_t>(filled) * element, big.input.data(),
                static_cast<std::size_t>(chunk) * element);
    filled += chunk;
  }
  big.output.fill_bytes(std::byte{0xA5});
  tensor_buffers small = fresh_copy(big);
  // K: its heads' rows are the first rows of Q's (the same generated values, fewer heads).
  tensor_buffers big_k, small_k;
  if (k_heads > 0) {
    big_k.heads = k_heads;
    big_k.head_stride = head_dim;
    big_k.token_stride = static_cast<std::int64_t>(k_heads) * head_dim;
    big_k.input = element_buffer(storage, tokens * big_k.token_stride, misalignment);
    big_k.output = element_buffer(storage, tokens * big_k.token_stride, misalignment);
    for (std::int64_t t = 0; t < tokens; ++t)
      std::memcpy(big_k.input.data() + static_cast<std::size_t>(t * big_k.token_stride) * element,
                  big.input.data() + static_cast<std::size_t>(t * big.token_stride) * element,
                  static_cast<std::size_t>(big_k.token_stride) * element);
    big_k.output.fill_bytes(std::byte{0xA5});
    small_k = fresh_copy(big_k);
  }
  tensor_buffers* k_big = k_heads > 0 ? &big_k : nullptr;
  tensor_buffers* k_small = k_heads > 0 ? &small_k : nullptr;

  apply_or_fail(kernel, make_call(c, fast::direction::forward, c.positions, &big, k_big), angles);
  const fast::rope_call whole = make_call(c, fast::direction::forward, c.positions, &small, k_small);
  constexpr std::int64_t small_call_tokens = 64;
  for (std::int64_t first = 0; first < tokens; first += small_call_tokens)
    apply_or_fail(kernel, fast::slice_tokens(whole, first, std::min(first + small_call_tokens, tokens)),
                  angles);
  require_same_bits("call_size_invariant", c, big, small.output, big.output, "small calls",
                    "one large call");
  if (k_heads > 0)
    require_same_bits("call_size_invariant", c, big_k, small_k.output, big_k.output, "small calls (K)",
                      "one large call (K)");
}

constexpr kernel_property_definition exact_list[] = {
    {"in_place_equals_out_of_place",
     "in place gives the bits of out of place",
     100, deep_cases_per_property, false, in_place_equals_out_of_place},
    {"pass_through_bit_exact",
     "dims past rotary_dim keep their input bits, whatever they are",
     100, deep_cases_per_property, false, pass_through_bit_exact, nullptr, {}, kernel_need::partial_rotary},
    {"q_and_k_together_equal_separate",
     "Q and K in one call give the bits of two calls",
     100, deep_cases_per_property, false, q_and_k_together_equal_separate, nullptr, {},
     kernel_need::absent_tensor},
    {"layout_invariant",
     "strides, alignment, int32 positions and token splits do not change a bit",
     100, deep_cases_per_property, false, layout_invariant},
    {"rejects_invalid_calls",
     "malformed calls: invalid_argument, positions outside the angles: out_of_range, no write",
     100, deep_cases_per_property, false, rejects_invalid_calls},
    {"call_size_invariant",
     "a >= 16 MiB, >= 16 384 token-head call gives the bits of small calls",
     4, call_size_deep_cases, false, call_size_invariant},
};

}  // namespace

std::span<const kernel_property_definition> exactness_properties() { return exact_list; }

}  // namespace ropecheck::properties
