// NTTs over Fr in fused shared-memory passes of radix-2 stages.
//
// Forward (DIT): bit-reversal permutation (optionally fused with the coset
// scaling x_i *= g^i), then decimation-in-time stages bottom up. Inverse
// (DIF): decimation-in-frequency stages top down from natural order, which
// leaves the result bit-reversed; the permutation back is fused with the
// scaling by n^-1 (and g^-i for the inverse coset transform). The H step's
// "evaluations to coset evaluations" runs DIF then DIT with no permutation
// at all: the coefficients stay bit-reversed between the two, and their
// coset scaling is fused into the DIT's first pass. The out-of-place
// transforms (src/device/ntt.rs, `ntt_device_into`) need no permutation
// kernel: the forward's first DIT pass reads its input from bit-reversed
// places, the inverse's last DIF pass writes its output to them
// (ntt_perm_pass_body).
//
// A pass over stages [s0, s0+k) touches, for each fixed choice of the index
// bits outside [s0, s0+k), the 2^k elements that differ in those bits. A
// block takes 2^lgL such groups with consecutive low bits so that its global
// loads cover 2^lgL * 32 contiguous bytes. Inside a pass the stages run in
// rounds of up to R in registers (a thread holds 2^R elements), with one
// shared-memory exchange per round instead of one per stage. Twiddles come
// from one table tw[i] = w^i, i < n/2, built on the GPU; the inverse reads
// the same table (w^-e = -w^(n/2-e)).
#pragma once
#include "field.cuh"

// base^i for i < 2^(2*lo_bits), from lo[j] = c*base^j and hi[j] = base^(j*2^lo_bits).
DEV Fr power_from_tables(const Fr* lo, const Fr* hi, uint32_t lo_bits, uint32_t i) {
    return ldg_fr(lo + (i & ((1u << lo_bits) - 1))) * ldg_fr(hi + (i >> lo_bits));
}

extern "C" __global__ void ntt_powers(Fr* out, uint32_t count, const Fr* lo, const Fr* hi,
                                      uint32_t lo_bits) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    st_fr(out + i, power_from_tables(lo, hi, lo_bits, i));
}

// In-place bit reversal of n = 2^lg elements. scale = 1: each element x_i
// is first multiplied by c*base^i (its position before the permutation);
// scale = 2: by c*base^j of the position j it moves to (tables as above).
extern "C" __global__ void ntt_bitrev(Fr* d, uint32_t lg, const Fr* lo, const Fr* hi,
                                      uint32_t lo_bits, uint32_t scale) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (lg == 0 || i >= (1u << lg)) {
        if (lg == 0 && i == 0 && scale) d[0] = d[0] * power_from_tables(lo, hi, lo_bits, 0);
        return;
    }
    uint32_t r = __brev(i) >> (32 - lg);
    if (i < r) {
        Fr a = ld_fr(d + i), b = ld_fr(d + r);
        if (scale == 1) {
            a = a * power_from_tables(lo, hi, lo_bits, i);
            b = b * power_from_tables(lo, hi, lo_bits, r);
        } else if (scale == 2) {
            a = a * power_from_tables(lo, hi, lo_bits, r);
            b = b * power_from_tables(lo, hi, lo_bits, i);
        }
        st_fr(d + i, b);
        st_fr(d + r, a);
    } else if (i == r && scale) {
        st_fr(d + i, ld_fr(d + i) * power_from_tables(lo, hi, lo_bits, i));
    }
}

