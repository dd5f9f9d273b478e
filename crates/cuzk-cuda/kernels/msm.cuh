// Multi-scalar multiplication by Pippenger with signed digits.
//
// 1. msm_digits: each scalar (Montgomery or canonical) is cut into W
//    signed c-bit digits in [-2^(c-1), 2^(c-1)]; msm_histogram counts each
//    window's buckets with atomics.
// 2. An exclusive scan of the counts gives each bucket's place; msm_scatter
//    writes point ids (sign in bit 31) there, window by window: a counting
//    sort by bucket, zero digits dropped.
// 3. msm_accumulate_*: the sorted list is cut into chunks of at most T
//    entries that never straddle a bucket; one thread sums one chunk with
//    mixed XYZZ additions. msm_reduce_* repeats the same over the chunk sums
//    until every bucket holds one point. Chunks bound each thread's work
//    whatever the scalar distribution (a bucket holding every point costs
//    log_T(n) passes, not n serial additions).
// 4. msm_bucket_reduce_*: per window, G threads each take B/G consecutive
//    buckets and form sum(d * S_d) by running sums (msm_bucket_pairs_*: each
//    group on two lanes, two items per group), then the partials of a window
//    are summed by the same chunked reduction or, by default, by a tree of
//    warp butterflies (msm_fold_*). By default the reduction is split: each
//    group leaves its weighted and plain sums, msm_group_sums_* weighs the
//    plain sums by group (a second, small level of running sums) and
//    msm_window_join_* joins the two folds of each window. The host combines
//    the W window sums with doublings.
#pragma once
#include "curve.cuh"
#include "msm_sort.cuh"

// Digits of every window, written once: keys[w*n + i] = |d| | sign << 31
// (0 for a zero digit). The per-window passes below then touch one window's
// 2^(c-1) counters at a time, which stay in L2: run 3 measured 120 ms for
// the sort at 2^26 when all windows' counters (100 MB) were hit at once.
extern "C" __global__ void msm_digits(const Fr* scalars, uint32_t n, uint32_t mont, uint32_t c,
                                      uint32_t W, uint32_t* keys) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for_each_digit(load_scalar(scalars, i, mont), c, W, [&](uint32_t w, uint32_t d, uint32_t neg) {
        keys[(size_t)w * n + i] = d ? (d | (neg << 31)) : 0;
    });
}

// Bucket counts of one window.
extern "C" __global__ void msm_histogram(const uint32_t* keys, uint32_t n, uint32_t* hist) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t d = keys[i] & 0x7fffffffu;
    if (d) atomicAdd(&hist[d - 1], 1u);
}

// Counting-sort scatter of one window: `cursor` starts as the window's
// bucket offsets; `ids` (optional) maps a scalar's position to its point.
// Only the entries of buckets [lo, hi) (digits lo + 1 .. hi): the host
// scatters a large window in several such passes, so that each pass's
// writes fall in a range of `sorted` the L2 holds (one pass over a 2^24
// window's 64 MB moved 544 MB of DRAM traffic for 67 MB of entries,
// 2026-12-04 call 32).
extern "C" __global__ void msm_scatter(const uint32_t* keys, const uint32_t* ids, uint32_t n,
                                       uint32_t lo, uint32_t hi, uint32_t* cursor,
                                       uint32_t* sorted) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t k = keys[i];
    uint32_t d = k & 0x7fffffffu;
    if (d > lo && d <= hi) {
        uint32_t pos = atomicAdd(&cursor[d - 1], 1u);
        sorted[pos] = (ids ? ids[i] : i) | (k & 0x80000000u);
    }
}

// out[s] = ceil(count[s] / T); *max_out = max over s (one atomic a block).
extern "C" __global__ void msm_chunk_counts(const uint32_t* count, uint32_t S, uint32_t T,
                                            uint32_t* out, uint32_t* max_out) {
    __shared__ uint32_t warp_max[32];
    uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t v = 0;
    if (s < S) {
        v = (count[s] + T - 1) / T;
        out[s] = v;
    }
    v = __reduce_max_sync(0xffffffffu, v);
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t m = 0;
        for (uint32_t k = 0; k < blockDim.x / 32; k++) m = max(m, warp_max[k]);
        if (m) atomicMax(max_out, m);
    }
}

