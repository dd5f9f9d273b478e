// Subgroup membership of affine points already on the curve (the parameter
// loader checks that while decoding): Scott's endomorphism tests, one point
// per thread. src/subgroup.rs is the same arithmetic on the CPU, checked
// against blstrs and [r]P = O, and owns the constants the host passes in.
//
// G1: P in G1 iff [x^2]P = (beta x, -y)   (sigma(P) = [-x^2]P);
// G2: P in G2 iff [|x|]P = -psi(P)        (psi(P) = [x]P, x < 0),
// psi(x, y) = (conj(x) psi_x, conj(y) psi_y).
//
// The multiplications run in Jacobian coordinates (x = X/Z^2, y = Y/Z^3,
// Z = 0 the point at infinity): a doubling is 2M + 5S (dbl-2009-l) against
// 6M + 3S for XYZZ, and doublings are nearly all the work (127 for G1, 63
// for G2). Both curves' groups have odd order, so no finite point has
// y = 0; the mixed addition treats P = +-Q and infinity explicitly, so every
// on-curve point gets the right answer whatever its order.
//
// Each launch adds to a tally of two words: out[0] += points outside the
// subgroup, out[1] = min(out[1], base + index of one); the host starts it at
// {0, 0xffffffff}. The point at infinity is in the subgroup.
#pragma once
#include "field.cuh"
#include "curve.cuh"

template <class F>
struct Jac {
    F X, Y, Z;
};

// G2's steps out of line (as curve.cuh does for XYZZ). ptxas (nvcc 13.0,
// sm_90): inlined, the G2 kernel spilled 796 bytes (stores) / 1240 (loads)
// per thread; out of line, 44 / 76 in the kernel, none in the doubling (63
// a point) and 92 / 204 in the addition (5 a point), 255 registers. The G1
// kernel (FqI products inline) uses 202 registers and spills nothing; at
// 128 threads a block both fit two blocks per SM.
template <class F>
struct OutlineJac {
    static constexpr bool value = false;
};
template <>
struct OutlineJac<Fq2> {
    static constexpr bool value = true;
};
__device__ __noinline__ Jac<Fq2> g2_jac_dbl(const Jac<Fq2> p);
__device__ __noinline__ Jac<Fq2> g2_jac_add_affine(const Jac<Fq2> p, const Fq2 x, const Fq2 y);

// dbl-2009-l (a = 0); Z = 0 stays 0.
template <class F>
DEV Jac<F> jac_dbl(const Jac<F>& p) {
    F A = p.X.sqr();
    F B = p.Y.sqr();
    F C = B.sqr();
    F D = ((p.X + B).sqr() - A - C).dbl();
    F E = A.dbl() + A;
    F E2 = E.sqr();
    F X3 = E2 - D.dbl();
    F Y3 = E * (D - X3) - C.dbl().dbl().dbl();
    F Z3 = (p.Y * p.Z).dbl();
    return {X3, Y3, Z3};
}

template <class F>
DEV Jac<F> jac_dbl_step(const Jac<F>& p);

// madd-2007-bl: p + (x2, y2), the affine point not infinity.
template <class F>
DEV Jac<F> jac_add_affine(const Jac<F>& p, const F& x2, const F& y2) {
    if (p.Z.is_zero()) return {x2, y2, F::one()};
    F Z1Z1 = p.Z.sqr();
    F U2 = x2 * Z1Z1;
    F S2 = y2 * p.Z * Z1Z1;
    F H = U2 - p.X;
    F R = (S2 - p.Y).dbl();
    if (H.is_zero()) {
        if (R.is_zero()) return jac_dbl_step(Jac<F>{x2, y2, F::one()});
        return {F::one(), F::one(), F::zero()};
    }
    F HH = H.sqr();
    F I = HH.dbl().dbl();
    F J = H * I;
    F V = p.X * I;
    F X3 = R.sqr() - J - V.dbl();
    F Y3 = R * (V - X3) - (p.Y * J).dbl();
    F Z3 = (p.Z + H).sqr() - Z1Z1 - HH;
    return {X3, Y3, Z3};
}

__device__ __noinline__ Jac<Fq2> g2_jac_dbl(const Jac<Fq2> p) { return jac_dbl(p); }
__device__ __noinline__ Jac<Fq2> g2_jac_add_affine(const Jac<Fq2> p, const Fq2 x, const Fq2 y) {
    return jac_add_affine(p, x, y);
}

template <class F>
DEV Jac<F> jac_dbl_step(const Jac<F>& p) {
    if constexpr (OutlineJac<F>::value) return g2_jac_dbl(p);
    else return jac_dbl(p);
}
template <class F>
DEV Jac<F> jac_add_step(const Jac<F>& p, const F& x, const F& y) {
    if constexpr (OutlineJac<F>::value) return g2_jac_add_affine(p, x, y);
    else return jac_add_affine(p, x, y);
}

// Whether p is the finite point (ax, ay).
template <class F>
DEV bool jac_equals_affine(const Jac<F>& p, const F& ax, const F& ay) {
    if (p.Z.is_zero()) return false;
    F ZZ = p.Z.sqr();
    F ZZZ = ZZ * p.Z;
    return p.X == ax * ZZ && p.Y == ay * ZZZ;
}

// [k]P for k = hi:lo > 0 (the same for every thread, so the branch on a
// bit is uniform), P = (x, y) affine and finite; double and add, most
// significant bit first.
template <class F>
DEV Jac<F> jac_mul(const F& x, const F& y, uint64_t lo, uint64_t hi) {
    int top = hi ? 127 - __clzll(hi) : 63 - __clzll(lo);
    Jac<F> acc = {x, y, F::one()};
#pragma unroll 1
    for (int bit = top - 1; bit >= 0; bit--) {
        acc = jac_dbl_step(acc);
        uint64_t word = bit >= 64 ? hi >> (bit - 64) : lo >> bit;
        if (word & 1) acc = jac_add_step(acc, x, y);
    }
    return acc;
}

DEV void subgroup_tally(bool in_subgroup, uint32_t index, uint32_t* out) {
    if (!in_subgroup) {
        atomicAdd(&out[0], 1u);
        atomicMin(&out[1], index);
    }
}

// beta: one Fq (Montgomery); x2_lo, x2_hi: x^2.
extern "C" __global__ void subgroup_g1(const Affine<FqI>* points, uint32_t n, uint32_t base,
                                       const FqI* beta, uint64_t x2_lo, uint64_t x2_hi,
                                       uint32_t* out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Affine<FqI> p = points[i];
    if (p.is_inf()) return;
    Jac<FqI> q = jac_mul(p.x, p.y, x2_lo, x2_hi);
    subgroup_tally(jac_equals_affine(q, *beta * p.x, p.y.neg()), base + i, out);
}

// psi: psi_x then psi_y (Fq2, Montgomery); x_abs: |x|.
extern "C" __global__ void subgroup_g2(const G2Affine* points, uint32_t n, uint32_t base,
                                       const Fq2* psi, uint64_t x_abs, uint32_t* out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    G2Affine p = points[i];
    if (p.is_inf()) return;
    // psi(P) after the multiplication, so that it is not live across it.
    Jac<Fq2> q = jac_mul(p.x, p.y, x_abs, 0);
    Fq2 px = Fq2{p.x.c0, p.x.c1.neg()} * psi[0];
    Fq2 py = Fq2{p.y.c0, p.y.c1.neg()} * psi[1];
    subgroup_tally(jac_equals_affine(q, px, py.neg()), base + i, out);
}
