// The MSM's signed digits, and its sort of (window, bucket) entries in two
// passes through shared memory. The sort replaces one global atomic per
// entry in each of two passes (msm_histogram, msm_scatter in msm.cuh),
// which ran at ~3.6e10 atomics/s on the H200: 56 ms of a 2^26 G1 MSM (13
// windows, 8.7e8 entries) and 12.5 of a 2^24 one (2026-12-04, call 28), and
// more where a window's digits fall in a few buckets (the top window of c =
// 15 or 17 holds only the carry: 21.8 ms against 12.9 at c = 16, 2^24).
//
// A bucket index b (digit - 1, c - 1 bits) is split into its part (b >>
// lg_low) and its low lg_low bits. The parts of a window are consecutive
// bucket ranges, so each (window, part) fills one contiguous range of the
// final list:
// 1. msm_sort_digits: each tile of MSM_SORT_TILE scalars writes its
//    digits as keys (keys[w * n + i] = |d| | sign << 31, 0 for a zero
//    digit, as msm_digits does) and counts its entries per (window, part)
//    in shared memory, into tile_hist[(w * parts + p) * tiles + tile]. The
//    host's exclusive scan of it, part_off, is each (window, part, tile)'s
//    first place; part_off[(w * parts + p) * tiles] is where the range of
//    (w, p) starts.
// 2. msm_sort_place, for windows [w0, w1): the tile's keys again, each
//    entry to the next place of its (window, part) in `tmp` (relative to
//    the group's first place), as (id | sign, low bits), in no set order.
// 3. msm_sort_buckets: a block per (window, part) of the group counts its
//    entries by low bits in shared memory, scans the counts, writes each
//    bucket's count and offset (what the chunked sums read) and puts each
//    entry in its bucket's place of `sorted`.
// Large MSMs take passes 2-3 a window at a time, so that `tmp` (8 bytes an
// entry) adds one window's worth to the keys and sorted list the atomic
// sort held (host::msm_sort_plan). Recomputing the digits in each pass
// instead of keeping keys (tried first, 2026-12-04 call 29) made the sort
// slower than the atomic one: 22 ms at 2^24 against 12.5. Zero digits are
// dropped. Shared memory is dynamic (sized by the host) so that the CPU
// emulator (emu/cuda_emu.h) runs these kernels as they are.
#pragma once
#include "field.cuh"

// Scalar -> canonical integer < r.
DEV Fr load_scalar(const Fr* scalars, uint32_t i, uint32_t mont) {
    Fr s = scalars[i];
    if (mont) return s.from_mont();
    // Canonical input may be any 256-bit integer; 2^256 < 3r, so two
    // conditional subtractions reduce it.
    s.reduce_once();
    s.reduce_once();
    return s;
}

// Calls f(w, |d|, sign) for the W signed c-bit digits d_w in
// [-2^(c-1), 2^(c-1)] of a canonical scalar, w = 0 .. W-1, with sum d_w
// 2^(c w) = s (bits past 255 read as zero; |d| may be 0 with the sign set
// when a window's bits plus the carry make 2^c). The limbs go through a
// 64-bit buffer in a loop the compiler unrolls, so the scalar stays in
// registers: indexing its limbs by window (the form before 2026-12-04)
// put it in local memory and cost ~30 instructions a window.
template <class Fn>
DEV void for_each_digit(const Fr& s, uint32_t c, uint32_t W, Fn f) {
    const uint32_t mask = (1u << c) - 1, half = 1u << (c - 1);
    uint64_t acc = 0;
    uint32_t nb = 0, w = 0, carry = 0;
    auto emit = [&](uint32_t bits) {
        uint32_t d = bits + carry;
        uint32_t neg = d > half;
        carry = neg;
        f(w, neg ? (1u << c) - d : d, neg);
        w++;
    };
#pragma unroll
    for (int k = 0; k < 8; k++) {
        acc |= (uint64_t)s.v[k] << nb;
        nb += 32;
        while (nb >= c) {
            emit((uint32_t)acc & mask);
            acc >>= c;
            nb -= c;
        }
    }
    while (w < W) {
        emit((uint32_t)acc & mask);
        acc >>= c;
    }
}

#define MSM_SORT_BLOCK 512
#define MSM_SORT_TILE 16384

// The block's dynamic shared memory as words. (Declared here, in a C++
// function, as ntt.cuh does: declared inside the extern "C" kernels it
// would take C linkage and clash with ntt.cuh's.)
DEV uint32_t* sort_shared_words() {
    extern __shared__ uint4 shm[];
    return reinterpret_cast<uint32_t*>(shm);
}

extern "C" __global__ void __launch_bounds__(MSM_SORT_BLOCK)
    msm_sort_digits(const Fr* scalars, uint32_t n, uint32_t mont, uint32_t c, uint32_t W,
                    uint32_t lg_low, uint32_t parts, uint32_t tiles, uint32_t* keys,
                    uint32_t* tile_hist) {
    uint32_t* cnt = sort_shared_words();
    const uint32_t slots = W * parts;
    for (uint32_t p = threadIdx.x; p < slots; p += blockDim.x) cnt[p] = 0;
    __syncthreads();
    const uint32_t tile = blockIdx.x;
    for (uint32_t r = 0; r < MSM_SORT_TILE; r += blockDim.x) {
        uint32_t i = tile * MSM_SORT_TILE + r + threadIdx.x;
        if (i >= n) break;
        for_each_digit(load_scalar(scalars, i, mont), c, W,
                       [&](uint32_t w, uint32_t d, uint32_t neg) {
                           keys[(size_t)w * n + i] = d ? (d | (neg << 31)) : 0;
                           if (d) atomicAdd(&cnt[w * parts + ((d - 1) >> lg_low)], 1u);
                       });
    }
    __syncthreads();
    for (uint32_t p = threadIdx.x; p < slots; p += blockDim.x)
        tile_hist[(size_t)p * tiles + tile] = cnt[p];
}

