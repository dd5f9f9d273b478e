//! Multi-scalar multiplication on the CPU: blst's Pippenger on the points
//! as they lie in the parameters (affine, no per-call conversion), with the
//! 0/1 scalars handled apart.
//!
//! Real witnesses are mostly bits. A zero contributes nothing and a one
//! contributes its base, so those bases are summed with blst's batched
//! affine addition (about 5M+1S a point, against a full 255-bit Pippenger
//! pass for each scalar) and only the remaining scalars go through
//! Pippenger. blst runs both on its own thread pool over all cores.

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, MultiPoint};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use rayon::prelude::*;

// The slice casts below rely on blstrs' point types being
// #[repr(transparent)] wrappers of blst's (blstrs itself casts this way in
// `multi_exp`). Were a blstrs release to change that, these assertions
// stop the build rather than let a cast misread memory.
const _: () = {
    use std::mem::{align_of, size_of};
    assert!(size_of::<G1Affine>() == size_of::<blst_p1_affine>());
    assert!(align_of::<G1Affine>() == align_of::<blst_p1_affine>());
    assert!(size_of::<G2Affine>() == size_of::<blst_p2_affine>());
    assert!(align_of::<G2Affine>() == align_of::<blst_p2_affine>());
    assert!(size_of::<G1Projective>() == size_of::<blst_p1>());
    assert!(align_of::<G1Projective>() == align_of::<blst_p1>());
    assert!(size_of::<G2Projective>() == size_of::<blst_p2>());
    assert!(align_of::<G2Projective>() == align_of::<blst_p2>());
};

/// Scalars are below r < 2^255.
const SCALAR_BITS: usize = 255;

/// If fewer than 1/8 of the scalars are 0 or 1, splitting them off saves
/// less than gathering the rest costs, so Pippenger takes everything (H's
/// scalars, for one, are uniformly random).
const SPLIT_MIN_FRACTION: usize = 8;

/// Curve-specific glue for the generic split-and-Pippenger driver.
pub trait MsmCurve {
    type Affine: Copy + Send + Sync;
    type Raw: Copy + Send + Sync;
    type Projective: Copy + Send;
    fn raw(points: &[Self::Affine]) -> &[Self::Raw];
    fn pippenger(points: &[Self::Raw], scalars_le: &[u8]) -> Self::Projective;
    fn sum(points: &[Self::Raw]) -> Self::Projective;
    fn add(a: Self::Projective, b: Self::Projective) -> Self::Projective;
    fn identity() -> Self::Projective;
}

pub struct G1;
pub struct G2;

impl MsmCurve for G1 {
    type Affine = G1Affine;
    type Raw = blst_p1_affine;
    type Projective = G1Projective;
    fn raw(points: &[G1Affine]) -> &[blst_p1_affine] {
        #[allow(unsafe_code)]
        // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine, so a
        // slice of one is a valid slice of the other with the same length.
        unsafe {
            std::slice::from_raw_parts(points.as_ptr() as *const blst_p1_affine, points.len())
        }
    }
    fn pippenger(points: &[blst_p1_affine], scalars_le: &[u8]) -> G1Projective {
        from_p1(points.mult(scalars_le, SCALAR_BITS))
    }
    fn sum(points: &[blst_p1_affine]) -> G1Projective {
        from_p1(points.add())
    }
    fn add(a: G1Projective, b: G1Projective) -> G1Projective {
        a + b
    }
    fn identity() -> G1Projective {
        G1Projective::identity()
    }
}

impl MsmCurve for G2 {
    type Affine = G2Affine;
    type Raw = blst_p2_affine;
    type Projective = G2Projective;
    fn raw(points: &[G2Affine]) -> &[blst_p2_affine] {
        #[allow(unsafe_code)]
        // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine, so a
        // slice of one is a valid slice of the other with the same length.
        unsafe {
            std::slice::from_raw_parts(points.as_ptr() as *const blst_p2_affine, points.len())
        }
    }
    fn pippenger(points: &[blst_p2_affine], scalars_le: &[u8]) -> G2Projective {
        from_p2(points.mult(scalars_le, SCALAR_BITS))
    }
    fn sum(points: &[blst_p2_affine]) -> G2Projective {
        from_p2(points.add())
    }
    fn add(a: G2Projective, b: G2Projective) -> G2Projective {
        a + b
    }
    fn identity() -> G2Projective {
        G2Projective::identity()
    }
}

