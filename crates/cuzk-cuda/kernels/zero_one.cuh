// The MSM's 0/1 path (src/device/zero_one.rs): the sum of the points
// whose scalar is 1, selected by a bit mask, for G1 (Fq out of line and
// inline) and G2.
#pragma once
#include "curve.cuh"

// The 0/1 path: sum of the points whose bit is set. `prefix` holds the
// exclusive scan of the additions each mask word asks for (mask_popcount;
// n_words + 1 entries, the total last). The selected points are dealt out
// by count, not by position: thread t takes the t-th run of
// ceil(total / nthreads) additions, so every lane of a warp does the same
// number of additions whatever the mask (by words, run 19's ncu on call 22
// read 28.3 of 32 lanes active on a random half mask; by count the sum
// went from 20.41 to 19.15 ms at 2^26, run 20, H200), and the host
// launches about one wave of threads, so that no partial wave trails the
// rest.
//
// With `pairs` (not null; pairs[i] = points[2i] + points[2i + 1], affine),
// the bits are taken two at a time: a pair with both bits set is one
// addition of its sum, a pair with one set one addition of that point, so
// a random half mask costs 3/4 of an addition a pair instead of 1. A word
// holds 16 whole pairs; the lower bit of each stands for it (`lead_bits`).
DEV uint32_t lead_bits(uint32_t m, bool paired) {
    return paired ? (m | m >> 1) & 0x55555555u : m;
}

template <class F>
DEV void sum_selected(const Affine<F>* points, const Affine<F>* pairs, const uint32_t* mask,
                      const uint32_t* prefix, uint32_t n_words, Xyzz<F>* out,
                      uint32_t nthreads) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nthreads) return;
    const bool paired = pairs != nullptr;
    const uint32_t total = prefix[n_words];
    const uint32_t per = (total + nthreads - 1) / nthreads;
    const uint64_t start64 = (uint64_t)t * per;
    Xyzz<F> acc = Xyzz<F>::inf();
    if (start64 < total) {
        const uint32_t start = (uint32_t)start64;
        uint32_t left = min(per, total - start);
        // The word holding addition number `start`: the last w with
        // prefix[w] <= start (prefix[0] = 0 <= start, prefix[n_words] =
        // total > start).
        uint32_t lo = 0, hi = n_words;
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) >> 1;
            if (prefix[mid] <= start) lo = mid;
            else hi = mid;
        }
        uint32_t wi = lo;
        uint32_t raw = mask[wi];
        uint32_t bits = lead_bits(raw, paired);
        for (uint32_t skip = start - prefix[wi]; skip; skip--) bits &= bits - 1;
        while (left) {
            while (bits == 0) {
                raw = mask[++wi];
                bits = lead_bits(raw, paired);
            }
            const uint32_t b = __ffs(bits) - 1;
            bits &= bits - 1;
            const uint32_t i = wi * 32 + b;
            const Affine<F>* p = points + i;
            if (paired) {
                const uint32_t two = raw >> b & 3;
                p = two == 3 ? pairs + i / 2 : points + i + (two >> 1);
            }
            acc = acc.add_affine(*p);
            left--;
        }
    }
    out[t] = acc;
}

// Additions each mask word asks of sum_selected: its set bits, or with
// `paired` its pairs with a bit set.
extern "C" __global__ void mask_popcount(const uint32_t* mask, uint32_t n_words, uint32_t paired,
                                         uint32_t* counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_words) counts[i] = __popc(lead_bits(mask[i], paired != 0));
}

extern "C" __global__ void sum_selected_g1(const Affine<Fq>* points, const Affine<Fq>* pairs,
                                           const uint32_t* mask, const uint32_t* prefix,
                                           uint32_t n_words, Xyzz<Fq>* out, uint32_t nthreads) {
    sum_selected<Fq>(points, pairs, mask, prefix, n_words, out, nthreads);
}
extern "C" __global__ void sum_selected_g2(const Affine<Fq2>* points, const Affine<Fq2>* pairs,
                                           const uint32_t* mask, const uint32_t* prefix,
                                           uint32_t n_words, Xyzz<Fq2>* out, uint32_t nthreads) {
    sum_selected<Fq2>(points, pairs, mask, prefix, n_words, out, nthreads);
}
extern "C" __global__ void sum_selected_g1i(const Affine<FqI>* points, const Affine<FqI>* pairs,
                                            const uint32_t* mask, const uint32_t* prefix,
                                            uint32_t n_words, Xyzz<FqI>* out, uint32_t nthreads) {
    sum_selected<FqI>(points, pairs, mask, prefix, n_words, out, nthreads);
}

// The pair sums the paired sum reads, on the device: out[i] = points[2i] +
// points[2i + 1] as XYZZ (to affine by fixed.cuh's to_affine_*), one
// thread a pair.
template <class F>
DEV void pair_sums(const Affine<F>* points, uint32_t n_pairs, Xyzz<F>* out) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_pairs) return;
    out[i] = Xyzz<F>::inf().add_affine(points[2 * i]).add_affine(points[2 * i + 1]);
}
extern "C" __global__ void pair_sums_g1(const Affine<Fq>* points, uint32_t n_pairs,
                                        Xyzz<Fq>* out) {
    pair_sums<Fq>(points, n_pairs, out);
}
extern "C" __global__ void pair_sums_g2(const Affine<Fq2>* points, uint32_t n_pairs,
                                        Xyzz<Fq2>* out) {
    pair_sums<Fq2>(points, n_pairs, out);
}
