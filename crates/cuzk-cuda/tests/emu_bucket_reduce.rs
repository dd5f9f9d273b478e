//! The MSM's per-window bucket reduction (kernels/msm.cuh) run on the CPU
//! (emu/bucket_reduce_emu.cpp) against blstrs: each window's
//! sum over its buckets of (b + 1) S_b, by the split form the device runs
//! by default (each group's weighted and plain sums, the groups' second
//! level `group_sums`, each window joined by `window_join`), one lane and
//! pairs of lanes, and by the one-lane form with each group's
//! double-and-add. Windows with random buckets, with no buckets, and with
//! repeated points and P / -P; groups of one bucket up to one group a
//! window. Needs a C++20 compiler (`$CXX`, else `c++`).

mod common;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cuzk_cuda::host;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Case {
    windows: u32,
    lg_buckets: u32,
    lg_groups: u32,
    lg_second: u32,
    pairs: bool,
}

/// The buckets of `case` (counts and points: window 0 random, window 1
/// empty, the rest repeated points and P / -P), through the emulator; each
/// window's sum of either form against blstrs.
fn check<A, P>(
    g: u32,
    case: &Case,
    seed: u64,
    as_bytes: fn(&[A]) -> &[u8],
    from_xyzz: fn(&[u8]) -> P,
    sz: usize,
) where
    A: PrimeCurveAffine + std::ops::Neg<Output = A>,
    P: Group<Scalar = Scalar> + Curve<AffineRepr = A> + From<A>,
{
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let b = 1usize << case.lg_buckets;
    let w = case.windows as usize;
    let base: Vec<A> = (0..4).map(|_| P::random(&mut rng).to_affine()).collect();
    let mut counts = vec![0u32; w * b];
    let mut points = vec![A::identity(); w * b];
    for win in 0..w {
        for k in 0..b {
            let s = win * b + k;
            let (count, p) = match win {
                0 => (
                    u32::from(rng.gen_bool(0.8)),
                    P::random(&mut rng).to_affine(),
                ),
                1 => (0, P::random(&mut rng).to_affine()),
                _ => {
                    let q = base[rng.gen_range(0..base.len())];
                    (1, if rng.gen_bool(0.5) { q } else { -q })
                }
            };
            counts[s] = count;
            points[s] = p;
        }
    }
    let mut input = Vec::new();
    for v in [
        g,
        case.windows,
        case.lg_buckets,
        case.lg_groups,
        case.lg_second,
        u32::from(case.pairs),
    ] {
        input.extend(v.to_le_bytes());
    }
    for c in &counts {
        input.extend(c.to_le_bytes());
    }
    input.extend(as_bytes(&points));
    let bin = common::emu_binary("bucket_reduce_emu.cpp", "bucket_reduce_emu", &[]);
    let out = common::run_emu(&bin, &input);
    let forms = if case.pairs { 1 } else { 2 };
    assert_eq!(out.len(), forms * w * sz, "G{g} output size");
    for win in 0..w {
        let mut want = P::identity();
        for k in 0..b {
            let s = win * b + k;
            if counts[s] == 1 {
                want += P::from(points[s]) * Scalar::from(k as u64 + 1);
            }
        }
        for form in 0..forms {
            let got = from_xyzz(&out[(form * w + win) * sz..]);
            assert!(
                got == want,
                "G{g} window {win}, {} form, lgB {} lgG {} lgH {} pairs {}",
                ["split", "double-and-add"][form],
                case.lg_buckets,
                case.lg_groups,
                case.lg_second,
                case.pairs
            );
        }
    }
}

fn cases(lg_buckets: u32, groups: &[(u32, u32)]) -> Vec<Case> {
    let mut v = Vec::new();
    for &(lg_groups, lg_second) in groups {
        for pairs in [false, true] {
            v.push(Case {
                windows: 3,
                lg_buckets,
                lg_groups,
                lg_second,
                pairs,
            });
        }
    }
    v
}

#[test]
fn g1_windows_match_blstrs() {
    for (i, case) in cases(6, &[(0, 0), (2, 0), (3, 3), (4, 1), (6, 3)])
        .iter()
        .enumerate()
    {
        check::<G1Affine, G1Projective>(
            1,
            case,
            0xb0 + i as u64,
            host::g1_as_bytes,
            host::g1_from_xyzz,
            host::G1_XYZZ_BYTES,
        );
    }
}

#[test]
fn g2_windows_match_blstrs() {
    for (i, case) in cases(4, &[(0, 0), (2, 1), (4, 4)]).iter().enumerate() {
        check::<G2Affine, G2Projective>(
            2,
            case,
            0xc0 + i as u64,
            host::g2_as_bytes,
            host::g2_from_xyzz,
            host::G2_XYZZ_BYTES,
        );
    }
}