extern "C" __global__ void __launch_bounds__(MSM_SORT_BLOCK)
    msm_sort_place(const uint32_t* keys, const uint32_t* ids, uint32_t n, uint32_t w0,
                   uint32_t w1, uint32_t lg_low, uint32_t parts, uint32_t tiles,
                   const uint32_t* part_off, uint2* tmp) {
    uint32_t* cur = sort_shared_words();
    const uint32_t tile = blockIdx.x;
    const uint32_t base = part_off[(size_t)w0 * parts * tiles];
    const uint32_t slots = (w1 - w0) * parts;
    for (uint32_t p = threadIdx.x; p < slots; p += blockDim.x)
        cur[p] = part_off[((size_t)w0 * parts + p) * tiles + tile] - base;
    __syncthreads();
    const uint32_t low_mask = (1u << lg_low) - 1;
    for (uint32_t r = 0; r < MSM_SORT_TILE; r += blockDim.x) {
        uint32_t i = tile * MSM_SORT_TILE + r + threadIdx.x;
        if (i >= n) break;
        const uint32_t id = ids ? ids[i] : i;
        for (uint32_t w = w0; w < w1; w++) {
            uint32_t key = keys[(size_t)w * n + i];
            uint32_t d = key & 0x7fffffffu;
            if (d) {
                uint32_t b = d - 1;
                uint32_t pos = atomicAdd(&cur[(w - w0) * parts + (b >> lg_low)], 1u);
                uint2 e;
                e.x = id | (key & 0x80000000u);
                e.y = b & low_mask;
                tmp[pos] = e;
            }
        }
    }
}

// In place: cnt[j] <- sum cnt[0 .. j) for j < len, by every thread of the
// block, with blockDim.x words of scratch in part[]; ends with a barrier.
DEV void block_exclusive_scan(uint32_t* cnt, uint32_t len, uint32_t* part) {
    const uint32_t t = threadIdx.x, bd = blockDim.x;
    const uint32_t per = (len + bd - 1) / bd;
    const uint32_t lo = min(t * per, len), hi = min(lo + per, len);
    uint32_t own = 0;
    for (uint32_t j = lo; j < hi; j++) own += cnt[j];
    part[t] = own;
    __syncthreads();
    for (uint32_t o = 1; o < bd; o <<= 1) {
        uint32_t add = t >= o ? part[t - o] : 0;
        __syncthreads();
        part[t] += add;
        __syncthreads();
    }
    uint32_t run = part[t] - own;
    for (uint32_t j = lo; j < hi; j++) {
        uint32_t v = cnt[j];
        cnt[j] = run;
        run += v;
    }
    __syncthreads();
}

// Block k handles (window, part) wp = wp0 + k of the group whose entries
// start at `tmp`; its buckets are s = wp * 2^lg_low + j (bucket b of window
// w is w * B + b, B = parts * 2^lg_low). Writes count[s] and off[s], and
// the block of the last (window, part) of all (`total_parts` of them) also
// off[total_parts * 2^lg_low], the number of entries.
extern "C" __global__ void __launch_bounds__(MSM_SORT_BLOCK)
    msm_sort_buckets(const uint2* tmp, const uint32_t* part_off, uint32_t tiles, uint32_t lg_low,
                     uint32_t wp0, uint32_t total_parts, uint32_t* count, uint32_t* off,
                     uint32_t* sorted) {
    const uint32_t low = 1u << lg_low;
    uint32_t* cnt = sort_shared_words();
    uint32_t* part = cnt + low;
    const uint32_t wp = wp0 + blockIdx.x;
    const uint32_t base = part_off[(size_t)wp0 * tiles];
    const uint32_t start = part_off[(size_t)wp * tiles];
    const uint32_t end = part_off[(size_t)(wp + 1) * tiles];
    for (uint32_t j = threadIdx.x; j < low; j += blockDim.x) cnt[j] = 0;
    __syncthreads();
    for (uint32_t e = start + threadIdx.x; e < end; e += blockDim.x)
        atomicAdd(&cnt[tmp[e - base].y], 1u);
    __syncthreads();
    const size_t s0 = (size_t)wp << lg_low;
    for (uint32_t j = threadIdx.x; j < low; j += blockDim.x) count[s0 + j] = cnt[j];
    block_exclusive_scan(cnt, low, part);
    for (uint32_t j = threadIdx.x; j < low; j += blockDim.x) off[s0 + j] = start + cnt[j];
    if (wp + 1 == total_parts && threadIdx.x == 0) off[s0 + low] = end;
    __syncthreads();  // every offset read before the cursors move
    for (uint32_t e = start + threadIdx.x; e < end; e += blockDim.x) {
        uint2 v = tmp[e - base];
        sorted[start + atomicAdd(&cnt[v.y], 1u)] = v.x;
    }
}
