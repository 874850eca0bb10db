// The judging loop (judging_loop.h): rows of X and Y converted to double once, each head vector
// rotated by the double tier and judged by judge_pairs, the profiles folded per row. Rows go in
// blocks to worker threads; the blocks' findings are merged in row order, so that every count,
// maximum, ULP sum, worst output and diagnosis sample is the same for any thread count.
#include "audit/judging_loop.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "audit/judge_pairs.h"
#include "audit/judgeable.h"
#include "audit/profiles.h"
#include "audit/tolerance.h"
#include "numeric/storage_element.h"

namespace ropecheck::audit {
namespace {

bool same_value(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

// What one block of rows found, merged into the report in block order (merge below). Its
// judge_pairs totals start from zero, so the ULP sum is associated block by block, whatever
// the thread count; maxima and counts do not depend on the order at all.
struct block_result {
  reports::audit_report counts;      // outputs, non-finite, beyond, pass-through, ULP outputs, worst
  profiles partial;                  // abs_max, ulp_sum, ulp_max, freq_count (its fold is not used)
  std::int64_t vacuous = 0;
  double widest = 0;
  struct row_fold {
    std::int64_t position = 0, vectors = 0;
    std::vector<double> max_rel;
    std::vector<std::int64_t> unmeasured;  // non-finite outputs per judged vector, in order
  };
  std::vector<row_fold> rows;
  // The diagnosis sample's calls (sample.h) in the order the rows make them, each head
  // vector's x, y and ref copied into `vectors` (3·head_dim doubles at `at`).
  enum class call { take, row_done, failing, worst };
  struct event {
    call what = call::take;
    std::int64_t row = 0, position = 0, head = 0;
    bool failing = false;
    std::size_t at = 0;
    double units = 0;              // worst: the vector's worst output (units of 2^-24)
    bool first_of_block = false;   // worst: the block's first judged vector
    reports::worst_element worst;  // worst: its worst output, as update_worst picks it
  };
  std::vector<event> events;
  std::vector<double> vectors;
  explicit block_result(int pairs) : partial(pairs) {}
};

class judging_loop {
 public:
  judging_loop(const audit_input& in, const reference::double_tier& tier)
      : in_(in),
        tier_(tier),
        d_(in.spec.head_dim),
        rotary_(in.spec.rotary_dim),
        rows_(static_cast<std::int64_t>(in.positions.size())),
        rule_(tolerance_of(in, tier)),
        attention_(tier.attention_factor()),
        theta_(tier.inverse_frequencies().begin(), tier.inverse_frequencies().end()),
        profile_(rotary_ / 2),
        streams_(tier.streams()) {}

  void run(reports::audit_report& r, sample_collector& sampled,
           const std::function<void(std::int64_t, std::int64_t)>& progress, int threads) {
    const std::int64_t row_elements = in_.heads * d_;
    const std::int64_t block_rows = judging_block_rows(rows_, row_elements * static_cast<std::int64_t>(size_of(in_.x.type)));
    const std::int64_t blocks = (rows_ + block_rows - 1) / block_rows;
    // The rows the sample's spread wants, found before the loop on a copy of the (empty)
    // collector: workers ask this, not the collector, whose state the merge advances.
    spread_rows_.assign(static_cast<std::size_t>(rows_), false);
    sample_collector probe = sampled;
    for (std::int64_t row = 0; row < rows_; ++row) {
      if (!probe.wants_row(row)) continue;
      spread_rows_[static_cast<std::size_t>(row)] = true;
      probe.row_done(row, 0);
    }

    double widest = 0;  // the largest per-norm coefficient the verdict used (tolerance_units)
    const auto judge_rows = [&](std::int64_t b, worker_scratch& scratch) {
      auto result = std::make_unique<block_result>(rotary_ / 2);
      const std::int64_t first = b * block_rows, last = std::min(rows_, first + block_rows);
      judge_block(first, last, sampled, scratch, *result);
      // X and Y are read once, front to back: hand back this block's pages, so a memory-mapped
      // multi-GiB dump is not all resident at the end (tensor::release_pages).
      in_.x.release_pages(first * row_elements, (last - first) * row_elements);
      in_.y.release_pages(first * row_elements, (last - first) * row_elements);
      return result;
    };
    const int workers = static_cast<int>(std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(blocks, 1)));
    if (workers == 1) {  // judge and merge block by block on this thread
      worker_scratch scratch(*this);
      for (std::int64_t b = 0; b < blocks; ++b) {
        merge(*judge_rows(b, scratch), r, sampled, widest);
        if (progress) progress(std::min(rows_, (b + 1) * block_rows), rows_);
      }
    } else {
      // Blocks are handed out in order and merged in order by this thread; a worker runs at
      // most `window` blocks ahead of the merge, which bounds the memory of unmerged blocks.
      const std::int64_t window = 2 * static_cast<std::int64_t>(workers);
      std::vector<std::unique_ptr<block_result>> done(static_cast<std::size_t>(blocks));
      std::mutex mutex;
      std::condition_variable changed;
      std::int64_t next_block = 0, merged = 0;
      // The failure reported is the first block's in row order, as one thread would meet it:
      // blocks are handed out in order and a worker finishes the block it holds, so every block
      // before a failing one is judged before the workers are joined.
      std::exception_ptr failure;
      std::int64_t failed_block = blocks;
      const auto record_failure = [&](std::int64_t b) {  // with `mutex` held
        if (!failure || b < failed_block) failure = std::current_exception(), failed_block = b;
        changed.notify_all();
      };
      const auto work = [&] {
        std::unique_ptr<worker_scratch> scratch;
        for (;;) {
          std::int64_t b;
          {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return failure || next_block >= blocks || next_block < merged + window; });
            if (failure || next_block >= blocks) return;
            b = next_block++;
          }
          std::unique_ptr<block_result> result;
          try {
            if (!scratch) scratch = std::make_unique<worker_scratch>(*this);
            result = judge_rows(b, *scratch);
          } catch (...) {
            std::lock_guard lock(mutex);
            record_failure(b);
            return;
          }
          std::lock_guard lock(mutex);
          done[static_cast<std::size_t>(b)] = std::move(result);
          changed.notify_all();
        }
      };
      std::vector<std::thread> pool;
      try {
        for (int t = 0; t < workers; ++t) pool.emplace_back(work);
      } catch (...) {  // a thread that cannot start (a thread limit): stop and join the others
        {
          std::lock_guard lock(mutex);
          failure = std::current_exception();
          changed.notify_all();
        }
        for (std::thread& t : pool) t.join();
        throw;
      }
      for (std::int64_t b = 0; b < blocks; ++b) {
        std::unique_ptr<block_result> block;
        {
          std::unique_lock lock(mutex);
          changed.wait(lock, [&] { return failure || done[static_cast<std::size_t>(b)] != nullptr; });
          if (failure) break;
          block = std::move(done[static_cast<std::size_t>(b)]);
        }
        try {
          merge(*block, r, sampled, widest);
          if (progress) progress(std::min(rows_, (b + 1) * block_rows), rows_);
        } catch (...) {  // the workers must still be joined before this propagates
          std::lock_guard lock(mutex);
          record_failure(b);
          break;
        }
        {
          std::lock_guard lock(mutex);
          merged = b + 1;
          changed.notify_all();
        }
      }
      for (std::thread& t : pool) t.join();
      if (failure) std::rethrow_exception(failure);
    }
    if (progress && blocks == 0) progress(rows_, rows_);
    sampled.finish();
    r.max_rel_pair_error = r.max_rel_pair_error_units * unit;
    r.max_rel_pair_error_dtype_units = r.max_rel_pair_error / std::ldexp(1.0, -precision_bits(in_.judged));
    // What the verdict used: the user's units, or the widest derived coefficient of any row
    // (it grows with m·θ_j), with the oracle's share; 16-bit outputs add half a spacing.
    // Both are per unit of the rotated pair's norm A·‖pair‖, so × A per input pair norm.
    r.tolerance_units =
        ((in_.tolerance_units ? *in_.tolerance_units * unit : widest) + tolerance_rule::oracle_coefficient) *
        attention_ / unit;
    r.tolerance.derived = !in_.tolerance_units.has_value();
    if (in_.contract && !in_.contract->is_exact()) {
      r.tolerance.contract = in_.contract->name;
      r.tolerance.contract_derivation = bounds::contract_derivation(*in_.contract);
    }
    r.tolerance.absolute = rule_.floor();
    r.tolerance.oracle_units = tolerance_rule::oracle_coefficient / unit;
    r.tolerance.store_half_spacing = in_.judged != dtype::float32;
    profile_.write(r);
    check_tolerance_could_fail(in_, vacuous_);
    // A pass judged at least one output, each against a finite tolerance that could fail.
    r.passed = r.outputs > 0 && std::isfinite(r.tolerance_units) && r.outputs_beyond_tolerance == 0 &&
               r.passthrough_modified == 0 && r.non_finite == 0;
  }