/// Projective to affine with one field inversion per call (Montgomery's
/// trick, blst's `p1s_to_affine`); identities map to the identity.
pub fn batch_normalize_g1(points: &[G1Projective]) -> Vec<G1Affine> {
    if points.is_empty() {
        return Vec::new();
    }
    #[allow(unsafe_code)]
    // SAFETY: G1Projective is #[repr(transparent)] over blst_p1.
    let raw =
        unsafe { std::slice::from_raw_parts(points.as_ptr() as *const blst_p1, points.len()) };
    blst::p1_affines::from(raw)
        .as_slice()
        .iter()
        .map(|r| {
            let mut a = G1Affine::default();
            *a.as_mut() = *r;
            a
        })
        .collect()
}

pub fn batch_normalize_g2(points: &[G2Projective]) -> Vec<G2Affine> {
    if points.is_empty() {
        return Vec::new();
    }
    #[allow(unsafe_code)]
    // SAFETY: G2Projective is #[repr(transparent)] over blst_p2.
    let raw =
        unsafe { std::slice::from_raw_parts(points.as_ptr() as *const blst_p2, points.len()) };
    blst::p2_affines::from(raw)
        .as_slice()
        .iter()
        .map(|r| {
            let mut a = G2Affine::default();
            *a.as_mut() = *r;
            a
        })
        .collect()
}

pub(crate) fn from_p1(raw: blst_p1) -> G1Projective {
    let mut p = G1Projective::identity();
    *p.as_mut() = raw;
    p
}

pub(crate) fn from_p2(raw: blst_p2) -> G2Projective {
    let mut p = G2Projective::identity();
    *p.as_mut() = raw;
    p
}

fn scalar_bytes(scalars: impl IndexedParallelIterator<Item = Scalar>, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len * 32];
    out.par_chunks_mut(32)
        .zip(scalars)
        .with_min_len(1 << 10)
        .for_each(|(dst, s)| dst.copy_from_slice(&s.to_bytes_le()));
    out
}

/// Σ scalars\[i\]·bases\[i\] over the shorter length.
pub fn msm<C: MsmCurve>(bases: &[C::Affine], scalars: &[Scalar]) -> C::Projective {
    let n = bases.len().min(scalars.len());
    let (bases, scalars) = (C::raw(&bases[..n]), &scalars[..n]);
    if n == 0 {
        return C::identity();
    }
    if n > u32::MAX as usize {
        // Beyond u32 indices (far past any circuit): no split.
        let bytes = scalar_bytes(scalars.par_iter().copied(), n);
        return C::pippenger(bases, &bytes);
    }

    // Indices of the ones and of the scalars that need Pippenger.
    const CHUNK: usize = 1 << 12;
    let parts: Vec<(Vec<u32>, Vec<u32>)> = scalars
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let (mut ones, mut rest) = (Vec::new(), Vec::with_capacity(chunk.len()));
            for (j, s) in chunk.iter().enumerate() {
                let i = (c * CHUNK + j) as u32;
                if *s == Scalar::ONE {
                    ones.push(i);
                } else if !bool::from(s.is_zero()) {
                    rest.push(i);
                }
            }
            (ones, rest)
        })
        .collect();
    let rest_len: usize = parts.iter().map(|p| p.1.len()).sum();

    if rest_len + rest_len / (SPLIT_MIN_FRACTION - 1) >= n {
        // Nearly all scalars are wide: no gathering.
        let bytes = scalar_bytes(scalars.par_iter().copied(), n);
        return C::pippenger(bases, &bytes);
    }

    let ones: Vec<u32> = parts.iter().flat_map(|p| p.0.iter().copied()).collect();
    let rest: Vec<u32> = parts.into_iter().flat_map(|p| p.1).collect();
    let one_bases: Vec<C::Raw> = ones.par_iter().map(|&i| bases[i as usize]).collect();
    let sum = if one_bases.is_empty() {
        C::identity()
    } else {
        C::sum(&one_bases)
    };
    drop(one_bases);
    if rest.is_empty() {
        return sum;
    }
    let rest_bases: Vec<C::Raw> = rest.par_iter().map(|&i| bases[i as usize]).collect();
    let bytes = scalar_bytes(rest.par_iter().map(|&i| scalars[i as usize]), rest.len());
    C::add(sum, C::pippenger(&rest_bases, &bytes))
}

