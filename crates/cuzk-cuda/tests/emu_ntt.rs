//! The NTT kernels' CUDA source run on the CPU (emu/cuda_emu.h) with the
//! launches src/device/ntt.rs makes, against the reference NTT: the kernels' index
//! arithmetic, rounds, shared-memory layout and barriers are checked in CI,
//! where no GPU is. Needs a C++20 compiler (`$CXX`, else `c++`). The
//! arithmetic is field.cuh's portable form, its PTX form with each PTX
//! instruction emulated (tests/common's `emu_binary_ptx`), or the FP64
//! products mixed in.

mod common;

use std::path::PathBuf;

use blstrs::Scalar;
use common::Arith;
use cuzk_cuda::host::{self, NttKind};
use ff::{Field, PrimeField};
use rand::SeedableRng;

/// Kernel ids of emu/ntt_emu.cpp.
const BITREV: u32 = 0;
const BITREV_TILED: u32 = 14;
/// ntt.rs's tile: 2^TILE_LOG x 2^TILE_LOG elements, TILE_THREADS threads,
/// the low and high 16 bytes of each element in shared memory.
const TILE_LOG: u32 = 5;
const TILE_THREADS: u32 = 256;
const TILE_SMEM: u32 = 2 << (2 * TILE_LOG) << 4;
const POWERS: u32 = 5;
const H_FINISH_TILED: u32 = 7;
const H_FINISH_BITREV: u32 = 8;
/// ntt_pass_r1, r2, r3, r3x2, r2x3 and their stages per round.
const PASSES: [(u32, u32, &str); 5] = [
    (1, 1, "r1"),
    (2, 2, "r2"),
    (3, 3, "r3"),
    (4, 3, "r3x2"),
    (6, 2, "r2x3"),
];

/// ntt_perm_pass_r1 ... r2x3, in the order of `PASSES`.
const PERM_PASSES: [u32; 5] = [9, 10, 11, 12, 13];

/// The emulator, built with field.cuh's portable arithmetic, its PTX form,
/// or with CUZK_FP64_MIX_FR: every other butterfly's product by
/// field_f64.cuh.
fn emu_binary(arith: Arith) -> PathBuf {
    common::emu_binary_for(arith, "ntt_emu.cpp", "ntt_emu", "CUZK_FP64_MIX_FR")
}

enum Arg {
    U32(u32),
    Buf(u32),
    Null,
}

#[derive(Default)]
struct Launches {
    /// Which emulator build runs the launches.
    arith: Arith,
    bufs: Vec<Vec<u8>>,
    list: Vec<(u32, u32, u32, u32, Vec<Arg>)>,
}

impl Launches {
    fn buf(&mut self, bytes: Vec<u8>) -> u32 {
        self.bufs.push(bytes);
        self.bufs.len() as u32 - 1
    }
    fn scalars(&mut self, v: &[Scalar]) -> u32 {
        self.buf(host::scalars_as_bytes(v).to_vec())
    }
    fn launch(&mut self, kernel: u32, grid: u32, block: u32, smem: u32, args: Vec<Arg>) {
        self.list.push((kernel, grid, block, smem, args));
    }
    /// Runs them; buffer 0 comes back.
    fn run(self) -> Vec<Scalar> {
        let mut input = Vec::new();
        input.extend((self.bufs.len() as u32).to_le_bytes());
        for b in &self.bufs {
            input.extend((b.len() as u64).to_le_bytes());
            input.extend(b);
        }
        input.extend((self.list.len() as u32).to_le_bytes());
        for (k, g, b, s, args) in &self.list {
            for v in [*k, *g, *b, *s, args.len() as u32] {
                input.extend(v.to_le_bytes());
            }
            for a in args {
                let (tag, v) = match a {
                    Arg::U32(v) => (0u32, *v),
                    Arg::Buf(i) => (1, *i),
                    Arg::Null => (2, 0),
                };
                input.extend(tag.to_le_bytes());
                input.extend(v.to_le_bytes());
            }
        }
        let out = common::run_emu(&emu_binary(self.arith), &input);
        let n = self.bufs[0].len() / 32;
        assert!(out.len() >= n * 32, "ntt_emu returned too little");
        let mut v = vec![Scalar::ZERO; n];
        host::scalars_as_bytes_mut(&mut v).copy_from_slice(&out[..n * 32]);
        v
    }
}

