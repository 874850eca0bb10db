// double_tier_memo (double_tier_memo.h): θ_j, A and table rows of the double tier, kept per
// frequency spec.
#include "reference/double_tier_memo.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "reference/cos_sin_table.h"
#include "reference/real.h"
#include "reference/rotary_params.h"
#include "reference/scaling.h"

namespace ropecheck::reference {

struct double_tier_memo::entry {
  // scaled_frequencies<mp_real>: the θ_j and A double_tier's constructor rotates by (the
  // repeated-product θ_j of reference/scaling.cpp, within 2^-257 relative of base^(−2j/d)).
  std::vector<mp_real> theta;
  mp_real factor;
  std::vector<double> theta_double;  // each rounded once
  double factor_double = 1;
  std::unordered_map<std::int64_t, std::vector<double>> rows;  // guarded by the memo's lock
};

namespace {

void append_double(std::string& key, double v) { key += fmt::format("{:a},", v); }

void append_optional(std::string& key, const std::optional<double>& v) {
  if (v) append_double(key, *v);
  else key += "-,";
}

// Every field of the scaling's struct (rope_spec.h), after its type's index.
struct scaling_key {
  std::string& key;
  void operator()(const no_scaling&) const {}
  void operator()(const linear_scaling& s) const { append_double(key, s.factor); }
  void operator()(const ntk_scaling& s) const { append_double(key, s.factor); }
  void operator()(const dynamic_scaling& s) const {
    append_double(key, s.factor);
    key += fmt::format("{} {} ", s.max_position_embeddings, static_cast<int>(s.convention));
  }
  void operator()(const yarn_scaling& s) const {
    append_double(key, s.factor.numerator);
    append_double(key, s.factor.denominator);
    key += fmt::format("{} {} {:d} ", s.original_max_position_embeddings,
                       static_cast<int>(s.convention), s.truncate);
    for (double v : {s.beta_fast, s.beta_slow, s.extrapolation_factor, s.attn_factor}) append_double(key, v);
    for (const auto& v : {s.mscale, s.mscale_all_dim, s.attention_factor}) append_optional(key, v);
  }
  void operator()(const llama3_scaling& s) const {
    for (double v : {s.factor, s.low_freq_factor, s.high_freq_factor}) append_double(key, v);
    key += fmt::format("{} ", s.original_max_position_embeddings);
  }
  void operator()(const longrope_scaling& s) const {
    append_double(key, s.factor.numerator);
    append_double(key, s.factor.denominator);
    key += fmt::format("{} {} ", s.original_max_position_embeddings, static_cast<int>(s.convention));
    for (const auto& v : {s.attention_factor, s.long_mscale, s.short_mscale}) append_optional(key, v);
    key += "L";
    for (double v : s.long_factor) append_double(key, v);
    key += "S";
    for (double v : s.short_factor) append_double(key, v);
  }
  void operator()(const proportional_scaling& s) const {
    append_double(key, s.factor);
    key += fmt::format("{} ", s.rotated_pairs);
  }
};

}  // namespace

std::string double_tier_memo::frequency_key(const rope_spec& spec, std::int64_t length) {
  std::string key = fmt::format("{} {} ", spec.head_dim, spec.rotary_dim);
  append_double(key, spec.base);
  key += fmt::format("T{} ", spec.scaling.index());
  std::visit(scaling_key{key}, spec.scaling);
  append_optional(key, spec.attention_factor);
  key += fmt::format(" M{}", to_string(spec.streams.rule));
  for (int v : spec.streams.section) key += fmt::format("{},", v);
  // The length matters only where the spec gives none and the scaling depends on it.
  key += fmt::format(" n{}", spec.sequence_length);
  if (spec.sequence_length == 0 && depends_on_sequence_length(spec))
    key += fmt::format(" l{}", length);
  return key;
}

double_tier_memo::double_tier_memo(std::size_t max_table_doubles, std::size_t max_specs)
    : max_table_doubles_(max_table_doubles), max_specs_(max_specs) {}

double_tier_memo::~double_tier_memo() = default;

double_tier_memo_stats double_tier_memo::stats() const {
  const std::scoped_lock guard(lock_);
  return stats_;
}

void double_tier_memo::clear() {
  const std::scoped_lock guard(lock_);
  specs_.clear();
  stats_.table_doubles = 0;
  stats_.specs = 0;
}

std::shared_ptr<double_tier_memo::entry> double_tier_memo::entry_for(const rope_spec& spec,
                                                                    std::int64_t length,
                                                                    const std::string& key) {
  {
    const std::scoped_lock guard(lock_);
    if (const auto it = specs_.find(key); it != specs_.end()) return it->second;
  }
  // Validates as params_from_spec does (reference_error for a bad spec).
  (void)params_from_spec<mp_real>(spec, length);
  auto made = std::make_shared<entry>();
  auto scaled = scaled_frequencies<mp_real>(spec, length);
  made->theta = std::move(scaled.inverse_frequencies);
  made->factor = scaled.attention_factor;
  for (const mp_real& t : made->theta) made->theta_double.push_back(t.convert_to<double>());
  made->factor_double = made->factor.convert_to<double>();
  const std::scoped_lock guard(lock_);
  ++stats_.specs_computed;
  if (specs_.size() >= max_specs_) {
    specs_.clear();
    stats_.table_doubles = 0;
    ++stats_.resets;
  }
  auto f = specs_.emplace(key, std::move(made)).first->second;  // or the one another thread added
  stats_.specs = specs_.size();
  return f;
}

double_tier_memo::rounded_frequencies double_tier_memo::frequencies(const rope_spec& spec,
                                                                    std::int64_t length) {
  const std::shared_ptr<entry> f = entry_for(spec, length, frequency_key(spec, length));
  return {f->theta_double, f->factor_double};
}

double_tier double_tier_memo::tier(const rope_spec& spec, std::span<const std::int64_t> positions,
                                   int threads) {
  // Length-dependent scalings see max position + 1 unless the spec gives a sequence_length, as
  // in double_tier's constructor.
  std::int64_t length = 0;
  for (std::int64_t m : positions) length = std::max(length, m + 1);
  const std::string key = frequency_key(spec, length);
  std::vector<std::int64_t> distinct(positions.begin(), positions.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  const std::shared_ptr<entry> f = entry_for(spec, length, key);

  const std::size_t width = static_cast<std::size_t>(spec.rotary_dim);
  std::vector<double> cos_sin(distinct.size() * width);
  std::vector<std::int64_t> missing;
  std::vector<std::size_t> missing_rows;
  {
    const std::scoped_lock guard(lock_);
    for (std::size_t r = 0; r < distinct.size(); ++r) {
      if (const auto it = f->rows.find(distinct[r]); it != f->rows.end()) {
        std::copy(it->second.begin(), it->second.end(), cos_sin.begin() + static_cast<std::ptrdiff_t>(r * width));
      } else {
        missing.push_back(distinct[r]);
        missing_rows.push_back(r);
      }
    }
    stats_.rows_reused += static_cast<std::int64_t>(distinct.size() - missing.size());
  }
  cos_sin_table_stats built;
  if (!missing.empty()) {
    std::vector<double> fresh(missing.size() * width);
    built = fill_cos_sin_table(missing, f->theta, f->factor, fresh, threads);
    for (std::size_t i = 0; i < missing.size(); ++i)
      std::copy_n(fresh.begin() + static_cast<std::ptrdiff_t>(i * width), width,
                  cos_sin.begin() + static_cast<std::ptrdiff_t>(missing_rows[i] * width));
    const std::scoped_lock guard(lock_);
    stats_.rows_computed += static_cast<std::int64_t>(missing.size());
    if (stats_.table_doubles + fresh.size() > max_table_doubles_) {
      specs_.clear();
      stats_.table_doubles = 0;
      stats_.specs = 0;
      ++stats_.resets;
    }
    // Rows go into the memo only while f is still the memo's entry for the key.
    if (const auto it = specs_.find(key); it != specs_.end() && it->second == f) {
      for (std::size_t i = 0; i < missing.size(); ++i) {
        const auto at = fresh.begin() + static_cast<std::ptrdiff_t>(i * width);
        if (f->rows.emplace(missing[i], std::vector<double>(at, at + static_cast<std::ptrdiff_t>(width))).second)
          stats_.table_doubles += width;
      }
    }
  }
  return double_tier(spec, f->factor_double, f->theta_double, distinct, std::move(cos_sin), built);
}

}  // namespace ropecheck::reference
