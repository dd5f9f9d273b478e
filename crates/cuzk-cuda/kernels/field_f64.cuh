// Fq products with their limb products on the FP64 pipe.
//
// Why: every Fq product of field.cuh (mont_mul_ptx, mont_sqr_ptx) is 576 /
// 450 IMADs, and on Hopper IMAD issues at half rate (16 lanes a clock a
// sub-partition), so the products, which are most of an MSM's and the NTT's
// time, run at the IMAD pipe's rate while the FP64 pipe (as wide as IMAD on
// the H100/H200, 64 DFMA a clock an SM) is idle. This file multiplies with
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
// a * b, 64 for the Montgomery reduction), ~400 FP64 and ~500 integer
// instructions, against 1152 IMAD issue cycles for mont_mul_ptx.
//
// The representation in memory does not change: inputs and outputs are Fq
// as field.cuh keeps it (12 u32 limbs, Montgomery form with R = 2^384, below
// p). Inside, 8 limbs of 52 bits (416 bits); the reduction takes 7 rows of
// 52 bits and one of 20 (364 + 20 = 384), so that R stays 2^384 and these
// products mix freely with field.cuh's.
//
// Included by field.cuh once its Fp template is defined (these products are
// templates over the field's parameters: Fq's, inline or not).
#pragma once

namespace fq64 {

constexpr int L = 8;  // 52-bit limbs of an Fq
constexpr uint64_t M52 = (1ull << 52) - 1;
constexpr uint64_t M20 = (1ull << 20) - 1;
constexpr uint64_t LO_BIAS = 0x4330000000000000ull;  // the bits of 2^52
constexpr uint64_t HI_BIAS = 0x4670000000000000ull;  // the bits of 2^104
constexpr double TWO52 = 4503599627370496.0;                    // 2^52
constexpr double C_HI = 20282409603651670423947251286016.0;     // 2^104
constexpr double C_LO = 20282409603651670423947251286016.0 + TWO52;
// -p^-1 mod 2^52; its low 20 bits are -p^-1 mod 2^20 (the last row's).
constexpr uint64_t INV = 0x3fffcfffcfffdull;

// p in 52-bit limbs, as doubles (each exact).
DEV double p_limb(int j) {
    constexpr double P[L] = {
        (double)0xeffffffffaaabull, (double)0xfeb153ffffb9full, (double)0x6b0f6241eabffull,
        (double)0x12bf6730d2a0full, (double)0x764774b84f385ull, (double)0x1ba7b6434bacdull,
        (double)0x1ea397fe69a4bull, (double)0x1a011ull};
    return P[j];
}

// The double whose value is x (x < 2^52): 2^52 + x by its bits, less 2^52.
DEV double exact_double(uint64_t x) {
    return __dsub_rn(__longlong_as_double((long long)(x | LO_BIAS)), TWO52);
}

// An Fq's 12 u32 limbs as 8 limbs of 52 bits, each an exact double.
template <class P>
DEV void split(const Fp<P>& a, double* d) {
    uint64_t w[6];
#pragma unroll
    for (int i = 0; i < 6; i++) w[i] = a.v[2 * i] | (uint64_t)a.v[2 * i + 1] << 32;
#pragma unroll
    for (int k = 0; k < L; k++) {
        const int q = 52 * k / 64, s = 52 * k % 64;
        uint64_t x = w[q] >> s;
        if (s > 12 && q + 1 < 6) x |= w[q + 1] << (64 - s);
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

// The Montgomery reduction of the 16 columns of a product (column k weighs
// 2^(52 k); every column below 2^60) by 2^384, and its result as an Fq
// below p. `col` is consumed.
template <class P>
DEV Fp<P> reduce(uint64_t* col) {
#pragma unroll
    for (int r = 0; r < L; r++) {
        // Rows 0..6 clear 52 bits each, row 7 the remaining 20.
        const uint64_t q = (col[r] * INV) & (r < L - 1 ? M52 : M20);
        const double qd = exact_double(q);
#pragma unroll
        for (int j = 0; j < L; j++) mul_acc<1>(col, r + j, qd, p_limb(j));
        if (r < L - 1) col[r + 1] += col[r] >> 52;
    }
    // The result is the columns 7.. as an integer, shifted down by 384 - 364
    // = 20 bits; it is below 2p < 2^382, so column 15 and what the carries
    // would leave there are 0 (not read).
    uint64_t n[L];
    uint64_t c = 0;
#pragma unroll
    for (int k = 0; k < L; k++) {
        const uint64_t x = col[L - 1 + k] + c;
        n[k] = x & M52;
        c = x >> 52;
    }
    Fp<P> r;
#pragma unroll
    for (int w = 0; w < 12; w++) {
        const int pos = 20 + 32 * w, k = pos / 52, s = pos % 52;
        uint64_t x = n[k] >> s;
        if (s > 20 && k + 1 < L) x |= n[k + 1] << (52 - s);
        r.v[w] = (uint32_t)x;
    }
    r.reduce_once();
    return r;
}

}  // namespace fq64

// a * b * 2^-384 mod p, as mont_mul_ptx, with the limb products as DFMAs.
template <class P>
DEV Fp<P> fq_mul_f64(const Fp<P>& a, const Fp<P>& b) {
    static_assert(P::N == 12, "the FP64 product is Fq's");
    using namespace fq64;
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
    return reduce<P>(col);
}

// a^2 * 2^-384 mod p: each limb product x_i x_j (i != j) formed once and
// added twice (36 limb products instead of 64).
template <class P>
DEV Fp<P> fq_sqr_f64(const Fp<P>& a) {
    static_assert(P::N == 12, "the FP64 square is Fq's");
    using namespace fq64;
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
    return reduce<P>(col);
}