// owner[j] = the segment of chunk j (segment s owns chunks chunk_off[s] ..
// chunk_off[s+1]); replaces a binary search per thread that cost ~25
// dependent loads over a 100 MB table.
extern "C" __global__ void msm_chunk_owner(const uint32_t* chunk_off, uint32_t S, uint32_t* owner) {
    uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= S) return;
    for (uint32_t j = chunk_off[s]; j < chunk_off[s + 1]; j++) owner[j] = s;
}

// Which entries thread j sums: chunk j - chunk_off[s] of segment s = owner[j].
DEV bool chunk_range(uint32_t j, const uint32_t* seg_count, const uint32_t* seg_off,
                     const uint32_t* chunk_off, const uint32_t* owner, uint32_t S, uint32_t T,
                     uint32_t& start, uint32_t& end) {
    if (j >= chunk_off[S]) return false;
    uint32_t s = owner[j];
    uint32_t k = j - chunk_off[s];
    start = seg_off[s] + k * T;
    end = min(start + T, seg_off[s] + seg_count[s]);
    return true;
}

// Chunks in order of decreasing length, so that the 32 threads of a warp
// sum chunks of one length: in chunk order a warp ran as long as its
// longest chunk (bucket counts vary around their mean), and ncu measured
// 23.3 of 32 threads active on average in msm_accumulate_g2 (run 11). A
// counting sort on the length, tile by tile: msm_chunk_len_hist counts each
// tile's chunks per length into tile_hist[(T - len) * tiles + tile]; the
// exclusive scan of that array gives each (length, tile) its first place;
// msm_chunk_order places each chunk id there. Both kernels find a chunk's
// length the same way, so the places are a permutation of 0 .. chunks.
#define CHUNK_ORDER_BLOCK 256
#define CHUNK_ORDER_PER_THREAD 4
#define CHUNK_ORDER_TILE (CHUNK_ORDER_BLOCK * CHUNK_ORDER_PER_THREAD)
#define CHUNK_ORDER_MAX_T 512

DEV uint32_t chunk_len(uint32_t j, const uint32_t* seg_count, const uint32_t* chunk_off,
                       const uint32_t* owner, uint32_t T) {
    uint32_t s = owner[j];
    uint32_t k = j - chunk_off[s];
    return min(T, seg_count[s] - k * T);
}

extern "C" __global__ void __launch_bounds__(CHUNK_ORDER_BLOCK)
    msm_chunk_len_hist(const uint32_t* seg_count, const uint32_t* chunk_off,
                       const uint32_t* owner, uint32_t S, uint32_t T, uint32_t* tile_hist) {
    __shared__ uint32_t hist[CHUNK_ORDER_MAX_T];
    for (uint32_t b = threadIdx.x; b < T; b += blockDim.x) hist[b] = 0;
    __syncthreads();
    uint32_t chunks = chunk_off[S];
    uint32_t base = blockIdx.x * CHUNK_ORDER_TILE;
    for (uint32_t r = 0; r < CHUNK_ORDER_PER_THREAD; r++) {
        uint32_t j = base + r * CHUNK_ORDER_BLOCK + threadIdx.x;
        if (j < chunks) atomicAdd(&hist[T - chunk_len(j, seg_count, chunk_off, owner, T)], 1u);
    }
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < T; b += blockDim.x)
        tile_hist[b * gridDim.x + blockIdx.x] = hist[b];
}