// Shared memory of a pass: the low and high 16 bytes of element e in two
// arrays, at slot e + e/8. Split halves let a quarter warp read 8 elements
// as 16-byte accesses at a 16-byte stride; the padding slot after every 8
// keeps the strided groups of a pass's first round (elements 8 or 32 apart)
// on distinct banks. The split halves took NTT 2^27 from 77.4 to 73.3 ms
// (run 7, H200); the padding came with run 9's passes, not timed apart.
struct PassShared {
    uint4* lo;
    uint4* hi;
    DEV static uint32_t slot(uint32_t e) { return e + (e >> 3); }
    DEV Fr get(uint32_t e) const {
        uint32_t s = slot(e);
        uint4 a = lo[s], b = hi[s];
        Fr x;
        x.v[0] = a.x; x.v[1] = a.y; x.v[2] = a.z; x.v[3] = a.w;
        x.v[4] = b.x; x.v[5] = b.y; x.v[6] = b.z; x.v[7] = b.w;
        return x;
    }
    DEV void put(uint32_t e, const Fr& x) const {
        uint32_t s = slot(e);
        lo[s] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
        hi[s] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
    }
    // Slots for E elements (both arrays together hold 2x this many uint4).
    DEV static uint32_t slots(uint32_t E) { return E + (E >> 3); }
};

// Where a pass's block sits: stages s0+1 .. s0+k (index bits [s0, s0+k))
// over n = 2^lg elements; the block holds 2^lgL groups with consecutive low
// bits lo_base + lo_off, lo_off < 2^lgL, and every value of the k "mid" bits;
// element e of the block is mid = e >> lgL, lo_off = e & (2^lgL - 1).
struct PassPlace {
    uint32_t lg, s0, k, lgL;
    uint32_t lo_base;
    uint64_t base;
    DEV uint64_t index(uint32_t e) const {
        uint32_t lo_off = e & ((1u << lgL) - 1), mid = e >> lgL;
        return base + ((uint64_t)mid << s0) + lo_off;
    }
};

// (Values kept below 2r inside a pass, without the products' final
// subtraction, took 2.5-3% of a round's instructions and none of its
// IMAD-pipe work, and measured the same: r2x3 forward out of place 38.47
// ms against 38.16, inverse 45.14 against 45.66, evals -> coset 83.38
// against 83.63 at 2^27 (H100, call 91; bench/gpu-kernels.md runs 56-57).)
//
// One round of R consecutive stages (index bits s0+j .. s0+j+R-1) in
// registers: each thread takes groups of 2^R elements that differ only in
// those bits, reads them from shared memory, runs the R stages and writes
// them back. DIT (forward, w = tw) or DIF (inverse, w^-1: the table's
// w^(n/2 - e) = -w^-e, so (u - v) w^-e = (v - u) w^(n/2 - e)). The twiddle
// of the butterfly at bit s of element index i is w^((i mod 2^s) 2^(lg-s-1)).
// LO_TW: the block's 2^lgL groups differ in index bits below the stages,
// which enter the twiddles (every in-place pass); false for the permuting
// passes below, whose groups differ in the top bits.
template <int R, bool DIF, bool LO_TW>
DEV void ntt_round(const PassShared& sh, const Fr* __restrict__ tw, const PassPlace& pl,
                   uint32_t j) {
    const uint32_t L = 1u << pl.lgL;
    const uint32_t groups = 1u << (pl.k + pl.lgL - R);
    const uint64_t half = 1ull << (pl.lg - 1);
    for (uint32_t g = threadIdx.x; g < groups; g += blockDim.x) {
        const uint32_t lo_off = g & (L - 1);
        const uint32_t q = g >> pl.lgL;
        const uint32_t jm_low = q & ((1u << j) - 1);
        const uint32_t mid0 = ((q >> j) << (j + R)) | jm_low;
        Fr x[1 << R];
#pragma unroll
        for (int t = 0; t < (1 << R); t++)
            x[t] = sh.get(((mid0 | ((uint32_t)t << j)) << pl.lgL) | lo_off);
        const uint64_t lo_part = LO_TW ? pl.lo_base + lo_off : 0;
#pragma unroll
        for (int ii = 0; ii < R; ii++) {
            const int i = DIF ? R - 1 - ii : ii;  // DIF runs the stages top down
            const uint32_t shift = pl.lg - pl.s0 - j - i - 1;
#pragma unroll
            for (int c = 0; c < (1 << i); c++) {
                // The butterflies whose index bits below the stage are c.
                const uint32_t jm = jm_low | ((uint32_t)c << j);
                const uint64_t texp = ((((uint64_t)jm) << pl.s0) | lo_part) << shift;
                Fr w;
                if (texp != 0) w = ldg_fr(tw + (DIF ? half - texp : texp));
#pragma unroll
                for (int hi = 0; hi < (1 << (R - 1 - i)); hi++) {
                    const int t0 = (hi << (i + 1)) | c;
                    const int t1 = t0 | (1 << i);
                    Fr u = x[t0], v = x[t1];
                    // Every other butterfly's product through mul_fp64 (the
                    // FP64 pipe with CUZK_FP64_MIX_FR; field.cuh).
                    const bool alt = ((hi + c) & 1) != 0;
                    if (!DIF) {
                        if (texp != 0) v = alt ? mul_fp64(v, w) : v * w;
                        x[t0] = u + v;
                        x[t1] = u - v;
                    } else {
                        x[t0] = u + v;
                        x[t1] = texp != 0 ? (alt ? mul_fp64(v - u, w) : (v - u) * w) : u - v;
                    }
                }
            }
        }
#pragma unroll
        for (int t = 0; t < (1 << R); t++)
            sh.put(((mid0 | ((uint32_t)t << j)) << pl.lgL) | lo_off, x[t]);
    }
}

