// BLS12-381 field arithmetic on the GPU: Fr (scalar field, 255 bits) and Fq
// (base field, 381 bits) in Montgomery form with 32-bit limbs, and
// Fq2 = Fq[u]/(u^2 + 1).
//
// Layout matches blst/blstrs exactly: an element is the little-endian array of
// its Montgomery limbs (blst keeps u64 limbs; on a little-endian machine the
// same bytes read as twice as many u32 limbs), so host buffers of
// blstrs::Scalar / Fp / Fp2 are copied to the device as they are.
//
// Multiplication is CIOS Montgomery with 64-bit accumulators: the compiler
// turns `(u64)a*b + c` into IMAD.WIDE.U32. Both moduli leave spare top bits
// (r < 2^255 of 256, p < 2^381 of 384), so a CIOS result is < 2m and one
// conditional subtraction brings it below m.
#pragma once
#include <stdint.h>

#define DEV __device__ __forceinline__

struct FrParams {
    static constexpr int N = 8;
    static constexpr bool OUTLINE = false;  // NTT butterflies want it inline
    static constexpr uint32_t INV = 0xffffffffu;  // -r^-1 mod 2^32
    // r's two low limbs are 1 and 2^32 - 1 (r = 1 - 2^32 mod 2^64): the
    // Montgomery rows add m r's first two limb products without
    // multiplying (ptx_mont_reduce_row).
    static constexpr bool LOW_LIMBS_1_AND_MINUS_1 = true;
    // Products by Karatsuba and a separate reduction (mont_mul_kara) and
    // a b - c d with one reduction (mul_sub): not for Fr (see
    // mont_mul_inline).
    static constexpr bool KARATSUBA = false;
    DEV static uint32_t mod(int i) {
        constexpr uint32_t M[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                   0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
        return M[i];
    }
    DEV static uint32_t one(int i) {  // R mod r
        constexpr uint32_t M[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                   0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
        return M[i];
    }
};

struct FqParams {
    static constexpr int N = 12;
    // Out of line: a G2 addition holds ~40 Fq products; inlined, the MSM
    // kernels grew so large that ptxas ran for minutes per architecture.
    static constexpr bool OUTLINE = true;
    static constexpr uint32_t INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    static constexpr bool LOW_LIMBS_1_AND_MINUS_1 = false;
    static constexpr bool KARATSUBA = true;
    DEV static uint32_t mod(int i) {
        constexpr uint32_t M[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe,
                                    0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84,
                                    0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
        return M[i];
    }
    // p^2, for the differences of wide products (sub_wide).
    DEV static uint32_t mod_sq(int i) {
        constexpr uint32_t M[24] = {
            0x1c718e39, 0x26aa0000, 0x76382eab, 0x7ced6b1d, 0x62113cfd, 0x162c3383,
            0x3e71b743, 0x66bf91ed, 0x7091a049, 0x292e85a8, 0x86185c7b, 0x1d68619c,
            0x0978ef01, 0xf5314933, 0x16ddca6e, 0x50a62cfd, 0x349e8bd0, 0x66e59e49,
            0x0e7046b4, 0xe2dc90e5, 0xa22f25e9, 0x4bd278ea, 0xb8c35fc7, 0x02a437a4};
        return M[i];
    }
    DEV static uint32_t one(int i) {  // R mod p
        constexpr uint32_t M[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b,
                                    0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853,
                                    0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
        return M[i];
    }
};

template <class P>
struct Fp {
    static constexpr int N = P::N;
    uint32_t v[N];

    DEV static Fp zero() {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    DEV static Fp one() {
        Fp r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = P::one(i);
        return r;
    }
    DEV bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    DEV bool operator==(const Fp& o) const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }
    DEV bool operator!=(const Fp& o) const { return !(*this == o); }

    // r = a - m if a >= m (a < 2m, a fits in N limbs)
    //
    // On the GPU the subtraction is a PTX borrow chain and the select is by
    // its final borrow. The 64-bit C++ form (the emulator's below) compiles
    // to a signed shift per limb for the borrow, and inside the Montgomery
    // product it made ptxas save and restore carry predicates across the
    // rows (P2R / ISETP.NE pairs): about a quarter of the product's SASS
    // (sm_90, nvcc 13.0; bench/gpu-kernels.md runs 15 and 16).
    DEV void reduce_once() {
#ifdef CUZK_EMU
        uint32_t t[N];
        int64_t borrow = 0;
        for (int i = 0; i < N; i++) {
            int64_t d = (int64_t)v[i] - P::mod(i) + borrow;
            t[i] = (uint32_t)d;
            borrow = d >> 32;
        }
        if (borrow == 0) {
            for (int i = 0; i < N; i++) v[i] = t[i];
        }
#else
        uint32_t t[N], borrow;
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(t[0]) : "r"(v[0]), "r"(P::mod(0)));
#pragma unroll
        for (int i = 1; i < N; i++)
            asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(t[i]) : "r"(v[i]), "r"(P::mod(i)));
        asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
#pragma unroll
        for (int i = 0; i < N; i++) v[i] = borrow ? v[i] : t[i];
#endif
    }

    // Addition and subtraction as PTX carry chains (add.cc / addc.cc): about
    // half the instructions of the 64-bit C++ form. The spare top bits of
    // both moduli mean a + b never carries out of N limbs.
#ifdef CUZK_EMU
    // Portable forms for the CPU emulation of the kernels (emu/), which
    // compiles this header as C++ without PTX.
    DEV Fp operator+(const Fp& b) const {
        Fp r;
        uint64_t c = 0;
        for (int i = 0; i < N; i++) {
            c += (uint64_t)v[i] + b.v[i];
            r.v[i] = (uint32_t)c;
            c >>= 32;
        }
        r.reduce_once();
        return r;
    }
    DEV Fp operator-(const Fp& b) const {
        Fp r;
        int64_t borrow = 0;
        for (int i = 0; i < N; i++) {
            int64_t d = (int64_t)v[i] - b.v[i] + borrow;
            r.v[i] = (uint32_t)d;
            borrow = d >> 32;
        }
        if (borrow) {
            uint64_t c = 0;
            for (int i = 0; i < N; i++) {
                c += (uint64_t)r.v[i] + P::mod(i);
                r.v[i] = (uint32_t)c;
                c >>= 32;
            }
        }
        return r;
    }
#else
    DEV Fp operator+(const Fp& b) const {
        Fp r;
        uint32_t t[N], borrow;
        asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(v[0]), "r"(b.v[0]));
#pragma unroll
        for (int i = 1; i < N; i++)
            asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(v[i]), "r"(b.v[i]));
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(t[0]) : "r"(r.v[0]), "r"(P::mod(0)));
#pragma unroll
        for (int i = 1; i < N; i++)
            asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(t[i]) : "r"(r.v[i]), "r"(P::mod(i)));
        asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = borrow ? r.v[i] : t[i];
        return r;
    }
    DEV Fp operator-(const Fp& b) const {
        Fp r;
        uint32_t borrow;
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(v[0]), "r"(b.v[0]));
#pragma unroll
        for (int i = 1; i < N; i++)
            asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(v[i]), "r"(b.v[i]));
        asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
        asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(r.v[0]) : "r"(P::mod(0) & borrow));
