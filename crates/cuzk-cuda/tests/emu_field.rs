//! Field arithmetic of kernels/field.cuh (product, square, sum, difference,
//! negation of Fr and Fq) run on the CPU (emu/field_emu.cpp) against
//! blstrs, in both of its forms: the portable C++ the emulated kernels use,
//! and the PTX carry chains the GPU runs, each PTX instruction emulated
//! (tests/common's `emu_binary_ptx`), so a change to the PTX is checked
//! here before any GPU sees it. Random pairs, 0, 1, -1, raw values at and
//! beside limb boundaries, values with zero low limbs (Montgomery rows
//! with m = 0), and pairs whose products land next to the modulus. Needs a
//! C++20 compiler (`$CXX`, else `c++`).

mod common;

use blstrs::{Fp, Scalar};
use common::fields::{field_pairs, pairs_input, results, EmuField};

/// [a * b, a^2, a + b, a - b, -a] per pair, by field.cuh's portable form
/// or (`ptx`) its PTX form.
fn run<F: EmuField>(pairs: &[(F, F)], ptx: bool) -> Vec<[F; 5]> {
    let bin = if ptx {
        common::emu_binary_ptx("field_emu.cpp", "field_emu_ptx", &[])
    } else {
        common::emu_binary("field_emu.cpp", "field_emu", &[])
    };
    results(&common::run_emu(&bin, &pairs_input(pairs)), pairs.len())
}

fn check<F: EmuField>(seed: u64, ptx: bool) {
    let pairs = field_pairs::<F>(seed);
    let got = run(&pairs, ptx);
    for (i, ((a, b), [m, s, sum, diff, neg])) in pairs.iter().zip(got).enumerate() {
        let what = |op: &str| format!("pair {i}: {op} (a {a:?}, b {b:?}, PTX form {ptx})");
        assert_eq!(m, *a * b, "{}", what("a * b"));
        assert_eq!(s, a.square(), "{}", what("a^2"));
        assert_eq!(sum, *a + b, "{}", what("a + b"));
        assert_eq!(diff, *a - b, "{}", what("a - b"));
        assert_eq!(neg, -*a, "{}", what("-a"));
    }
}

#[test]
fn fr_arithmetic_matches_blstrs() {
    check::<Scalar>(0xf1e1d0, false);
}

#[test]
fn fq_arithmetic_matches_blstrs() {
    check::<Fp>(0xf1e1d1, false);
}

#[test]
fn fr_arithmetic_in_ptx_form_matches_blstrs() {
    check::<Scalar>(0xf1e1d2, true);
}

#[test]
fn fq_arithmetic_in_ptx_form_matches_blstrs() {
    check::<Fp>(0xf1e1d3, true);
}