pub fn msm_g1(bases: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    msm::<G1>(bases, scalars)
}

pub fn msm_g2(bases: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    msm::<G2>(bases, scalars)
}

/// The textbook sum of products, for tests of the fast paths.
pub fn msm_g1_reference(bases: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    bases.iter().zip(scalars).map(|(b, s)| b * s).sum()
}

pub fn msm_g2_reference(bases: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    bases.iter().zip(scalars).map(|(b, s)| b * s).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Curve;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Scalar mixes: uniform, mostly bits, all ones, all zeros, and edge
    /// values (r − 1, 2, ...).
    fn scalars(rng: &mut ChaCha20Rng, n: usize, mix: usize) -> Vec<Scalar> {
        (0..n)
            .map(|_| match mix {
                0 => Scalar::random(&mut *rng),
                1 => match rng.gen_range(0..10) {
                    0..=4 => Scalar::ZERO,
                    5..=8 => Scalar::ONE,
                    _ => Scalar::random(&mut *rng),
                },
                2 => Scalar::ONE,
                3 => Scalar::ZERO,
                _ => match rng.gen_range(0..4) {
                    0 => -Scalar::ONE,
                    1 => Scalar::from(2u64),
                    2 => Scalar::ONE,
                    _ => Scalar::from(rng.gen::<u64>()),
                },
            })
            .collect()
    }

    #[test]
    fn g1_matches_reference() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let bases: Vec<G1Affine> = (0..1500)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        for n in [0usize, 1, 2, 3, 7, 31, 32, 33, 100, 1000, 1500] {
            for mix in 0..5 {
                let s = scalars(&mut rng, n, mix);
                let got = msm_g1(&bases[..n], &s);
                assert_eq!(
                    got,
                    msm_g1_reference(&bases[..n], &s),
                    "n = {n}, mix = {mix}"
                );
            }
        }
        // Lengths differ: the shorter wins.
        let s = scalars(&mut rng, 10, 0);
        assert_eq!(msm_g1(&bases[..20], &s), msm_g1_reference(&bases[..10], &s));
        // Repeated bases (the batched affine addition's doubling case) and a
        // base with its negation.
        let rep = vec![bases[0]; 500];
        let ones = vec![Scalar::ONE; 500];
        assert_eq!(
            msm_g1(&rep, &ones),
            G1Projective::from(bases[0]) * Scalar::from(500u64)
        );
        let pair = [bases[1], -bases[1], bases[2]];
        assert_eq!(
            msm_g1(&pair, &[Scalar::ONE; 3]),
            G1Projective::from(bases[2])
        );
    }

    #[test]
    fn g2_matches_reference() {
        let mut rng = ChaCha20Rng::seed_from_u64(6);
        let bases: Vec<G2Affine> = (0..300)
            .map(|_| G2Projective::random(&mut rng).to_affine())
            .collect();
        for n in [0usize, 1, 2, 3, 7, 33, 100, 300] {
            for mix in 0..5 {
                let s = scalars(&mut rng, n, mix);
                assert_eq!(
                    msm_g2(&bases[..n], &s),
                    msm_g2_reference(&bases[..n], &s),
                    "n = {n}, mix = {mix}"
                );
            }
        }
    }

    #[test]
    fn batch_normalize_matches_to_affine() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        for n in [0usize, 1, 2, 3, 100, 1000] {
            let mut p: Vec<G1Projective> = (0..n).map(|_| G1Projective::random(&mut rng)).collect();
            if n > 2 {
                p[1] = G1Projective::identity();
            }
            let want: Vec<G1Affine> = p.iter().map(|x| x.to_affine()).collect();
            assert_eq!(batch_normalize_g1(&p), want);
            let q: Vec<G2Projective> = (0..n.min(100))
                .map(|_| G2Projective::random(&mut rng))
                .collect();
            let want: Vec<G2Affine> = q.iter().map(|x| x.to_affine()).collect();
            assert_eq!(batch_normalize_g2(&q), want);
        }
    }
}
