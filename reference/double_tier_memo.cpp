// double_tier_memo (double_tier_memo.h): θ_j, A and table rows of the double tier, kept per
// frequency spec.
#include "reference/double_tier_memo.h"

#include <algorithm>
#include <functional>
#include <utility>
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

double_tier_memo::frequency_spec double_tier_memo::frequency_key(const rope_spec& spec, std::int64_t length) {
  frequency_spec key{spec, 0};
  // Put back to their defaults: the fields that θ_j, A and the rows are not computed from (a
  // label, the pairing, which the rotation reads, and the model's layer structure). Every
  // other field is compared, so a field added to rope_spec or to a scaling struct keys the memo
  // unless it is named here.
  key.spec.pair = rope_spec{}.pair;
  key.spec.source.clear();
  key.spec.layer_type.clear();
  key.spec.without_rope = {};
  key.spec.layer.reset();
  // The length matters only where the spec gives none and the scaling depends on it.
  if (spec.sequence_length == 0 && depends_on_sequence_length(spec)) key.length = length;
  return key;
}

std::size_t double_tier_memo::frequency_spec_hash::operator()(const frequency_spec& k) const {
  // A few fields that tell most specs apart; equality (rope_spec's operator==) decides.
  std::size_t h = std::hash<double>{}(k.spec.base);
  for (const std::size_t v : {static_cast<std::size_t>(k.spec.rotary_dim), k.spec.scaling.index(),
                              static_cast<std::size_t>(k.length), static_cast<std::size_t>(k.spec.sequence_length)})
    h = h * 1000003u ^ v;
  return h;
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
                                                                    const frequency_spec& key) {
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
  const frequency_spec key = frequency_key(spec, length);
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
