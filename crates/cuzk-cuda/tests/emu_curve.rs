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
use cuzk_cuda::host;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// [P+Q mixed, P+Q xyzz, 2P, k P] per pair, by the emulated kernels built
/// with the FP64 products (`fp64`) or without; `g`: 1 or 2.
fn run(g: u32, fp64: bool, p: &[u8], q: &[u8], ks: &[u32]) -> Vec<u8> {
    let bin = if fp64 {
        common::emu_binary("curve_emu.cpp", "curve_emu_fp64", &["CUZK_FP64_MIX_FQ"])
    } else {
        common::emu_binary("curve_emu.cpp", "curve_emu", &[])
    };
    let mut input = g.to_le_bytes().to_vec();
    input.extend((ks.len() as u32).to_le_bytes());
    input.extend(p);
    input.extend(q);
    for k in ks {
        input.extend(k.to_le_bytes());
    }
    common::run_emu(&bin, &input)
}

/// Special pairs at the front of p, q and ks (as the GPU check puts them).
fn specials<A: PrimeCurveAffine + std::ops::Neg<Output = A>>(
    p: &mut [A],
    q: &mut [A],
    ks: &mut [u32],
) {
    q[0] = p[0];
    q[1] = -p[1];
    p[2] = A::identity();
    q[3] = A::identity();
    p[4] = A::identity();
    q[4] = A::identity();
    ks[5] = 0;
    ks[6] = 1;
    ks[7] = 2;
}

fn check_g1(fp64: bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(0xc1 + fp64 as u64);
    let n = 48;
    let mut p: Vec<G1Affine> = (0..n)
        .map(|_| G1Projective::random(&mut rng).to_affine())
        .collect();
    let mut q: Vec<G1Affine> = (0..n)
        .map(|_| G1Projective::random(&mut rng).to_affine())
        .collect();
    let mut ks: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << 16)).collect();
    specials(&mut p, &mut q, &mut ks);
    let out = run(1, fp64, host::g1_as_bytes(&p), host::g1_as_bytes(&q), &ks);
    let sz = host::G1_XYZZ_BYTES;
    assert_eq!(out.len(), 4 * n * sz);
    for i in 0..n {
        let (pp, qq) = (G1Projective::from(p[i]), G1Projective::from(q[i]));
        let want = [
            pp + qq,
            pp + qq,
            pp.double(),
            pp * Scalar::from(ks[i] as u64),
        ];
        for (k, w) in want.iter().enumerate() {
            let got = host::g1_from_xyzz(&out[(4 * i + k) * sz..]);
            assert_eq!(got, *w, "G1 pair {i} op {k} (fp64 {fp64})");
        }
    }
}

fn check_g2(fp64: bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(0xc2 + fp64 as u64);
    let n = 16;
    let mut p: Vec<G2Affine> = (0..n)
        .map(|_| G2Projective::random(&mut rng).to_affine())
        .collect();
    let mut q: Vec<G2Affine> = (0..n)
        .map(|_| G2Projective::random(&mut rng).to_affine())
        .collect();
    let mut ks: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << 12)).collect();
    specials(&mut p, &mut q, &mut ks);
    let out = run(2, fp64, host::g2_as_bytes(&p), host::g2_as_bytes(&q), &ks);
    let sz = host::G2_XYZZ_BYTES;
    assert_eq!(out.len(), 4 * n * sz);
    for i in 0..n {
        let (pp, qq) = (G2Projective::from(p[i]), G2Projective::from(q[i]));
        let want = [
            pp + qq,
            pp + qq,
            pp.double(),
            pp * Scalar::from(ks[i] as u64),
        ];
        for (k, w) in want.iter().enumerate() {
            let got = host::g2_from_xyzz(&out[(4 * i + k) * sz..]);
            assert_eq!(got, *w, "G2 pair {i} op {k} (fp64 {fp64})");
        }
    }
}

#[test]
fn g1_operations_match_blstrs() {
    check_g1(false);
}

#[test]
fn g1_operations_with_fp64_products_match_blstrs() {
    check_g1(true);
}

#[test]
fn g2_operations_match_blstrs() {
    check_g2(false);
}

#[test]
fn g2_operations_with_fp64_products_match_blstrs() {
    check_g2(true);
}
