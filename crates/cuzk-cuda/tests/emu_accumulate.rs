//! The MSM's bucket accumulation (kernels/msm.cuh's accumulate_affine, the
//! kernel behind msm_accumulate_g1 / msm_accumulate_g2, with the segment
//! of each chunk from msm_chunk_owner) run on the CPU
//! (emu/accumulate_emu.cpp) against blstrs: each chunk of at most T
//! entries of a segment summed by mixed additions, entries taken negated
//! where their top bit says so. Segments of every length around T
//! (empty, one entry, T - 1, T, T + 1, several chunks), chunks whose
//! running sum meets the next point (P + P: the doubling inside the
//! addition) or its negation (P + -P: infinity, then more points), the
//! point at infinity among the points, and threads taking the chunks in
//! a shuffled order (msm_chunk_order's permutation). Portable and PTX
//! forms of field.cuh. The GPU checks run the same kernels on the device
//! (`msm/...`). Needs a C++20 compiler (`$CXX`, else `c++`).

mod common;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use common::Arith;
use cuzk_cuda::host;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One segment's entries: point indices, bit 31 set for "negated". In
/// about half the segments one chunk of two or more entries starts with a
/// pair that repeats (P + P: the addition doubles) or cancels (P + -P:
/// infinity, from which the chunk's next entries go on).
fn segment(rng: &mut ChaCha8Rng, len: usize, points: usize, t: usize) -> Vec<u32> {
    let mut v: Vec<u32> = (0..len)
        .map(|_| rng.gen_range(0..points as u32) | if rng.gen_bool(0.5) { 1 << 31 } else { 0 })
        .collect();
    let pairs: Vec<usize> = (0..len.div_ceil(t))
        .map(|c| c * t)
        .filter(|&at| at + 1 < len && t >= 2)
        .collect();
    if let Some(&at) = pairs.choose(rng) {
        if rng.gen_bool(0.5) {
            v[at + 1] = v[at];
        } else {
            v[at + 1] = v[at] ^ (1 << 31);
        }
    }
    v
}

#[allow(clippy::too_many_arguments)]
fn check<A, P>(
    g: u32,
    arith: Arith,
    t: usize,
    with_order: bool,
    seed: u64,
    as_bytes: fn(&[A]) -> &[u8],
    from_xyzz: fn(&[u8]) -> P,
    sz: usize,
) where
    A: PrimeCurveAffine + std::ops::Neg<Output = A>,
    P: Group<Scalar = Scalar> + Curve<AffineRepr = A> + From<A>,
{
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Points: random, one repeated twice, and the point at infinity.
    let mut points: Vec<A> = (0..12).map(|_| P::random(&mut rng).to_affine()).collect();
    points.push(points[3]);
    points.push(A::identity());
    // Segment lengths around T and beyond.
    let mut lens = vec![0, 1, t.saturating_sub(1), t, t + 1, 2 * t, 3 * t + 2, 0, 1];
    lens.extend((0..6).map(|_| rng.gen_range(0..4 * t + 3)));
    lens.shuffle(&mut rng);
    let segs: Vec<Vec<u32>> = lens
        .iter()
        .map(|&l| segment(&mut rng, l, points.len(), t))
        .collect();
    let chunks: usize = segs.iter().map(|s| s.len().div_ceil(t)).sum();
    let mut order: Vec<u32> = (0..chunks as u32).collect();
    order.shuffle(&mut rng);

    let mut input = Vec::new();
    for v in [g, segs.len() as u32, t as u32, u32::from(with_order)] {
        input.extend(v.to_le_bytes());
    }
    for s in &segs {
        input.extend((s.len() as u32).to_le_bytes());
    }
    input.extend((points.len() as u32).to_le_bytes());
    input.extend(as_bytes(&points));
    for s in &segs {
        for e in s {
            input.extend(e.to_le_bytes());
        }
    }
    if with_order {
        for j in &order {
            input.extend(j.to_le_bytes());
        }
    }
    let bin = common::emu_binary_for(
        arith,
        "accumulate_emu.cpp",
        "accumulate_emu",
        "CUZK_FP64_MIX_FQ",
    );
    let out = common::run_emu(&bin, &input);
    assert_eq!(out.len(), chunks * sz, "G{g} output size");
    let mut j = 0;
    for (si, s) in segs.iter().enumerate() {
        for (k, chunk) in s.chunks(t).enumerate() {
            let mut want = P::identity();
            for &e in chunk {
                let p = P::from(points[(e & 0x7fff_ffff) as usize]);
                want += if e >> 31 == 1 { -p } else { p };
            }
            let got = from_xyzz(&out[j * sz..]);
            assert!(
                got == want,
                "G{g} segment {si} (length {}) chunk {k}, T {t}, order {with_order} ({arith:?})",
                s.len()
            );
            j += 1;
        }
    }
}

fn check_g1(arith: Arith, t: usize, with_order: bool, seed: u64) {
    check::<G1Affine, G1Projective>(
        1,
        arith,
        t,
        with_order,
        seed,
        host::g1_as_bytes,
        host::g1_from_xyzz,
        host::G1_XYZZ_BYTES,
    );
}

fn check_g2(arith: Arith, t: usize, with_order: bool, seed: u64) {
    check::<G2Affine, G2Projective>(
        2,
        arith,
        t,
        with_order,
        seed,
        host::g2_as_bytes,
        host::g2_from_xyzz,
        host::G2_XYZZ_BYTES,
    );
}

#[test]
fn g1_chunks_match_blstrs() {
    for (t, seed) in [(1, 0xa1), (2, 0xa2), (5, 0xa3), (16, 0xa4)] {
        check_g1(Arith::Portable, t, false, seed);
        check_g1(Arith::Portable, t, true, seed + 0x100);
    }
}

#[test]
fn g1_chunks_in_ptx_form_match_blstrs() {
    check_g1(Arith::Ptx, 5, true, 0xb1);
}

#[test]
fn g2_chunks_match_blstrs() {
    check_g2(Arith::Portable, 3, false, 0xc1);
    check_g2(Arith::Portable, 4, true, 0xc2);
}
