// The cascade family (family.json says why it exists): the tunable family's kernels,
// instantiated for `reducetune experiment cascading` with the strategies of tunable's `good`
// preset fixed. Everything the family adds is declared in family.json (elements per thread up
// to 16384, the host protocol); the one thing spelled here is which kernel-side finish each
// value of its `finish` parameter compiles: the host protocol combines on the CPU the partials
// that the two-pass kernel writes (partials[blockIdx.x]), so both compile the same pass.
#pragma once

#include "tunable/tunable.cuh"

namespace rt {
namespace cascade {

inline constexpr finish finish_two_pass = finish::two_pass;
inline constexpr finish finish_host = finish::two_pass;

} // namespace cascade
} // namespace rt