/// src/device/ntt.rs's power tables: lo[j] = c*base^j (j < 2^ceil(lg/2)),
/// hi[j] = base^(j*2^lo_bits).
fn power_tables(l: &mut Launches, base: Scalar, c: Scalar, lg: u32) -> (u32, u32, u32) {
    let lo_bits = lg.div_ceil(2);
    let lo: Vec<Scalar> = std::iter::successors(Some(c), |p| Some(*p * base))
        .take(1 << lo_bits)
        .collect();
    let step = base.pow_vartime([1u64 << lo_bits]);
    let hi: Vec<Scalar> = std::iter::successors(Some(Scalar::ONE), |p| Some(*p * step))
        .take(1 << (lg - lo_bits))
        .collect();
    (l.scalars(&lo), l.scalars(&hi), lo_bits)
}

fn cfg1d(n: usize) -> (u32, u32) {
    (n.div_ceil(256).max(1) as u32, 256)
}

/// The twiddle table src/device/ntt.rs builds: ntt_powers from power tables of w.
fn twiddles(l: &mut Launches, lg: u32) -> u32 {
    let count = (1usize << lg) / 2;
    let (lo, hi, bits) = power_tables(l, host::root_of_unity(lg), Scalar::ONE, lg);
    let tw = l.buf(vec![0u8; count.max(1) * 32]);
    let (g, b) = cfg1d(count);
    l.launch(
        POWERS,
        g,
        b,
        0,
        vec![
            Arg::Buf(tw),
            Arg::U32(count as u32),
            Arg::Buf(lo),
            Arg::Buf(hi),
            Arg::U32(bits),
        ],
    );
    tw
}

/// What the first pass does to each element it loads (src/device/ntt.rs's
/// `OnLoad`).
#[derive(Clone, Copy)]
enum OnLoad {
    Nothing,
    Scale(u32, u32, u32),
    Times(u32),
}

thread_local! {
    /// A pass split and lgL bound this test's thread runs its transforms
    /// with instead of the host's plan (the NTT sweep's `CUZK_NTT_SPLIT` /
    /// `CUZK_NTT_LGL_MAX`): (stages per pass bottom up, lgL bound).
    static SPLIT: std::cell::RefCell<Option<(Vec<u32>, u32)>> = const { std::cell::RefCell::new(None) };
    /// The pass block (log2 elements) this test's thread plans with: the
    /// sm_90 one unless a test takes a smaller card's
    /// (`host::ntt_smem_log_for`).
    static SMEM_LOG: std::cell::Cell<u32> = const { std::cell::Cell::new(host::NTT_SMEM_LOG) };
}

/// The passes and their lgL: the host's, or this thread's [`SPLIT`].
fn plan_of(lg: u32) -> Vec<(u32, u32, u32)> {
    SPLIT.with(|s| match &*s.borrow() {
        Some((ks, lgl_max)) => host::ntt_split_passes(lg, ks, *lgl_max, SMEM_LOG.get())
            .unwrap_or_else(|| panic!("split {ks:?} does not fit 2^{lg}"))
            .into_iter()
            .map(|(s0, k)| (s0, k, s0.min(*lgl_max)))
            .collect(),
        None => host::ntt_pass_plan_in(lg, SMEM_LOG.get())
            .into_iter()
            .map(|(s0, k)| (s0, k, host::ntt_pass_lgl(s0)))
            .collect(),
    })
}

