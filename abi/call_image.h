// call_image: the memory one C-ABI call reaches — Q's and K's inputs and outputs (from their
// strides), the positions, θ_j and the pair-to-stream map — as regions that keep the call's
// aliasing (in place, Q and K in one buffer) and each buffer's alignment modulo 64 bytes, so
// the same call can be laid out again elsewhere: in the worker's shared memory
// (kernel_worker.h) or, from a case file, for a replay in process (abi_case.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ropecheck/kernel_abi.h"

namespace ropecheck::abi {

// Bytes a call may reach in all; a call whose strides reach further is laid out without its
// tensors (their pointers then lead to a small zeroed area): a kernel must refuse such a call
// before reading it.
inline constexpr std::uint64_t max_image_bytes = std::uint64_t{1} << 36;

struct call_image {
  struct region {
    const unsigned char* start = nullptr;  // in the caller's memory
    std::size_t bytes = 0;
    bool holds_output = false;  // written back after the call
  };
  // Where a pointer of the call leads: null, the zeroed area (a pointer the image cannot place:
  // an absent tensor's, or one past max_image_bytes), or an offset into a region.
  struct place {
    enum kind_t : std::int32_t { null, zeroed, in_region } kind = null;
    std::int32_t region = -1;
    std::uint64_t offset = 0;
  };
  std::vector<region> regions;
  place q_input, q_output, k_input, k_output, positions, inverse_frequencies, pair_streams;
};

// `pairs` entries of inverse_frequencies (and of pair_streams, when not null).
call_image image_of(const ropecheck_rope_call& call, std::size_t pairs);

// Bytes of zeroed area at the start of a layout, and where each region goes after it: offsets
// that keep every region's start address modulo 64.
inline constexpr std::uint64_t zeroed_bytes = 64;
std::vector<std::uint64_t> layout_offsets(const call_image& image, std::uint64_t* total_bytes);

// The call with its pointers into a layout at `base` (offsets from layout_offsets), other
// fields as given; `message` and `message_capacity` as given too.
ropecheck_rope_call call_in_layout(const ropecheck_rope_call& call, const call_image& image,
                                   std::span<const std::uint64_t> offsets, unsigned char* base);

}  // namespace ropecheck::abi