extern "C" __global__ void __launch_bounds__(CHUNK_ORDER_BLOCK)
    msm_chunk_order(const uint32_t* seg_count, const uint32_t* chunk_off, const uint32_t* owner,
                    uint32_t S, uint32_t T, const uint32_t* tile_off, uint32_t* order) {
    __shared__ uint32_t cursor[CHUNK_ORDER_MAX_T];
    for (uint32_t b = threadIdx.x; b < T; b += blockDim.x)
        cursor[b] = tile_off[b * gridDim.x + blockIdx.x];
    __syncthreads();
    uint32_t chunks = chunk_off[S];
    uint32_t base = blockIdx.x * CHUNK_ORDER_TILE;
    for (uint32_t r = 0; r < CHUNK_ORDER_PER_THREAD; r++) {
        uint32_t j = base + r * CHUNK_ORDER_BLOCK + threadIdx.x;
        if (j < chunks) {
            uint32_t b = T - chunk_len(j, seg_count, chunk_off, owner, T);
            order[atomicAdd(&cursor[b], 1u)] = j;
        }
    }
}

// One chunk of the sorted list summed with mixed additions. (Loading the
// next point before the current addition, run 4, raised the registers and
// made this kernel 16% slower at 2^20..2^26; fetched by cp.async into
// shared memory instead, no registers more, it measured the same: G1
// 2^24 / 2^26 93.47 / 370.87 ms against 93.78 / 370.96, H100, call 91,
// bench/runs/2026-12-07/g1pf.patch. The plain loop is kept.)
template <class F>
DEV void accumulate_affine(const Affine<F>* points, const uint32_t* sorted,
                           const uint32_t* seg_count, const uint32_t* seg_off,
                           const uint32_t* chunk_off, const uint32_t* owner, uint32_t S,
                           uint32_t T, const uint32_t* order, Xyzz<F>* out) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    // With `order`, thread i sums chunk order[i] (every chunk once).
    if (order) {
        if (j >= chunk_off[S]) return;
        j = order[j];
    }
    uint32_t start, end;
    if (!chunk_range(j, seg_count, seg_off, chunk_off, owner, S, T, start, end)) return;
    Xyzz<F> acc = Xyzz<F>::inf();
    for (uint32_t e = start; e < end; e++) {
        uint32_t v = sorted[e];
        Affine<F> p = points[v & 0x7fffffffu];
        if (v >> 31) p = p.neg();
        // For G2 this calls the out-of-line g2_add_affine. Inlined (run 7)
        // the kernel lost its 1152-byte stack frame but hit 255 registers,
        // and the 2^24 G2 MSM went from 678 to 704 ms.
        acc = acc.add_affine(p);
    }
    out[j] = acc;
}

template <class F>
DEV void reduce_xyzz(const Xyzz<F>* items, const uint32_t* seg_count, const uint32_t* seg_off,
                     const uint32_t* chunk_off, const uint32_t* owner, uint32_t S, uint32_t T,
                     Xyzz<F>* out) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t start, end;
    if (!chunk_range(j, seg_count, seg_off, chunk_off, owner, S, T, start, end)) return;
    Xyzz<F> acc = items[start];
    for (uint32_t e = start + 1; e < end; e++) acc = acc.add(items[e]);
    out[j] = acc;
}

// The chunk sums of each bucket merged in place, skipping the buckets
// that hold one chunk sum (most of them: at c = 20 a bucket averages 32
// points of a 2^24 MSM, one chunk of up to 64). Pass `stride` = T^p: a
// bucket with cnt chunk sums has L = ceil(cnt / stride) live sums, at
// off[s] + k * stride; msm_merge_counts gives it ceil(L / T) threads when
// L > 1 (0 otherwise), and thread j = group g of bucket s = owner[j] adds
// live sums g*T .. g*T + T - 1 into the first of them. After the passes
// each bucket's sum sits at off[s], its first chunk's place. The copying
// passes (msm_reduce_*) that this replaces in the MSM wrote every bucket's
// sum again each pass: 5.3 ms of a 2^24 G1 MSM and 11-13 ms of a 2^24 G2
// one (2026-12-04, calls 28-29), with nearly nothing to add.
extern "C" __global__ void msm_merge_counts(const uint32_t* cnt, uint32_t S, uint32_t stride,
                                            uint32_t T, uint32_t* out) {
    uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= S) return;
    uint32_t live = (cnt[s] + stride - 1) / stride;
    out[s] = live > 1 ? (live + T - 1) / T : 0;
}