fn passes(l: &mut Launches, kernel: u32, radix: u32, lg: u32, tw: u32, dif: bool, on_load: OnLoad) {
    let mut plan = plan_of(lg);
    if dif {
        plan.reverse();
    }
    if plan.is_empty() && matches!(on_load, OnLoad::Times(_)) {
        plan.push((0, 0, 0));
    }
    for (i, (s0, k, lgl)) in plan.into_iter().enumerate() {
        let log_e = k + lgl;
        let (plo, phi, bits, mode) = match on_load {
            _ if i > 0 => (Arg::Null, Arg::Null, 0, 0),
            OnLoad::Nothing => (Arg::Null, Arg::Null, 0, 0),
            OnLoad::Scale(lo, hi, b) => (Arg::Buf(lo), Arg::Buf(hi), b, 1),
            OnLoad::Times(other) => (Arg::Buf(other), Arg::Null, 0, 2),
        };
        l.launch(
            kernel,
            1 << (lg - log_e),
            host::ntt_pass_threads(log_e, k, radix),
            host::ntt_pass_smem(log_e),
            vec![
                Arg::Buf(0),
                Arg::Buf(tw),
                Arg::U32(lg),
                Arg::U32(s0),
                Arg::U32(k),
                Arg::U32(lgl),
                Arg::U32(dif as u32),
                plo,
                phi,
                Arg::U32(bits),
                Arg::U32(mode),
            ],
        );
    }
}

/// ntt.rs's in-place bit reversal: in tiles from 2^(2 TILE_LOG) on.
fn bitrev(l: &mut Launches, lg: u32, scale: Option<(u32, u32, u32)>, after: bool) {
    bitrev_with(l, lg >= 2 * TILE_LOG, lg, scale, after);
}

fn bitrev_with(
    l: &mut Launches,
    tiled: bool,
    lg: u32,
    scale: Option<(u32, u32, u32)>,
    after: bool,
) {
    let (kernel, (g, b), smem) = if tiled {
        (
            BITREV_TILED,
            (1 << (lg - 2 * TILE_LOG), TILE_THREADS),
            TILE_SMEM,
        )
    } else {
        (BITREV, cfg1d(1 << lg), 0)
    };
    let (lo, hi, bits, mode) = match scale {
        Some((lo, hi, bits)) => (Arg::Buf(lo), Arg::Buf(hi), bits, if after { 2 } else { 1 }),
        None => (Arg::Null, Arg::Null, 0, 0),
    };
    l.launch(
        kernel,
        g,
        b,
        smem,
        vec![
            Arg::Buf(0),
            Arg::U32(lg),
            lo,
            hi,
            Arg::U32(bits),
            Arg::U32(mode),
        ],
    );
}

/// `kind` as src/device/ntt.rs's ntt_device runs it, or (None) evals_to_coset.
fn emulate(
    x: &[Scalar],
    kind: Option<NttKind>,
    kernel: u32,
    radix: u32,
    arith: Arith,
) -> Vec<Scalar> {
    let n = x.len();
    let lg = n.trailing_zeros();
    let mut l = Launches {
        arith,
        ..Default::default()
    };
    l.scalars(x); // buffer 0: the data
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    let n_inv = Scalar::from(n as u64).invert().unwrap();
    let tw = twiddles(&mut l, lg);
    match kind {
        Some(NttKind::Forward) => {
            bitrev(&mut l, lg, None, false);
            passes(&mut l, kernel, radix, lg, tw, false, OnLoad::Nothing);
        }
        Some(NttKind::CosetForward) => {
            let t = power_tables(&mut l, g, Scalar::ONE, lg);
            bitrev(&mut l, lg, Some(t), false);
            passes(&mut l, kernel, radix, lg, tw, false, OnLoad::Nothing);
        }
        Some(k @ (NttKind::Inverse | NttKind::CosetInverse)) => {
            passes(&mut l, kernel, radix, lg, tw, true, OnLoad::Nothing);
            let base = if k == NttKind::CosetInverse {
                g.invert().unwrap()
            } else {
                Scalar::ONE
            };
            let t = power_tables(&mut l, base, n_inv, lg);
            bitrev(&mut l, lg, Some(t), true);
        }
        None => {
            let t = power_tables(&mut l, g, n_inv, lg);
            passes(&mut l, kernel, radix, lg, tw, true, OnLoad::Nothing);
            passes(
                &mut l,
                kernel,
                radix,
                lg,
                tw,
                false,
                OnLoad::Scale(t.0, t.1, t.2),
            );
        }
    }
    l.run()
}

