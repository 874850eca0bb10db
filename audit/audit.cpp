// The auditor (audit.h): the double tier for every position, the judging loop over every output
// (judging_loop.h), then the diagnosis on a sample (diagnosis.h).
#include "audit/audit.h"

#include "audit/diagnosis.h"
#include "audit/judgeable.h"
#include "audit/judging_loop.h"

namespace ropecheck::audit {

reports::audit_report run_audit(const audit_input& input,
                                const std::function<void(std::int64_t, std::int64_t)>& progress) {
  reports::audit_report r;
  r.dtype = std::string(to_string(input.judged));
  r.output_scale = input.output_scale;
  r.spec = input.spec_file;
  r.x = input.x_file;
  r.positions = input.positions_file;
  r.y = input.y_file;
  const reference::double_tier tier(input.spec, input.stream_positions.empty() ? input.positions
                                                                              : input.stream_positions);
  check_judgeable(input, tier.inverse_frequencies());
  sample_collector sampled(static_cast<std::int64_t>(input.positions.size()), input.heads);
  judge_every_output(input, tier, r, sampled, progress);
  diagnose(input, tier, sampled.result, r);
  return r;
}

}  // namespace ropecheck::audit