 private:
  // What one position row shares across its heads.
  struct row_state {
    std::int64_t row = 0, position = 0;
    std::span<const double> cos_sin;   // the double tier's row for this position
    std::vector<double> coefficient;   // tolerance_rule::coefficient per frequency
    std::vector<double> max_rel;       // per frequency: max |y − y_exact| / ‖pair‖ over the row
    std::int64_t vectors = 0;          // head vectors judged (x finite) in the row
  };
  // One worker's buffers.
  struct worker_scratch {
    explicit worker_scratch(const judging_loop& loop)
        : x_row(static_cast<std::size_t>(loop.in_.heads * loop.d_)),
          y_row(x_row.size()),
          ref(static_cast<std::size_t>(loop.d_)),
          stream_m(static_cast<std::size_t>(loop.streams_)),
          stream_row(static_cast<std::size_t>(loop.rotary_)) {
      rs.coefficient.resize(static_cast<std::size_t>(loop.rotary_ / 2));
      rs.max_rel.resize(rs.coefficient.size());
    }
    row_state rs;
    std::vector<double> x_row, y_row, ref;
    std::vector<std::int64_t> stream_m;   // this row's position in each stream
    std::vector<double> stream_row;       // this row's (cos, sin) assembled from its streams
  };
  // What judging one head vector found: its outputs beyond tolerance, and whether it now holds
  // the block's worst output.
  struct vector_outcome {
    std::int64_t beyond = 0;
    bool new_worst = false;
  };
  using judge_function = vector_outcome (judging_loop::*)(row_state&, std::int64_t, std::span<const double>,
                                                          std::span<const double>, std::span<const double>,
                                                          block_result&) const;