// A pass's k stages in rounds of up to R in registers, a barrier after
// each: sizes R, R, ..., then the rest (k mod R); DIF visits them in the
// opposite order. The caller has filled shared memory and synchronized.
template <int R, bool DIF, bool LO_TW>
DEV void ntt_rounds(const PassShared& sh, const Fr* __restrict__ tw, const PassPlace& pl) {
    const uint32_t full = pl.k / R, rest = pl.k % R;
    const uint32_t rounds = full + (rest ? 1 : 0);
    for (uint32_t rr = 0; rr < rounds; rr++) {
        const uint32_t r = DIF ? rounds - 1 - rr : rr;
        const uint32_t j = r * R;
        const uint32_t size = r < full ? R : rest;
        if (size == R) ntt_round<R, DIF, LO_TW>(sh, tw, pl, j);
        else if (R > 2 && size == 2) ntt_round<(R > 2 ? 2 : 1), DIF, LO_TW>(sh, tw, pl, j);
        else ntt_round<1, DIF, LO_TW>(sh, tw, pl, j);
        __syncthreads();
    }
}

// A pass's loads: element e = threadIdx.x, + blockDim.x, ... < E of the
// block, `load(e)` its global read and `put(e, x)` what becomes of it,
// four reads issued before the first is used so that a thread waits on
// DRAM once for four elements (2026-12-05 call 59, ncu's source counters:
// with one read at a time, the shared store waiting on it held 7.7% of the
// pass's stall samples and the barrier after the loads 5%). Measured with
// four (bench/gpu-kernels.md run 36, call 60, H100): r2x3 forward out of
// place at 2^27 38.48 -> 38.20 ms, r3x2 -4%; no other count was tried.
#define NTT_LOAD_BATCH 4
template <class Load, class Put>
DEV void ntt_load_batched(uint32_t E, Load load, Put put) {
    const uint32_t step = blockDim.x;
    uint32_t e = threadIdx.x;
    for (; e + (NTT_LOAD_BATCH - 1) * step < E; e += NTT_LOAD_BATCH * step) {
        Fr x[NTT_LOAD_BATCH];
#pragma unroll
        for (uint32_t b = 0; b < NTT_LOAD_BATCH; b++) x[b] = load(e + b * step);
#pragma unroll
        for (uint32_t b = 0; b < NTT_LOAD_BATCH; b++) put(e + b * step, x[b]);
    }
    for (; e < E; e += step) put(e, load(e));
}

