//! Field elements as the emulators and blstrs see them, and the pairs the
//! field tests run (shared by emu_field and emu_field_f64).

use blstrs::{Fp, Scalar};
use cuzk_cuda::cases::{near_modulus_pairs, FQ_MODULUS, FR_MODULUS};
use cuzk_cuda::host;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One field as the emulator and blstrs see it.
pub trait EmuField: Field + std::fmt::Debug {
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
pub fn raw<F: EmuField>(limbs: &[u32]) -> F {
    let b: Vec<u8> = limbs.iter().flat_map(|w| w.to_le_bytes()).collect();
    F::from_raw(&b)
}

/// Random pairs (`seed`), edge values against each other and against
/// randoms (0, 1, -1, 2, raw values with one bit set at and beside each
/// 52-bit limb boundary and at the top, m - 2^bit), and pairs whose
/// products land next to the modulus.
pub fn field_pairs<F: EmuField>(seed: u64) -> Vec<(F, F)> {
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
    // Random values with their low limbs zero: Montgomery rows whose low
    // limb is 0 (m = 0), which Fr's rows treat apart.
    for k in 1..limbs {
        let x = F::random(&mut rng).raw_bytes();
        let mut l: Vec<u32> = x
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        l[..k].iter_mut().for_each(|w| *w = 0);
        edges.push(raw(&l));
    }
    // Raw values whose low limbs are all ones (2^(32 k) - 1, and the
    // modulus less 1): long carry runs through the chains.
    for k in 1..limbs {
        let mut l = vec![0u32; limbs];
        l[..k].iter_mut().for_each(|w| *w = u32::MAX);
        edges.push(raw(&l));
    }
    let mut m1 = F::MODULUS.to_vec();
    m1[0] -= 1;
    edges.push(raw(&m1));
    for &a in &edges {
        for &b in &edges {
            pairs.push((a, b));
        }
        pairs.push((a, F::random(&mut rng)));
        pairs.push((F::random(&mut rng), a));
    }
    let (xs, ys) = near_modulus_pairs(&mut rng, F::MODULUS, 24, raw::<F>);
    pairs.extend(xs.into_iter().zip(ys));

    pairs
}

/// The field drivers' input (field_emu.cpp, field_f64_emu.cpp): the field
/// id, the pair count, then each pair's raw elements.
pub fn pairs_input<F: EmuField>(pairs: &[(F, F)]) -> Vec<u8> {
    let mut input = F::ID.to_le_bytes().to_vec();
    input.extend((pairs.len() as u32).to_le_bytes());
    for (a, b) in pairs {
        input.extend(a.raw_bytes());
        input.extend(b.raw_bytes());
    }
    input
}

/// A field driver's output for `pairs` pairs: K elements a pair.
pub fn results<F: EmuField, const K: usize>(out: &[u8], pairs: usize) -> Vec<[F; K]> {
    let elem = 4 * F::MODULUS.len();
    assert_eq!(out.len(), K * elem * pairs, "the driver's output length");
    out.chunks_exact(K * elem)
        .map(|c| std::array::from_fn(|k| F::from_raw(&c[k * elem..(k + 1) * elem])))
        .collect()
}
