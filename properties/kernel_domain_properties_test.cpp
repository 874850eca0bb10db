// Every kernel property keeps to a kernel's declared domain (fast::kernel_domain): a built-in
// kernel, wrapped with a narrow domain and an entry that notes each call outside it (and
// refuses it, as a kernel that cannot serve it does), passes check_kernel without one such
// call; the properties that need what the domain lacks are skipped with the reason, never
// passed with 0 cases, and every other property ran cases. For a cache kernel (its positions
// are [0, table size) already: the domain's maximum shortens the table) and an on-the-fly one
// (whose cases otherwise include negative positions). rejects_invalid_calls is left out of the
// watch: its calls are invalid by design (null positions, odd rotary_dim, positions past any
// table), and it checks their statuses itself.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "properties/kernel_properties.h"

namespace ropecheck::properties {
namespace {

struct watched_kernel {
  const fast::kernel_info* inner = nullptr;
  std::string running;               // "<property>/<dtype>" (check_options::starting)
  std::vector<std::string> outside;  // calls outside the domain: "<property>/<dtype>: what"
  fast::kernel_domain domain;
};

// What of `call` the domain does not serve ("" if nothing).
std::string outside_of(const fast::kernel_domain& d, const fast::rope_call& call, const fast::rope_angles& angles) {
  if (call.dir == fast::direction::inverse && !d.inverse) return "the inverse direction";
  if (angles.frequencies().attention_factor != 1 && !d.attention_factor) return "an attention factor";
  if (call.rotary_dim != call.head_dim && !d.partial_rotary) return "a partial rotary";
  if ((call.q.heads == 0 || call.k.heads == 0) && !d.absent_tensor) return "Q or K absent";
  for (std::int32_t s = 0; s < call.position_streams; ++s)
    for (std::int64_t t = 0; t < call.tokens; ++t)
      if (const std::int64_t m = fast::position_at(call, t, s); !d.serves_position(m))
        return "position " + std::to_string(m);
  return "";
}

fast::status watched_entry(const void* context, const fast::rope_call& call, const fast::rope_angles& angles) {
  auto& w = *const_cast<watched_kernel*>(static_cast<const watched_kernel*>(context));
  if (w.running.rfind("rejects_invalid_calls/", 0) == 0 || call.positions == nullptr)
    return w.inner->apply(call, angles);
  if (const std::string what = outside_of(w.domain, call, angles); !what.empty()) {
    w.outside.push_back(w.running + ": " + what);
    return fast::status::error(fast::status_code::unsupported, "outside the declared domain: " + what);
  }
  return w.inner->apply(call, angles);
}

constexpr dtype float32_only[] = {dtype::float32};

// check_kernel on `inner` (float32 only, for time) declared to serve `domain`.
kernel_result check_within(const char* inner_name, const fast::kernel_domain& domain, watched_kernel& w) {
  w.inner = fast::find_kernel(inner_name);
  if (w.inner == nullptr) throw std::logic_error("no built-in kernel " + std::string(inner_name));
  w.domain = domain;
  fast::kernel_info k = *w.inner;
  k.name = "watched";
  k.dtypes = float32_only;
  k.entry = watched_entry;
  k.context = &w;
  k.domain = domain;
  check_options options;
  options.starting = [&w](std::string_view id) { w.running = std::string(id); };
  return check_kernel(k, profile::quick, default_seed, {}, options);
}

const property_result* find_result(const kernel_result& r, const std::string& name) {
  for (const auto& p : r.properties)
    if (p.name == name && p.dtype == "float32") return &p;
  return nullptr;
}

TEST(KernelDomainProperties, ACacheKernelServingLittleGetsNoCallOutsideItsDomain) {
  fast::kernel_domain domain;
  domain.negative_positions = false;
  domain.max_position = 1000;
  domain.inverse = false;
  domain.attention_factor = false;
  domain.partial_rotary = false;
  domain.absent_tensor = false;
  watched_kernel w;
  const kernel_result r = check_within("cache_simd", domain, w);
  EXPECT_TRUE(w.outside.empty()) << w.outside.size() << " calls outside the domain, the first: " << w.outside[0];
  EXPECT_TRUE(r.passed);
  const struct {
    std::string property, reason;
  } skipped[] = {{"inverse_round_trip", "no inverse direction"},
                 {"pass_through_bit_exact", "no partial rotary"},
                 {"q_and_k_together_equal_separate", "no call with Q or K absent"}};
  for (const auto& s : skipped) {
    const property_result* p = find_result(r, s.property);
    ASSERT_NE(p, nullptr) << s.property;
    EXPECT_EQ(p->state, run_state::skipped) << s.property;
    EXPECT_NE(p->detail.find(s.reason), std::string::npos) << p->detail;
  }
  int ran = 0;
  for (const auto& p : r.properties) {
    if (p.dtype != "float32" || p.state != run_state::ran) continue;
    ++ran;
    EXPECT_GT(p.cases, 0) << p.name;
    EXPECT_TRUE(p.passed) << p.name << ": " << p.message;
  }
  EXPECT_GE(ran, 10);
}

TEST(KernelDomainProperties, AnOnTheFlyKernelOfNonnegativePositionsRunsEveryPropertyWithinThem) {
  fast::kernel_domain domain;
  domain.negative_positions = false;
  domain.max_position = 100;
  watched_kernel w;
  const kernel_result r = check_within("on_the_fly_simd", domain, w);
  EXPECT_TRUE(w.outside.empty()) << w.outside.size() << " calls outside the domain, the first: " << w.outside[0];
  EXPECT_TRUE(r.passed);
  // Positions alone never leave a property without cases: nothing is skipped for the domain.
  for (const auto& p : r.properties) {
    if (p.dtype != "float32") continue;
    EXPECT_EQ(p.detail.find("declared domain"), std::string::npos) << p.name << ": " << p.detail;
    if (p.state == run_state::ran) {
      EXPECT_GT(p.cases, 0) << p.name;
      EXPECT_TRUE(p.passed) << p.name << ": " << p.message;
    }
  }
  const property_result* round_trip = find_result(r, "inverse_round_trip");
  ASSERT_NE(round_trip, nullptr);
  EXPECT_EQ(round_trip->state, run_state::ran);
}

}  // namespace
}  // namespace ropecheck::properties