template <class F>
DEV void merge_in_place(Xyzz<F>* items, const uint32_t* cnt, const uint32_t* off,
                        const uint32_t* moff, const uint32_t* owner, uint32_t S,
                        uint32_t stride, uint32_t T) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= moff[S]) return;
    uint32_t s = owner[j];
    uint32_t live = (cnt[s] + stride - 1) / stride;
    uint32_t k0 = (j - moff[s]) * T, k1 = min(k0 + T, live);
    size_t at = off[s] + (size_t)k0 * stride;
    Xyzz<F> acc = items[at];
    for (uint32_t k = k0 + 1; k < k1; k++) acc = acc.add(items[off[s] + (size_t)k * stride]);
    items[at] = acc;
}

// Thread t = (w, g) of W * 2^lgG: buckets [g*per, (g+1)*per) of window w,
// per = B >> lgG; bucket b holds digit b + 1. After the reductions each
// bucket's count is 0 or 1 and off[] points at its sum.
//
// Each group's running sums give acc_g = sum (b - b_lo + 1) S_b and
// T_g = sum S_b over its buckets; the window's sum is
// sum_g acc_g + b_lo(g) T_g. With `tsum` null the thread forms
// acc_g + b_lo T_g itself (a double-and-add of up to c - 1 bits: ~30
// additions beside the group's 2 per = 64 at c = 20), out[t]. Otherwise it
// writes acc_g to out[t] and T_g to tsum[t], and the window's
// sum_g b_lo(g) T_g = per * sum_g g T_g is left to msm_group_sums (a
// second, much smaller level of running sums) and msm_window_join.
template <class F>
DEV void bucket_reduce(const Xyzz<F>* items, const uint32_t* count, const uint32_t* off,
                       uint32_t W, uint32_t B, uint32_t lgG, Xyzz<F>* out, Xyzz<F>* tsum) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (W << lgG)) return;
    uint32_t w = t >> lgG, g = t & ((1u << lgG) - 1);
    uint32_t per = B >> lgG;
    uint32_t b_lo = g * per;
    Xyzz<F> running = Xyzz<F>::inf(), acc = Xyzz<F>::inf();
    for (uint32_t b = b_lo + per; b-- > b_lo;) {
        uint32_t s = w * B + b;
        if (count[s]) running = running.add(items[off[s]]);
        acc = acc.add(running);
    }
    if (tsum) {
        out[t] = acc;
        tsum[t] = running;
        return;
    }
    // acc = sum (b - b_lo + 1) S_b; the digits are b + 1, so add b_lo * sum S_b.
    out[t] = acc.add(running.mul_small(b_lo));
}

// The second level of the split reduction: thread t = (w, h) of W * 2^lgH
// takes the groups [h q, (h + 1) q) of window w (q = 2^(lgG - lgH), their
// sums T_g at tsum[w 2^lgG + g]) and writes out[t] = sum g T_g over them:
// running sums over g >= max(h q, 1) give sum (g - lo + 1) T_g, plus
// (lo - 1) times their total (a multiplier of at most lgG bits).
template <class F>
DEV void group_sums(const Xyzz<F>* tsum, uint32_t W, uint32_t lgG, uint32_t lgH, Xyzz<F>* out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (W << lgH)) return;
    uint32_t w = t >> lgH, h = t & ((1u << lgH) - 1);
    uint32_t q = 1u << (lgG - lgH);
    uint32_t lo = max(h * q, 1u), hi = (h + 1) * q;
    const Xyzz<F>* ts = tsum + ((size_t)w << lgG);
    Xyzz<F> running = Xyzz<F>::inf(), acc = Xyzz<F>::inf();
    for (uint32_t g = hi; g-- > lo;) {
        running = running.add(ts[g]);
        acc = acc.add(running);
    }
    out[t] = acc.add(running.mul_small(lo - 1));
}

