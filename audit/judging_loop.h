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

// Also keeps the diagnosis sample (sample.h) as it passes the sampled rows.
void judge_every_output(const audit_input& in, const reference::double_tier& tier, reports::audit_report& r,
                        sample_collector& sampled, const std::function<void(std::int64_t, std::int64_t)>& progress);

}  // namespace ropecheck::audit
