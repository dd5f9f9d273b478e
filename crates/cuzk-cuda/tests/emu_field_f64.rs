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
use cuzk_cuda::cases::{near_modulus_pairs, FQ_MODULUS, FR_MODULUS};
use cuzk_cuda::host;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One field as the emulator and blstrs see it.
trait EmuField: Field + std::fmt::Debug {
    /// The emulator's field id.
    const ID: u32;
    /// The modulus as little-endian u32 limbs.
    const MODULUS: &'static [u32];
    fn raw_bytes(&self) -> Vec<u8>;
    fn from_raw(bytes: &[u8]) -> Self;
}

impl EmuField for Scalar {
    const ID: u32 = 0;
    const MODULUS: &'static [u32] = &FR_MODULUS;
    fn raw_bytes(&self) -> Vec<u8> {
        host::scalars_as_bytes(std::slice::from_ref(self)).to_vec()
    }
    fn from_raw(bytes: &[u8]) -> Self {
        let mut s = [Scalar::ZERO];
        host::scalars_as_bytes_mut(&mut s).copy_from_slice(bytes);
        s[0]
    }
}

impl EmuField for Fp {
    const ID: u32 = 1;
    const MODULUS: &'static [u32] = &FQ_MODULUS;
    fn raw_bytes(&self) -> Vec<u8> {
        host::fp_raw_bytes(self).to_vec()
    }
    fn from_raw(bytes: &[u8]) -> Self {
        host::fp_from_le(bytes)
    }
}

/// The element whose raw Montgomery limbs are `limbs`.
fn raw<F: EmuField>(limbs: &[u32]) -> F {
    let b: Vec<u8> = limbs.iter().flat_map(|w| w.to_le_bytes()).collect();
    F::from_raw(&b)
}

/// [a * b, a^2] per pair, by the emulated kernels.
fn run<F: EmuField>(pairs: &[(F, F)]) -> Vec<[F; 2]> {
    let elem = 4 * F::MODULUS.len();
    let mut input = F::ID.to_le_bytes().to_vec();
    input.extend((pairs.len() as u32).to_le_bytes());
    for (a, b) in pairs {
        input.extend(a.raw_bytes());
        input.extend(b.raw_bytes());
    }
    let bin = common::emu_binary("field_f64_emu.cpp", "field_f64_emu", &[]);
    let out = common::run_emu(&bin, &input);
    assert_eq!(out.len(), 2 * elem * pairs.len());
    out.chunks_exact(2 * elem)
        .map(|c| [F::from_raw(&c[..elem]), F::from_raw(&c[elem..])])
        .collect()
}

/// Random pairs, edge values against each other and against randoms, and
/// products next to the modulus; every result compared with blstrs.
fn check<F: EmuField>(seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let limbs = F::MODULUS.len();
    let bits = 32 * limbs;
    let mut pairs: Vec<(F, F)> = (0..2000)
        .map(|_| (F::random(&mut rng), F::random(&mut rng)))
        .collect();
    // Raw values with one bit set at and beside each 52-bit limb boundary
    // (the split into limbs) and at the top, and m - 2^bit.
    let mut edges = vec![F::ZERO, F::ONE, -F::ONE, F::ONE.double()];
    let modulus_bits = bits - F::MODULUS[limbs - 1].leading_zeros() as usize;
    let mut at: Vec<usize> = (0..bits)
        .step_by(52)
        .flat_map(|b| [b.saturating_sub(1), b, b + 1])
        .collect();
    at.extend([bits - 33, bits - 32, modulus_bits - 2]);
    at.retain(|&b| b < modulus_bits - 1);
    at.dedup();
    for bit in at {
        let mut l = vec![0u32; limbs];
        l[bit / 32] = 1 << (bit % 32);
        edges.push(raw(&l));
        let mut m = F::MODULUS.to_vec();
        let mut borrow = 1u32 << (bit % 32);
        for w in m.iter_mut().skip(bit / 32) {
            let (d, b) = w.overflowing_sub(borrow);
            *w = d;
            borrow = b as u32;
        }
        edges.push(raw(&m));
    }
    for &a in &edges {
        for &b in &edges {
            pairs.push((a, b));
        }
        pairs.push((a, F::random(&mut rng)));
        pairs.push((F::random(&mut rng), a));
    }
    let (xs, ys) = near_modulus_pairs(&mut rng, F::MODULUS, 24, raw::<F>);
    pairs.extend(xs.into_iter().zip(ys));

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