  // Rows [first, last) into `out`; reads the shared state only.
  void judge_block(std::int64_t first_row, std::int64_t last_row, const sample_collector& sampled,
                   worker_scratch& w, block_result& out) const {
    const int pairs = rotary_ / 2;
    const auto judge = vector_judge();
    const std::int64_t row_elements = in_.heads * d_;
    row_state& rs = w.rs;
    const auto record = [&](block_result::call what, std::int64_t h, bool failing, std::span<const double> x,
                            std::span<const double> y) {
      block_result::event e;
      e.what = what;
      e.row = rs.row;
      e.position = rs.position;
      e.head = h;
      e.failing = failing;
      e.at = out.vectors.size();
      for (const auto v : {x, y, std::span<const double>(w.ref)}) out.vectors.insert(out.vectors.end(), v.begin(), v.end());
      out.events.push_back(e);
    };
    for (std::int64_t row = first_row; row < last_row; ++row) {
      const std::int64_t m = in_.positions[static_cast<std::size_t>(row)];
      rs.row = row;
      rs.position = m;
      if (streams_ == 1) {
        rs.cos_sin = tier_.cos_sin(m);
      } else {  // M-RoPE, 2-D vision: each pair's (cos, sin) at its own stream's position
        for (int s = 0; s < streams_; ++s)
          w.stream_m[static_cast<std::size_t>(s)] = in_.stream_positions[static_cast<std::size_t>(s * rows_ + row)];
        tier_.stream_cos_sin(std::span<const std::int64_t>(w.stream_m.data(), static_cast<std::size_t>(streams_)),
                             w.stream_row);
        rs.cos_sin = w.stream_row;
      }
      for (int j = 0; j < pairs; ++j) {
        const std::int64_t mj = streams_ == 1 ? m : w.stream_m[static_cast<std::size_t>(tier_.pair_stream(j))];
        rs.coefficient[j] = rule_.coefficient(mj, theta_[j], j);
        out.widest = std::max(out.widest, rs.coefficient[j]);
        // A contract's angle term can reach the pair's own norm (its cap, 2, past |m|·θ_j ≈ 2^22
        // with float32 angles): then a zero output passes, and the pair's two outputs of every
        // head are judged by nothing.
        if (rule_.units || rs.coefficient[j] < 1) continue;
        out.vacuous += 2 * in_.heads;
      }
      std::fill(rs.max_rel.begin(), rs.max_rel.end(), 0.0);
      rs.vectors = 0;
      block_result::row_fold fold;
      const bool sampled_row = spread_rows_[static_cast<std::size_t>(row)];
      const std::int64_t first = row * row_elements;
      to_float64(in_.x, first, w.x_row, in_.x_file);
      to_float64(in_.y, first, w.y_row, in_.y_file);
      for (std::int64_t h = 0; h < in_.heads; ++h) {
        const std::span<const double> x(w.x_row.data() + h * d_, static_cast<std::size_t>(d_));
        const std::span<const double> y(w.y_row.data() + h * d_, static_cast<std::size_t>(d_));
        const auto non_finite_x = std::count_if(x.begin(), x.end(), [](double e) { return !std::isfinite(e); });
        if (non_finite_x > 0) {
          out.counts.non_finite += non_finite_x;  // nothing to judge this vector against
          continue;
        }
        tier_.rotate(x, rs.cos_sin, w.ref);
        for (int c = rotary_; c < d_; ++c) {
          ++out.counts.passthrough_checked;
          // With an output scale the stored pass-through is round(fl(x / σ)) (fast/rotation.h).
          const double expected = in_.output_scale == 1.0f
                                      ? x[c]
                                      : round_to_storage(in_.judged, static_cast<float>(x[c]) / in_.output_scale);
          if (!same_value(y[c], expected)) ++out.counts.passthrough_modified;
        }
        const std::int64_t missing_before = out.counts.non_finite;
        const bool first_of_block = out.counts.outputs == 0;
        const vector_outcome outcome = (this->*judge)(rs, h, x, y, w.ref, out);
        if (out.counts.non_finite > missing_before) fold.unmeasured.push_back(out.counts.non_finite - missing_before);
        if (sampled_row && sampled.wants_head(h)) [[unlikely]]
          record(block_result::call::take, h, outcome.beyond > 0, x, y);
        if (outcome.beyond > 0) [[unlikely]]
          record(block_result::call::failing, h, true, x, y);
        if (outcome.new_worst) [[unlikely]] {
          record(block_result::call::worst, h, outcome.beyond > 0, x, y);
          block_result::event& e = out.events.back();
          e.units = out.counts.max_rel_pair_error_units;
          e.first_of_block = first_of_block;
          e.worst = out.counts.worst;
        }
      }
      if (sampled_row) {
        block_result::event done;
        done.what = block_result::call::row_done;
        done.row = row;
        done.position = m;
        out.events.push_back(done);
      }
      fold.position = m;
      fold.vectors = rs.vectors;
      fold.max_rel = rs.max_rel;
      out.rows.push_back(std::move(fold));
    }
  }