#pragma unroll
        for (int i = 1; i < N - 1; i++)
            asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(r.v[i]) : "r"(P::mod(i) & borrow));
        asm volatile("addc.u32 %0, %0, %1;" : "+r"(r.v[N - 1]) : "r"(P::mod(N - 1) & borrow));
        return r;
    }
#endif
    // m - a, and 0 for a = 0 (a < m, so m - a never borrows).
    DEV Fp neg() const {
#ifdef CUZK_EMU
        if (is_zero()) return *this;
        Fp r;
        int64_t borrow = 0;
        for (int i = 0; i < N; i++) {
            int64_t d = (int64_t)P::mod(i) - v[i] + borrow;
            r.v[i] = (uint32_t)d;
            borrow = d >> 32;
        }
        return r;
#else
        // The borrow chain, then a mask for a = 0 (no branch).
        const uint32_t keep = is_zero() ? 0u : 0xffffffffu;
        Fp r;
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(P::mod(0)), "r"(v[0]));
#pragma unroll
        for (int i = 1; i < N - 1; i++)
            asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(P::mod(i)), "r"(v[i]));
        asm volatile("subc.u32 %0, %1, %2;" : "=r"(r.v[N - 1]) : "r"(P::mod(N - 1)), "r"(v[N - 1]));
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] &= keep;
        return r;
#endif
    }
    DEV Fp dbl() const { return *this + *this; }

    DEV Fp operator*(const Fp& b) const;
    DEV Fp sqr() const;

    // Montgomery form -> canonical integer (multiply by 1).
    DEV Fp from_mont() const {
        Fp one_plain = zero();
        one_plain.v[0] = 1;
        return *this * one_plain;
    }
};

// Montgomery product a*b*R^-1 mod m, plain C++ CIOS (kept as the readable
// reference; the kernels use mont_mul_ptx below, the GPU checks compare both
// with blst).
template <class P>
DEV Fp<P> mont_mul_cios(const Fp<P>& a, const Fp<P>& b) {
    constexpr int N = P::N;
    uint32_t t[N + 1];
#pragma unroll
    for (int i = 0; i < N + 1; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint64_t c = 0;
        const uint32_t bi = b.v[i];
#pragma unroll
        for (int j = 0; j < N; j++) {
            c = (uint64_t)a.v[j] * bi + t[j] + (c >> 32);
            t[j] = (uint32_t)c;
        }
        uint32_t tn = t[N] + (uint32_t)(c >> 32);  // fits: t < 2m < 2^(32N-1)
        const uint32_t m = t[0] * P::INV;
        int j0 = 1;
        if constexpr (P::LOW_LIMBS_1_AND_MINUS_1) {
            // ptx_mont_reduce_row's rule for r's limbs 1 and 2^32 - 1 (the
            // emulated kernels check it against blstrs): e + m = 0 with a
            // carry iff e != 0, m (2^32 - 1) = (low e, high m - [e != 0]).
            const uint32_t e = t[0], nz = e != 0u ? 1u : 0u;
            c = (uint64_t)t[1] + e + nz;
            t[0] = (uint32_t)c;
            // The carry into limb 2 as the loop reads it (c >> 32): at
            // most (2^32 - 2) + 1, since m - nz = 2^32 - 1 needs m = 0.
            c = ((c >> 32) + (uint64_t)(m - nz)) << 32;
            j0 = 2;
        } else {
            c = (uint64_t)m * P::mod(0) + t[0];
        }
#pragma unroll
        for (int j = j0; j < N; j++) {
            c = (uint64_t)m * P::mod(j) + t[j] + (c >> 32);
            t[j - 1] = (uint32_t)c;
        }
        c = (uint64_t)tn + (c >> 32);
        t[N - 1] = (uint32_t)c;
        t[N] = (uint32_t)(c >> 32);
    }
    Fp<P> r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = t[i];
    r.reduce_once();
    return r;
}

