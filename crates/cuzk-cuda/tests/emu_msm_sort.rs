//! The MSM's shared-memory sort (kernels/msm_sort.cuh) run on the CPU
//! (emu/cuda_emu.h, emu/msm_sort_emu.cpp) with the plan src/device/msm.rs
//! launches it with (`host::msm_sort_plan`), against the signed digits of
//! `host::signed_digits`: every bucket's count, its offset, and the entries
//! placed in it (point id and sign) as a set. Covers Montgomery and
//! canonical scalars, ids, zero digits, a window holding only the carry
//! (c = 15 and 17), one part and many, one tile and several, and windows in
//! one group and in several. Needs a C++20 compiler (`$CXX`, else `c++`);
//! PTX is not covered (the GPU checks run every MSM through it).

mod common;

use std::collections::BTreeMap;

use blstrs::Scalar;
use cuzk_cuda::host::{self, MsmSortPlan};
use ff::Field;
use rand::{Rng, SeedableRng};

struct Sorted {
    count: Vec<u32>,
    off: Vec<u32>,
    sorted: Vec<u32>,
}

/// One sort to emulate: the scalars (sent in Montgomery form or
/// canonical), point ids if any, the window width, the plan and the
/// threads per block.
#[derive(Clone, Copy)]
struct Case<'a> {
    scalars: &'a [Scalar],
    mont: bool,
    ids: Option<&'a [u32]>,
    c: u32,
    plan: MsmSortPlan,
    block: u32,
}

impl<'a> Case<'a> {
    /// Montgomery scalars, no ids, the device's plan and block size.
    fn new(scalars: &'a [Scalar], c: u32) -> Self {
        Case {
            scalars,
            mont: true,
            ids: None,
            c,
            plan: host::msm_sort_plan(scalars.len(), c),
            block: host::MSM_SORT_BLOCK,
        }
    }
}

fn run_emu(case: Case<'_>) -> Sorted {
    let Case {
        scalars,
        mont,
        ids,
        c,
        plan,
        block,
    } = case;
    let w = host::num_windows(c);
    let mut input = Vec::new();
    let mut put = |v: u32| input.extend_from_slice(&v.to_le_bytes());
    let groups = plan.groups(w);
    for v in [
        scalars.len() as u32,
        c,
        w,
        mont as u32,
        plan.lg_low,
        plan.parts,
        plan.tiles,
        block,
        plan.place_stage,
        plan.bucket_stage,
        plan.buckets_smem(block),
        groups.len() as u32,
    ] {
        put(v);
    }
    for (w0, w1) in &groups {
        put(*w0);
        put(*w1);
        put(plan.place_smem(*w0, *w1, block));
    }
    put(ids.is_some() as u32);
    for s in scalars {
        if mont {
            input.extend_from_slice(host::scalars_as_bytes(std::slice::from_ref(s)));
        } else {
            input.extend_from_slice(&s.to_bytes_le());
        }
    }
    if let Some(ids) = ids {
        for id in ids {
            input.extend_from_slice(&id.to_le_bytes());
        }
    }
    let out = common::run_emu(
        &common::emu_binary("msm_sort_emu.cpp", "msm_sort_emu", &[]),
        &input,
    );
    let words: Vec<u32> = out
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let s = (w as usize) << (c - 1);
    assert!(words.len() > 2 * s, "msm_sort_emu returned too little");
    let count = words[..s].to_vec();
    let off = words[s..2 * s + 1].to_vec();
    let sorted = words[2 * s + 1..].to_vec();
    Sorted { count, off, sorted }
}

/// Checks the emulated sort against the digits (`check_one`) with the
/// case's plan, with both passes unstaged (each entry written where it
/// goes), and with stages smaller than a block and not dividing a tile.
fn check(case: Case<'_>) {
    check_one(case);
    check_one(Case {
        plan: case.plan.unstaged(),
        ..case
    });
    check_one(Case {
        plan: MsmSortPlan {
            place_stage: case.block / 2 + 5,
            bucket_stage: case.block / 4 + 3,
            ..case.plan
        },
        ..case
    });
}

