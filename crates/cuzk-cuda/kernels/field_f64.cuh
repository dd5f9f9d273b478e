// Fq and Fr products with their limb products on the FP64 pipe.
//
// Why: an Fq product of field.cuh (mont_mul_ptx) is 301 IMADs in SASS,
// nearly all IMAD.WIDE, which hold Hopper's half-rate IMAD pipe about 4
// cycles a warp each (the measured 2.62e10 products/s on the H200 is ~1276
// cycles a warp-product), so the products, most of an MSM's and the NTT's
// time, run at the IMAD pipe's rate while the FP64 pipe (as wide as IMAD's
// on the H100/H200, 64 DFMA a clock an SM) is idle. This file multiplies with
// DFMAs instead (Emmart, Zheng and Weems, "Faster Modular Exponentiation
// Using Double Precision Floating Point Arithmetic on the GPU", ARITH 2018):
// limbs of 52 bits held exactly in doubles, and each 104-bit limb product
// split exactly into a high and a low half by two fused multiply-adds:
//
//   hi = fma_rz(x, y, 2^104)              = 2^104 + floor(xy / 2^52) 2^52
//   lo = fma   (x, y, (2^104 + 2^52) - hi) = 2^52 + (xy mod 2^52)
//
// (x, y < 2^52; hi lies in [2^104, 2^105), where doubles are 2^52 apart,
// and rounding toward zero makes it the floor; the subtraction and lo are
// exact.) The two halves' bit patterns are their values plus a constant
// (the bits of 2^104 and of 2^52), so columns of them are summed as 64-bit
// integers, the constants taken off. A product is 3 FP64 operations and two
// 64-bit integer additions per limb product: 128 limb products (64 for
// a * b, 64 for the Montgomery reduction): 952 SASS instructions (256
// DFMA, 152 DADD; sm_90), issue-bound at ~952 cycles a warp-product
// against mont_mul_ptx's ~1276 on the IMAD pipe, and with both kinds of
// product in flight the two pipes work at once (field.cuh's mul_fp64).
//
// Measured on the H200 (bench/gpu-kernels.md run 29): no faster. Alone the
// Fq product runs at 2.44e10/s against mont_mul_ptx's 2.56e10 (Fr 5.24e10
// against 4.98e10): at two warps a scheduler each warp waits ~3.2 cycles
// an instruction on its own DFMA chain, so it reaches 62% of the issue
// slots and 59% of the FP64 pipe. Beside the IMAD product the pair runs at
// 2.58e10; and in the kernels the FP64 product's registers cost occupancy
// (ntt_pass_r2 104 -> 156 registers: two blocks of 256 an SM -> one), so
// the mix builds are slower (NTT 2^27 44.70 -> 47.55 ms, 0/1 sum 17.97 ->
// 21.49). Kept for the record and for other cards, off by default.
//
// The representation in memory does not change: inputs and outputs are
// elements as field.cuh keeps them (u32 limbs, Montgomery form with R =
// 2^384 for Fq and 2^256 for Fr, below the modulus). Inside, limbs of 52
// bits: 8 for Fq (416 bits), 5 for Fr (260); the reduction takes rows of 52
// bits and a last, shorter one (Fq: 7 x 52 + 20 = 384, Fr: 4 x 52 + 48 =
// 256), so that R stays field.cuh's and these products mix freely with
// its own. An Fr product is 50 limb products (448 SASS instructions, 165
// of them FP64) against mont_mul_ptx's 178 IMADs.
//
// Included by field.cuh once its Fp template is defined (these products are
// templates over the field's parameters: Fr's, and Fq's inline or not).
#pragma once

