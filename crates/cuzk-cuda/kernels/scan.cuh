// Exclusive scan of u32 values, the building block of the MSM's counting
// sort and of the compactions of the compiled constraint system.
#pragma once
#include <stdint.h>

// Exclusive scan in blocks of 1024: out[i] = sum in[block start .. i),
// block_sums[b] = the block's total. The host scans block_sums recursively
// and adds them back with scan_add.
extern "C" __global__ void __launch_bounds__(1024) scan_block(const uint32_t* in, uint32_t* out,
                                                              uint32_t n, uint32_t* block_sums) {
    __shared__ uint32_t warp_sums[32];
    uint32_t i = blockIdx.x * 1024 + threadIdx.x;
    uint32_t x = i < n ? in[i] : 0;
    uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint32_t v = x;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t y = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += y;
    }
    if (lane == 31) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        uint32_t s = warp_sums[lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            uint32_t y = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += y;
        }
        warp_sums[lane] = s;  // inclusive over warps
    }
    __syncthreads();
    uint32_t incl = v + (warp ? warp_sums[warp - 1] : 0);
    if (i < n) out[i] = incl - x;
    if (threadIdx.x == 1023) block_sums[blockIdx.x] = incl;
}

// out[i] += offsets[i / 1024]; thread 0 also copies the grand total to out[n].
extern "C" __global__ void scan_add(uint32_t* out, uint32_t n, const uint32_t* offsets,
                                    const uint32_t* total) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += offsets[i >> 10];
    if (i == 0) out[n] = total[0];
}