// One fused pass of stages [s0, s0+k) over n = 2^lg elements, in rounds of
// up to R stages in registers between shared-memory exchanges. DIT: input
// bit-reversed, stages bottom up (rounds at j = 0, R, 2R, ...); DIF: natural
// input, stages top down. `scale` says what happens to each element as it
// is loaded, in the transform's first pass only: 1 (a DIT pass at s0 = 0)
// multiplies it by c*base^bitrev(position) from the power tables (plo,
// phi), the coset scaling of coefficients that a DIF pass left in
// bit-reversed order; 2 multiplies it by plo[position], a pointwise
// product fused into the pass (H's a b before its inverse); 0 neither.
// Dynamic shared memory: 2 * slots(2^(k+lgL)) * 16 B.
template <int R, bool DIF>
DEV void ntt_pass_body(Fr* d, const Fr* __restrict__ tw, uint32_t lg, uint32_t s0, uint32_t k,
                       uint32_t lgL, const Fr* plo, const Fr* phi,
                       uint32_t plo_bits, uint32_t scale) {
    extern __shared__ uint4 shm[];
    const uint32_t E = 1u << (k + lgL);
    const uint32_t lo_groups_lg = s0 - lgL;
    const uint32_t b = blockIdx.x;
    PassPlace pl;
    pl.lg = lg; pl.s0 = s0; pl.k = k; pl.lgL = lgL;
    pl.lo_base = (b & ((1u << lo_groups_lg) - 1)) << lgL;
    pl.base = ((uint64_t)(b >> lo_groups_lg) << (s0 + k)) | pl.lo_base;
    const PassShared sh{shm, shm + PassShared::slots(E)};

    if (scale == 0) {
        ntt_load_batched(E, [&](uint32_t e) { return ld_fr(d + pl.index(e)); },
                         [&](uint32_t e, const Fr& x) { sh.put(e, x); });
    } else {
        // A transform's first pass only: one element at a time, so that
        // the product's registers do not add to four elements'.
        for (uint32_t e = threadIdx.x; e < E; e += blockDim.x) {
            const uint64_t idx = pl.index(e);
            Fr x = ld_fr(d + idx);
            if (scale == 1) x = x * power_from_tables(plo, phi, plo_bits, __brev((uint32_t)idx) >> (32 - lg));
            else x = x * ldg_fr(plo + idx);
            sh.put(e, x);
        }
    }
    __syncthreads();
    ntt_rounds<R, DIF, true>(sh, tw, pl);
    for (uint32_t e = threadIdx.x; e < E; e += blockDim.x) st_fr(d + pl.index(e), sh.get(e));
}