/// `kind` as src/device/ntt.rs's ntt_device_into runs it: the input in
/// buffer 1, the result in buffer 0; the permuting pass (`perm`) first for
/// a forward kind, last for an inverse one, with the top bits
/// `host::ntt_perm_lgl` gives it or (`perm_lgl`) fewer.
fn emulate_into(
    x: &[Scalar],
    kind: NttKind,
    (kernel, perm, radix): (u32, u32, u32),
    perm_lgl: Option<u32>,
    arith: Arith,
) -> Vec<Scalar> {
    let n = x.len();
    let lg = n.trailing_zeros();
    let mut l = Launches {
        arith,
        ..Default::default()
    };
    l.buf(vec![0u8; n * 32]); // buffer 0: the result
    let src = l.scalars(x);
    if lg == 0 {
        // ntt_device_into copies the one element.
        l.bufs[0] = l.bufs[src as usize].clone();
        return l.run();
    }
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    let n_inv = Scalar::from(n as u64).invert().unwrap();
    let tw = twiddles(&mut l, lg);
    let dif = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
    let tables = match kind {
        NttKind::Forward => None,
        NttKind::CosetForward => Some(power_tables(&mut l, g, Scalar::ONE, lg)),
        NttKind::Inverse => Some(power_tables(&mut l, Scalar::ONE, n_inv, lg)),
        NttKind::CosetInverse => Some(power_tables(&mut l, g.invert().unwrap(), n_inv, lg)),
    };
    let mut plan = plan_of(lg);
    if dif {
        plan.reverse();
    }
    for (s0, k, pass_lgl) in plan {
        let (lgl, id, mut args) = if s0 == 0 {
            let lgl = host::ntt_perm_lgl_in(lg, k, SMEM_LOG.get());
            let lgl = perm_lgl.map_or(lgl, |l| l.min(lgl));
            (
                lgl,
                perm,
                vec![
                    Arg::Buf(0),
                    Arg::Buf(src),
                    Arg::Buf(tw),
                    Arg::U32(lg),
                    Arg::U32(k),
                ],
            )
        } else {
            let d = if dif { src } else { 0 };
            let lgl = pass_lgl;
            let args = vec![
                Arg::Buf(d),
                Arg::Buf(tw),
                Arg::U32(lg),
                Arg::U32(s0),
                Arg::U32(k),
            ];
            (lgl, kernel, args)
        };
        args.extend([Arg::U32(lgl), Arg::U32(dif as u32)]);
        match (s0, tables) {
            (0, Some((lo, hi, bits))) => {
                args.extend([Arg::Buf(lo), Arg::Buf(hi), Arg::U32(bits), Arg::U32(1)])
            }
            _ => args.extend([Arg::Null, Arg::Null, Arg::U32(0), Arg::U32(0)]),
        }
        let log_e = k + lgl;
        l.launch(
            id,
            1 << (lg - log_e),
            host::ntt_pass_threads(log_e, k, radix),
            host::ntt_pass_smem(log_e),
            args,
        );
    }
    l.run()
}

/// The out-of-place transforms of every kind with `passes` (indices into
/// `PASSES`) at `lgs` against the reference.
fn check_transforms_into(
    lgs: &[u32],
    passes: &[usize],
    perm_lgl: Option<u32>,
    arith: Arith,
    seed: u64,
) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for &lg in lgs {
        let n = 1usize << lg;
        let x: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        for &p in passes {
            let (kernel, radix, name) = PASSES[p];
            for kind in [
                NttKind::Forward,
                NttKind::Inverse,
                NttKind::CosetForward,
                NttKind::CosetInverse,
            ] {
                let mut want = x.clone();
                host::ntt_cpu(&mut want, kind);
                let got = emulate_into(&x, kind, (kernel, PERM_PASSES[p], radix), perm_lgl, arith);
                if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                    panic!("2^{lg} {kind:?} out of place with {name} ({arith:?}): first difference at {i}");
                }
            }
        }
    }
}

