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
// Passes 2 and 3 are staged (the default, host::MsmSortPlan's stages): a
// stage of entries is ordered by its destination range in shared memory
// and written as runs. Unstaged, each entry was stored where it goes, and
// the scattered stores cost twice their bytes in DRAM traffic: the sort
// took 83.7 ms at G1 2^26 on an H100, staged 42.3, the atomic sort 47.3
// (2026-12-06, call 71).
// Large MSMs take passes 2-3 a window at a time, so that `tmp` (8 bytes an
// entry) adds one window's worth to the keys (host::msm_sort_plan). The
// host passes the keys as `sorted` too: a group's pass 3 writes the entries
// of windows below its w1, fewer than w1 * n, after its pass 2 read the
// keys of its windows, so it overwrites only keys already read.
// Recomputing the digits in each pass instead of keeping keys (tried
// first, 2026-12-04 call 29) made the sort slower than the atomic one: 22
// ms at 2^24 against 12.5. Zero digits are dropped. Shared memory is
// dynamic (sized by the host) so that the CPU emulator (emu/cuda_emu.h)
// runs these kernels as they are.
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

// Entries a thread of the staged passes holds in registers between
// counting them and putting them in shared memory: a stage is at most
// MSM_SORT_STAGE_PER_THREAD * blockDim entries (host::msm_sort_plan); a
// larger stage is taken in steps of that. 16 with 96 KiB a block
// (host::MsmSortTuning::DEFAULT) against 8 with 48 KiB: G1 2^26 343.94
// against 352.08 ms, 2^24 91.49 against 93.29 (bench/gpu-kernels.md run
// 63, H100; msm_sort_buckets 64 registers and msm_sort_place 77 against
// 40 and 53, no spills). A build may set another
// (CUZK_NVCC_DEFINES=MSM_SORT_STAGE_PER_THREAD=8) for the sort sweep; the
// host's default plan assumes 16.
#ifndef MSM_SORT_STAGE_PER_THREAD
#define MSM_SORT_STAGE_PER_THREAD 16
#endif

// In place: cnt[j] <- sum cnt[0 .. j) for j < len, by every thread of the
// block (a multiple of 32 threads, at most 1024), with 32 words of scratch
// in part[]; ends with a barrier. Each thread sums its run of cnt, the
// warps scan their threads' sums with shuffles, warp 0 scans the warps'
// totals: three barriers (a Hillis-Steele scan over the block's threads
// took 2 log2(blockDim) + 2, 20 at 512 threads, once a stage in both
// staged passes; bench/gpu-kernels.md run 44, H100: the sort phase at G1
// 2^24 8.93 -> 8.37 ms, the MSM 102.09 -> 101.51).
DEV void block_exclusive_scan(uint32_t* cnt, uint32_t len, uint32_t* part) {
    const uint32_t t = threadIdx.x, bd = blockDim.x;
    const uint32_t lane = t % 32, warp = t / 32, warps = (bd + 31) / 32;
    const uint32_t per = (len + bd - 1) / bd;
    const uint32_t lo = min(t * per, len), hi = min(lo + per, len);
    uint32_t own = 0;
    for (uint32_t j = lo; j < hi; j++) own += cnt[j];
    uint32_t inc = own;
    for (uint32_t o = 1; o < 32; o <<= 1) {
        const uint32_t up = __shfl_up_sync(0xffffffffu, inc, o);
        if (lane >= o) inc += up;
    }
    if (lane == 31) part[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        uint32_t v = lane < warps ? part[lane] : 0;
        const uint32_t total = v;
        for (uint32_t o = 1; o < 32; o <<= 1) {
            const uint32_t up = __shfl_up_sync(0xffffffffu, v, o);
            if (lane >= o) v += up;
        }
        if (lane < warps) part[lane] = v - total;  // the warps before
    }
    __syncthreads();
    uint32_t run = part[warp] + inc - own;
    for (uint32_t j = lo; j < hi; j++) {
        uint32_t v = cnt[j];
        cnt[j] = run;
        run += v;
    }
    __syncthreads();
}