// The pass at s0 = 0 of an out-of-place transform, the bit reversal fused
// into its global accesses. Element e of block b is index idx = (lo <<
// (lg - lgL)) | (b << k) | mid (mid = e >> lgL, lo = e & (2^lgL - 1)): the
// k stage bits at the bottom and the block's 2^lgL groups in the top bits,
// so that their bit-reversed places q = rev(idx) are 2^lgL consecutive
// elements (a 128-byte line at lgL = 2). DIT (a forward transform's first
// pass) reads src[q], times c*base^q from the power tables with scale = 1
// (the coset scaling), and writes d[idx]; DIF (an inverse's last pass)
// reads src[idx] and writes d[q], times c*base^q with scale = 1 (n^-1, and
// g^-q for the coset inverse). d and src do not overlap; 1 <= lg <= 31.
// Dynamic shared memory as ntt_pass_body's.
template <int R, bool DIF>
DEV void ntt_perm_pass_body(Fr* __restrict__ d, const Fr* __restrict__ src,
                            const Fr* __restrict__ tw, uint32_t lg, uint32_t k, uint32_t lgL,
                            const Fr* plo, const Fr* phi, uint32_t plo_bits, uint32_t scale) {
    extern __shared__ uint4 shm[];
    const uint32_t E = 1u << (k + lgL);
    PassPlace pl;
    pl.lg = lg; pl.s0 = 0; pl.k = k; pl.lgL = lgL;
    pl.lo_base = 0;
    pl.base = (uint64_t)blockIdx.x << k;
    const PassShared sh{shm, shm + PassShared::slots(E)};
    const uint32_t lo_mask = (1u << lgL) - 1, lo_shift = lg - lgL;
    const uint32_t block_bits = blockIdx.x << k;
    auto place = [&](uint32_t e) { return ((e & lo_mask) << lo_shift) | block_bits | (e >> lgL); };
    if (DIF || scale == 0) {
        ntt_load_batched(
            E,
            [&](uint32_t e) {
                const uint32_t idx = place(e);
                return ld_fr(src + (DIF ? idx : __brev(idx) >> (32 - lg)));
            },
            [&](uint32_t e, const Fr& x) { sh.put(e, x); });
    } else {
        // The coset forward's scaling, one element at a time (as above).
        for (uint32_t e = threadIdx.x; e < E; e += blockDim.x) {
            const uint32_t q = __brev(place(e)) >> (32 - lg);
            sh.put(e, ld_fr(src + q) * power_from_tables(plo, phi, plo_bits, q));
        }
    }
    __syncthreads();
    ntt_rounds<R, DIF, false>(sh, tw, pl);
    for (uint32_t e = threadIdx.x; e < E; e += blockDim.x) {
        const uint32_t idx = ((e & lo_mask) << lo_shift) | block_bits | (e >> lgL);
        const uint32_t q = __brev(idx) >> (32 - lg);
        Fr x = sh.get(e);
        if (DIF && scale == 1) x = x * power_from_tables(plo, phi, plo_bits, q);
        st_fr(d + (DIF ? q : idx), x);
    }
}

// The pass kernels, one per round size R and register cap: R = 3 capped at
// 128 registers so that two blocks of 256 threads stay resident per SM
// (r3x2), R = 2 capped at 80 so that three do (r2x3); the host picks one
// (src/device/ntt.rs, NttPass) by measurement: run 9 (H200) forward 2^27
// r1 56.87 / r2 56.23 / r3 71.90 / r3x2 50.73 ms; runs 15-16 r2x3 44.68
// against r3x2 46.81 (DEFAULT_NTT_PASS).
#define NTT_PASS(NAME, R, MIN_BLOCKS)                                                          \
    extern "C" __global__ void __launch_bounds__(256, MIN_BLOCKS)                              \
        NAME(Fr* d, const Fr* tw, uint32_t lg, uint32_t s0, uint32_t k, uint32_t lgL,          \
             uint32_t dif, const Fr* plo, const Fr* phi, uint32_t plo_bits, uint32_t scale) {  \
        if (dif) ntt_pass_body<R, true>(d, tw, lg, s0, k, lgL, plo, phi, plo_bits, scale);     \
        else ntt_pass_body<R, false>(d, tw, lg, s0, k, lgL, plo, phi, plo_bits, scale);        \
    }
NTT_PASS(ntt_pass_r1, 1, 1)
NTT_PASS(ntt_pass_r2, 2, 1)
NTT_PASS(ntt_pass_r3, 3, 1)
NTT_PASS(ntt_pass_r3x2, 3, 2)
// r2x3's blocks per SM: CUZK_NVCC_DEFINES=CUZK_NTT_R2X3_MIN_BLOCKS=4 builds
// it at 64 registers (four blocks, half the warp slots) for a measurement:
// 5-8% slower (run 35, call 58, H100: forward in place 2^27 43.84 ms
// against 41.38 at three), so three stays.
#ifndef CUZK_NTT_R2X3_MIN_BLOCKS
#define CUZK_NTT_R2X3_MIN_BLOCKS 3
#endif
NTT_PASS(ntt_pass_r2x3, 2, CUZK_NTT_R2X3_MIN_BLOCKS)
#undef NTT_PASS

