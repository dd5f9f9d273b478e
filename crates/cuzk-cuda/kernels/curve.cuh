// Short-Weierstrass (a = 0) points over Fq (G1) and Fq2 (G2).
//
// Affine points use blst's layout (x, y), the point at infinity being all
// zeros (blst's own convention, which is not on the curve y^2 = x^3 + b since
// b != 0). Accumulators are XYZZ (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2), the
// point at infinity having ZZ = 0. Formulas are the EFD's "xyzz" set:
// madd-2008-s, add-2008-s, dbl-2008-s-1, mdbl-2008-s-1, with the special
// cases (P = Q, P = -Q, infinity) handled explicitly. About half of each
// formula's products go through mul_fp64 (field.cuh): with
// CUZK_FP64_MIX_FQ, G1's then run on the FP64 pipe beside the others'
// IMADs. Each formula's Y3 = a b - c d goes through mul_sub, which for Fq
// out of line takes two wide products and one Montgomery reduction.
#pragma once
#include "field.cuh"

template <class F>
struct Affine {
    F x, y;
    DEV bool is_inf() const { return x.is_zero() && y.is_zero(); }
    DEV Affine neg() const { return {x, y.neg()}; }  // y = 0 stays 0 for infinity
};

template <class F>
struct Xyzz;

// G2's point operations are compiled out of line: inlined, a G2 kernel held
// hundreds of Fq products and ptxas took over half a minute per kernel and
// architecture. G1's stay inline (Fq products are out of line already).
template <class F>
struct OutlinePoints {
    static constexpr bool value = false;
};
template <>
struct OutlinePoints<Fq2> {
    static constexpr bool value = true;
};
__device__ __noinline__ Xyzz<Fq2> g2_dbl(const Xyzz<Fq2> p);
__device__ __noinline__ Xyzz<Fq2> g2_add_affine(const Xyzz<Fq2> p, const Affine<Fq2> a);
__device__ __noinline__ Xyzz<Fq2> g2_add(const Xyzz<Fq2> p, const Xyzz<Fq2> q);

template <class F>
struct Xyzz {
    F X, Y, ZZ, ZZZ;

    DEV static Xyzz inf() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
    DEV bool is_inf() const { return ZZ.is_zero(); }
    DEV static Xyzz from_affine(const Affine<F>& a) {
        if (a.is_inf()) return inf();
        return {a.x, a.y, F::one(), F::one()};
    }
    DEV Xyzz neg() const { return {X, Y.neg(), ZZ, ZZZ}; }

    DEV Xyzz dbl() const {
        if constexpr (OutlinePoints<F>::value) return g2_dbl(*this);
        else return dbl_impl();
    }
    DEV Xyzz add_affine(const Affine<F>& a) const {
        if constexpr (OutlinePoints<F>::value) return g2_add_affine(*this, a);
        else return add_affine_impl(a);
    }
    DEV Xyzz add(const Xyzz& b) const {
        if constexpr (OutlinePoints<F>::value) return g2_add(*this, b);
        else return add_impl(b);
    }

    // dbl-2008-s-1
    DEV Xyzz dbl_impl() const {
        if (is_inf()) return *this;
        F U = Y.dbl();
        F V = U.sqr();
        F W = mul_fp64(U, V);
        F S = X * V;
        F X2 = X.sqr();
        F M = X2.dbl() + X2;
        F X3 = M.sqr() - S.dbl();
        F Y3 = mul_sub(M, S - X3, W, Y);
        return {X3, Y3, mul_fp64(V, ZZ), W * ZZZ};
    }

    // mdbl-2008-s-1: double an affine point (not infinity).
    DEV static Xyzz dbl_affine(const Affine<F>& a) {
        F U = a.y.dbl();
        F V = U.sqr();
        F W = mul_fp64(U, V);
        F S = a.x * V;
        F X2 = a.x.sqr();
        F M = X2.dbl() + X2;
        F X3 = M.sqr() - S.dbl();
        F Y3 = mul_sub(M, S - X3, W, a.y);
        return {X3, Y3, V, W};
    }

    // madd-2008-s: *this + a (a affine).
    DEV Xyzz add_affine_impl(const Affine<F>& a) const {
        if (a.is_inf()) return *this;
        if (is_inf()) return from_affine(a);
        F U2 = a.x * ZZ;
        F S2 = mul_fp64(a.y, ZZZ);
        F P = U2 - X;
        F R = S2 - Y;
        if (P.is_zero()) {
            if (R.is_zero()) return dbl_affine(a);
            return inf();
        }
        F PP = P.sqr();
        F PPP = mul_fp64(P, PP);
        F Q = X * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        F Y3 = mul_sub(R, Q - X3, Y, PPP);
        return {X3, Y3, mul_fp64(ZZ, PP), ZZZ * PPP};
    }

    // add-2008-s: *this + b.
    DEV Xyzz add_impl(const Xyzz& b) const {
        if (b.is_inf()) return *this;
        if (is_inf()) return b;
        F U1 = X * b.ZZ;
        F U2 = mul_fp64(b.X, ZZ);
        F S1 = Y * b.ZZZ;
        F S2 = mul_fp64(b.Y, ZZZ);
        F P = U2 - U1;
        F R = S2 - S1;
        if (P.is_zero()) {
            if (R.is_zero()) return dbl();
            return inf();
        }
        F PP = P.sqr();
        F PPP = mul_fp64(P, PP);
        F Q = U1 * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        F Y3 = mul_sub(R, Q - X3, S1, PPP);
        return {X3, Y3, mul_fp64(ZZ * b.ZZ, PP), mul_fp64(ZZZ, b.ZZZ) * PPP};
    }

    // k * this for a small non-negative k (double-and-add, MSB first).
    DEV Xyzz mul_small(uint32_t k) const {
        Xyzz acc = inf();
        if (k == 0) return acc;
        int top = 31 - __clz(k);
        for (int i = top; i >= 0; i--) {
            acc = acc.dbl();
            if ((k >> i) & 1) acc = acc.add(*this);
        }
        return acc;
    }
};

__device__ __noinline__ Xyzz<Fq2> g2_dbl(const Xyzz<Fq2> p) { return p.dbl_impl(); }
__device__ __noinline__ Xyzz<Fq2> g2_add_affine(const Xyzz<Fq2> p, const Affine<Fq2> a) {
    return p.add_affine_impl(a);
}
__device__ __noinline__ Xyzz<Fq2> g2_add(const Xyzz<Fq2> p, const Xyzz<Fq2> q) {
    return p.add_impl(q);
}

typedef Affine<Fq> G1Affine;
typedef Xyzz<Fq> G1Xyzz;
typedef Affine<Fq2> G2Affine;
typedef Xyzz<Fq2> G2Xyzz;