// The same product with PTX carry chains (mad.lo.cc / madc.hi.cc), which
// ptxas maps to IMAD with carry-in/out and no separate adds: the C++ version
// spends ~450 IADD3 beside ~520 IMAD on an Fq product (SASS, sm_90).
// Products a[j]*b_i of even j go to `ev`, odd j to `od` (one limb up), so
// each chain's lo/hi pairs never overlap; the Montgomery step folds m*p into
// both and shifts by one limb per row, the two arrays trading roles each
// row. Needs an even limb count and a modulus with its top bit clear (both
// hold for r and p). The asm statements are volatile so that the compiler
// keeps the carry flag's producer and consumer adjacent.
#define PTX asm volatile
template <int N>
DEV void ptx_mul_pairs(uint32_t* acc, const uint32_t* a, uint32_t bi) {
#pragma unroll
    for (int j = 0; j < N; j += 2)
        PTX("mul.lo.u32 %0, %2, %3; mul.hi.u32 %1, %2, %3;"
            : "=r"(acc[j]), "=r"(acc[j + 1])
            : "r"(a[j]), "r"(bi));
}
// acc += a[0,2,4..]*bi as a carry chain; the carry out stays in CC.CF.
template <int N>
DEV void ptx_mad_pairs(uint32_t* acc, const uint32_t* a, uint32_t bi) {
    PTX("mad.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
        : "+r"(acc[0]), "+r"(acc[1])
        : "r"(a[0]), "r"(bi));
#pragma unroll
    for (int j = 2; j < N; j += 2)
        PTX("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
            : "+r"(acc[j]), "+r"(acc[j + 1])
            : "r"(a[j]), "r"(bi));
}
// acc = (acc >> 2 limbs) + a[0,2,..]*bi + CC.CF.
template <int N>
DEV void ptx_mad_pairs_shift(uint32_t* acc, const uint32_t* a, uint32_t bi) {
#pragma unroll
    for (int j = 0; j < N - 2; j += 2)
        PTX("madc.lo.cc.u32 %0, %2, %3, %4; madc.hi.cc.u32 %1, %2, %3, %5;"
            : "=r"(acc[j]), "=r"(acc[j + 1])
            : "r"(a[j]), "r"(bi), "r"(acc[j + 2]), "r"(acc[j + 3]));
    PTX("madc.lo.cc.u32 %0, %2, %3, 0; madc.hi.u32 %1, %2, %3, 0;"
        : "=r"(acc[N - 2]), "=r"(acc[N - 1])
        : "r"(a[N - 2]), "r"(bi));
}
// The Montgomery half of a row: m * p added so that ev[0] becomes 0.
// For r (limbs 1, 2^32 - 1, ...; INV = -1) the first limb product of each
// chain needs no multiplier: with e = ev[0], m = -e mod 2^32, so
//   m * 1           = (lo m, hi 0), and ev[0] + m = 0 with a carry iff e != 0;
//   m * (2^32 - 1)  = m 2^32 - m = (lo e, hi m - [e != 0])
// (for e = 0 both are 0; for e != 0, 2^32 - m = e and the high word is
// m - 1). Two limb products become ALU additions: 178 -> 163 IMAD-pipe
// instructions an Fr product (SASS, sm_90; 8 ISETP and 8 SEL more).
template <class P>
DEV void ptx_mont_reduce_row(uint32_t* ev, uint32_t* od, const uint32_t* mod) {
    constexpr int N = P::N;
    if constexpr (P::LOW_LIMBS_1_AND_MINUS_1) {
        const uint32_t e = ev[0];
        const uint32_t m = 0u - e;
        const uint32_t hi = m - (e != 0u ? 1u : 0u);
        PTX("add.cc.u32 %0, %0, %2; addc.cc.u32 %1, %1, %3;"
            : "+r"(od[0]), "+r"(od[1])
            : "r"(e), "r"(hi));
#pragma unroll
        for (int j = 2; j < N; j += 2)
            PTX("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                : "+r"(od[j]), "+r"(od[j + 1])
                : "r"(mod[j + 1]), "r"(m));
        PTX("add.cc.u32 %0, %0, %2; addc.cc.u32 %1, %1, 0;" : "+r"(ev[0]), "+r"(ev[1]) : "r"(m));
#pragma unroll
        for (int j = 2; j < N; j += 2)
            PTX("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                : "+r"(ev[j]), "+r"(ev[j + 1])
                : "r"(mod[j]), "r"(m));
    } else {
        uint32_t m = ev[0] * P::INV;
        ptx_mad_pairs<N>(od, mod + 1, m);
        ptx_mad_pairs<N>(ev, mod, m);
    }
    PTX("addc.u32 %0, %0, 0;" : "+r"(od[N - 1]));
}
template <class P>
DEV void ptx_mont_row(uint32_t* ev, uint32_t* od, const uint32_t* a, const uint32_t* mod,
                      uint32_t bi, bool first) {
    constexpr int N = P::N;
    if (first) {
        ptx_mul_pairs<N>(od, a + 1, bi);
        ptx_mul_pairs<N>(ev, a, bi);
    } else {
        PTX("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
        ptx_mad_pairs_shift<N>(od, a + 1, bi);
        ptx_mad_pairs<N>(ev, a, bi);
        PTX("addc.u32 %0, %0, 0;" : "+r"(od[N - 1]));
    }
    ptx_mont_reduce_row<P>(ev, od, mod);
}
// ev += od >> 1 limb: the value of the two frames (ev + B od) as one, when
// the rows are over (N even: ev / od back in their first roles).
// ptx_mont_finish: that, then below the modulus (a product's or square's end).
template <int N>
DEV void ptx_fold_frames(uint32_t* ev, const uint32_t* od) {
    PTX("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
#pragma unroll
    for (int i = 1; i < N - 1; i++) PTX("addc.cc.u32 %0, %0, %1;" : "+r"(ev[i]) : "r"(od[i + 1]));
    PTX("addc.u32 %0, %0, 0;" : "+r"(ev[N - 1]));
}
template <class P>
DEV Fp<P> ptx_mont_finish(Fp<P>& r, const uint32_t* od) {
    ptx_fold_frames<P::N>(r.v, od);
    r.reduce_once();
    return r;
}
template <class P>
DEV Fp<P> mont_mul_ptx(const Fp<P>& a, const Fp<P>& b) {
    constexpr int N = P::N;
    uint32_t mod[N];
#pragma unroll
    for (int i = 0; i < N; i++) mod[i] = P::mod(i);
    Fp<P> r;
    uint32_t* ev = r.v;
    uint32_t od[N + 1];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        ptx_mont_row<P>(ev, od, a.v, mod, b.v[i], i == 0);
        ptx_mont_row<P>(od, ev, a.v, mod, b.v[i + 1], false);
    }
    // N is even: after N rows ev / od are back in their first roles.
    return ptx_mont_finish<P>(r, od);
}

// a^2 R^-1 mod p with the same rows as mont_mul_ptx, each limb product
// a_i a_j (i != j) formed once. Row i adds a_i * d_i at frame positions
// i .. N-1 only, where d_i = (a_i, 2 a_(i+1), 2 a_(i+2), ...) as limbs:
// a^2 = sum_i a_i 2^(32 i) (a_i 2^(32 i) + 2 sum_(j>i) a_j 2^(32 j)). The
// doubled limbs are those of 2a (position j takes a_(j-1)'s top bit) except
// at i + 1, where a_i's own top bit belongs to no pair. N(N+1)/2 limb
// products instead of N^2 (78 of 144 for Fq); the Montgomery half of each
// row is unchanged. Only for Fq: 2a must fit in N limbs with room (p <
// 2^381), and the frame value of a partial square stays below 2a + p < 3p,
// which for Fq fits the accumulator (for Fr, 3r > 2^256: Fr squares by
// product).
// One row of the square: `d` as above, `s` = the row's index (the loop
// that calls it is unrolled, so every test on s folds away).
template <class P>
DEV void ptx_sqr_row(uint32_t* ev, uint32_t* od, const uint32_t* a, const uint32_t* a2,
                     const uint32_t* mod, int s) {
    constexpr int N = P::N;
    uint32_t d[N];
#pragma unroll
    for (int j = 0; j < N; j++) d[j] = j == s ? a[s] : j == s + 1 ? a[j] << 1 : a2[j];
    const uint32_t ai = a[s];
    if (s == 0) {
        ptx_mul_pairs<N>(od, d + 1, ai);
        ptx_mul_pairs<N>(ev, d, ai);
    } else {
        PTX("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
        // od[k], od[k+1] hold frame positions k+1, k+2: the pair of d[k+1];
        // below s only the shift by two limbs.
#pragma unroll
        for (int k = 0; k < N - 2; k += 2) {
            if (k + 1 >= s)
                PTX("madc.lo.cc.u32 %0, %2, %3, %4; madc.hi.cc.u32 %1, %2, %3, %5;"
                    : "=r"(od[k]), "=r"(od[k + 1])
                    : "r"(d[k + 1]), "r"(ai), "r"(od[k + 2]), "r"(od[k + 3]));
            else
                PTX("addc.cc.u32 %0, %2, 0; addc.cc.u32 %1, %3, 0;"
                    : "=r"(od[k]), "=r"(od[k + 1])
                    : "r"(od[k + 2]), "r"(od[k + 3]));
        }
        // N - 1 >= s always.
        PTX("madc.lo.cc.u32 %0, %2, %3, 0; madc.hi.u32 %1, %2, %3, 0;"
            : "=r"(od[N - 2]), "=r"(od[N - 1])
            : "r"(d[N - 1]), "r"(ai));
        // The even positions from the first even k >= s; none in the last
        // row (s = N - 1), which then has no carry for od's top either.
        const int k0 = (s + 1) & ~1;
        if (k0 < N) {
            PTX("mad.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                : "+r"(ev[k0]), "+r"(ev[k0 + 1])
                : "r"(d[k0]), "r"(ai));
#pragma unroll
            for (int k = 2; k < N; k += 2)
                if (k > k0)
                    PTX("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                        : "+r"(ev[k]), "+r"(ev[k + 1])
                        : "r"(d[k]), "r"(ai));
            PTX("addc.u32 %0, %0, 0;" : "+r"(od[N - 1]));
        }
    }
    ptx_mont_reduce_row<P>(ev, od, mod);
}
template <class P>
DEV Fp<P> mont_sqr_ptx(const Fp<P>& a) {
    constexpr int N = P::N;
    static_assert(N == 12, "the squaring's bounds hold for Fq only");
    uint32_t mod[N], a2[N];
#pragma unroll
    for (int i = 0; i < N; i++) mod[i] = P::mod(i);
    a2[0] = a.v[0] << 1;
#pragma unroll
    for (int i = 1; i < N; i++) a2[i] = (a.v[i] << 1) | (a.v[i - 1] >> 31);
    Fp<P> r;
    uint32_t* ev = r.v;
    uint32_t od[N + 1];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        ptx_sqr_row<P>(ev, od, a.v, a2, mod, i);
        ptx_sqr_row<P>(od, ev, a.v, a2, mod, i + 1);
    }
    // N is even: after N rows ev / od are back in their first roles.
    return ptx_mont_finish<P>(r, od);
}

// ---- Products in two halves: wide (2N-limb) products and their reduction ----
//
// mont_mul_ptx interleaves the N x N limb products with the Montgomery rows
// (CIOS). Here the two are apart: the 2N-limb product a * b first, by one
// level of Karatsuba (three (N/2) x (N/2) products instead of four: 108 limb
// products for Fq instead of 144, 48 for Fr instead of 64; the sums and
// differences around them are additions, which run on the ALU pipe beside
// the IMAD pipe the products hold), then the N Montgomery rows on its low
// half (redc_wide). Keeping the product wide also lets a sum of products go
// through one reduction (mul_sub_wide, Fq2's product): lazy reduction.

// r[0..2K) = a[0..K) * b[0..K), schoolbook in mont_mul_ptx's frames (the
// value ev + B od, od one limb up, the two arrays trading roles each row so
// that every chain's lo/hi pairs stay on the same register pairs): each row
// adds a * b_i and retires its lowest limb as r[i] where mont_mul_ptx's
// would add m * p to clear it. K even.
template <int K>
DEV void ptx_mul_wide(uint32_t* r, const uint32_t* a, const uint32_t* b) {
    static_assert(K % 2 == 0, "the even/odd chains need an even limb count");
    uint32_t ev[K], od[K];
#pragma unroll
    for (int i = 0; i < K; i += 2) {
        uint32_t* e = ev;
        uint32_t* o = od;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if (i + h == 0) {
                ptx_mul_pairs<K>(o, a + 1, b[0]);
                ptx_mul_pairs<K>(e, a, b[0]);
            } else {
                PTX("add.cc.u32 %0, %0, %1;" : "+r"(e[0]) : "r"(o[1]));
                ptx_mad_pairs_shift<K>(o, a + 1, b[i + h]);
                ptx_mad_pairs<K>(e, a, b[i + h]);
                PTX("addc.u32 %0, %0, 0;" : "+r"(o[K - 1]));
            }
            r[i + h] = e[0];
            uint32_t* x = e;
            e = o;
            o = x;
        }
    }
    // After K rows (K even) the roles are back: the rest is ev's limbs from
    // 1 up plus od, i.e. r[K + k] = ev[k] + od[k + 1] in the frame of the
    // last row (whose ev was od).
    PTX("add.cc.u32 %0, %1, %2;" : "=r"(r[K]) : "r"(ev[0]), "r"(od[1]));
#pragma unroll
    for (int k = 1; k < K - 1; k++)
        PTX("addc.cc.u32 %0, %1, %2;" : "=r"(r[K + k]) : "r"(ev[k]), "r"(od[k + 1]));
    PTX("addc.u32 %0, %1, 0;" : "=r"(r[2 * K - 1]) : "r"(ev[K - 1]));
}

