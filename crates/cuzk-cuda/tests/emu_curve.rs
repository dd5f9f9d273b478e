//! The point operations of kernels/curve.cuh (XYZZ mixed and full
//! addition, doubling, small multiples) run on the CPU (emu/curve_emu.cpp,
//! through kernels/tests.cu's test_g1_ops / test_g2_ops) against blstrs,
//! built as the kernels are by default and with CUZK_FP64_MIX_FQ (half of
//! each formula's Fq products by field_f64.cuh, one of each Fq2 product's
//! three): random pairs and the special ones (P = Q, P = -Q, infinity on
//! either side or both; k = 0, 1, 2). The GPU checks run the same kernels
//! on the device (`curve/g1 ...`, `curve/g2 ...`). Needs a C++20 compiler
//! (`$CXX`, else `c++`).

mod common;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use common::Arith;
use cuzk_cuda::cases::{point_ops, with_special_pairs};
use cuzk_cuda::host;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// [P+Q mixed, P+Q xyzz, 2P, k P] per pair, by the emulated kernels built
/// with field.cuh's portable arithmetic, its PTX form, or the FP64
/// products mixed in; `g`: 1 or 2.
fn run(g: u32, arith: Arith, p: &[u8], q: &[u8], ks: &[u32]) -> Vec<u8> {
    let bin = common::emu_binary_for(arith, "curve_emu.cpp", "curve_emu", "CUZK_FP64_MIX_FQ");
    let mut input = g.to_le_bytes().to_vec();
    input.extend((ks.len() as u32).to_le_bytes());
    input.extend(p);
    input.extend(q);
    for k in ks {
        input.extend(k.to_le_bytes());
    }
    common::run_emu(&bin, &input)
}

/// `n` random pairs (the special ones in front) through the emulated
/// test_g{g}_ops, each result against blstrs. `bits`: the multipliers' size.
#[allow(clippy::too_many_arguments)]
fn check<A, P>(
    g: u32,
    arith: Arith,
    n: usize,
    bits: u32,
    as_bytes: fn(&[A]) -> &[u8],
    from_xyzz: fn(&[u8]) -> P,
    sz: usize,
) where
    A: PrimeCurveAffine + std::ops::Neg<Output = A>,
    P: Group<Scalar = Scalar> + Curve<AffineRepr = A> + From<A>,
{
    let mut rng = ChaCha8Rng::seed_from_u64(0xc0 + 3 * g as u64 + arith as u64);
    let mut random = || -> Vec<A> { (0..n).map(|_| P::random(&mut rng).to_affine()).collect() };
    let (mut p, mut q) = (random(), random());
    let mut ks: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << bits)).collect();
    with_special_pairs(&mut p, &mut q, &mut ks);
    let out = run(g, arith, as_bytes(&p), as_bytes(&q), &ks);
    assert_eq!(out.len(), 4 * n * sz);
    for i in 0..n {
        let want: [P; 4] = point_ops(p[i], q[i], ks[i]);
        for (k, w) in want.iter().enumerate() {
            let got = from_xyzz(&out[(4 * i + k) * sz..]);
            assert_eq!(got, *w, "G{g} pair {i} op {k} ({arith:?})");
        }
    }
}

fn check_g1(arith: Arith) {
    check::<G1Affine, G1Projective>(
        1,
        arith,
        48,
        16,
        host::g1_as_bytes,
        host::g1_from_xyzz,
        host::G1_XYZZ_BYTES,
    );
}

fn check_g2(arith: Arith) {
    check::<G2Affine, G2Projective>(
        2,
        arith,
        16,
        12,
        host::g2_as_bytes,
        host::g2_from_xyzz,
        host::G2_XYZZ_BYTES,
    );
}

#[test]
fn g1_operations_match_blstrs() {
    check_g1(Arith::Portable);
}

#[test]
fn g1_operations_with_fp64_products_match_blstrs() {
    check_g1(Arith::Fp64Mix);
}

#[test]
fn g2_operations_match_blstrs() {
    check_g2(Arith::Portable);
}

#[test]
fn g2_operations_with_fp64_products_match_blstrs() {
    check_g2(Arith::Fp64Mix);
}

/// The same operations with field.cuh's PTX carry chains (each
/// instruction emulated): Fq products, the PTX square, sums, differences.
#[test]
fn g1_operations_in_ptx_form_match_blstrs() {
    check_g1(Arith::Ptx);
}

#[test]
fn g2_operations_in_ptx_form_match_blstrs() {
    check_g2(Arith::Ptx);
}

/// G2 with Fq2's product in its lazy form (three wide products, two
/// reductions: field.cuh's fq2_mul_lazy, built with CUZK_FQ2_LAZY).
#[test]
fn g2_operations_with_lazy_fq2_products_match_blstrs() {
    check_g2(Arith::PtxLazyFq2);
}