// The permuting passes of the out-of-place transforms (ntt_perm_pass_body),
// one per pass kernel above, with its round size and register cap.
#define NTT_PERM_PASS(NAME, R, MIN_BLOCKS)                                                      \
    extern "C" __global__ void __launch_bounds__(256, MIN_BLOCKS)                               \
        NAME(Fr* d, const Fr* src, const Fr* tw, uint32_t lg, uint32_t k, uint32_t lgL,          \
             uint32_t dif, const Fr* plo, const Fr* phi, uint32_t plo_bits, uint32_t scale) {    \
        if (dif) ntt_perm_pass_body<R, true>(d, src, tw, lg, k, lgL, plo, phi, plo_bits, scale); \
        else ntt_perm_pass_body<R, false>(d, src, tw, lg, k, lgL, plo, phi, plo_bits, scale);    \
    }
NTT_PERM_PASS(ntt_perm_pass_r1, 1, 1)
NTT_PERM_PASS(ntt_perm_pass_r2, 2, 1)
NTT_PERM_PASS(ntt_perm_pass_r3, 3, 1)
NTT_PERM_PASS(ntt_perm_pass_r3x2, 3, 2)
NTT_PERM_PASS(ntt_perm_pass_r2x3, 2, CUZK_NTT_R2X3_MIN_BLOCKS)
#undef NTT_PERM_PASS

// H's last step (src/device/ntt.rs, `h_finish_device`): after the DIF
// passes of a b (U, in a; the product taken as the first pass loads a) and
// of c (V, in c; both bit-reversed, unscaled), one permutation back
// that also scales and subtracts: a[j] = p(j) U[rev j] - p(0) V[rev j], with
// p(j) = s g^-j from the tables (s = n^-1 / Z, the tables' c): the coset
// inverse of a b over Z minus C's coefficients over Z. It replaces c's own
// permutation and scaling and a separate subtraction pass.
extern "C" __global__ void h_finish_bitrev(Fr* a, const Fr* c, uint32_t lg, const Fr* lo,
                                           const Fr* hi, uint32_t lo_bits) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (lg > 31 || i >= (1u << lg)) return;
    uint32_t r = lg == 0 ? 0 : __brev(i) >> (32 - lg);
    if (i > r) return;
    const Fr s = power_from_tables(lo, hi, lo_bits, 0);
    const Fr ui = ld_fr(a + i), ur = ld_fr(a + r);
    const Fr vi = ldg_fr(c + i), vr = ldg_fr(c + r);
    st_fr(a + i, ur * power_from_tables(lo, hi, lo_bits, i) - vr * s);
    if (i != r) st_fr(a + r, ui * power_from_tables(lo, hi, lo_bits, r) - vi * s);
}