  // One block's findings into the report, the profiles and the sample, in row order.
  void merge(block_result& b, reports::audit_report& r, sample_collector& sampled, double& widest) {
    const bool judged_before = r.outputs > 0;
    r.outputs += b.counts.outputs;
    r.non_finite += b.counts.non_finite;
    r.outputs_beyond_tolerance += b.counts.outputs_beyond_tolerance;
    r.ulp_outputs += b.counts.ulp_outputs;
    r.passthrough_checked += b.counts.passthrough_checked;
    r.passthrough_modified += b.counts.passthrough_modified;
    vacuous_ += b.vacuous;
    widest = std::max(widest, b.widest);
    for (std::size_t j = 0; j < profile_.abs_max.size(); ++j) {
      profile_.abs_max[j] = std::max(profile_.abs_max[j], b.partial.abs_max[j]);
      profile_.ulp_sum[j] += b.partial.ulp_sum[j];
      profile_.ulp_max[j] = std::max(profile_.ulp_max[j], b.partial.ulp_max[j]);
      profile_.freq_count[j] += b.partial.freq_count[j];
    }
    for (const block_result::row_fold& row : b.rows) {
      for (const std::int64_t n : row.unmeasured) profile_.unmeasured(row.position, n);
      profile_.fold_row(row.position, row.max_rel, row.vectors);
    }
    const auto d = static_cast<std::size_t>(d_);
    for (const block_result::event& e : b.events) {
      const std::span<const double> x(b.vectors.data() + e.at, d), y(x.data() + d, d), ref(y.data() + d, d);
      switch (e.what) {
        case block_result::call::take: sampled.take(e.row, e.position, e.head, e.failing, x, y, ref); break;
        case block_result::call::row_done: sampled.row_done(e.row, e.position); break;
        case block_result::call::failing: sampled.offer_failing(e.row, e.position, e.head, x, y, ref); break;
        case block_result::call::worst:
          // The audit's worst output: its first output, then each strictly above the worst so far.
          if ((e.first_of_block && !judged_before) || e.units > r.max_rel_pair_error_units) {
            r.max_rel_pair_error_units = e.units;
            r.worst = e.worst;
            sampled.offer_worst(e.row, e.position, e.head, e.failing, x, y, ref);
          }
          break;
      }
    }
  }