// Each window's sum from the split reduction's two folds: out[w] =
// a[w] + per u[w] (a: the window's sum of acc_g, u: its sum of g T_g).
template <class F>
DEV void window_join(const Xyzz<F>* a, const Xyzz<F>* u, uint32_t W, uint32_t per,
                     Xyzz<F>* out) {
    uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    out[w] = a[w].add(u[w].mul_small(per));
}

// A value of 32-bit words exchanged with lane (lane ^ lane_xor) of the
// same `mask`.
template <class T>
DEV T shfl_xor_words(uint32_t mask, const T& x, int lane_xor) {
    static_assert(sizeof(T) % 4 == 0, "whole words");
    T r;
    const uint32_t* s = reinterpret_cast<const uint32_t*>(&x);
    uint32_t* d = reinterpret_cast<uint32_t*>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 4); i++) d[i] = __shfl_xor_sync(mask, s[i], lane_xor);
    return r;
}

// bucket_reduce with each group on a pair of lanes, so that each lane keeps
// one point across a point addition instead of two: the even lane keeps the
// running sum, the odd lane the sum of running sums, and every step both
// call the same addition (the even lane with the next bucket, the odd lane
// with the running sum its partner held at the start of the step, fetched
// by a shuffle). The single-lane form held `running` and `acc` across each
// call: G2 at 255 registers with 3896 bytes of spill stores on sm_90 (run
// 10's ncu: 55.3 M local-memory requests at 2^22). Then the even lane forms
// b_lo * T by double-and-add while its partner holds T for it. Writes two
// items per group, out[2 t + 1] = acc and out[2 t] = b_lo * T, so a window
// has 2^(lgG + 1) items for the reduction that follows. Thread
// 2 t + {0, 1} of W * 2^(lgG + 1) is group t = (w, g).
//
// With `tsum` set (the split reduction, see bucket_reduce) the pair writes
// acc to out[t] (the odd lane) and T to tsum[t] (the even lane) instead,
// with no double-and-add: every lane of a warp then shuffles as often as
// the others.
template <class F>
DEV void bucket_reduce_pairs(const Xyzz<F>* items, const uint32_t* count, const uint32_t* off,
                             uint32_t W, uint32_t B, uint32_t lgG, Xyzz<F>* out,
                             Xyzz<F>* tsum) {
    uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t t = thread >> 1;
    // Both lanes of a pair leave or stay together (pairs are aligned), so
    // each pair shuffles under its own mask.
    if (t >= (W << lgG)) return;
    bool odd = thread & 1;
    uint32_t mask = 3u << (threadIdx.x & 30);
    uint32_t w = t >> lgG, g = t & ((1u << lgG) - 1);
    uint32_t per = B >> lgG;
    uint32_t b_lo = g * per;
    Xyzz<F> v = Xyzz<F>::inf();  // even: running sum; odd: sum of running sums
    for (uint32_t i = 0; i <= per; i++) {
        Xyzz<F> arg = shfl_xor_words(mask, v, 1);
        if (!odd) {
            arg = Xyzz<F>::inf();
            if (i < per) {
                uint32_t s = w * B + b_lo + per - 1 - i;
                if (count[s]) arg = items[off[s]];
            }
        }
        v = v.add(arg);
    }
    // even: T = sum S_b; odd: acc = sum (b - b_lo + 1) S_b.
    if (tsum) {
        if (odd) out[t] = v;
        else tsum[t] = v;
        return;
    }
    if (odd) out[2 * t + 1] = v;
    Xyzz<F> other = shfl_xor_words(mask, v, 1);
    v = odd ? other : Xyzz<F>::inf();  // odd holds T from here on
    for (int i = 31 - __clz(b_lo); i >= 0; i--) {
        if (!odd) v = v.dbl();
        if ((b_lo >> i) & 1) {
            Xyzz<F> tv = shfl_xor_words(mask, v, 1);
            if (!odd) v = v.add(tv);
        }
    }
    if (!odd) out[2 * t] = v;
}