// The same last step out of place and in tiles, for lg >= 2 * H_TILE_LOG:
// out[j] = p(j) a[rev j] - p(0) c[rev j]. Index bits split as (hi | mid |
// lo), hi and lo H_TILE_LOG bits each; rev maps (hi, mid, lo) to (rev lo,
// rev mid, rev hi), so block `mid` reads the 2^(2 H_TILE_LOG) elements of
// one mid value in runs of 2^H_TILE_LOG consecutive ones (lo varying),
// forms p(rev i) a[i] - p(0) c[i] as it loads them, and writes them
// through shared memory in runs of 2^H_TILE_LOG consecutive places (rev hi
// varying). The in-place kernel above reads one element of each pair from
// a scattered place: 26.1 ms at 2^27 on the H200 (2026-12-04 call 45); the
// tiles 8.9 ms (run 24, H200), and the in-place forward's permutation in
// tiles took it from 45.76 to 41.38 ms (run 35, H100). Tiles of 32 x 32
// only: no other tile size has been measured.
// Shared memory: two arrays (low and high 16 bytes) of 2^H_TILE_LOG rows
// of 2^H_TILE_LOG slots, element (h, l) at h 2^H_TILE_LOG + (l ^ ((h >> 2)
// & 7)): a quarter warp's eight 16-byte accesses fall on distinct bank
// groups both when it loads (h fixed, eight consecutive l) and when it
// writes (l fixed, h = rev jl for eight consecutive jl: h differs in bits
// 2-4).
#define H_TILE_LOG 5
#define H_TILE_THREADS 256
// Element e = h 2^H_TILE_LOG + l of a tile into its slot, and the element
// that place e = jh 2^H_TILE_LOG + jl of the reversed tile takes: (h, l) =
// (rev jl, rev jh).
DEV void tile_put(uint4* sh_lo, uint4* sh_hi, uint32_t e, const Fr& x) {
    const uint32_t h = e >> H_TILE_LOG, l = e & ((1u << H_TILE_LOG) - 1);
    const uint32_t slot = (h << H_TILE_LOG) + (l ^ ((h >> 2) & 7));
    sh_lo[slot] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
    sh_hi[slot] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
}
DEV Fr tile_get_reversed(const uint4* sh_lo, const uint4* sh_hi, uint32_t e) {
    const uint32_t jh = e >> H_TILE_LOG, jl = e & ((1u << H_TILE_LOG) - 1);
    const uint32_t h = __brev(jl) >> (32 - H_TILE_LOG), l = __brev(jh) >> (32 - H_TILE_LOG);
    const uint32_t slot = (h << H_TILE_LOG) + (l ^ ((h >> 2) & 7));
    const uint4 x0 = sh_lo[slot], x1 = sh_hi[slot];
    Fr x;
    x.v[0] = x0.x; x.v[1] = x0.y; x.v[2] = x0.z; x.v[3] = x0.w;
    x.v[4] = x1.x; x.v[5] = x1.y; x.v[6] = x1.z; x.v[7] = x1.w;
    return x;
}
extern "C" __global__ void __launch_bounds__(H_TILE_THREADS)
h_finish_tiled(Fr* __restrict__ out, const Fr* __restrict__ a, const Fr* __restrict__ c,
               uint32_t lg, const Fr* lo, const Fr* hi, uint32_t lo_bits) {
    constexpr uint32_t T = 1u << H_TILE_LOG;
    extern __shared__ uint4 shm[];  // 2 T^2 16-byte slots (dynamic)
    uint4* sh_lo = shm;
    uint4* sh_hi = shm + T * T;
    const uint32_t mid = blockIdx.x;
    const uint32_t mid_bits = lg - 2 * H_TILE_LOG;
    const Fr s = ldg_fr(lo);  // p(0) = c * base^0
    for (uint32_t e = threadIdx.x; e < T * T; e += blockDim.x) {
        const uint32_t h = e >> H_TILE_LOG, l = e & (T - 1);
        const uint32_t i = (h << (lg - H_TILE_LOG)) | (mid << H_TILE_LOG) | l;
        const uint32_t j = __brev(i) >> (32 - lg);
        tile_put(sh_lo, sh_hi, e,
                 ldg_fr(a + i) * power_from_tables(lo, hi, lo_bits, j) - ldg_fr(c + i) * s);
    }
    __syncthreads();
    const uint32_t rmid = mid_bits == 0 ? 0 : __brev(mid) >> (32 - mid_bits);
    for (uint32_t e = threadIdx.x; e < T * T; e += blockDim.x) {
        // Place (jh | rmid | jl): it came from hi = rev jl, lo = rev jh.
        const uint32_t jh = e >> H_TILE_LOG, jl = e & (T - 1);
        st_fr(out + ((jh << (lg - H_TILE_LOG)) | (rmid << H_TILE_LOG) | jl),
              tile_get_reversed(sh_lo, sh_hi, e));
    }
}