  // The rotated outputs of one head vector against the tier's `ref` (judge_pairs), then the
  // rare "worst output" update, a second, ordered pass over the vector.
  template <pairing pair, bool x_is_float64, bool judged_float32, bool scaled>
  vector_outcome judge_vector(row_state& rs, std::int64_t h, std::span<const double> x, std::span<const double> y,
                              std::span<const double> ref, block_result& out) const {
    reports::audit_report& r = out.counts;
    const double sigma = in_.output_scale;  // ≠ 1 exactly when `scaled` (judge_for)
    const pair_constants k{rotary_ / 2, in_.judged, rule_.floor(), attention_, r.max_rel_pair_error_units * unit,
                           bounds::saturation_limit(in_.judged), sigma,
                           scaled && !bounds::is_power_of_two(sigma) ? bounds::float32_unit_roundoff : 0.0,
                           scaled ? 0x1p-150 : 0.0, scaled ? tolerance_rule::reference_division : 0.0};
    profiles& p = out.partial;
    const pair_counts n = judge_pairs<pair, x_is_float64, judged_float32, scaled>(
        k, x.data(), y.data(), ref.data(), rs.coefficient.data(), rs.max_rel.data(), p.abs_max.data(),
        p.ulp_sum.data(), p.ulp_max.data(), p.freq_count.data());
    const bool first_of_block = r.outputs == 0;
    r.outputs += 2 * k.pairs;
    ++rs.vectors;
    r.non_finite += n.missing;
    r.outputs_beyond_tolerance += n.beyond;
    out.vacuous += n.vacuous;
    r.ulp_outputs += n.ulp_outputs;
    vector_outcome outcome{n.beyond, false};
    if (n.above_worst || first_of_block) [[unlikely]] {
      const double before = r.max_rel_pair_error_units;
      update_worst<pair, x_is_float64>(rs, h, x, y, ref, first_of_block, r);
      outcome.new_worst = first_of_block || r.max_rel_pair_error_units > before;
    }
    return outcome;
  }

