//! The 0/1 path's kernels (kernels/zero_one.cuh: mask_popcount and
//! sum_selected, plain and with pair sums) run on the CPU
//! (emu/zero_one_emu.cpp) against blstrs' sum of the selected points:
//! odd and word-straddling sizes, masks of every shape (random, all ones,
//! none, only the even or only the odd bit of each pair, whole pairs),
//! points at infinity, pairs that sum to infinity (P, -P) or double
//! (P, P), and the additions dealt to 1, 3 and 40 threads; and the
//! device's pair sums (pair_sums_*) against the host's. The GPU checks
//! run the same kernels on the device (`zero_one/...`). Needs a C++20
//! compiler (`$CXX`, else `c++`).

mod common;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use cuzk_cuda::host;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One group as the test drives it.
struct G<A, P> {
    id: u32,
    as_bytes: fn(&[A]) -> &[u8],
    from_xyzz: fn(&[u8]) -> P,
    xyzz: usize,
    pair_sums: fn(&[A]) -> Vec<A>,
}

/// The emulated kernels' partial sums, added up.
fn emulated<A, P: Group>(
    g: &G<A, P>,
    points: &[A],
    pairs: Option<&[A]>,
    mask: &[u32],
    threads: u32,
) -> P {
    let bin = common::emu_binary("zero_one_emu.cpp", "zero_one_emu", &[]);
    let mut input = Vec::new();
    for w in [g.id, pairs.is_some() as u32, points.len() as u32, threads] {
        input.extend(w.to_le_bytes());
    }
    input.extend((g.as_bytes)(points));
    if let Some(p) = pairs {
        input.extend((g.as_bytes)(p));
    }
    for w in mask {
        input.extend(w.to_le_bytes());
    }
    let out = common::run_emu(&bin, &input);
    assert_eq!(out.len(), threads as usize * g.xyzz);
    out.chunks_exact(g.xyzz).map(g.from_xyzz).sum()
}

/// pair_sums_g{id}'s XYZZ sums of consecutive pairs, emulated.
fn emulated_pair_sums<A, P>(g: &G<A, P>, points: &[A]) -> Vec<P> {
    let bin = common::emu_binary("zero_one_emu.cpp", "zero_one_emu", &[]);
    let mut input = Vec::new();
    for w in [g.id, 2, points.len() as u32] {
        input.extend(w.to_le_bytes());
    }
    input.extend((g.as_bytes)(points));
    let out = common::run_emu(&bin, &input);
    assert_eq!(out.len(), points.len() / 2 * g.xyzz);
    out.chunks_exact(g.xyzz).map(g.from_xyzz).collect()
}

/// `n` random points with the special ones placed: infinity, a pair
/// (P, -P) and a pair (P, P).
fn points<A, P>(rng: &mut ChaCha8Rng, n: usize) -> Vec<A>
where
    A: PrimeCurveAffine + std::ops::Neg<Output = A>,
    P: Group + Curve<AffineRepr = A>,
{
    let mut v: Vec<A> = (0..n).map(|_| P::random(&mut *rng).to_affine()).collect();
    if n >= 8 {
        v[1] = A::identity();
        v[2] = A::identity();
        v[3] = A::identity();
        v[5] = -v[4];
        v[7] = v[6];
    }
    v
}

/// The masks of `n` points: random, all ones, none, even bits, odd bits,
/// whole pairs.
fn masks(rng: &mut ChaCha8Rng, n: usize) -> Vec<Vec<u32>> {
    let words = n.div_ceil(32);
    let shaped = |f: &dyn Fn(usize) -> bool| {
        let mut m = vec![0u32; words];
        for i in (0..n).filter(|&i| f(i)) {
            m[i / 32] |= 1 << (i % 32);
        }
        m
    };
    let random: Vec<bool> = (0..n).map(|_| rng.gen()).collect();
    let pairs: Vec<bool> = (0..n.div_ceil(2)).map(|_| rng.gen()).collect();
    vec![
        shaped(&|i| random[i]),
        shaped(&|_| true),
        shaped(&|_| false),
        shaped(&|i| i % 2 == 0),
        shaped(&|i| i % 2 == 1),
        shaped(&|i| pairs[i / 2]),
    ]
}

fn check<A, P>(g: G<A, P>, sizes: &[usize])
where
    A: PrimeCurveAffine + std::ops::Neg<Output = A>,
    P: Group + Curve<AffineRepr = A> + std::ops::Add<A, Output = P> + std::fmt::Debug,
{
    let mut rng = ChaCha8Rng::seed_from_u64(0x01 + g.id as u64);
    for &n in sizes {
        let pts = points::<A, P>(&mut rng, n);
        let pair_sums = (g.pair_sums)(&pts);
        assert_eq!(pair_sums.len(), n / 2);
        // The device's pair sums (pair_sums_*) are the host's.
        let device: Vec<A> = emulated_pair_sums(&g, &pts)
            .iter()
            .map(|p| p.to_affine())
            .collect();
        assert_eq!(device, pair_sums, "G{} pair sums of {n} points", g.id);
        for (k, mask) in masks(&mut rng, n).iter().enumerate() {
            let want = (0..n)
                .filter(|&i| mask[i / 32] >> (i % 32) & 1 == 1)
                .fold(P::identity(), |acc, i| acc + pts[i]);
            for threads in [1, 3, 40] {
                let plain = emulated(&g, &pts, None, mask, threads);
                assert_eq!(plain, want, "G{} n {n} mask {k}, {threads} threads", g.id);
                let paired = emulated(&g, &pts, Some(&pair_sums), mask, threads);
                assert_eq!(
                    paired, want,
                    "G{} paired n {n} mask {k}, {threads} threads",
                    g.id
                );
            }
        }
    }
}

#[test]
fn g1_selected_sums_plain_and_paired_match_blstrs() {
    check::<G1Affine, G1Projective>(
        G {
            id: 1,
            as_bytes: host::g1_as_bytes,
            from_xyzz: host::g1_from_xyzz,
            xyzz: host::G1_XYZZ_BYTES,
            pair_sums: host::pair_sums_g1,
        },
        &[1, 2, 3, 8, 31, 32, 33, 64, 101, 257],
    );
}

#[test]
fn g2_selected_sums_plain_and_paired_match_blstrs() {
    check::<G2Affine, G2Projective>(
        G {
            id: 2,
            as_bytes: host::g2_as_bytes,
            from_xyzz: host::g2_from_xyzz,
            xyzz: host::G2_XYZZ_BYTES,
            pair_sums: host::pair_sums_g2,
        },
        &[1, 3, 8, 33, 70],
    );
}