/// Every pass kernel and transform kind at `lgs` against the reference.
fn check_transforms(lgs: &[u32], arith: Arith, seed: u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for &lg in lgs {
        let n = 1usize << lg;
        let x: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        for (kernel, radix, name) in PASSES {
            for kind in [
                Some(NttKind::Forward),
                Some(NttKind::Inverse),
                Some(NttKind::CosetForward),
                Some(NttKind::CosetInverse),
                None,
            ] {
                let mut want = x.clone();
                match kind {
                    Some(k) => host::ntt_cpu(&mut want, k),
                    None => {
                        host::ntt_cpu(&mut want, NttKind::Inverse);
                        host::ntt_cpu(&mut want, NttKind::CosetForward);
                    }
                }
                let got = emulate(&x, kind, kernel, radix, arith);
                if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                    panic!("2^{lg} {kind:?} with {name} ({arith:?}): first difference at {i}");
                }
            }
        }
    }
}

#[test]
fn ntt_kernels_on_the_cpu_match_the_reference() {
    // One pass, two passes, uneven rounds for every R, and 2^13/2^14 where
    // the later passes take 4 groups side by side (lgL = 2).
    check_transforms(&[1, 2, 3, 4, 7, 11, 12, 13, 14], Arith::Portable, 0x5eed);
}

/// The out-of-place transforms (the bit reversal fused into the first DIT
/// or last DIF pass): one element, one pass (no top bits: lgL = 0), two
/// and three passes with two top bits (lgL = 2), with every pass kernel.
#[test]
fn out_of_place_ntt_kernels_on_the_cpu_match_the_reference() {
    let all = [0, 1, 2, 3, 4];
    check_transforms_into(
        &[0, 1, 2, 3, 7, 11, 12, 13],
        &all,
        None,
        Arith::Portable,
        0x00b,
    );
    // One top bit (the host's choice at 2^19, 2^20 and 2^28, where the
    // pass holds 10 stages) and none, at sizes the emulator runs quickly.
    for lgl in [1, 0] {
        check_transforms_into(&[12, 13], &[1, 4], Some(lgl), Arith::Portable, 0x19);
    }
}

/// One in-place transform of 2^lg random elements (seeded) with the pass
/// kernel `pass`, this thread's plan, against `host::ntt_cpu`.
fn check_in_place(
    lg: u32,
    kind: NttKind,
    (kernel, radix, name): (u32, u32, &str),
    seed: u64,
    what: &str,
) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<Scalar> = (0..1usize << lg)
        .map(|_| Scalar::random(&mut rng))
        .collect();
    let mut want = x.clone();
    host::ntt_cpu(&mut want, kind);
    let got = emulate(&x, Some(kind), kernel, radix, Arith::Portable);
    assert!(got == want, "{what}: {kind:?} with {name}");
}

