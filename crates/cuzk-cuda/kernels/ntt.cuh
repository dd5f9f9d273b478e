// Radix-2 NTT over Fr, natural order in and out.
//
// Forward: bit-reversal permutation (optionally fused with the coset scaling
// x_i *= g^i), then decimation-in-time stages. Consecutive stages are fused
// into passes that run in shared memory: a pass over stages s0+1 .. s0+k
// touches, for each fixed choice of the index bits outside [s0, s0+k), the
// 2^k elements that differ in those bits. A block takes 2^lgL such groups with
// consecutive low bits so that its global loads cover 2^lgL * 32 contiguous
// bytes. Twiddles come from one table tw[i] = w^i, i < n/2, built on the GPU.
// Inverse: the same with w^-1, then one scaling pass (n^-1, and g^-i for the
// inverse coset transform).
#pragma once
#include "field.cuh"

// base^i for i < 2^(2*lo_bits), from lo[j] = c*base^j and hi[j] = base^(j*2^lo_bits).
DEV Fr power_from_tables(const Fr* lo, const Fr* hi, uint32_t lo_bits, uint32_t i) {
    return lo[i & ((1u << lo_bits) - 1)] * hi[i >> lo_bits];
}

extern "C" __global__ void ntt_powers(Fr* out, uint32_t count, const Fr* lo, const Fr* hi,
                                      uint32_t lo_bits) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    out[i] = power_from_tables(lo, hi, lo_bits, i);
}

// In-place bit reversal of n = 2^lg elements; when `scale` is set each
// element x_i is first multiplied by c*base^i (tables as above).
extern "C" __global__ void ntt_bitrev(Fr* d, uint32_t lg, const Fr* lo, const Fr* hi,
                                      uint32_t lo_bits, uint32_t scale) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (lg == 0 || i >= (1u << lg)) {
        if (lg == 0 && i == 0 && scale) d[0] = d[0] * power_from_tables(lo, hi, lo_bits, 0);
        return;
    }
    uint32_t r = __brev(i) >> (32 - lg);
    if (i < r) {
        Fr a = d[i], b = d[r];
        if (scale) {
            a = a * power_from_tables(lo, hi, lo_bits, i);
            b = b * power_from_tables(lo, hi, lo_bits, r);
        }
        d[i] = b;
        d[r] = a;
    } else if (i == r && scale) {
        d[i] = d[i] * power_from_tables(lo, hi, lo_bits, i);
    }
}

// x_i *= c*base^i.
extern "C" __global__ void ntt_scale(Fr* d, uint32_t n, const Fr* lo, const Fr* hi,
                                     uint32_t lo_bits) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    d[i] = d[i] * power_from_tables(lo, hi, lo_bits, i);
}

// One fused pass of DIT stages s0+1 .. s0+k over n = 2^lg elements
// (bit-reversed input). Dynamic shared memory: 2^(k+lgL) elements; 256
// threads loop over the butterflies of each stage. (Batching a thread's
// twiddle loads, 4 a stage with 256 threads or 2 with 512, ran slower in
// runs 3 and 4: 89.0 and 87.7 ms at 2^27 against 78.7 ms for this loop.)
// Shared memory holds the low and high 16 bytes of each element in two
// arrays, so that a warp reading consecutive elements issues 16-byte loads
// at a 16-byte stride (conflict-free) rather than at a 32-byte stride.
struct SplitShared {
    uint4* lo;
    uint4* hi;
    DEV Fr get(uint32_t e) const {
        uint4 a = lo[e], b = hi[e];
        Fr x;
        x.v[0] = a.x; x.v[1] = a.y; x.v[2] = a.z; x.v[3] = a.w;
        x.v[4] = b.x; x.v[5] = b.y; x.v[6] = b.z; x.v[7] = b.w;
        return x;
    }
    DEV void put(uint32_t e, const Fr& x) const {
        lo[e] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
        hi[e] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
    }
};

extern "C" __global__ void __launch_bounds__(256) ntt_dit_pass(Fr* d, const Fr* tw, uint32_t lg,
                                                               uint32_t s0, uint32_t k,
                                                               uint32_t lgL) {
    extern __shared__ uint4 shm[];
    const uint32_t L = 1u << lgL;
    const uint32_t E = 1u << (k + lgL);
    const uint32_t lo_groups_lg = s0 - lgL;
    const uint32_t b = blockIdx.x;
    const uint32_t lo_base = (b & ((1u << lo_groups_lg) - 1)) << lgL;
    const uint32_t hi = b >> lo_groups_lg;
    const uint64_t base = ((uint64_t)hi << (s0 + k)) | lo_base;
    const SplitShared sh{shm, shm + E};

    for (uint32_t e = threadIdx.x; e < E; e += blockDim.x) {
        uint32_t lo_off = e & (L - 1), mid = e >> lgL;
        sh.put(e, d[base + ((uint64_t)mid << s0) + lo_off]);
    }
    __syncthreads();
    for (uint32_t j = 0; j < k; j++) {
        const uint32_t shift = lg - s0 - j - 1;  // n / (2m), m = 2^(s0+j)
        for (uint32_t bf = threadIdx.x; bf < E / 2; bf += blockDim.x) {
            uint32_t lo_off = bf & (L - 1);
            uint32_t q = bf >> lgL;
            uint32_t jm = q & ((1u << j) - 1);
            uint32_t top = q >> j;
            uint32_t mid0 = (top << (j + 1)) | jm;
            uint32_t e0 = (mid0 << lgL) | lo_off;
            uint32_t e1 = e0 | (1u << (j + lgL));
            uint64_t texp = ((((uint64_t)jm) << s0) | (lo_base + lo_off)) << shift;
            Fr u = sh.get(e0);
            Fr v = sh.get(e1);
            if (texp != 0) v = v * tw[texp];
            sh.put(e0, u + v);
            sh.put(e1, u - v);
        }
        __syncthreads();
    }
    for (uint32_t e = threadIdx.x; e < E; e += blockDim.x) {
        uint32_t lo_off = e & (L - 1), mid = e >> lgL;
        d[base + ((uint64_t)mid << s0) + lo_off] = sh.get(e);
    }
}

// H on the coset: a_i = (a_i * b_i - c_i) * z_inv.
extern "C" __global__ void ntt_h_pointwise(Fr* a, const Fr* b, const Fr* c, uint32_t n,
                                           const Fr* z_inv) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    a[i] = (a[i] * b[i] - c[i]) * z_inv[0];
}
