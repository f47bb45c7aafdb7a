// The seed documents' kernels as one family (`seeds`): the parameter `kernel` names one, the
// parameter `block_size` its block. See harris.cuh (seed 000/001/002) and course.cuh
// (seeds 003/004); docs/kernels.md maps every preset to its seed's table row.
//
// Entry points: rt::seeds::<kernel><T, Op, BlockSize>(in, out, n) under the `multipass`
// protocol (each pass writes one partial per block to out; repeated on the partials).
#pragma once

#include "common/rt_warp.cuh"
#include "seeds/harris.cuh"
#include "seeds/course.cuh"
