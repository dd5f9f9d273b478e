//! The Fr and Fq products of kernels/field_f64.cuh (limb products on the
//! FP64 pipe, Emmart–Weems) run on the CPU (emu/cuda_emu.h's exact
//! `__fma_rz`, emu/field_f64_emu.cpp) against blstrs: random pairs, 0, 1,
//! -1, raw values at and beside every 52-bit limb boundary, and pairs whose
//! products land next to the modulus (the final subtraction taken or not).
//! The GPU checks run the same products on the device (`field/fr fp64
//! products`, `field/fq fp64 products`). Needs a C++20 compiler (`$CXX`,
//! else `c++`).

mod common;

use blstrs::{Fp, Scalar};
use common::fields::{field_pairs, pairs_input, results, EmuField};

/// [a * b, a^2] per pair, by the emulated kernels.
fn run<F: EmuField>(pairs: &[(F, F)]) -> Vec<[F; 2]> {
    let bin = common::emu_binary("field_f64_emu.cpp", "field_f64_emu", &[]);
    results(&common::run_emu(&bin, &pairs_input(pairs)), pairs.len())
}

/// The pairs of `field_pairs`; every result compared with blstrs.
fn check<F: EmuField>(seed: u64) {
    let pairs = field_pairs::<F>(seed);
    let got = run(&pairs);
    for (i, ((a, b), [m, s])) in pairs.iter().zip(got).enumerate() {
        assert_eq!(m, *a * b, "pair {i}: a * b (a {a:?}, b {b:?})");
        assert_eq!(s, a.square(), "pair {i}: a^2 (a {a:?})");
    }
}

#[test]
fn fq_fp64_products_match_blstrs() {
    check::<Fp>(0xf64f64);
}

#[test]
fn fr_fp64_products_match_blstrs() {
    check::<Scalar>(0xf64f65);
}