// One level of the windows' final sums as a tree: lane t of `lanes` sums
// items [t * 2^lg_seq, (t + 1) * 2^lg_seq) in sequence, then the lanes of
// each aligned span of 2^lg_lanes <= 32 sum theirs by a butterfly of
// shuffles, and the span's first lane writes out[t >> lg_lanes]: a level
// takes 2^(lg_seq + lg_lanes) items (of one window) to one with
// 2^lg_seq - 1 + lg_lanes additions in sequence. The chunked reduction it
// replaces summed up to 64 items in sequence per thread and its last
// levels ran on 1 to 16 blocks: 10.2 ms of G2's kernels at 2^22 (run 10).
// The sequential part keeps the first, widest level from paying the
// butterfly's lg_lanes additions per item in every lane.
template <class F>
DEV void fold_windows(const Xyzz<F>* items, uint32_t lanes, uint32_t lg_seq, uint32_t lg_lanes,
                      Xyzz<F>* out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    // lanes is a multiple of the span: a span leaves or stays together.
    if (t >= lanes) return;
    uint32_t span = 1u << lg_lanes;
    uint32_t lane = threadIdx.x & 31;
    uint32_t mask = span >= 32 ? 0xffffffffu : ((1u << span) - 1) << (lane & ~(span - 1));
    const Xyzz<F>* run = items + ((size_t)t << lg_seq);
    Xyzz<F> v = run[0];
    for (uint32_t e = 1; e < (1u << lg_seq); e++) v = v.add(run[e]);
    for (uint32_t k = 1; k < span; k <<= 1) v = v.add(shfl_xor_words(mask, v, k));
    if ((t & (span - 1)) == 0) out[t >> lg_lanes] = v;
}

#define MSM_TAIL_KERNELS(G, F)                                                                   \
    extern "C" __global__ void msm_bucket_pairs_##G(const Xyzz<F>* items,                       \
                                                    const uint32_t* count,                       \
                                                    const uint32_t* off, uint32_t W,             \
                                                    uint32_t B, uint32_t lgG, Xyzz<F>* out,      \
                                                    Xyzz<F>* tsum) {                             \
        bucket_reduce_pairs<F>(items, count, off, W, B, lgG, out, tsum);                         \
    }                                                                                            \
    extern "C" __global__ void msm_group_sums_##G(const Xyzz<F>* tsum, uint32_t W, uint32_t lgG,  \
                                                  uint32_t lgH, Xyzz<F>* out) {                  \
        group_sums<F>(tsum, W, lgG, lgH, out);                                                   \
    }                                                                                            \
    extern "C" __global__ void msm_window_join_##G(const Xyzz<F>* a, const Xyzz<F>* u,           \
                                                   uint32_t W, uint32_t per, Xyzz<F>* out) {     \
        window_join<F>(a, u, W, per, out);                                                       \
    }                                                                                            \
    extern "C" __global__ void msm_fold_##G(const Xyzz<F>* items, uint32_t lanes,                \
                                            uint32_t lg_seq, uint32_t lg_lanes, Xyzz<F>* out) {  \
        fold_windows<F>(items, lanes, lg_seq, lg_lanes, out);                                    \
    }                                                                                            \
    extern "C" __global__ void msm_merge_##G(Xyzz<F>* items, const uint32_t* cnt,                \
                                             const uint32_t* off, const uint32_t* moff,          \
                                             const uint32_t* owner, uint32_t S,                  \
                                             uint32_t stride, uint32_t T) {                      \
        merge_in_place<F>(items, cnt, off, moff, owner, S, stride, T);                           \
    }

