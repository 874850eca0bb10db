// abi_case: one C-ABI call as a self-contained case file — every scalar of the call (θ_j, A and
// the output scale as the exact bytes the kernel read), and the memory it reaches as regions
// of hex bytes with their alignment modulo 64 (call_image.h) — so that a call that crashed or
// hung a kernel's worker can be replayed exactly, in process under a debugger
// (`ropecheck replay CASE.json --kernel-lib L --isolate never`) or in a worker.
#pragma once

#include <string>

#include "abi/call_image.h"
#include "ropecheck/kernel_abi.h"

namespace ropecheck::abi {

// "float32 half forward, 3 tokens, Q 2 heads, K 1 head, head_dim 64, rotary_dim 24, positions 0 … 17"
std::string describe_call(const ropecheck_rope_call& call);

// The case file's JSON text (docs/report-schema.md, "Kernel case files").
// `pairs` entries of inverse_frequencies (and of pair_streams, when not null).
std::string case_json(const ropecheck_rope_call& call, const call_image& image, const std::string& kernel,
                      std::size_t pairs);

// A call rebuilt from a case file, with its memory.
class replayed_call {
 public:
  // Throws io_error naming `file` and the field for anything that is not a case file, or a
  // call that reaches memory its regions do not hold.
  replayed_call(const std::string& text, const std::string& file);
  replayed_call(const replayed_call&) = delete;  // the call points into this object
  replayed_call& operator=(const replayed_call&) = delete;
  const std::string& kernel() const { return kernel_; }
  std::uint32_t abi_version() const { return call_.abi_version; }
  // The call, its pointers into this object's memory (message buffer included).
  ropecheck_rope_call& call() { return call_; }
  std::size_t pairs() const { return pairs_; }

 private:
  std::string kernel_;
  void parse(const std::string& text, const std::string& file);
  ropecheck_rope_call call_{};
  std::size_t pairs_ = 0;
  std::string memory_;  // the layout (layout_offsets), 64 bytes of slack for alignment
  char message_[512] = {};
};

}  // namespace ropecheck::abi