// One stage of a staged pass: the block's `held` entries (each thread's
// v[k], k < MSM_SORT_STAGE_PER_THREAD, where has[k]), each with a key
// `key_of(v)` < len, are counted by key in shared memory, ordered by key
// in `st` (within a key in no set order), and each written by `out(x, r)`
// where r is its rank among the stage's entries of its key, with the
// entries of one key handed to consecutive threads so that their global
// writes fall together. Shared: rc, ro (len words each) and part
// (blockDim). On return `rc[j]` holds the stage's count of key j added to
// `ro[j]` (its exclusive offset in the stage); ends with a barrier.
template <class V, class Key, class Out>
DEV void stage_by_key(V (&v)[MSM_SORT_STAGE_PER_THREAD], const bool (&has)[MSM_SORT_STAGE_PER_THREAD],
                      V* st, uint32_t len, uint32_t* rc, uint32_t* ro, uint32_t* part, Key key_of,
                      Out out) {
    for (uint32_t j = threadIdx.x; j < len; j += blockDim.x) rc[j] = 0;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < MSM_SORT_STAGE_PER_THREAD; k++)
        if (has[k]) atomicAdd(&rc[key_of(v[k])], 1u);
    __syncthreads();
    for (uint32_t j = threadIdx.x; j < len; j += blockDim.x) ro[j] = rc[j];
    __syncthreads();
    block_exclusive_scan(ro, len, part);
    for (uint32_t j = threadIdx.x; j < len; j += blockDim.x) rc[j] = ro[j];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < MSM_SORT_STAGE_PER_THREAD; k++)
        if (has[k]) st[atomicAdd(&rc[key_of(v[k])], 1u)] = v[k];
    __syncthreads();
    // rc[len - 1] is now the stage's entry count.
    const uint32_t total = len ? rc[len - 1] : 0;
    for (uint32_t e = threadIdx.x; e < total; e += blockDim.x) {
        const V x = st[e];
        const uint32_t j = key_of(x);
        out(x, e - ro[j]);
    }
    __syncthreads();
}

// Pass 2. `stage` 0: each entry straight to its place (a shared atomic for
// its rank, then one 8-byte store: the form measured in 2026-12-04's call
// 32, 6.9 ms at 2^24 with 5.8 GB of DRAM traffic for ~2.6 GB of entries,
// its scattered stores written partly and read back). `stage` > 0: the
// tile is taken `stage` scalars at a time per window; a stage's entries
// are ordered by part in shared memory first (stage_by_key) and written
// as runs, each part's run right after the previous stage's, so that a
// block's unfinished 32-byte sectors are one per part (16 KB at 512
// parts), which the L2 keeps until the next stage completes them.
// Shared memory: stage 0, (w1 - w0) * parts words; else `stage` uint2,
// then 3 * parts + blockDim words (host::MsmSortPlan::place_smem). No
// register cap: bounds for 3 blocks an SM spilled 20 bytes and measured
// the same (run 44: G1 2^24 102.10 ms against 101.51).
extern "C" __global__ void __launch_bounds__(MSM_SORT_BLOCK)
    msm_sort_place(const uint32_t* keys, const uint32_t* ids, uint32_t n, uint32_t w0,
                   uint32_t w1, uint32_t lg_low, uint32_t parts, uint32_t tiles,
                   const uint32_t* part_off, uint2* tmp, uint32_t stage) {
    const uint32_t tile = blockIdx.x;
    const uint32_t base = part_off[(size_t)w0 * parts * tiles];
    const uint32_t low_mask = (1u << lg_low) - 1;
    if (stage == 0) {
        uint32_t* cur = sort_shared_words();
        const uint32_t slots = (w1 - w0) * parts;
        for (uint32_t p = threadIdx.x; p < slots; p += blockDim.x)
            cur[p] = part_off[((size_t)w0 * parts + p) * tiles + tile] - base;
        __syncthreads();
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
        return;
    }
    uint2* st = reinterpret_cast<uint2*>(sort_shared_words());
    uint32_t* cur = reinterpret_cast<uint32_t*>(st + stage);
    uint32_t* rc = cur + parts;
    uint32_t* ro = rc + parts;
    uint32_t* part = ro + parts;
    // A stage larger than the block's threads hold is taken in steps they do.
    const uint32_t step = min(stage, MSM_SORT_STAGE_PER_THREAD * blockDim.x);
    const uint32_t t0 = tile * MSM_SORT_TILE, t1 = min(n, t0 + MSM_SORT_TILE);
    for (uint32_t w = w0; w < w1; w++) {
        for (uint32_t p = threadIdx.x; p < parts; p += blockDim.x)
            cur[p] = part_off[((size_t)w * parts + p) * tiles + tile] - base;
        // (stage_by_key's first barrier orders these before their use)
        for (uint32_t s0 = t0; s0 < t1; s0 += step) {
            const uint32_t s1 = min(t1, s0 + step);
            uint2 v[MSM_SORT_STAGE_PER_THREAD];
            bool has[MSM_SORT_STAGE_PER_THREAD];
#pragma unroll
            for (int k = 0; k < MSM_SORT_STAGE_PER_THREAD; k++) {
                const uint32_t i = s0 + threadIdx.x + k * blockDim.x;
                const uint32_t key = i < s1 ? keys[(size_t)w * n + i] : 0;
                has[k] = (key & 0x7fffffffu) != 0;
                v[k].x = i;
                v[k].y = key;
            }
#pragma unroll
            for (int k = 0; k < MSM_SORT_STAGE_PER_THREAD; k++) {
                if (has[k]) {
                    const uint32_t i = v[k].x, key = v[k].y;
                    v[k].x = (ids ? ids[i] : i) | (key & 0x80000000u);
                    v[k].y = (key & 0x7fffffffu) - 1;  // the bucket
                }
            }
            stage_by_key(v, has, st, parts, rc, ro, part,
                         [&](const uint2& e) { return e.y >> lg_low; },
                         [&](const uint2& e, uint32_t r) {
                             uint2 o;
                             o.x = e.x;
                             o.y = e.y & low_mask;
                             tmp[cur[e.y >> lg_low] + r] = o;
                         });
            for (uint32_t p = threadIdx.x; p < parts; p += blockDim.x) cur[p] += rc[p] - ro[p];
            __syncthreads();
        }
    }
}