/// Other pass splits and lgL bounds, as the NTT sweep runs them
/// (`CUZK_NTT_SPLIT`, `CUZK_NTT_LGL_MAX`): a first pass of all 11 stages a
/// block holds, later ones spanning 3, 1 and 0 low bits, and uneven
/// splits: out of place every kind with the default pass kernel, in place
/// forward with R = 3 and inverse with R = 2 (2^13 and 2^14: sizes the
/// emulator runs quickly).
#[test]
fn other_pass_splits_match_the_reference() {
    for (ks, lgl_max) in [
        (vec![11u32, 2], 2u32),
        (vec![8, 5], 3),
        (vec![5, 4, 4], 3),
        (vec![4, 10], 1),
        (vec![3, 11], 0),
    ] {
        let lg: u32 = ks.iter().sum();
        SPLIT.with(|s| *s.borrow_mut() = Some((ks.clone(), lgl_max)));
        check_transforms_into(&[lg], &[4], None, Arith::Portable, 0x5b1 + lg as u64);
        // In place, with R = 3 (r3x2) forward and R = 2 (r2x3) inverse.
        let what = format!("split {ks:?} lgL <= {lgl_max}");
        check_in_place(lg, NttKind::Forward, PASSES[3], 0x5b2, &what);
        check_in_place(lg, NttKind::Inverse, PASSES[4], 0x5b2, &what);
        SPLIT.with(|s| *s.borrow_mut() = None);
    }
    // Smaller cards' blocks (sm_80: 2^10, sm_86/89: 2^9): the same
    // transforms in more passes.
    for smem_log in [10u32, 9] {
        SMEM_LOG.with(|c| c.set(smem_log));
        check_transforms_into(&[13], &[4], None, Arith::Portable, 0x5b3 + smem_log as u64);
        let what = format!("2^13 in blocks of 2^{smem_log}");
        check_in_place(13, NttKind::CosetForward, PASSES[4], 0x5b4, &what);
        SMEM_LOG.with(|c| c.set(host::NTT_SMEM_LOG));
    }
    assert_eq!(
        host::ntt_split_passes(13, &[9, 4], 2, 10),
        Some(vec![(0, 9), (9, 4)])
    );
    assert_eq!(host::ntt_split_passes(13, &[11, 2], 2, 10), None);
    // Splits that do not fit are refused, never run.
    assert_eq!(
        host::ntt_split_passes(27, &[9, 9, 9], 2, 11),
        Some(vec![(0, 9), (9, 9), (18, 9)])
    );
    assert_eq!(
        host::ntt_split_passes(27, &[11, 8, 8], 3, 11),
        Some(vec![(0, 11), (11, 8), (19, 8)])
    );
    assert_eq!(host::ntt_split_passes(27, &[11, 9, 7], 3, 11), None);
    assert_eq!(host::ntt_split_passes(27, &[12, 8, 7], 2, 11), None);
    assert_eq!(host::ntt_split_passes(27, &[9, 9], 2, 11), None);
    assert_eq!(host::ntt_split_passes(2, &[0, 2], 2, 11), None);
}

/// The same with field.cuh's PTX carry chains, the default pass kernel.
#[test]
fn out_of_place_ntt_kernels_in_ptx_form_match_the_reference() {
    check_transforms_into(&[1, 7, 12], &[4], None, Arith::Ptx, 0x9e8);
}

/// The same kernels built with half the butterflies' products on the FP64
/// pipe (CUZK_FP64_MIX_FR): both kinds of product, in rounds of every size.
#[test]
fn ntt_kernels_with_fp64_butterflies_match_the_reference() {
    check_transforms(&[1, 2, 3, 7, 12], Arith::Fp64Mix, 0xf64);
}

/// The same kernels with field.cuh's PTX carry chains (each instruction
/// emulated): the butterflies' Fr products, sums and differences as the
/// GPU runs them, in rounds of every size.
#[test]
fn ntt_kernels_in_ptx_form_match_the_reference() {
    check_transforms(&[1, 2, 3, 7, 12], Arith::Ptx, 0x9e7);
}

/// H's product of a and b fused into the first DIF pass (`OnLoad::Times`),
/// then the inverse's scaled permutation: the inverse transform of a b.
#[test]
fn product_fused_into_the_inverse_matches_the_reference() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xab);
    for lg in [0u32, 1, 2, 5, 11, 12, 14] {
        let n = 1usize << lg;
        let a: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let b: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let mut want: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        host::ntt_cpu(&mut want, NttKind::Inverse);
        for (kernel, radix, name) in [PASSES[0], PASSES[4]] {
            let mut l = Launches::default();
            l.scalars(&a);
            let bb = l.scalars(&b);
            let tw = twiddles(&mut l, lg);
            passes(&mut l, kernel, radix, lg, tw, true, OnLoad::Times(bb));
            let n_inv = Scalar::from(n as u64).invert().unwrap();
            let t = power_tables(&mut l, Scalar::ONE, n_inv, lg);
            bitrev(&mut l, lg, Some(t), true);
            let got = l.run();
            if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                panic!("2^{lg} with {name}: first difference at {i}");
            }
        }
    }
}

