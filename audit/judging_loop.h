// judging_loop: every output of X, Y against the double tier in one front-to-back pass — one
// vectorized judge_pairs call per head vector, pass-through dims bit for bit, the worst output,
// and the profiles folded per row. Fills the report's measurements and verdict; no diagnosis.
#pragma once

#include <cstdint>
#include <functional>

#include "audit/audit.h"
#include "audit/sample.h"
#include "reference/double_tier.h"
#include "reports/audit_report.h"

namespace ropecheck::audit {

// Also keeps the diagnosis sample (sample.h) as it passes the sampled rows. Rows are judged on
// in.threads threads (0: every core, default_judging_threads()), in blocks of
// judging_block_rows: the report and the sample are bit for bit the same for any thread count.
void judge_every_output(const audit_input& in, const reference::double_tier& tier, reports::audit_report& r,
                        sample_collector& sampled, const std::function<void(std::int64_t, std::int64_t)>& progress);

// Rows per block: about 64 blocks, each at most ~1 MiB of X rows (so that the workers share
// even a short dump, and the pages of a long one are handed back as the loop passes); a
// function of the dump only, never of the thread count — ULP sums are associated per block.
std::int64_t judging_block_rows(std::int64_t rows, std::int64_t row_bytes);
int default_judging_threads();  // std::thread::hardware_concurrency(), at least 1

}  // namespace ropecheck::audit