// t[0..2N) = a * b as integers (a, b < 2^(32N - 1)): with a = a0 + a1 B^K,
// b likewise (B = 2^32, K = N/2), z0 = a0 b0, z2 = a1 b1 and
// z1 = (a0 + a1)(b0 + b1) - z0 - z2 = a0 b1 + a1 b0. The half sums take K
// limbs and a carry each (ca, cb), so (a0 + a1)(b0 + b1) is sa sb plus
// (ca sb + cb sa) B^K plus ca cb B^2K: N + 1 limbs.
template <int N>
DEV void mul_wide_karatsuba(uint32_t* t, const uint32_t* a, const uint32_t* b) {
    constexpr int K = N / 2;
    ptx_mul_wide<K>(t, a, b);              // z0
    ptx_mul_wide<K>(t + N, a + K, b + K);  // z2
    uint32_t sa[K], sb[K], ca, cb, m[N + 1];
    PTX("add.cc.u32 %0, %1, %2;" : "=r"(sa[0]) : "r"(a[0]), "r"(a[K]));
#pragma unroll
    for (int k = 1; k < K; k++)
        PTX("addc.cc.u32 %0, %1, %2;" : "=r"(sa[k]) : "r"(a[k]), "r"(a[K + k]));
    PTX("addc.u32 %0, 0, 0;" : "=r"(ca));
    PTX("add.cc.u32 %0, %1, %2;" : "=r"(sb[0]) : "r"(b[0]), "r"(b[K]));
#pragma unroll
    for (int k = 1; k < K; k++)
        PTX("addc.cc.u32 %0, %1, %2;" : "=r"(sb[k]) : "r"(b[k]), "r"(b[K + k]));
    PTX("addc.u32 %0, 0, 0;" : "=r"(cb));
    ptx_mul_wide<K>(m, sa, sb);
    // + ca sb B^K + cb sa B^K + ca cb B^2K (masks, no branch)
    const uint32_t ma = 0u - ca, mb = 0u - cb, cc = ca & cb;
    PTX("add.cc.u32 %0, %0, %1;" : "+r"(m[K]) : "r"(sb[0] & ma));
#pragma unroll
    for (int k = 1; k < K; k++) PTX("addc.cc.u32 %0, %0, %1;" : "+r"(m[K + k]) : "r"(sb[k] & ma));
    PTX("addc.u32 %0, %1, 0;" : "=r"(m[N]) : "r"(cc));
    PTX("add.cc.u32 %0, %0, %1;" : "+r"(m[K]) : "r"(sa[0] & mb));
#pragma unroll
    for (int k = 1; k < K; k++) PTX("addc.cc.u32 %0, %0, %1;" : "+r"(m[K + k]) : "r"(sa[k] & mb));
    PTX("addc.u32 %0, %0, 0;" : "+r"(m[N]));
    // z1 = m - z0 - z2 (never negative)
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const uint32_t* z = t + h * N;
        PTX("sub.cc.u32 %0, %0, %1;" : "+r"(m[0]) : "r"(z[0]));
#pragma unroll
        for (int k = 1; k < N; k++) PTX("subc.cc.u32 %0, %0, %1;" : "+r"(m[k]) : "r"(z[k]));
        PTX("subc.u32 %0, %0, 0;" : "+r"(m[N]));
    }
    // t += z1 B^K; the carry runs to the top (the whole stays below B^2N).
    PTX("add.cc.u32 %0, %0, %1;" : "+r"(t[K]) : "r"(m[0]));