  // Output by output, as the report defines "worst": the first output of the audit, then
  // each one strictly above the worst so far.
  template <pairing pair, bool x_is_float64>
  void update_worst(const row_state& rs, std::int64_t h, std::span<const double> x, std::span<const double> y,
                    std::span<const double> ref, bool first_of_audit, reports::audit_report& r) const {
    const int pairs = rotary_ / 2;
    const std::int64_t per_sequence = std::max<std::int64_t>(in_.tokens_per_sequence, 1);
    for (int j = 0; j < pairs; ++j) {
      const auto [a, b] = pair_of(pair, rotary_, j);
      const double norm = pair_norm<x_is_float64>(x[a], x[b]);
      for (const int c : {a, b}) {
        if (!std::isfinite(y[c])) continue;
        const double exact = bounds::saturated_exact(in_.judged, ref[c] / in_.output_scale);  // as judge_pairs
        const double err = std::fabs(y[c] - exact);
        const double scaled_err = err * in_.output_scale;  // in the unscaled output's units
        const double units = (norm > 0 ? scaled_err / norm : (err > 0 ? INFINITY : 0.0)) / unit;
        if (units > r.max_rel_pair_error_units || (first_of_audit && j == 0 && c == a)) {
          r.max_rel_pair_error_units = std::max(r.max_rel_pair_error_units, units);
          r.worst = {rs.row / per_sequence, rs.row % per_sequence, h, c, rs.position, y[c], exact,
                     err, rule_.allowed(rs.coefficient[j], attention_ * norm, y[c])};
        }
      }
    }
  }

  // The judge_vector for this audit's pairing, X dtype, judged dtype and output scale.
  template <pairing pair, bool x64, bool f32>
  judge_function judge_for() const {
    if (in_.output_scale != 1.0f) return &judging_loop::judge_vector<pair, x64, f32, true>;
    return &judging_loop::judge_vector<pair, x64, f32, false>;
  }
  template <pairing pair, bool x64>
  judge_function judge_for() const {
    return in_.judged == dtype::float32 ? judge_for<pair, x64, true>() : judge_for<pair, x64, false>();
  }
  template <pairing pair>
  judge_function judge_for() const {
    return in_.x.type == dtype::float64 ? judge_for<pair, true>() : judge_for<pair, false>();
  }
  judge_function vector_judge() const {
    return in_.spec.pair == pairing::adjacent ? judge_for<pairing::adjacent>() : judge_for<pairing::half_split>();
  }


  const audit_input& in_;
  std::int64_t vacuous_ = 0;  // outputs whose tolerance no stored value could exceed
  const reference::double_tier& tier_;
  int d_, rotary_;
  std::int64_t rows_;
  tolerance_rule rule_;
  double attention_;  // the spec's attention factor A (1 unless scaled)
  std::vector<double> theta_;
  profiles profile_;
  int streams_ = 1;                 // position streams (the spec's stream layout)
  std::vector<bool> spread_rows_;   // rows of the sample's spread (sample.h)
};

}  // namespace

std::int64_t judging_block_rows(std::int64_t rows, std::int64_t row_bytes) {
  const std::int64_t per_mib = std::max<std::int64_t>(1, (std::int64_t{1} << 20) / std::max<std::int64_t>(row_bytes, 1));
  return std::clamp<std::int64_t>((rows + 63) / 64, 1, per_mib);
}

int default_judging_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void judge_every_output(const audit_input& in, const reference::double_tier& tier, reports::audit_report& r,
                        sample_collector& sampled, const std::function<void(std::int64_t, std::int64_t)>& progress) {
  judging_loop(in, tier).run(r, sampled, progress, in.threads > 0 ? in.threads : default_judging_threads());
}

}  // namespace ropecheck::audit