#define MSM_KERNELS(G, F)                                                                        \
    extern "C" __global__ void msm_accumulate_##G(const Affine<F>* points,                      \
                                                  const uint32_t* sorted,                        \
                                                  const uint32_t* seg_count,                     \
                                                  const uint32_t* seg_off,                       \
                                                  const uint32_t* chunk_off,                     \
                                                  const uint32_t* owner, uint32_t S, uint32_t T, \
                                                  const uint32_t* order, Xyzz<F>* out) {         \
        accumulate_affine<F>(points, sorted, seg_count, seg_off, chunk_off, owner, S, T, order,  \
                             out);                                                               \
    }                                                                                            \
    extern "C" __global__ void msm_reduce_##G(const Xyzz<F>* items, const uint32_t* seg_count,  \
                                              const uint32_t* seg_off,                           \
                                              const uint32_t* chunk_off, const uint32_t* owner,  \
                                              uint32_t S, uint32_t T, Xyzz<F>* out) {            \
        reduce_xyzz<F>(items, seg_count, seg_off, chunk_off, owner, S, T, out);                  \
    }                                                                                            \
    extern "C" __global__ void msm_bucket_reduce_##G(const Xyzz<F>* items,                      \
                                                     const uint32_t* count,                      \
                                                     const uint32_t* off, uint32_t W,            \
                                                     uint32_t B, uint32_t lgG, Xyzz<F>* out,     \
                                                     Xyzz<F>* tsum) {                            \
        bucket_reduce<F>(items, count, off, W, B, lgG, out, tsum);                               \
    }

MSM_KERNELS(g1, Fq)
MSM_KERNELS(g2, Fq2)
// G1 with inlined Fq products, for the kernels dominated by one addition
// per step (src/device/msm.rs picks g1 or g1i by measurement; the bucket reduction,
// two additions and a small multiple per step, spills when inlined: 255
// registers and 756 bytes of spill stores on sm_90).
extern "C" __global__ void msm_accumulate_g1i(const Affine<FqI>* points, const uint32_t* sorted,
                                              const uint32_t* seg_count, const uint32_t* seg_off,
                                              const uint32_t* chunk_off, const uint32_t* owner,
                                              uint32_t S, uint32_t T, const uint32_t* order,
                                              Xyzz<FqI>* out) {
    accumulate_affine<FqI>(points, sorted, seg_count, seg_off, chunk_off, owner, S, T, order, out);
}
extern "C" __global__ void msm_reduce_g1i(const Xyzz<FqI>* items, const uint32_t* seg_count,
                                          const uint32_t* seg_off, const uint32_t* chunk_off,
                                          const uint32_t* owner, uint32_t S, uint32_t T,
                                          Xyzz<FqI>* out) {
    reduce_xyzz<FqI>(items, seg_count, seg_off, chunk_off, owner, S, T, out);
}
// The pairs' bucket reduction and the tree of window sums, for each build
// (indexed like msm_reduce_*).
MSM_TAIL_KERNELS(g1, Fq)
MSM_TAIL_KERNELS(g2, Fq2)
MSM_TAIL_KERNELS(g1i, FqI)
// G2's accumulation under a register cap, so that 3 or 4 blocks of 128
// threads share an SM instead of 2 (204 registers uncapped): run 10's ncu
// found msm_accumulate_g2 latency-bound (11.6% occupancy, 38% of issue
// slots used). sm_90 ptxas: o3 168 registers, 228 bytes of spill stores in
// g2_add_affine; o4 128 registers, 1720 bytes. src/device/msm.rs picks the
// build by measurement (o3 since run 12: -3% once warps stopped diverging).
extern "C" __global__ void __launch_bounds__(128, 3)
    msm_accumulate_g2o3(const Affine<Fq2>* points, const uint32_t* sorted,
                        const uint32_t* seg_count, const uint32_t* seg_off,
                        const uint32_t* chunk_off, const uint32_t* owner, uint32_t S, uint32_t T,
                        const uint32_t* order, Xyzz<Fq2>* out) {
    accumulate_affine<Fq2>(points, sorted, seg_count, seg_off, chunk_off, owner, S, T, order, out);
}
extern "C" __global__ void __launch_bounds__(128, 4)
    msm_accumulate_g2o4(const Affine<Fq2>* points, const uint32_t* sorted,
                        const uint32_t* seg_count, const uint32_t* seg_off,
                        const uint32_t* chunk_off, const uint32_t* owner, uint32_t S, uint32_t T,
                        const uint32_t* order, Xyzz<Fq2>* out) {
    accumulate_affine<Fq2>(points, sorted, seg_count, seg_off, chunk_off, owner, S, T, order, out);
}