namespace f64p {

constexpr uint64_t M52 = (1ull << 52) - 1;
constexpr uint64_t LO_BIAS = 0x4330000000000000ull;  // the bits of 2^52
constexpr uint64_t HI_BIAS = 0x4670000000000000ull;  // the bits of 2^104
constexpr double TWO52 = 4503599627370496.0;                 // 2^52
constexpr double C_HI = 20282409603651670423947251286016.0;  // 2^104
constexpr double C_LO = 20282409603651670423947251286016.0 + TWO52;

// A field's modulus in 52-bit limbs. L: limbs; LAST: the bits the last
// reduction row clears (52 (L - 1) + LAST = 32 N, field.cuh's R); INV:
// -m^-1 mod 2^52 (its low LAST bits are -m^-1 mod 2^LAST); limb(j): the
// modulus' limb j as a double (each exact).
template <int N>
struct Limbs;
template <>
struct Limbs<12> {  // Fq: p < 2^381
    static constexpr int L = 8, LAST = 20;
    static constexpr uint64_t INV = 0x3fffcfffcfffdull;
    DEV static double limb(int j) {
        constexpr double P[L] = {
            (double)0xeffffffffaaabull, (double)0xfeb153ffffb9full, (double)0x6b0f6241eabffull,
            (double)0x12bf6730d2a0full, (double)0x764774b84f385ull, (double)0x1ba7b6434bacdull,
            (double)0x1ea397fe69a4bull, (double)0x1a011ull};
        return P[j];
    }
};
template <>
struct Limbs<8> {  // Fr: r < 2^255
    static constexpr int L = 5, LAST = 48;
    static constexpr uint64_t INV = 0xffffeffffffffull;
    DEV static double limb(int j) {
        constexpr double R[L] = {(double)0xfffff00000001ull, (double)0x2fffe5bfefffull,
                                 (double)0x9a1d80553bda4ull, (double)0x7d483339d8080ull,
                                 (double)0x73eda753299dull};
        return R[j];
    }
};

// The double whose value is x (x < 2^52): 2^52 + x by its bits, less 2^52.
DEV double exact_double(uint64_t x) {
    return __dsub_rn(__longlong_as_double((long long)(x | LO_BIAS)), TWO52);
}

// An element's N u32 limbs as L limbs of 52 bits, each an exact double.
template <class P>
DEV void split(const Fp<P>& a, double* d) {
    constexpr int N = P::N, W = N / 2, L = Limbs<N>::L;
    uint64_t w[W];
#pragma unroll
    for (int i = 0; i < W; i++) w[i] = a.v[2 * i] | (uint64_t)a.v[2 * i + 1] << 32;
#pragma unroll
    for (int k = 0; k < L; k++) {
        const int q = 52 * k / 64, s = 52 * k % 64;
        uint64_t x = w[q] >> s;
        if (s > 12 && q + 1 < W) x |= w[q + 1] << (64 - s);
        d[k] = exact_double(x & M52);
    }
}

// col[k] += lo(x y), col[k + 1] += hi(x y), each `times` times (1 or 2).
template <int times>
DEV void mul_acc(uint64_t* col, int k, double x, double y) {
    const double hi = __fma_rz(x, y, C_HI);
    const double lo = __fma_rn(x, y, __dsub_rn(C_LO, hi));
    const uint64_t l = (uint64_t)__double_as_longlong(lo) - LO_BIAS;
    const uint64_t h = (uint64_t)__double_as_longlong(hi) - HI_BIAS;
    if (times == 2) {
        col[k] += l + l;
        col[k + 1] += h + h;
    } else {
        col[k] += l;
        col[k + 1] += h;
    }
}

// Row r of the Montgomery reduction: q = -col[r] / m mod 2^52 (2^LAST in
// the last row), col += q m 2^(52 r), which clears column r; its carry
// moves up. Column r must hold every limb product of weight 2^(52 r) by
// then.
template <class P>
DEV void reduce_row(uint64_t* col, int r) {
    using M = Limbs<P::N>;
    constexpr int L = M::L;
    const uint64_t mask = r < L - 1 ? M52 : (1ull << M::LAST) - 1;
    const uint64_t q = (col[r] * M::INV) & mask;
    const double qd = exact_double(q);
#pragma unroll
    for (int j = 0; j < L; j++) mul_acc<1>(col, r + j, qd, M::limb(j));
    if (r < L - 1) col[r + 1] += col[r] >> 52;
}

// The reduced columns (every row done; each column below 2^60) as an
// element below the modulus: the columns L-1.. as an integer, shifted down
// by LAST bits (R = 2^(52 (L - 1) + LAST)).
template <class P>
DEV Fp<P> finish(const uint64_t* col) {
    using M = Limbs<P::N>;
    constexpr int L = M::L;
    // The result is below 2m < 2^(32 N), so it lies in the K columns that
    // hold bits LAST .. LAST + 32 N - 1 of them, and what the carries would
    // leave above is 0 (not read; Fq: K = 8 of the 9 columns, Fr: K = 6,
    // all of them).
    constexpr int K = (M::LAST + 32 * P::N + 51) / 52;
    static_assert(L - 1 + K <= 2 * L, "the result lies in the product's columns");
    uint64_t n[K];
    uint64_t c = 0;
#pragma unroll
    for (int k = 0; k < K; k++) {
        const uint64_t x = col[L - 1 + k] + c;
        n[k] = x & M52;
        c = x >> 52;
    }
    Fp<P> r;
#pragma unroll
    for (int w = 0; w < P::N; w++) {
        const int pos = M::LAST + 32 * w, k = pos / 52, s = pos % 52;
        uint64_t x = n[k] >> s;
        if (s > 20 && k + 1 < K) x |= n[k + 1] << (52 - s);
        r.v[w] = (uint32_t)x;
    }
    r.reduce_once();
    return r;
}

}  // namespace f64p

// a * b * R^-1 mod m, as mont_mul_ptx, with the limb products as DFMAs.
// Every limb product first, then the reduction's rows: the order that
// needs the fewest registers (sm_90 ptxas, Fq alone: 66 against 72 row by
// row, where the products of later rows overlap the reduction; in
// msm_accumulate_g1 with CUZK_FP64_MIX_FQ 194 against 208).
template <class P>
DEV Fp<P> mul_f64(const Fp<P>& a, const Fp<P>& b) {
    using namespace f64p;
    constexpr int L = Limbs<P::N>::L;
    double x[L], y[L];
    split(a, x);
    split(b, y);
    uint64_t col[2 * L];
#pragma unroll
    for (int k = 0; k < 2 * L; k++) col[k] = 0;
#pragma unroll
    for (int i = 0; i < L; i++)
#pragma unroll
        for (int j = 0; j < L; j++) mul_acc<1>(col, i + j, x[i], y[j]);
#pragma unroll
    for (int r = 0; r < L; r++) reduce_row<P>(col, r);
    return finish<P>(col);
}

// a^2 * R^-1 mod m: each limb product x_i x_j (i != j) formed once and
// added twice (Fq: 36 limb products instead of 64).
template <class P>
DEV Fp<P> sqr_f64(const Fp<P>& a) {
    using namespace f64p;
    constexpr int L = Limbs<P::N>::L;
    double x[L];
    split(a, x);
    uint64_t col[2 * L];
#pragma unroll
    for (int k = 0; k < 2 * L; k++) col[k] = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
        mul_acc<1>(col, 2 * i, x[i], x[i]);
#pragma unroll
        for (int j = i + 1; j < L; j++) mul_acc<2>(col, i + j, x[i], x[j]);
    }
#pragma unroll
    for (int r = 0; r < L; r++) reduce_row<P>(col, r);
    return finish<P>(col);
}
