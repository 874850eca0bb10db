// The kernel properties of position streams (M-RoPE and 2-D vision RoPE). A
// case is a generated 1-D case (kernel_cases.h) given a stream layout its shape allows — M-RoPE
// with random sections, contiguous, interleaved or ggml's four-stream interleaved, or one of the
// three vision rules — and a position per stream per token; some tokens are text tokens (equal
// streams), as M-RoPE gives them. The kernels get per-pair θ_{f(j)} and the per-pair stream map
// (spec/stream_layout.h).
//   streams_equal_one_d            equal streams give the 1-D call's bits (M-RoPE's θ are 1-D's);
//   streams_within_bound_of_reference every output within the derived bound of the double tier
//                                  rotating each pair at its own stream's position;
//   streams_norm_preserved         each pair's norm times A, within the derived pair bound;
//   streams_layout_invariance      the same bits split at any token, with int32 positions and a
//                                  padded stream stride.
// A kernel from a C-ABI v1 library (one stream per call) has them reported as skipped.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "bounds/error_bounds.h"
#include "properties/kernel_cases.h"
#include "properties/kernel_property_catalog.h"
#include "reference/double_tier.h"
#include "spec/stream_layout.h"

namespace ropecheck::properties {

namespace {

using namespace kernel_support;

constexpr std::int64_t accuracy_position_limit = std::int64_t{1} << 24;
// Below this pair norm the bound is all underflow (as kernel_properties_accuracy.cpp).
constexpr double meaningful_norm = 0x1p-100;

struct stream_case {
  kernel_case c;                       // c.spec carries the layout; c.frequencies θ_{f(j)}
  std::vector<std::int64_t> positions;  // streams × tokens, stream-major (stream 0 = c.positions)
  std::vector<std::int32_t> map;        // s(j)
  int streams = 1;
  std::int64_t position(std::int64_t token, int j) const {
    return positions[static_cast<std::size_t>(map[static_cast<std::size_t>(j)] * c.tokens() + token)];
  }
};

// A layout the shape allows: M-RoPE needs 3 pairs, vision an even count of pairs.
stream_layout pick_layout(int pairs) {
  std::vector<stream_rule> allowed;
  if (pairs >= 3)
    allowed.insert(allowed.end(),
                   {stream_rule::mrope_sections, stream_rule::mrope_interleaved, stream_rule::mrope_interleaved_4});
  if (pairs % 2 == 0)
    allowed.insert(allowed.end(), {stream_rule::vision_rows_first, stream_rule::vision_columns_first,
                                   stream_rule::vision_alternating});
  RC_PRE(!allowed.empty());
  stream_layout layout;
  layout.rule = *rc::gen::elementOf(allowed);
  if (!layout.vision()) {
    const int t = static_cast<int>(*gen::uniform_int(1, pairs - 2));
    const int h = static_cast<int>(*gen::uniform_int(1, pairs - t - 1));
    layout.section = {t, h, pairs - t - h};
  }
  return layout;
}

// A stream case: `equal` forces every token to be a text token (equal streams).
stream_case pick_stream_case(const fast::kernel_info& kernel, dtype storage, case_limits limits,
                             bool equal = false) {
  stream_case s;
  s.c = pick_case(kernel, storage, limits);
  kernel_case& c = s.c;
  const stream_layout layout = pick_layout(static_cast<int>(c.pairs()));
  c.spec.streams = layout;
  s.streams = layout.streams();
  s.map = pair_streams(layout, c.shape.rotary_dim);
  c.frequencies.inverse_frequencies = pair_frequencies(layout, c.frequencies.inverse_frequencies);
  const bool cached = kernel.strategy == fast::angle_strategy::cache;
  const std::int64_t limit = c.position_limit;  // the other streams keep to the first's range
  s.positions = c.positions;
  for (int stream = 1; stream < s.streams; ++stream) {
    auto other = *gen::positions(c.tokens(), limit, c.approximate_theta(),
                                 limits.allow_negative_positions && kernel.domain.negative_positions && !cached);
    for (std::int64_t t = 0; t < c.tokens(); ++t) {
      const bool text = equal || *gen::weighted_element<bool>({{3, false}, {1, true}});
      if (text) other[static_cast<std::size_t>(t)] = c.positions[static_cast<std::size_t>(t)];
    }
    s.positions.insert(s.positions.end(), other.begin(), other.end());
  }
  return s;
}

fast::rope_angles prepare_stream_angles(const fast::kernel_info& kernel, const stream_case& s) {
  kernel_case all = s.c;  // the cache must cover every stream's positions
  all.positions = s.positions;
  return prepare_angles(kernel, all);
}

fast::rope_call stream_call(const stream_case& s, const std::vector<std::int64_t>& positions,
                            tensor_buffers* q, tensor_buffers* k) {
  return fast::with_streams(make_call(s.c, fast::direction::forward, s.c.positions, q, k), positions,
                            s.streams, s.map);
}

std::string describe_streams(const stream_case& s, std::int64_t token) {
  std::ostringstream os;
  os << to_string(s.c.spec.streams.rule);
  if (!s.c.spec.streams.section.empty())
    os << "[" << s.c.spec.streams.section[0] << "," << s.c.spec.streams.section[1] << ","
       << s.c.spec.streams.section[2] << "]";
  os << " positions(";
  for (int st = 0; st < s.streams; ++st)
    os << (st ? "," : "") << s.positions[static_cast<std::size_t>(st * s.c.tokens() + token)];
  os << ")";
  return os.str();
}

void require_same(std::string_view property, const stream_case& s, const tensor_buffers& t,
                  const element_buffer& expected, const element_buffer& actual, std::string_view what) {
  const std::int64_t i = expected.first_difference(actual);
  if (i < 0) return;
  const std::int64_t token = i / t.token_stride;
  std::ostringstream os;
  os << property << " violated: element " << i << " (token " << token << ", "
     << describe_location(s.c, token, (i % t.token_stride) / t.head_stride, 0) << ", "
     << describe_streams(s, token) << "): " << what << " " << show_number(expected.get(i)) << " vs "
     << show_number(actual.get(i));
  RC_FAIL(os.str());
}

// --------------------------------------------------------------------------------------------

void streams_equal_one_d(const fast::kernel_info& kernel, dtype storage, const run_settings& settings,
                         observation&) {
  case_limits limits{.position_limit = (std::int64_t{1} << 31) - 1};
  limits.with_k = true;
  stream_case s = pick_stream_case(kernel, storage, within(settings, limits), true);
  const fast::rope_angles angles = prepare_stream_angles(kernel, s);
  tensor_buffers q = packed_buffers(s.c.q, storage, s.c.q_heads, s.c.shape.head_dim, s.c.tokens());
  tensor_buffers k = packed_buffers(s.c.k, storage, s.c.k_heads, s.c.shape.head_dim, s.c.tokens());
  tensor_buffers q1 = packed_buffers(s.c.q, storage, s.c.q_heads, s.c.shape.head_dim, s.c.tokens());
  tensor_buffers k1 = packed_buffers(s.c.k, storage, s.c.k_heads, s.c.shape.head_dim, s.c.tokens());
  apply_or_fail(kernel, stream_call(s, s.positions, &q, &k), angles);
  apply_or_fail(kernel, make_call(s.c, fast::direction::forward, s.c.positions, &q1, &k1), angles);
  require_same("streams_equal_one_d", s, q, q1.output, q.output, "Q 1-D vs streams");
  require_same("streams_equal_one_d", s, k, k1.output, k.output, "K 1-D vs streams");
}

void streams_layout_invariance(const fast::kernel_info& kernel, dtype storage,
                               const run_settings& settings, observation&) {
  case_limits limits{.position_limit = (std::int64_t{1} << 31) - 1};
  stream_case s = pick_stream_case(kernel, storage, within(settings, limits));
  const fast::rope_angles angles = prepare_stream_angles(kernel, s);
  const std::int64_t tokens = s.c.tokens();
  const std::int64_t split = *gen::uniform_int(0, tokens);
  const std::int64_t padding = *gen::uniform_int(0, 5);
  tensor_buffers whole = packed_buffers(s.c.q, storage, s.c.q_heads, s.c.shape.head_dim, tokens);
  tensor_buffers parts = packed_buffers(s.c.q, storage, s.c.q_heads, s.c.shape.head_dim, tokens);
  apply_or_fail(kernel, stream_call(s, s.positions, &whole, nullptr), angles);
  // int32 positions, `padding` unused entries between streams, the call split at `split`.
  const std::int64_t stride = tokens + padding;
  std::vector<std::int32_t> narrow(static_cast<std::size_t>(stride * s.streams), -7);
  for (int st = 0; st < s.streams; ++st)
    for (std::int64_t t = 0; t < tokens; ++t)
      narrow[static_cast<std::size_t>(st * stride + t)] =
          static_cast<std::int32_t>(s.positions[static_cast<std::size_t>(st * tokens + t)]);
  fast::rope_call call = stream_call(s, s.positions, &parts, nullptr);
  call.positions = narrow.data();
  call.position_type = dtype::int32;
  call.position_stream_stride = stride;
  apply_or_fail(kernel, fast::slice_tokens(call, 0, split), angles);
  apply_or_fail(kernel, fast::slice_tokens(call, split, tokens), angles);
  require_same("streams_layout_invariance", s, whole, whole.output, parts.output,
               "one int64 call vs two int32 calls with a padded stream stride");
}

// The double tier at each pair's own stream position; visit(t, h, j, a, b, x, y, exact, m_j).
template <class Visit>
void each_stream_pair(const stream_case& s, const tensor_buffers& t, Visit visit) {
  const reference::double_tier tier(s.c.spec, s.positions, 1);
  std::vector<double> row(static_cast<std::size_t>(s.c.shape.rotary_dim));
  std::vector<double> exact(static_cast<std::size_t>(s.c.shape.head_dim));
  std::vector<std::int64_t> at(static_cast<std::size_t>(s.streams));
  for (std::int64_t token = 0; token < s.c.tokens(); ++token) {
    for (int st = 0; st < s.streams; ++st)
      at[static_cast<std::size_t>(st)] = s.positions[static_cast<std::size_t>(st * s.c.tokens() + token)];
    tier.stream_cos_sin(at, row);
    for (int h = 0; h < t.heads; ++h) {
      std::vector<double> x(static_cast<std::size_t>(s.c.shape.head_dim));
      for (int i = 0; i < s.c.shape.head_dim; ++i)
        x[static_cast<std::size_t>(i)] = t.input.get(element_index(t, token, h, i));
      tier.rotate(x, row, exact);
      for (int j = 0; j < s.c.pairs(); ++j) {
        const auto [ia, ib] = pair_of(s.c.shape.pair, s.c.shape.rotary_dim, j);
        visit(token, h, j, ia, ib, x, exact, s.position(token, j));
      }
    }
  }
}

void streams_within_bound_of_reference(const fast::kernel_info& kernel, dtype storage,
                                       const run_settings& settings, observation& seen) {
  case_limits limits{.position_limit = accuracy_position_limit};
  limits.with_k = true;
  const stream_case s = pick_stream_case(kernel, storage, within(settings, limits));
  const fast::rope_angles angles = prepare_stream_angles(kernel, s);
  tensor_buffers q = packed_buffers(s.c.q, storage, s.c.q_heads, s.c.shape.head_dim, s.c.tokens());
  tensor_buffers k = packed_buffers(s.c.k, storage, s.c.k_heads, s.c.shape.head_dim, s.c.tokens());
  apply_or_fail(kernel, stream_call(s, s.positions, &q, &k), angles);
  const bounds::attention_scale scale = s.c.scale();
  first_violation violation;
  for (const auto& [tensor, name] : {std::pair{&q, "Q"}, std::pair{&k, "K"}}) {
    each_stream_pair(s, *tensor, [&](std::int64_t t, int h, int j, int ia, int ib,
                                     const std::vector<double>& x, const std::vector<double>& exact,
                                     std::int64_t m) {
      const double r = std::hypot(x[static_cast<std::size_t>(ia)], x[static_cast<std::size_t>(ib)]);
      const double theta = s.c.theta()[static_cast<std::size_t>(j)];
      for (int i : {ia, ib}) {
        const double y = tensor->output.get(element_index(*tensor, t, h, i));
        const double e = exact[static_cast<std::size_t>(i)];
        const double error = std::isnan(y - e) ? std::numeric_limits<double>::infinity() : std::fabs(y - e);
        const double bound = bounds::output_bound(storage, r, m, theta, y, scale) +
                             bounds::oracle_output_bound(r, scale) +
                             bounds::contract_output_extra(*settings.contract, storage, r, m, theta, j,
                                                           scale.factor);
        const double units = r > 0 ? error / (bounds::float32_unit_roundoff * scale.factor * r) : -1;
        auto where = [&] {
          return std::string(name) + " " + describe_location(s.c, t, h, j) + " " + describe_streams(s, t) +
                 " m_j=" + std::to_string(m);
        };
        auto location = [&] { return locate(s.c, t, j, units, where()); };
        seen.record(error / bound, m, location);
        if (s.c.scaled() && r >= meaningful_norm)
          seen.worst_scaled_over_bound = std::max(seen.worst_scaled_over_bound, error / bound);
        if (!(error <= bound))
          violation.note(s.c, location(), [&] {
            std::ostringstream os;
            os << "streams_within_bound_of_reference violated at " << where() << ": " << name << " y["
               << i << "] = " << show_number(y) << ", expected " << show_number(e) << ", |error| "
               << show_number(error) << " > derived bound " << show_number(bound);
            return os.str();
          });
      }
    });
  }
  violation.raise(seen);
}

void streams_norm_preserved(const fast::kernel_info& kernel, dtype storage, const run_settings& settings,
                            observation& seen) {
  const stream_case s = pick_stream_case(
      kernel, storage, within(settings, case_limits{.position_limit = (std::int64_t{1} << 31) - 1}));
  const fast::rope_angles angles = prepare_stream_angles(kernel, s);
  tensor_buffers q = packed_buffers(s.c.q, storage, s.c.q_heads, s.c.shape.head_dim, s.c.tokens());
  apply_or_fail(kernel, stream_call(s, s.positions, &q, nullptr), angles);
  const bounds::attention_scale scale = s.c.scale();
  first_violation violation;
  for (std::int64_t t = 0; t < s.c.tokens(); ++t)
    for (int h = 0; h < s.c.q_heads; ++h)
      for (int j = 0; j < s.c.pairs(); ++j) {
        const auto [ia, ib] = pair_of(s.c.shape.pair, s.c.shape.rotary_dim, j);
        const double r = std::hypot(q.input.get(element_index(q, t, h, ia)), q.input.get(element_index(q, t, h, ib)));
        const double ya = q.output.get(element_index(q, t, h, ia));
        const double yb = q.output.get(element_index(q, t, h, ib));
        const double norm = std::hypot(ya, yb);
        const double error = std::isnan(norm) ? std::numeric_limits<double>::infinity()
                                              : std::fabs(norm - scale.factor * r);
        const std::int64_t m = s.position(t, j);
        const double theta = s.c.theta()[static_cast<std::size_t>(j)];
        const double bound = bounds::pair_bound(storage, r, m, theta, ya, yb, scale) +
                             bounds::contract_pair_extra(*settings.contract, storage, r, m, theta, j,
                                                         scale.factor);
        const double units = r > 0 ? error / (bounds::float32_unit_roundoff * scale.factor * r) : -1;
        auto where = [&] { return describe_location(s.c, t, h, j) + " " + describe_streams(s, t); };
        auto location = [&] { return locate(s.c, t, j, units, where()); };
        seen.record(error / bound, m, location);
        if (s.c.scaled() && r >= meaningful_norm)
          seen.worst_scaled_over_bound = std::max(seen.worst_scaled_over_bound, error / bound);
        if (!(error <= bound))
          violation.note(s.c, location(), [&] {
            return "streams_norm_preserved violated at " + where() + ": ‖(y_a, y_b)‖ = " + show_number(norm) +
                   ", A·‖(x_a, x_b)‖ = " + show_number(scale.factor * r) + ", bound " + show_number(bound);
          });
      }
  violation.raise(seen);
}

bool serves_streams(const fast::kernel_info& kernel) { return kernel.multi_stream; }
constexpr std::string_view one_stream_only =
    "the kernel takes one position stream per call (a C ABI v1 library, a Python kernel)";

constexpr kernel_property_definition stream_list[] = {
    {"streams_equal_one_d",
     "M-RoPE / 2-D vision with every stream equal gives the 1-D call's bits (M-RoPE; vision's "
     "per-pair theta as given)",
     30, deep_cases_per_property, false, streams_equal_one_d, serves_streams,
     one_stream_only},
    {"streams_within_bound_of_reference",
     "every M-RoPE / 2-D vision output within the derived bound of the double tier at each "
     "pair's own stream position (|m| <= 2^24)",
     40, deep_cases_per_property, true, streams_within_bound_of_reference, serves_streams,
     one_stream_only},
    {"streams_norm_preserved",
     "with position streams, each pair's norm times A preserved within the derived pair bound",
     30, deep_cases_per_property, true, streams_norm_preserved, serves_streams,
     one_stream_only},
    {"streams_layout_invariance",
     "position streams: the same bits split at any token, with int32 positions and a padded "
     "stream stride",
     30, deep_cases_per_property, false, streams_layout_invariance, serves_streams,
     one_stream_only},
};

}  // namespace

std::span<const kernel_property_definition> stream_properties() { return stream_list; }

}  // namespace ropecheck::properties
