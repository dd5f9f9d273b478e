// Fixed-base multiplication (parameter generation) and batch conversion of
// XYZZ points to affine.
//
// fixed_base_*: out[i] = s_i * B for one base B, from a host-built table
// table[w * half + d - 1] = d * 2^(c*w) * B (d in 1..=half, half = 2^(c-1)),
// the layout of cuzk-core's CPU generator. Each thread takes one scalar,
// splits it into signed c-bit digits and adds one table point per window:
// ceil(256 / c) mixed additions, no doublings.
//
// to_affine_*: each thread converts `per` points spaced by the grid's thread
// count (so neighbouring threads touch neighbouring points) with one
// inversion (Montgomery's trick over its ZZZ values): 1/Z = ZZ / ZZZ, so
// x = X * (ZZ / ZZZ)^2 and y = Y / ZZZ. The point at infinity (ZZ = ZZZ = 0)
// becomes blst's affine infinity, all zeros.
#pragma once
#include "field.cuh"
#include "curve.cuh"

// a^(m - 2) by square-and-multiply over the modulus' bits; 0 maps to 0.
template <class P>
__device__ __noinline__ Fp<P> fp_inv(const Fp<P> a) {
    Fp<P> r = Fp<P>::one();
#pragma unroll 1
    for (int i = P::N - 1; i >= 0; i--) {
        uint32_t e = P::mod(i) - (i == 0 ? 2u : 0u);  // limb 0 of both moduli is odd and > 2
#pragma unroll 1
        for (int b = 31; b >= 0; b--) {
            r = r.sqr();
            if ((e >> b) & 1) r = r * a;
        }
    }
    return r;
}

DEV Fq field_inv(const Fq& a) { return fp_inv<FqParams>(a); }
// 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2), since u^2 = -1.
DEV Fq2 field_inv(const Fq2& a) {
    Fq t = fp_inv<FqParams>(a.c0.sqr() + a.c1.sqr());
    return {a.c0 * t, (a.c1 * t).neg()};
}

template <class F>
DEV void fixed_base(const Affine<F>* table, uint32_t window, uint32_t windows, const Fr* scalars,
                    Xyzz<F>* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Fr s = scalars[i].from_mont();
    const uint32_t half = 1u << (window - 1);
    const uint32_t full = 1u << window;
    const uint32_t mask = full - 1;
    uint32_t carry = 0;
    Xyzz<F> acc = Xyzz<F>::inf();
#pragma unroll 1
    for (uint32_t w = 0; w < windows; w++) {
        uint32_t bit = w * window;
        uint32_t limb = bit >> 5, off = bit & 31;
        uint64_t word = s.v[limb];
        if (limb + 1 < 8) word |= (uint64_t)s.v[limb + 1] << 32;
        uint32_t d = (uint32_t)((word >> off) & mask) + carry;
        // d in (half, 2^c]: the digit d - 2^c, carrying one into the next
        // window (d = 2^c is digit 0 plus the carry).
        bool negative = d > half;
        uint32_t k = negative ? full - d : d;
        carry = negative ? 1u : 0u;
        if (k != 0) {
            Affine<F> p = table[w * half + k - 1];
            if (negative) p = p.neg();
            acc = acc.add_affine(p);
        }
    }
    out[i] = acc;
}

template <class F>
DEV void to_affine(const Xyzz<F>* in, Affine<F>* out, uint32_t n, uint32_t per) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t stride = gridDim.x * blockDim.x;
    if (t >= n) return;
    // Forward: out[idx].x holds the product of the nonzero ZZZ up to idx.
    F acc = F::one();
    uint32_t count = 0;
#pragma unroll 1
    for (uint32_t k = 0; k < per; k++) {
        uint64_t idx = (uint64_t)t + (uint64_t)k * stride;
        if (idx >= n) break;
        F z = in[idx].ZZZ;
        if (!z.is_zero()) acc = acc * z;
        out[idx].x = acc;
        count++;
    }
    F inv = field_inv(acc);
    // Backward: inv is the inverse of the prefix product through idx.
#pragma unroll 1
    for (uint32_t k = count; k-- > 0;) {
        uint64_t idx = (uint64_t)t + (uint64_t)k * stride;
        Xyzz<F> p = in[idx];
        if (p.ZZZ.is_zero()) {
            out[idx] = {F::zero(), F::zero()};
            continue;
        }
        F prev = k > 0 ? out[idx - stride].x : F::one();
        F zzz_inv = inv * prev;
        inv = inv * p.ZZZ;
        F z_inv = p.ZZ * zzz_inv;
        out[idx] = {p.X * z_inv.sqr(), p.Y * zzz_inv};
    }
}

extern "C" __global__ void fixed_base_g1(const G1Affine* table, uint32_t window, uint32_t windows,
                                         const Fr* scalars, G1Xyzz* out, uint32_t n) {
    fixed_base<Fq>(table, window, windows, scalars, out, n);
}
extern "C" __global__ void fixed_base_g2(const G2Affine* table, uint32_t window, uint32_t windows,
                                         const Fr* scalars, G2Xyzz* out, uint32_t n) {
    fixed_base<Fq2>(table, window, windows, scalars, out, n);
}
extern "C" __global__ void to_affine_g1(const G1Xyzz* in, G1Affine* out, uint32_t n,
                                        uint32_t per) {
    to_affine<Fq>(in, out, n, per);
}
extern "C" __global__ void to_affine_g2(const G2Xyzz* in, G2Affine* out, uint32_t n,
                                        uint32_t per) {
    to_affine<Fq2>(in, out, n, per);
}
