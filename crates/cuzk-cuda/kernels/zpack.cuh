// The witness z sent up "packed by 0/1" (src/zpack.rs owns the layout and
// a Rust model of this kernel; cuzk-gpu's copy threads write it): most of a
// Filecoin witness is 0 or 1, so a piece of n Montgomery scalars goes up as
//   header: per group of 32 elements three u32 words, (nonzero mask, big
//           mask, offset), bit i of a mask for element 32g + i; "big" = not
//           0 and not the Montgomery one; offset = big elements of the piece
//           before the group, so no scan is needed here;
//   data:   from byte round_up(12 * groups, 32), the big elements' 32 bytes
//           in order.
// expand_z writes the piece's n elements into z: 0, R mod r, or the next
// big value. One thread per 64-bit limb: a warp writes 256 contiguous bytes
// of z (8 elements, all of one group, so its lanes read the same three
// header words, a broadcast).
#pragma once
#include "field.cuh"

#define ZPACK_GROUP 32
#define ZPACK_HEADER_WORDS 3
#define ZPACK_DATA_ALIGN 32

extern "C" __global__ void __launch_bounds__(256)
    expand_z(const uint32_t* __restrict__ packed, uint32_t n, uint64_t* __restrict__ z) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 4ull * n) return;
    uint32_t e = (uint32_t)(t >> 2), limb = (uint32_t)(t & 3);
    uint32_t g = e / ZPACK_GROUP, bit = 1u << (e % ZPACK_GROUP);
    size_t groups = ((size_t)n + ZPACK_GROUP - 1) / ZPACK_GROUP;
    const uint32_t* h = packed + (size_t)ZPACK_HEADER_WORDS * g;
    uint32_t nonzero = __ldg(h), big = __ldg(h + 1);
    uint64_t v;
    if (!(nonzero & bit)) {
        v = 0;
    } else if (!(big & bit)) {
        v = (uint64_t)FrParams::one(2 * limb) | ((uint64_t)FrParams::one(2 * limb + 1) << 32);
    } else {
        size_t header = (size_t)ZPACK_HEADER_WORDS * 4 * groups;
        size_t data = (header + ZPACK_DATA_ALIGN - 1) / ZPACK_DATA_ALIGN * ZPACK_DATA_ALIGN;
        const uint64_t* values = (const uint64_t*)((const char*)packed + data);
        uint32_t idx = __ldg(h + 2) + __popc(big & (bit - 1));
        v = __ldg(values + 4 * (size_t)idx + limb);
    }
    z[t] = v;
}