#pragma unroll
    for (int k = 1; k <= N; k++) PTX("addc.cc.u32 %0, %0, %1;" : "+r"(t[K + k]) : "r"(m[k]));
#pragma unroll
    for (int k = K + N + 1; k < 2 * N - 1; k++) PTX("addc.cc.u32 %0, %0, 0;" : "+r"(t[k]));
    PTX("addc.u32 %0, %0, 0;" : "+r"(t[2 * N - 1]));
}

// One Montgomery row of redc_wide, in mont_mul_ptx's frame: the value is
// ev + B od (od one limb up). Not the first row: the previous row left its
// roles swapped and its value divisible by B, so od[1] joins ev[0] and od
// shifts down two limbs inside the chain that adds m * p's odd limb
// products (no a * b_i here to carry the shift, as in mont_mul_ptx's rows).
template <class P>
DEV void ptx_redc_row(uint32_t* ev, uint32_t* od, const uint32_t* mod, bool first) {
    constexpr int N = P::N;
    if (!first) PTX("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
    if constexpr (P::LOW_LIMBS_1_AND_MINUS_1) {
        // ptx_mont_reduce_row's rule: m = -e; m * 1 = (m, 0) and
        // m * (2^32 - 1) = (e, m - [e != 0]).
        const uint32_t e = ev[0];
        const uint32_t m = 0u - e;
        const uint32_t hi = m - (e != 0u ? 1u : 0u);
        if (first) {
            od[0] = e;
            od[1] = hi;
            ptx_mul_pairs<N - 2>(od + 2, mod + 3, m);
        } else {
            PTX("addc.cc.u32 %0, %2, %3; addc.cc.u32 %1, %4, %5;"
                : "=r"(od[0]), "=r"(od[1])
                : "r"(od[2]), "r"(e), "r"(od[3]), "r"(hi));
            ptx_mad_pairs_shift<N - 2>(od + 2, mod + 3, m);
        }
        PTX("add.cc.u32 %0, %0, %2; addc.cc.u32 %1, %1, 0;" : "+r"(ev[0]), "+r"(ev[1]) : "r"(m));
#pragma unroll
        for (int j = 2; j < N; j += 2)
            PTX("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                : "+r"(ev[j]), "+r"(ev[j + 1])
                : "r"(mod[j]), "r"(m));
    } else {
        const uint32_t m = ev[0] * P::INV;
        if (first) ptx_mul_pairs<N>(od, mod + 1, m);
        else ptx_mad_pairs_shift<N>(od, mod + 1, m);
        ptx_mad_pairs<N>(ev, mod, m);
    }
    PTX("addc.u32 %0, %0, 0;" : "+r"(od[N - 1]));
}

// t R^-1 mod m for a 2N-limb t < (m - 1) R: the N Montgomery rows on t's
// low half (below R, so they end at most at m), then t's high half (below
// m - 1) added, then one conditional subtraction.
template <class P>
DEV Fp<P> redc_wide(const uint32_t* t) {
    constexpr int N = P::N;
    uint32_t mod[N];
#pragma unroll
    for (int i = 0; i < N; i++) mod[i] = P::mod(i);
    Fp<P> r;
    uint32_t* ev = r.v;
    uint32_t od[N + 1];
#pragma unroll
    for (int i = 0; i < N; i++) ev[i] = t[i];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        ptx_redc_row<P>(ev, od, mod, i == 0);
        ptx_redc_row<P>(od, ev, mod, false);
    }
    ptx_fold_frames<N>(ev, od);
    PTX("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(t[N]));
#pragma unroll
    for (int i = 1; i < N - 1; i++) PTX("addc.cc.u32 %0, %0, %1;" : "+r"(ev[i]) : "r"(t[N + i]));
    PTX("addc.u32 %0, %0, %1;" : "+r"(ev[N - 1]) : "r"(t[2 * N - 1]));
    r.reduce_once();
    return r;
}

// a b R^-1 mod m by the two halves above.
template <class P>
DEV Fp<P> mont_mul_kara(const Fp<P>& a, const Fp<P>& b) {
    uint32_t t[2 * P::N];
    mul_wide_karatsuba<P::N>(t, a.v, b.v);
    return redc_wide<P>(t);
}

// Lazy reduction: a * b - c * d with one reduction instead of two, for Fq
// (the point formulas' Y3, Fq2's product). The wide products are below p^2;
// their difference, made non-negative by adding p^2 when it borrows, is
// below p^2 < (p - 1) R, as redc_wide needs.
template <class P>
struct Wide {
    uint32_t v[2 * P::N];
};
template <class P>
DEV Wide<P> mul_wide(const Fp<P>& a, const Fp<P>& b) {
    Wide<P> t;
    mul_wide_karatsuba<P::N>(t.v, a.v, b.v);
    return t;
}
// x - y, plus p^2 if that borrows (x, y < p^2).
template <class P>
DEV Wide<P> sub_wide(const Wide<P>& x, const Wide<P>& y) {
    constexpr int W = 2 * P::N;
    Wide<P> r;
    uint32_t borrow;
    PTX("sub.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(x.v[0]), "r"(y.v[0]));
#pragma unroll
    for (int i = 1; i < W; i++)
        PTX("subc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(x.v[i]), "r"(y.v[i]));
    PTX("subc.u32 %0, 0, 0;" : "=r"(borrow));
    PTX("add.cc.u32 %0, %0, %1;" : "+r"(r.v[0]) : "r"(P::mod_sq(0) & borrow));
#pragma unroll
    for (int i = 1; i < W - 1; i++)
        PTX("addc.cc.u32 %0, %0, %1;" : "+r"(r.v[i]) : "r"(P::mod_sq(i) & borrow));
    PTX("addc.u32 %0, %0, %1;" : "+r"(r.v[W - 1]) : "r"(P::mod_sq(W - 1) & borrow));
    return r;
}
// x - y for x >= y (no correction).
template <class P>
DEV void sub_wide_in_place(Wide<P>& x, const Wide<P>& y) {
    constexpr int W = 2 * P::N;
    PTX("sub.cc.u32 %0, %0, %1;" : "+r"(x.v[0]) : "r"(y.v[0]));
#pragma unroll
    for (int i = 1; i < W - 1; i++) PTX("subc.cc.u32 %0, %0, %1;" : "+r"(x.v[i]) : "r"(y.v[i]));
    PTX("subc.u32 %0, %0, %1;" : "+r"(x.v[W - 1]) : "r"(y.v[W - 1]));
}
// a + b without reduction (below 2p: Fq's spare bits hold it).
template <class P>
DEV Fp<P> add_unreduced(const Fp<P>& a, const Fp<P>& b) {
    Fp<P> r;
    PTX("add.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < P::N - 1; i++)
        PTX("addc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(a.v[i]), "r"(b.v[i]));
    PTX("addc.u32 %0, %1, %2;" : "=r"(r.v[P::N - 1]) : "r"(a.v[P::N - 1]), "r"(b.v[P::N - 1]));
    return r;
}
template <class P>
DEV Fp<P> mul_sub_lazy(const Fp<P>& a, const Fp<P>& b, const Fp<P>& c, const Fp<P>& d) {
    return redc_wide<P>(sub_wide<P>(mul_wide<P>(a, b), mul_wide<P>(c, d)).v);
}
#undef PTX

#include "field_f64.cuh"

// The interleaved rows (mont_mul_ptx), or the portable form.
template <class P>
DEV Fp<P> mont_mul_rows(const Fp<P>& a, const Fp<P>& b) {
#if defined(CUZK_CIOS_MUL) || defined(CUZK_EMU)
    return mont_mul_cios<P>(a, b);
#else
    return mont_mul_ptx<P>(a, b);
#endif
}
// Fields whose parameters ask for it (KARATSUBA: Fq out of line) multiply
// by Karatsuba and a separate reduction (mont_mul_kara: 286 IMAD-pipe
// instructions against mont_mul_ptx's 301, 519 against 578 counting a wide
// IMAD as two; sm_90, nvcc 13.0.88); the others (Fr, the inline Fq of the
// G1 "inline" kernels) by the interleaved rows (Fr's Karatsuba form was
// 177 IMADs against 163: four-limb halves leave too little to save; not
// timed). Timed for Fq (run 48, H100, with the lazy Y3): G1 2^24 100.11 ->
// 93.77 ms, 2^26 392.83 -> 368.96; the inline G1 build lost with it
// (+5-8%), so FqInlineParams keeps the rows.
// CUZK_MUL_INTERLEAVED keeps every field on mont_mul_ptx, for comparison.
template <class P>
DEV Fp<P> mont_mul_inline(const Fp<P>& a, const Fp<P>& b) {
#ifdef CUZK_EMU
    return mont_mul_rows<P>(a, b);
#else
#if !defined(CUZK_CIOS_MUL) && !defined(CUZK_MUL_INTERLEAVED)
    if constexpr (P::KARATSUBA) return mont_mul_kara<P>(a, b);
#endif
    return mont_mul_rows<P>(a, b);
#endif
}
template <class P>
DEV Fp<P> mont_sqr_inline(const Fp<P>& a) {
#if defined(CUZK_CIOS_MUL) || defined(CUZK_EMU) || defined(CUZK_SQR_BY_MUL)
    return mont_mul_inline<P>(a, a);
#else
    return mont_sqr_ptx<P>(a);
#endif
}

__device__ __noinline__ Fp<FqParams> fq_mul_outline(const Fp<FqParams> a, const Fp<FqParams> b) {
    return mont_mul_inline<FqParams>(a, b);
}
__device__ __noinline__ Fp<FqParams> fq_sqr_outline(const Fp<FqParams> a) {
    return mont_sqr_inline<FqParams>(a);
}

__device__ __noinline__ Fp<FqParams> fq_mul_f64_outline(const Fp<FqParams> a,
                                                         const Fp<FqParams> b) {
    return mul_f64<FqParams>(a, b);
}

// The second product: the point formulas (curve.cuh), Fq2 and the NTT's
// butterflies (ntt.cuh) send about half of their products through it.
// Built with CUZK_FP64_MIX_FQ (Fq) or CUZK_FP64_MIX_FR (Fr), such a product
// runs on the FP64 pipe (field_f64.cuh) beside the IMAD pipe's of
// operator*, which it leaves free; otherwise it is operator*. Only where
// the FP64 pipe is wide: sm_90 (H100/H200: as many DFMA lanes as IMAD's)
// and sm_80 (A100: half as many); the other targets (sm_86, sm_89, sm_120:
// 1/32 of IMAD's or less) keep operator* in any build. The CPU emulation
// takes the request as is. Off by default: measured slower everywhere on
// the H200 (run 29: G1 2^26 394.90 -> 474.74 ms, G2 2^24 324.83 ->
// 429.61, NTT 2^27 forward 44.70 -> 47.55), the FP64 product alone no
// faster than the IMAD one (Fq 2.444e10 against 2.560e10 /s). Never
// measured on sm_80.
#if defined(CUZK_EMU) || (defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900))
#define CUZK_FAST_FP64 1
#endif
template <class P>
DEV Fp<P> mul_fp64(const Fp<P>& a, const Fp<P>& b) {
#if !defined(CUZK_CIOS_MUL) && defined(CUZK_FAST_FP64)
#if defined(CUZK_FP64_MIX_FQ)
    if constexpr (P::N == 12) {
        if constexpr (P::OUTLINE) return fq_mul_f64_outline(a, b);
        else return mul_f64<P>(a, b);
    }
#endif
#if defined(CUZK_FP64_MIX_FR)
    if constexpr (P::N == 8) return mul_f64<P>(a, b);
#endif
#endif
    return a * b;
}

// Fq's squaring and a b - c d stay out of line with its product. Inline
// (with the product still out of line: bench/gpu-kernels.md runs 52-53)
// the G1 accumulation's mixed addition took 4839 IMAD-pipe units against
// 5108 at 160 registers, and measured the same: G1 2^24 93.30 ms against
// 93.72, the 2^27 partition 1399.4 against 1401.0 (H100): the kernel's time
// followed its instruction count (-1.4%) more than the pipe's units (-5.3%).
template <class P>
DEV Fp<P> Fp<P>::operator*(const Fp<P>& b) const {
    if constexpr (P::OUTLINE) return fq_mul_outline(*this, b);
    else return mont_mul_inline<P>(*this, b);
}
// Fq squares by mont_sqr_ptx (22% fewer IMADs than a product); Fr by product.
template <class P>
DEV Fp<P> Fp<P>::sqr() const {
    if constexpr (P::N != 12) return *this * *this;
    else if constexpr (P::OUTLINE) return fq_sqr_outline(*this);
    else return mont_sqr_inline<P>(*this);
}

__device__ __noinline__ Fp<FqParams> fq_mul_sub_outline(const Fp<FqParams> a,
                                                          const Fp<FqParams> b,
                                                          const Fp<FqParams> c,
                                                          const Fp<FqParams> d) {
#ifdef CUZK_EMU
    return a * b - c * d;  // the portable form has no wide products
#else
    return mul_sub_lazy<FqParams>(a, b, c, d);
#endif
}
// a * b - c * d: for Fq with one reduction (mul_sub_lazy), otherwise as two
// products (the portable form, CUZK_CIOS_MUL and CUZK_MUL_INTERLEAVED
// builds, Fr).
template <class P>
DEV Fp<P> mul_sub(const Fp<P>& a, const Fp<P>& b, const Fp<P>& c, const Fp<P>& d) {
#ifdef CUZK_EMU
    return a * b - c * d;
#else
#if !defined(CUZK_CIOS_MUL) && !defined(CUZK_MUL_INTERLEAVED)
    if constexpr (P::KARATSUBA) {
        if constexpr (P::OUTLINE) return fq_mul_sub_outline(a, b, c, d);
        else return mul_sub_lazy<P>(a, b, c, d);
    }
#endif
    return a * b - c * d;
#endif
}

typedef Fp<FrParams> Fr;
typedef Fp<FqParams> Fq;

// The same field with its product inlined, for the G1 MSM kernels (a G1
// addition holds 10-14 products; the G2 ones stay out of line, see
// FqParams). Same layout as Fq: the kernels of either read the same buffers.
struct FqInlineParams : FqParams {
    static constexpr bool OUTLINE = false;
    // Inlined, the Karatsuba product and the lazy a b - c d took the G1
    // kernels from 156 registers to 204 (msm_accumulate_g1i, sum_selected_g1i;
    // sm_90), and the inline G1 MSM rows from 105.6 to 111.0 ms at 2^24
    // (call 81, H100); capped at 3 blocks an SM (168 registers, 51 spill
    // instructions a mixed addition, 9% fewer IMAD-pipe units than the
    // out-of-line calls) 115.7 ms against 105.3 uncapped interleaved and
    // 93.6 out of line (call 83, H100; bench/gpu-kernels.md run 51): the
    // inline build keeps the interleaved rows.
    static constexpr bool KARATSUBA = false;
};
typedef Fp<FqInlineParams> FqI;

// 32-byte element loads and stores as two 16-byte vector accesses (an Fr
// is aligned to 4 bytes only, so plain struct copies compile to eight 4-byte
// accesses). Every Fr buffer the kernels take starts at a device allocation
// (256-byte aligned), so element i is 32-byte aligned. ldg_fr: data the
// kernel never writes (read through the non-coherent cache).
DEV Fr ld_fr(const Fr* p) {
    const uint4* q = reinterpret_cast<const uint4*>(p);
    uint4 a = q[0], b = q[1];
    Fr x;
    x.v[0] = a.x; x.v[1] = a.y; x.v[2] = a.z; x.v[3] = a.w;
    x.v[4] = b.x; x.v[5] = b.y; x.v[6] = b.z; x.v[7] = b.w;
    return x;
}
DEV Fr ldg_fr(const Fr* p) {  // read-only for the kernel's lifetime
    const uint4* q = reinterpret_cast<const uint4*>(p);
    uint4 a = __ldg(q), b = __ldg(q + 1);
    Fr x;
    x.v[0] = a.x; x.v[1] = a.y; x.v[2] = a.z; x.v[3] = a.w;
    x.v[4] = b.x; x.v[5] = b.y; x.v[6] = b.z; x.v[7] = b.w;
    return x;
}
DEV void st_fr(Fr* p, const Fr& x) {
    uint4* q = reinterpret_cast<uint4*>(p);
    q[0] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
    q[1] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
}


// Fq2's Fq products: by the interleaved rows (mont_mul_ptx), out of line.
// With the Karatsuba product (as Fq's operator* has it) the G2 MSM at
// 2^24 went from 317.8 to 327.6 ms in its default build (o3: 168
// registers, the products' calls under that cap), though the o2 and o4
// builds gained (343.5 -> 336.3, 395.1 -> 354.6; call 81, H100).
// CUZK_FQ2_KARA gives Fq2 the Karatsuba product instead.
__device__ __noinline__ Fp<FqParams> fq_mul_rows_outline(const Fp<FqParams> a,
                                                          const Fp<FqParams> b) {
    return mont_mul_rows<FqParams>(a, b);
}
DEV Fq fq2_base_mul(const Fq& a, const Fq& b) {
#if defined(CUZK_FQ2_KARA)
    return a * b;
#else
    return fq_mul_rows_outline(a, b);
#endif
}
// The product the FP64 mix sends to the FP64 pipe (mul_fp64).
DEV Fq fq2_base_mul_fp64(const Fq& a, const Fq& b) {
#if defined(CUZK_FP64_MIX_FQ)
    return mul_fp64(a, b);
#else
    return fq2_base_mul(a, b);
#endif
}

// Fq2 = Fq[u] / (u^2 + 1); blst's layout: c0 then c1.
struct Fq2 {
    Fq c0, c1;
    DEV static Fq2 zero() { return {Fq::zero(), Fq::zero()}; }
    DEV static Fq2 one() { return {Fq::one(), Fq::zero()}; }
    DEV bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    DEV bool operator==(const Fq2& o) const { return c0 == o.c0 && c1 == o.c1; }
    DEV bool operator!=(const Fq2& o) const { return !(*this == o); }
    DEV Fq2 operator+(const Fq2& b) const { return {c0 + b.c0, c1 + b.c1}; }
    DEV Fq2 operator-(const Fq2& b) const { return {c0 - b.c0, c1 - b.c1}; }
    DEV Fq2 neg() const { return {c0.neg(), c1.neg()}; }
    DEV Fq2 dbl() const { return {c0.dbl(), c1.dbl()}; }
    // Karatsuba: 3 Fq products (one through mul_fp64), by fq2_base_mul;
    // built with CUZK_FQ2_LAZY, 3 wide products and 2 reductions
    // (fq2_mul_lazy, off by default: the G2 kernels spill with it).
    DEV Fq2 operator*(const Fq2& b) const;
    DEV Fq2 mul_by_products(const Fq2& b) const {
        Fq t0 = fq2_base_mul(c0, b.c0);
        Fq t1 = fq2_base_mul_fp64(c1, b.c1);
        Fq t2 = fq2_base_mul(c0 + c1, b.c0 + b.c1);
        return {t0 - t1, t2 - t0 - t1};
    }
    // (a + bu)^2 = (a+b)(a-b) + 2ab u: 2 Fq products.
    DEV Fq2 sqr() const {
        Fq t0 = fq2_base_mul(c0 + c1, c0 - c1);
        Fq t1 = fq2_base_mul_fp64(c0, c1);
        return {t0, t1.dbl()};
    }
};

// (a0 + a1 u)(b0 + b1 u) with the wide products t0 = a0 b0, t1 = a1 b1 and
// t2 = (a0 + a1)(b0 + b1), the sums unreduced (below 2p) so that
// t2 - t0 - t1 = a0 b1 + a1 b0 exactly (below 2p^2): c0 = redc(t0 - t1
// (+ p^2)), c1 = redc(t2 - t0 - t1). Out of line, like Fq's products.
// In this order at most three wide values are live at once.
__device__ __noinline__ Fq2 fq2_mul_lazy(const Fq2 a, const Fq2 b) {
#ifdef CUZK_EMU
    return a.mul_by_products(b);  // the portable form has no wide products
#else
    Wide<FqParams> t2 =
        mul_wide<FqParams>(add_unreduced(a.c0, a.c1), add_unreduced(b.c0, b.c1));
    Wide<FqParams> t0 = mul_wide<FqParams>(a.c0, b.c0);
    sub_wide_in_place<FqParams>(t2, t0);
    Wide<FqParams> t1 = mul_wide<FqParams>(a.c1, b.c1);
    sub_wide_in_place<FqParams>(t2, t1);
    const Fq c0 = redc_wide<FqParams>(sub_wide<FqParams>(t0, t1).v);
    return {c0, redc_wide<FqParams>(t2.v)};
#endif
}
DEV Fq2 Fq2::operator*(const Fq2& b) const {
#ifdef CUZK_EMU
    return mul_by_products(b);
#else
#if defined(CUZK_FQ2_LAZY) && !defined(CUZK_CIOS_MUL) && !defined(CUZK_MUL_INTERLEAVED)
    return fq2_mul_lazy(*this, b);
#endif
    return mul_by_products(b);
#endif
}
// a * b - c * d in Fq2: two products (no lazy form across them yet).
DEV Fq2 mul_sub(const Fq2& a, const Fq2& b, const Fq2& c, const Fq2& d) { return a * b - c * d; }

// Fq2 products mix the pipes inside (operator*, sqr): the point formulas'
// second product is operator* for them.
DEV Fq2 mul_fp64(const Fq2& a, const Fq2& b) { return a * b; }