/// H's permutation back, a[j] = p(j) U[rev j] - p(0) V[rev j] with p(j) =
/// c base^j: the tiled out-of-place kernel (2^10 and up: 1, 2 and 3 mid
/// bits around the two 5-bit tile indices) and the in-place one (every
/// size) against the formula.
#[test]
fn h_permutation_back_matches_the_formula() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xf1);
    let base = Scalar::random(&mut rng);
    let c = Scalar::random(&mut rng);
    for lg in [0u32, 1, 2, 5, 9, 10, 11, 12, 13] {
        let n = 1usize << lg;
        let u: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let v: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let rev = |j: usize| {
            if lg == 0 {
                0
            } else {
                (j as u32).reverse_bits() as usize >> (32 - lg)
            }
        };
        let want: Vec<Scalar> = (0..n)
            .map(|j| c * base.pow_vartime([j as u64]) * u[rev(j)] - c * v[rev(j)])
            .collect();
        let mut kernels = vec![("in place", H_FINISH_BITREV)];
        if lg >= 10 {
            kernels.push(("tiled", H_FINISH_TILED));
        }
        for (name, kernel) in kernels {
            let tiled = kernel == H_FINISH_TILED;
            let mut l = Launches::default();
            if tiled {
                l.buf(vec![0u8; n * 32]); // buffer 0: the result
            }
            let (ub, vb) = (l.scalars(&u), l.scalars(&v)); // in place: u is buffer 0
            let (lo, hi, bits) = power_tables(&mut l, base, c, lg);
            let (grid, block, smem, mut args) = if tiled {
                let bufs = vec![Arg::Buf(0), Arg::Buf(ub), Arg::Buf(vb)];
                (1 << (lg - 10), 256, 2 * 1024 * 16, bufs)
            } else {
                let (g, b) = cfg1d(n);
                (g, b, 0, vec![Arg::Buf(ub), Arg::Buf(vb)])
            };
            args.extend([Arg::U32(lg), Arg::Buf(lo), Arg::Buf(hi), Arg::U32(bits)]);
            l.launch(kernel, grid, block, smem, args);
            let got = l.run();
            if let Some(j) = (0..n).find(|&j| got[j] != want[j]) {
                panic!("2^{lg} {name}: first difference at {j}");
            }
        }
    }
}

/// The in-place bit reversal, thread per pair and in tiles (2^10 and up:
/// no mid bits, so every tile is its own partner, then 1-4 mid bits, pairs
/// of tiles and tiles on their own), with no scaling and with the scaling
/// by c base^i of the place before (1) or after (2) the permutation,
/// against the formula.
#[test]
fn bit_reversal_in_place_matches_the_formula() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xb17);
    let base = Scalar::random(&mut rng);
    let c = Scalar::random(&mut rng);
    for lg in [0u32, 1, 2, 5, 9, 10, 11, 12, 13, 14] {
        let n = 1usize << lg;
        let x: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let rev = |j: usize| {
            if lg == 0 {
                0
            } else {
                (j as u32).reverse_bits() as usize >> (32 - lg)
            }
        };
        let p = |i: usize| c * base.pow_vartime([i as u64]);
        for tiled in [false, true] {
            if tiled && lg < 2 * TILE_LOG {
                continue;
            }
            for mode in 0..3 {
                let want: Vec<Scalar> = (0..n)
                    .map(|j| match mode {
                        0 => x[rev(j)],
                        1 => x[rev(j)] * p(rev(j)),
                        _ => x[rev(j)] * p(j),
                    })
                    .collect();
                let mut l = Launches::default();
                l.scalars(&x);
                let t = (mode > 0).then(|| power_tables(&mut l, base, c, lg));
                bitrev_with(&mut l, tiled, lg, t, mode == 2);
                let got = l.run();
                if let Some(j) = (0..n).find(|&j| got[j] != want[j]) {
                    panic!("2^{lg}, tiled {tiled}, scale {mode}: first difference at {j}");
                }
            }
        }
    }
}
