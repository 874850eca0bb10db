// diagnosis: the findings of an audit, ordered so that the first is the main cause. The causes
// of the rotation's error — a bug a detector recomputes (detector_catalog.h) or a stage of the
// recipe that produced Y (forensics.h) — come first, by their share of the error, with
// output_rounding after every other cause; then the findings about the data (non_finite,
// passthrough_modified, position_outside_context), which are not shares of the error. A passing
// audit states no cause. Also fills the report's recipe and attribution.
#pragma once

#include "audit/audit.h"
#include "audit/sample.h"
#include "reference/double_tier.h"
#include "reports/audit_report.h"

namespace ropecheck::audit {

// `tier` is the audit's double tier (every position of the dump).
void diagnose(const audit_input& in, const reference::double_tier& tier, const sample& sampled,
              reports::audit_report& r);

}  // namespace ropecheck::audit
