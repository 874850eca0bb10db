// gate_merge: `ropecheck report merge` — the N shard reports of one sharded gate run
// (`gate --shard I/N`) joined into the report the unsharded run writes.
//
// Shard I holds block I of N of every property's case stream (properties/property_runner.h
// shard_block), and shard 0 the fixtures and mutants. So, property by property, in shard order:
// cases and failed cases add up; worst/bound is the maximum, its location the first shard's to
// reach it (the unsharded run keeps the first of equal worsts too); the plot points are the
// shards' points one after the other, cut at max_points_per_property; the message, shrunk
// counterexample and replay line are the first failing shard's (the stream's first failure,
// which the unsharded run shrinks), and every later shard's failure is appended to the
// counterexample with its own replay line. For a property that holds, the merged report equals
// the unsharded one field for field; for one that fails, the unsharded run stops shrinking at
// the first failure while later shards shrink their own, so only the appended failures differ.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "reports/gate_report.h"

namespace ropecheck::reports {

// `shards`: (file name, report) pairs in any order. Throws io_error naming the file and the
// field when a report is not a shard (a whole run's: nothing to merge), when the reports are not
// the shards of one run (tool version, profile, seed, contract, maximum position, selected
// properties, kernels or their properties differ) and when a sum of cases passes 2^63 − 1;
// bad_input naming the shard when one is given twice or missing ("shard 2/4 is missing");
// saved_report_error (saved_report.h) when a shard, or the merged report, breaks an invariant.
gate_report merge_gate_reports(const std::vector<std::pair<std::string, gate_report>>& shards);

}  // namespace ropecheck::reports