/// Checks the emulated sort against the digits: per bucket, the count, the
/// offset (an exclusive scan of the counts) and the entries as a set.
fn check_one(case: Case<'_>) {
    let Case {
        scalars, ids, c, ..
    } = case;
    let w = host::num_windows(c) as usize;
    let b = 1usize << (c - 1);
    let got = run_emu(case);
    let mut want: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for (i, s) in scalars.iter().enumerate() {
        let id = ids.map_or(i as u32, |v| v[i]);
        for (win, d) in host::signed_digits(&host::canonical_limbs(s), c)
            .into_iter()
            .enumerate()
        {
            if d != 0 {
                let bucket = win * b + d.unsigned_abs() as usize - 1;
                want.entry(bucket)
                    .or_default()
                    .push(id | (u32::from(d < 0) << 31));
            }
        }
    }
    let what = format!(
        "n={} c={c} mont={} ids={} {:?}",
        scalars.len(),
        case.mont,
        ids.is_some(),
        case.plan
    );
    let mut run = 0u32;
    for s in 0..w * b {
        let mut expect = want.remove(&s).unwrap_or_default();
        assert_eq!(
            got.count[s] as usize,
            expect.len(),
            "{what}: count of bucket {s}"
        );
        assert_eq!(got.off[s], run, "{what}: offset of bucket {s}");
        let start = run as usize;
        run += expect.len() as u32;
        let mut placed = got.sorted[start..run as usize].to_vec();
        placed.sort_unstable();
        expect.sort_unstable();
        assert_eq!(placed, expect, "{what}: entries of bucket {s}");
    }
    assert_eq!(got.off[w * b], run, "{what}: the total");
    assert_eq!(got.sorted.len(), run as usize, "{what}: list length");
}

fn random(n: usize, seed: u64) -> Vec<Scalar> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| Scalar::random(&mut rng)).collect()
}

#[test]
fn one_scalar_and_small_windows() {
    for c in [4u32, 8] {
        let one = random(1, 1);
        check(Case {
            block: 64,
            ..Case::new(&one, c)
        });
        let hundred = random(100, 2);
        check(Case {
            mont: false,
            block: 64,
            ..Case::new(&hundred, c)
        });
    }
}

#[test]
fn edge_scalars_in_one_part_and_in_many() {
    // Zero, one, -1, repeats and small values: zero digits dropped, many
    // entries in one bucket.
    let mut v = random(3000, 3);
    for (k, s) in v.iter_mut().enumerate().take(600) {
        *s = match k % 6 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            2 => -Scalar::ONE,
            3 => Scalar::from(k as u64),
            4 => Scalar::from(0xffff_ffffu64),
            _ => Scalar::from(7u64),
        };
    }
    check_one(Case::new(&v, 10));
    check_one(Case::new(&v, 13));
    // A window at a time, as large MSMs go: the list, written over the
    // keys, lags them by the zero digits dropped before each window.
    let case = Case::new(&v, 13);
    check_one(Case {
        block: 64,
        plan: MsmSortPlan {
            group_windows: 1,
            ..case.plan
        },
        ..case
    });
    // (Staged three ways in blocks of 64 threads: the emulator's barriers
    // cost a system call a thread, and a staged pass has ~50 a stage at
    // 512 threads.)
    check(Case {
        block: 64,
        ..Case::new(&v, 16)
    });
}

#[test]
fn several_tiles_ids_and_window_groups() {
    let n = 2 * host::MSM_SORT_TILE + 77;
    let v = random(n, 4);
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let ids: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1u32 << 30)).collect();
    // c = 15 and 17: the top window holds only the carry (all its entries
    // in bucket 1); c = 20: 512 parts a window.
    // (Blocks of 64 threads: the emulator starts a thread for each.)
    for c in [15u32, 17, 20] {
        let case = Case {
            block: 64,
            ..Case::new(&v, c)
        };
        assert_eq!(case.plan.tiles, 3);
        let with_ids = Case {
            mont: false,
            ids: Some(&ids),
            ..case
        };
        if c == 20 {
            check(with_ids);
        } else {
            check_one(with_ids);
            // The windows in groups of 3 (large MSMs place them one by one).
            check_one(Case {
                plan: MsmSortPlan {
                    group_windows: 3,
                    ..case.plan
                },
                ..case
            });
        }
    }
}

