// double_tier_memo: the double tier (double_tier.h, docs/double-tier.md) for many small checks of
// the same few RoPE configurations — the kernel properties build one tier per case, a few dozen
// positions each, and most of a tier's cost is 266-bit MPFR: θ_j and A (a pow and the scaling's
// logs per spec) and cos/sin per (position, frequency). The memo keeps, per frequency spec —
// (the spec less its labels and pairing, compared by rope_spec's operator==: rotary_dim, base,
// rope_scaling, attention factor, streams, and the sequence length where the scaling depends
// on it) — θ_j and A at 266 bits and every table row it has built, and hands out tiers
// whose rows are the very doubles double_tier's own constructor computes for the same spec
// (fill_cos_sin_table: A·cos, A·sin of m·θ_j correctly rounded), so a memoized tier and a fresh
// one rotate identically and have the same bound, 3·2^-53·A·‖(x_a, x_b)‖.
//
// Thread-safe (one mutex; the MPFR work runs outside it). Memory is bounded: past
// `max_table_doubles` table doubles or `max_specs` specs the whole memo is dropped and starts
// again (tiers already handed out own their rows and stay valid).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "reference/double_tier.h"
#include "spec/rope_spec.h"

namespace ropecheck::reference {

struct double_tier_memo_stats {
  std::int64_t specs_computed = 0;  // θ_j and A evaluated (a spec not in the memo)
  std::int64_t rows_reused = 0;     // table rows taken from the memo
  std::int64_t rows_computed = 0;   // table rows built (fill_cos_sin_table)
  std::int64_t resets = 0;          // times the memo was dropped to stay within its bounds
  std::size_t table_doubles = 0;    // doubles held now
  std::size_t specs = 0;            // specs held now
};

class double_tier_memo {
 public:
  // 2^22 doubles: 32 MiB, ~16 000 rows of the widest head (rotary_dim 512).
  explicit double_tier_memo(std::size_t max_table_doubles = std::size_t{1} << 22,
                            std::size_t max_specs = 1024);
  ~double_tier_memo();
  double_tier_memo(const double_tier_memo&) = delete;
  double_tier_memo& operator=(const double_tier_memo&) = delete;

  // What double_tier(spec, positions, threads) builds, with θ_j, A and the rows of positions
  // seen before for this frequency spec taken from the memo. Throws reference_error as the
  // double_tier constructor does.
  double_tier tier(const rope_spec& spec, std::span<const std::int64_t> positions, int threads = 1);

  // θ_j (θ'_j under rope_scaling) and A, each the double nearest its 266-bit value: what the
  // kernels under test are given. From the same entry as tier(spec, positions) when `length` is
  // its max position + 1 (or the spec gives a sequence_length or does not depend on it).
  struct rounded_frequencies {
    std::vector<double> inverse_frequencies;
    double attention_factor = 1;
  };
  rounded_frequencies frequencies(const rope_spec& spec, std::int64_t length);

  double_tier_memo_stats stats() const;
  void clear();  // drops every spec and row (the counters stay)

  // The memo's key: the spec with the fields θ_j and A are not computed from put back to their
  // defaults, compared by rope_spec's own operator== (every field, the scaling's alternative and
  // all of its fields), and the sequence length `length` (max position + 1) where the scaling
  // depends on it and the spec gives none (else 0). Specs with equal keys have equal tables.
  struct frequency_spec {
    rope_spec spec;
    std::int64_t length = 0;
    bool operator==(const frequency_spec&) const = default;
  };
  static frequency_spec frequency_key(const rope_spec& spec, std::int64_t length);

 private:
  struct entry;  // θ_j and A at 266 bits, and the rows built so far (double_tier_memo.cpp)
  // The spec's entry, computed (and added) if the memo lacks it.
  std::shared_ptr<entry> entry_for(const rope_spec& spec, std::int64_t length, const frequency_spec& key);
  struct frequency_spec_hash {
    std::size_t operator()(const frequency_spec& k) const;
  };

  std::size_t max_table_doubles_;
  std::size_t max_specs_;
  mutable std::mutex lock_;
  std::unordered_map<frequency_spec, std::shared_ptr<entry>, frequency_spec_hash> specs_;
  double_tier_memo_stats stats_;
};

}  // namespace ropecheck::reference