// The in-place bit reversal (ntt_bitrev's work, the same arguments) in
// tiles, for lg >= 2 * H_TILE_LOG: block `mid` swaps the tile of mid value
// `mid` with that of rev mid (blocks with mid > rev mid have nothing to
// do; a tile with mid = rev mid is its own partner). Both tiles are read
// before either is written: the partner's into registers (each thread
// T^2 / H_TILE_THREADS elements), the own one into shared memory; the
// own one goes out reversed to the partner's places, then the partner's
// through shared memory to the own places, each read and written in runs
// of 2^H_TILE_LOG elements as in h_finish_tiled. The thread-per-pair
// kernel above writes one element of each pair to a scattered place and
// leaves half its threads idle (~1.1 TB/s at 2^27 on the H100, 2026-12-05
// call 57).
extern "C" __global__ void __launch_bounds__(H_TILE_THREADS)
ntt_bitrev_tiled(Fr* d, uint32_t lg, const Fr* lo, const Fr* hi, uint32_t lo_bits,
                 uint32_t scale) {
    constexpr uint32_t T = 1u << H_TILE_LOG;
    constexpr uint32_t PER_THREAD = T * T / H_TILE_THREADS;
    extern __shared__ uint4 shm[];  // 2 T^2 16-byte slots (dynamic)
    uint4* sh_lo = shm;
    uint4* sh_hi = shm + T * T;
    const uint32_t mid = blockIdx.x;
    const uint32_t mid_bits = lg - 2 * H_TILE_LOG;
    const uint32_t rmid = mid_bits == 0 ? 0 : __brev(mid) >> (32 - mid_bits);
    if (mid > rmid) return;
    // Element e of tile m (row h = e / T, column l) sits at (h | m | l);
    // loaded, it is scaled by c*base^i of its place i (scale 1) or of the
    // place rev i it moves to (scale 2).
    auto load = [&](uint32_t m, uint32_t e) {
        const uint32_t i = ((e >> H_TILE_LOG) << (lg - H_TILE_LOG)) | (m << H_TILE_LOG) | (e & (T - 1));
        Fr x = ld_fr(d + i);
        if (scale == 1) x = x * power_from_tables(lo, hi, lo_bits, i);
        if (scale == 2) x = x * power_from_tables(lo, hi, lo_bits, __brev(i) >> (32 - lg));
        return x;
    };
    // Place e of tile m's reversal: row jh, column jl, from the other
    // tile's element (rev jl, rev jh) (h_finish_tiled's second loop).
    auto store = [&](uint32_t m, uint32_t e) {
        const uint32_t i = ((e >> H_TILE_LOG) << (lg - H_TILE_LOG)) | (m << H_TILE_LOG) | (e & (T - 1));
        st_fr(d + i, tile_get_reversed(sh_lo, sh_hi, e));
    };
    Fr partner[PER_THREAD];
    if (mid != rmid) {
#pragma unroll
        for (uint32_t k = 0; k < PER_THREAD; k++) partner[k] = load(rmid, threadIdx.x + k * H_TILE_THREADS);
    }
#pragma unroll
    for (uint32_t k = 0; k < PER_THREAD; k++) {
        const uint32_t e = threadIdx.x + k * H_TILE_THREADS;
        tile_put(sh_lo, sh_hi, e, load(mid, e));
    }
    __syncthreads();
#pragma unroll
    for (uint32_t k = 0; k < PER_THREAD; k++) store(rmid, threadIdx.x + k * H_TILE_THREADS);
    if (mid == rmid) return;
    __syncthreads();
#pragma unroll
    for (uint32_t k = 0; k < PER_THREAD; k++) tile_put(sh_lo, sh_hi, threadIdx.x + k * H_TILE_THREADS, partner[k]);
    __syncthreads();
#pragma unroll
    for (uint32_t k = 0; k < PER_THREAD; k++) store(mid, threadIdx.x + k * H_TILE_THREADS);
}