/// The benchmark's sort sweep (`MsmSortTuning`, `CudaDevice::set_msm_sort_
/// tuning`) sorts the same entries under other geometries: fewer and more
/// low bits, less and more shared memory, fewer entries a thread than the
/// kernel's MSM_SORT_STAGE_PER_THREAD (16) and more, which the staged
/// passes then take in steps of 16 a thread. (Blocks of 64 threads: the
/// emulator starts a thread for each.)
#[test]
fn tuned_geometries_sort_the_same_entries() {
    let n = host::MSM_SORT_TILE + 501;
    let v = random(n, 6);
    for (lg_low, kib, per_thread, c) in [
        (8u32, 48u32, 8u32, 16u32),
        (11, 96, 16, 16),
        (6, 64, 3, 13),
        (12, 160, 32, 16),
    ] {
        let t = host::MsmSortTuning {
            block: 64,
            lg_low,
            smem: kib * 1024,
            per_thread,
        };
        assert!(t.valid(), "{t:?}");
        let plan = host::msm_sort_plan_tuned(n, c, &t);
        // Raised only where the digits pass's counters would not fit.
        assert!(plan.lg_low >= lg_low.min(c - 1), "{t:?}: {plan:?}");
        assert!(
            host::num_windows(c) * plan.parts <= t.smem / 4,
            "{t:?}: {plan:?}"
        );
        assert!(
            plan.place_stage > 0 && plan.bucket_stage > 0,
            "{t:?}: {plan:?}"
        );
        assert!(plan.buckets_smem(t.block) <= t.smem, "{t:?}: {plan:?}");
        for (w0, w1) in plan.groups(host::num_windows(c)) {
            assert!(
                plan.place_smem(w0, w1, t.block) <= t.smem,
                "{t:?}: {plan:?}"
            );
        }
        check_one(Case {
            plan,
            block: t.block,
            ..Case::new(&v, c)
        });
    }
}

#[test]
fn default_tuning_is_the_default_plan() {
    for c in [10u32, 16, 20] {
        for m in [1000usize, 1 << 24] {
            assert_eq!(
                host::msm_sort_plan(m, c),
                host::msm_sort_plan_tuned(m, c, &host::MsmSortTuning::DEFAULT)
            );
        }
    }
    let d = host::MsmSortTuning::DEFAULT;
    assert!(d.valid());
    assert_eq!(
        host::MsmSortTuning::parse(&format!(
            "{}:{}:{}:{}",
            d.block,
            d.lg_low,
            d.smem / 1024,
            d.per_thread
        )),
        Some(d)
    );
    assert_eq!(d.name(), "b512 l10 s96 p16");
    // Fitted to a card's shared memory a block: sm_90 (227 KiB) and
    // sm_86/89/120 (99 KiB) take the default; less is cut to whole KiB,
    // never below the 48 KiB every card gives, and sorts (in fewer
    // entries a stage) as tuned_geometries_sort_the_same_entries checks.
    assert_eq!(host::MsmSortTuning::fitted(227 * 1024), d);
    assert_eq!(host::MsmSortTuning::fitted(101_376), d);
    let less = host::MsmSortTuning::fitted(64 * 1024 + 100);
    assert_eq!((less.smem, less.per_thread), (64 * 1024, d.per_thread));
    assert!(less.valid());
    assert_eq!(host::MsmSortTuning::fitted(0).smem, 48 * 1024);
    for c in [16u32, 20] {
        let p = host::msm_sort_plan_tuned(1 << 24, c, &host::MsmSortTuning::fitted(0));
        assert!(p.place_stage > 0 && p.bucket_stage > 0, "{p:?}");
    }
    for bad in [
        "",
        "512:10:48",
        "512:10:48:8:1",
        "1024:10:48:8",
        "500:10:48:8",
        "512:5:48:8",
        "512:10:8:8",
        "512:10:300:8",
        "512:10:48:0",
        "x:10:48:8",
    ] {
        assert_eq!(host::MsmSortTuning::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn plan_covers_every_window_once_within_shared_memory() {
    // The default geometry's shared memory a block, in 4-byte counters.
    let slots = host::MsmSortTuning::DEFAULT.smem / 4;
    for c in 2u32..=24 {
        let w = host::num_windows(c);
        for m in [1usize, 1000, 1 << 20, 1 << 24, 1 << 27] {
            let p = host::msm_sort_plan(m, c);
            assert_eq!(p.parts << p.lg_low, 1 << (c - 1), "c={c}");
            assert!(w * p.parts <= slots, "c={c}: {} counters", w * p.parts);
            let bucket_words = (1u32 << p.lg_low) + host::MSM_SORT_BLOCK;
            assert!(bucket_words <= slots, "c={c}: {} low bits", p.lg_low);
            assert_eq!(p.tiles as usize, m.div_ceil(host::MSM_SORT_TILE));
            let groups = p.groups(w);
            assert_eq!(groups.first().unwrap().0, 0);
            assert_eq!(groups.last().unwrap().1, w);
            assert!(groups.windows(2).all(|g| g[0].1 == g[1].0));
            assert!(groups
                .iter()
                .all(|(a, b)| b > a && b - a <= p.group_windows));
            // tmp for one group: at most one window's worth past the
            // one-group bound.
            assert!(
                p.group_windows == w || (p.group_windows == 1 && 8 * w as u64 * m as u64 > 1 << 30),
                "c={c} m={m}"
            );
        }
    }
}
