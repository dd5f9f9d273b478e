// The second translation unit build.rs compiles, into its own fatbin
// (cuzk_tests.fatbin): small kernels that expose the field and curve
// arithmetic to the GPU checks (src/checks.rs) and the multiplication
// throughput to the benchmarks (src/bench.rs). Only those load it
// (src/device/arith.rs); the production fatbin does not carry them.
#include "field.cuh"
#include "curve.cuh"

// ------------------------------------------------- arithmetic for the tests
// A second way to multiply, to check the first: plain C++ CIOS for Fp,
// schoolbook for Fq2.
template <class P>
DEV Fp<P> alt_mul(const Fp<P>& x, const Fp<P>& y) {
    return mont_mul_cios<P>(x, y);
}
DEV Fq2 alt_mul(const Fq2& x, const Fq2& y) {
    return {mont_mul_cios<FqParams>(x.c0, y.c0) - mont_mul_cios<FqParams>(x.c1, y.c1),
            mont_mul_cios<FqParams>(x.c0, y.c1) + mont_mul_cios<FqParams>(x.c1, y.c0)};
}

// out = [a*b, a+b, a-b, a^2, -a, a*b by alt_mul] per element.
template <class F>
DEV void field_ops(const F* a, const F* b, F* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    F x = a[i], y = b[i];
    out[6 * i + 0] = x * y;
    out[6 * i + 1] = x + y;
    out[6 * i + 2] = x - y;
    out[6 * i + 3] = x.sqr();
    out[6 * i + 4] = x.neg();
    out[6 * i + 5] = alt_mul(x, y);
}
extern "C" __global__ void test_fr_ops(const Fr* a, const Fr* b, Fr* out, uint32_t n) {
    field_ops<Fr>(a, b, out, n);
}
extern "C" __global__ void test_fq_ops(const Fq* a, const Fq* b, Fq* out, uint32_t n) {
    field_ops<Fq>(a, b, out, n);
}
extern "C" __global__ void test_fq2_ops(const Fq2* a, const Fq2* b, Fq2* out, uint32_t n) {
    field_ops<Fq2>(a, b, out, n);
}
// out = [a*b, a^2] per element by field_f64.cuh's FP64 products.
template <class P>
DEV void f64_ops(const Fp<P>* a, const Fp<P>* b, Fp<P>* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[2 * i + 0] = mul_f64(a[i], b[i]);
    out[2 * i + 1] = sqr_f64(a[i]);
}
extern "C" __global__ void test_fr_f64(const Fr* a, const Fr* b, Fr* out, uint32_t n) {
    f64_ops<FrParams>(a, b, out, n);
}
extern "C" __global__ void test_fq_f64(const Fq* a, const Fq* b, Fq* out, uint32_t n) {
    f64_ops<FqParams>(a, b, out, n);
}
extern "C" __global__ void test_fr_from_mont(const Fr* a, Fr* out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i].from_mont();
}

// out = [P+Q (mixed), P+Q (xyzz), 2P, k*P] with P, Q affine, k = ks[i].
template <class F>
DEV void curve_ops(const Affine<F>* p, const Affine<F>* q, const uint32_t* ks, Xyzz<F>* out,
                   uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Xyzz<F> P = Xyzz<F>::from_affine(p[i]);
    Xyzz<F> Q = Xyzz<F>::from_affine(q[i]);
    out[4 * i + 0] = P.add_affine(q[i]);
    out[4 * i + 1] = P.add(Q);
    out[4 * i + 2] = P.dbl();
    out[4 * i + 3] = P.mul_small(ks[i]);
}
extern "C" __global__ void test_g1_ops(const G1Affine* p, const G1Affine* q, const uint32_t* ks,
                                       G1Xyzz* out, uint32_t n) {
    curve_ops<Fq>(p, q, ks, out, n);
}
extern "C" __global__ void test_g2_ops(const G2Affine* p, const G2Affine* q, const uint32_t* ks,
                                       G2Xyzz* out, uint32_t n) {
    curve_ops<Fq2>(p, q, ks, out, n);
}

#ifndef CUZK_EMU  // the CPU emulation (emu/curve_emu.cpp) has no PTX to time
// ------------------------------------------ multiplication throughput
// Each thread runs two independent chains of `iters` products (ILP 2);
// data holds 2 elements per thread and receives the results, so nothing is
// optimised away. variant: 0 = PTX inline, 1 = C++ CIOS inline, 2 = the
// kernels' operator* (out of line for Fq), 3 = the kernels' sqr(), 4 =
// mul_f64, 5 = sqr_f64 (field_f64.cuh, inline), 6 = one chain by
// mont_mul_ptx and the other by mul_f64 (the IMAD and FP64 pipes side by
// side).
template <class P>
DEV void mul_throughput(Fp<P>* data, uint32_t iters, uint32_t variant) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    Fp<P> x = data[2 * i], y = data[2 * i + 1];
    Fp<P> a = x, b = y;
    if (variant == 0) {
        for (uint32_t k = 0; k < iters; k++) {
            a = mont_mul_ptx<P>(a, y);
            b = mont_mul_ptx<P>(b, x);
        }
    } else if (variant == 1) {
        for (uint32_t k = 0; k < iters; k++) {
            a = mont_mul_cios<P>(a, y);
            b = mont_mul_cios<P>(b, x);
        }
    } else if (variant == 2) {
        for (uint32_t k = 0; k < iters; k++) {
            a = a * y;
            b = b * x;
        }
    } else if (variant == 3) {
        for (uint32_t k = 0; k < iters; k++) {
            a = a.sqr();
            b = b.sqr();
        }
    } else if (variant == 4) {
        for (uint32_t k = 0; k < iters; k++) {
            a = mul_f64(a, y);
            b = mul_f64(b, x);
        }
    } else if (variant == 5) {
        for (uint32_t k = 0; k < iters; k++) {
            a = sqr_f64(a);
            b = sqr_f64(b);
        }
    } else {
        for (uint32_t k = 0; k < iters; k++) {
            a = mont_mul_ptx<P>(a, y);
            b = mul_f64(b, x);
        }
    }
    data[2 * i] = a;
    data[2 * i + 1] = b;
}
extern "C" __global__ void bench_fq_mul(Fq* data, uint32_t iters, uint32_t variant) {
    mul_throughput<FqParams>(data, iters, variant);
}
extern "C" __global__ void bench_fr_mul(Fr* data, uint32_t iters, uint32_t variant) {
    mul_throughput<FrParams>(data, iters, variant);
}
#endif