// Pass 3. Block k handles (window, part) wp = wp0 + k of the group whose
// entries start at `tmp`; its buckets are s = wp * 2^lg_low + j (bucket b
// of window w is w * B + b, B = parts * 2^lg_low). Writes count[s] and
// off[s], and the block of the last (window, part) of all (`total_parts`
// of them) also off[total_parts * 2^lg_low], the number of entries.
// `stage` 0: after the count, each entry straight to its place (call 32:
// 9.2 ms at 2^24, 9.1 GB of DRAM traffic for ~4.4 GB read and written);
// `stage` > 0: `stage` entries at a time ordered by bucket in shared memory
// first and written as runs, each bucket's run after the previous stage's.
// Shared memory: stage 0, 2^lg_low + blockDim words; else `stage` uint2,
// then 3 * 2^lg_low + blockDim words (host::MsmSortPlan::buckets_smem).
extern "C" __global__ void __launch_bounds__(MSM_SORT_BLOCK)
    msm_sort_buckets(const uint2* tmp, const uint32_t* part_off, uint32_t tiles, uint32_t lg_low,
                     uint32_t wp0, uint32_t total_parts, uint32_t* count, uint32_t* off,
                     uint32_t* sorted, uint32_t stage) {
    const uint32_t low = 1u << lg_low;
    uint2* st = reinterpret_cast<uint2*>(sort_shared_words());
    uint32_t* cnt = reinterpret_cast<uint32_t*>(st + stage);
    uint32_t* rc = cnt + low;
    uint32_t* ro = stage ? rc + low : rc;
    uint32_t* part = stage ? ro + low : cnt + low;
    const uint32_t wp = wp0 + blockIdx.x;
    const uint32_t base = part_off[(size_t)wp0 * tiles];
    const uint32_t start = part_off[(size_t)wp * tiles];
    const uint32_t end = part_off[(size_t)(wp + 1) * tiles];
    for (uint32_t j = threadIdx.x; j < low; j += blockDim.x) cnt[j] = 0;
    __syncthreads();
    // The count, four loads issued before their atomics.
    {
        uint32_t e = start + threadIdx.x;
        const uint32_t step = blockDim.x;
        for (; e + 3 * step < end; e += 4 * step) {
            uint32_t y[4];
#pragma unroll
            for (int k = 0; k < 4; k++) y[k] = tmp[e + k * step - base].y;
#pragma unroll
            for (int k = 0; k < 4; k++) atomicAdd(&cnt[y[k]], 1u);
        }
        for (; e < end; e += step) atomicAdd(&cnt[tmp[e - base].y], 1u);
    }
    __syncthreads();
    const size_t s0 = (size_t)wp << lg_low;
    for (uint32_t j = threadIdx.x; j < low; j += blockDim.x) count[s0 + j] = cnt[j];
    block_exclusive_scan(cnt, low, part);
    for (uint32_t j = threadIdx.x; j < low; j += blockDim.x) off[s0 + j] = start + cnt[j];
    if (wp + 1 == total_parts && threadIdx.x == 0) off[s0 + low] = end;
    __syncthreads();  // every offset read before the cursors move
    if (stage == 0) {
        for (uint32_t e = start + threadIdx.x; e < end; e += blockDim.x) {
            uint2 v = tmp[e - base];
            sorted[start + atomicAdd(&cnt[v.y], 1u)] = v.x;
        }
        return;
    }
    const uint32_t step = min(stage, MSM_SORT_STAGE_PER_THREAD * blockDim.x);
    for (uint32_t r0 = start; r0 < end; r0 += step) {
        const uint32_t r1 = min(end, r0 + step);
        uint2 v[MSM_SORT_STAGE_PER_THREAD];
        bool has[MSM_SORT_STAGE_PER_THREAD];
#pragma unroll
        for (int k = 0; k < MSM_SORT_STAGE_PER_THREAD; k++) {
            const uint32_t e = r0 + threadIdx.x + k * blockDim.x;
            has[k] = e < r1;
            if (has[k]) v[k] = tmp[e - base];
        }
        stage_by_key(v, has, st, low, rc, ro, part, [&](const uint2& x) { return x.y; },
                     [&](const uint2& x, uint32_t r) { sorted[start + cnt[x.y] + r] = x.x; });
        for (uint32_t j = threadIdx.x; j < low; j += blockDim.x) cnt[j] += rc[j] - ro[j];
        __syncthreads();
    }
}
