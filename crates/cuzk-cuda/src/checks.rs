//! The GPU checks: every kernel against blstrs (or the plain CPU NTT) on
//! fresh random inputs drawn from a printed seed, over the sizes the issue
//! names (0, 1, 2, 3, 7, 100, 1000, 2^16 + 3 and larger) and the special
//! inputs (all-zero and all-one scalars, points at infinity, repeated
//! points, canonical and non-reduced scalars). Run on the GPU machine by
//! scripts/gpu-test.sh through the `gpu_tests` example; the summary line
//! `N passed, M failed` comes last.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::cases::{near_modulus_pairs, point_ops, with_special_pairs, FQ_MODULUS, FR_MODULUS};
use crate::device::{
    ArithKernels, BucketSplit, CudaDevice, DeviceCsr, DeviceScalars, NttPass, SPMV_LONG,
};
use crate::host::{self, NttKind};

/// A case's outcome: the failure's description.
pub type CaseResult = std::result::Result<(), String>;

/// Options of a check run.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub seed: u64,
    /// Run the 2^27 / 2^28 NTT and 2^20 MSM cases.
    pub large: bool,
    /// Only cases whose name contains this.
    pub filter: Option<String>,
}

/// Passed and failed cases of a check run; [`Summary::run`] runs one case.
#[derive(Debug, Default)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
}

impl Summary {
    /// Runs one case, timed, with a panic counted as its failure, and
    /// prints its line (`ok`, `FAIL` or `PANIC`, the name and seconds).
    pub fn run(&mut self, name: &str, f: impl FnOnce() -> CaseResult) {
        let t = Instant::now();
        let r = std::panic::catch_unwind(AssertUnwindSafe(f));
        let secs = t.elapsed().as_secs_f64();
        match r {
            Ok(Ok(())) => {
                self.passed += 1;
                println!("ok     {name} ({secs:.2} s)");
            }
            Ok(Err(e)) => {
                self.failed += 1;
                println!("FAIL   {name} ({secs:.2} s): {e}");
            }
            Err(p) => {
                self.failed += 1;
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                println!("PANIC  {name} ({secs:.2} s): {msg}");
            }
        }
    }
}

struct Runner<'a> {
    dev: &'a CudaDevice,
    opts: &'a CheckOptions,
    tally: Summary,
    case_no: u64,
}

impl Runner<'_> {
    fn case(&mut self, name: &str, f: impl FnOnce(&CudaDevice, &mut ChaCha8Rng) -> CaseResult) {
        self.case_no += 1;
        if let Some(filt) = &self.opts.filter {
            if !name.contains(filt.as_str()) {
                return;
            }
        }
        // Each case draws from its own stream of the run's seed.
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.opts.seed ^ self.case_no.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        let dev = self.dev;
        self.tally.run(name, || f(dev, &mut rng));
    }
}

/// `Ok` when `cond` holds, else the message.
pub fn ensure(cond: bool, msg: impl FnOnce() -> String) -> CaseResult {
    if cond {
        Ok(())
    } else {
        Err(msg())
    }
}

/// Random points fast: chunks of consecutive multiples P, P+Q, P+2Q, ... with
/// random P and Q per chunk (one addition per point instead of a scalar
/// multiplication), normalised in batches.
pub fn random_g1(n: usize, seed: u64) -> Vec<G1Affine> {
    random_points::<G1Projective>(n, seed)
}

pub fn random_g2(n: usize, seed: u64) -> Vec<G2Affine> {
    random_points::<G2Projective>(n, seed)
}

/// [`random_g1`] for either group.
fn random_points<G: Curve>(n: usize, seed: u64) -> Vec<G::AffineRepr>
where
    G::AffineRepr: PrimeCurveAffine + Send,
{
    const CH: usize = 4096;
    let mut out = vec![G::AffineRepr::identity(); n];
    out.par_chunks_mut(CH).enumerate().for_each(|(ci, chunk)| {
        let mut r =
            ChaCha8Rng::seed_from_u64(seed ^ (ci as u64).wrapping_mul(0xa076_1d64_78bd_642f));
        let mut p = G::random(&mut r);
        let q = G::random(&mut r);
        let proj: Vec<G> = (0..chunk.len())
            .map(|_| {
                let cur = p;
                p += q;
                cur
            })
            .collect();
        G::batch_normalize(&proj, chunk);
    });
    out
}

pub fn random_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(1 << 14)
        .enumerate()
        .for_each(|(ci, chunk)| {
            let mut r =
                ChaCha8Rng::seed_from_u64(seed ^ (ci as u64).wrapping_mul(0xe703_7ed1_a0b4_28db));
            for s in chunk {
                *s = Scalar::random(&mut r);
            }
        });
    out
}

/// Reference MSM: blst's Pippenger for large inputs, the plain sum of
/// products for small ones (which also covers infinity and repeated points
/// without relying on blst's handling of them).
fn ref_msm_g1(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    if points.len() > 2000 {
        let proj: Vec<G1Projective> = points.par_iter().map(|p| G1Projective::from(*p)).collect();
        return G1Projective::multi_exp(&proj, scalars);
    }
    points
        .par_iter()
        .zip(scalars)
        .map(|(p, s)| G1Projective::from(*p) * s)
        .reduce(G1Projective::identity, |a, b| a + b)
}

fn ref_msm_g2(points: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    if points.len() > 2000 {
        let proj: Vec<G2Projective> = points.par_iter().map(|p| G2Projective::from(*p)).collect();
        return G2Projective::multi_exp(&proj, scalars);
    }
    points
        .par_iter()
        .zip(scalars)
        .map(|(p, s)| G2Projective::from(*p) * s)
        .reduce(G2Projective::identity, |a, b| a + b)
}

#[allow(clippy::too_many_arguments)]
fn field_ops_check<T: Copy + PartialEq + std::fmt::Debug>(
    dev: &CudaDevice,
    which: u32,
    elem: usize,
    xs: &[T],
    ys: &[T],
    to_bytes: impl Fn(&T) -> Vec<u8>,
    from_bytes: impl Fn(&[u8]) -> T,
    ops: impl Fn(&T, &T) -> [T; 5],
) -> CaseResult {
    let a: Vec<u8> = xs.iter().flat_map(&to_bytes).collect();
    let b: Vec<u8> = ys.iter().flat_map(&to_bytes).collect();
    let out = ArithKernels::load(dev)
        .and_then(|k| k.field_ops_raw(which, &a, &b, elem))
        .map_err(|e| e.to_string())?;
    for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
        let [m, a, s, q, ng] = ops(x, y);
        // Slot 5 is the product by the second multiplication routine.
        for (k, w) in [m, a, s, q, ng, m].iter().enumerate() {
            let got = from_bytes(&out[(6 * i + k) * elem..(6 * i + k + 1) * elem]);
            ensure(got == *w, || {
                format!("element {i} op {k}: got {got:?}, want {w:?} (inputs {x:?}, {y:?})")
            })?;
        }
    }
    Ok(())
}

/// field_f64.cuh's product and square of each pair (test_fr_f64 /
/// test_fq_f64) against blstrs'.
fn f64_products_check<T: Field + std::fmt::Debug>(
    dev: &CudaDevice,
    elem: usize,
    xs: &[T],
    ys: &[T],
    to_bytes: impl Fn(&T) -> Vec<u8>,
    from_bytes: impl Fn(&[u8]) -> T,
) -> CaseResult {
    let a: Vec<u8> = xs.iter().flat_map(&to_bytes).collect();
    let b: Vec<u8> = ys.iter().flat_map(&to_bytes).collect();
    let out = ArithKernels::load(dev)
        .and_then(|k| k.field_f64_raw(&a, &b, elem))
        .map_err(|e| e.to_string())?;
    for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
        let m = from_bytes(&out[2 * elem * i..(2 * i + 1) * elem]);
        let s = from_bytes(&out[(2 * i + 1) * elem..(2 * i + 2) * elem]);
        ensure(m == *x * y && s == x.square(), || {
            format!(
                "element {i}: got {m:?}, {s:?}; want {:?}, {:?} (inputs {x:?}, {y:?})",
                *x * y,
                x.square()
            )
        })?;
    }
    Ok(())
}

/// test_g{1,2}_ops on n random pairs (p[i], q[i]) with special pairs put in (P
/// = Q, P = -Q, infinity on either side or both) and small multiples k =
/// 0, 1, 2 among random ones, against blstrs: [P+Q mixed, P+Q xyzz, 2P,
/// k*P]. `sz`: the bytes of an XYZZ point.
#[allow(clippy::too_many_arguments)]
fn curve_ops_check<A, P>(
    dev: &CudaDevice,
    rng: &mut ChaCha8Rng,
    g2: bool,
    n: usize,
    random: fn(usize, u64) -> Vec<A>,
    as_bytes: fn(&[A]) -> &[u8],
    from_xyzz: fn(&[u8]) -> P,
    sz: usize,
) -> CaseResult
where
    A: PrimeCurveAffine + std::ops::Neg<Output = A>,
    P: Group<Scalar = Scalar> + From<A>,
{
    let mut p = random(n, rng.gen());
    let mut q = random(n, rng.gen());
    let mut ks: Vec<u32> = (0..n).map(|_| rng.gen_range(0..1 << 20)).collect();
    with_special_pairs(&mut p, &mut q, &mut ks);
    let out = ArithKernels::load(dev)
        .and_then(|k| k.curve_ops_raw(g2, as_bytes(&p), as_bytes(&q), &ks))
        .map_err(|e| e.to_string())?;
    for i in 0..n {
        let want: [P; 4] = point_ops(p[i], q[i], ks[i]);
        for (k, w) in want.iter().enumerate() {
            let got = from_xyzz(&out[(4 * i + k) * sz..]);
            ensure(got == *w, || format!("pair {i} op {k}"))?;
        }
    }
    Ok(())
}

fn fr_bytes(s: &Scalar) -> Vec<u8> {
    host::scalars_as_bytes(std::slice::from_ref(s)).to_vec()
}
fn fr_from(b: &[u8]) -> Scalar {
    let mut s = [Scalar::ZERO];
    host::scalars_as_bytes_mut(&mut s).copy_from_slice(b);
    s[0]
}

fn with_edges<T: Copy>(mut v: Vec<T>, edges: &[T]) -> Vec<T> {
    for (i, e) in edges.iter().enumerate() {
        if i < v.len() {
            v[i] = *e;
        }
    }
    v
}

/// Every NTT kind, and the H step's evaluations-to-coset, against the CPU,
/// with each pass kernel (the pass setting is restored afterwards). The
/// CPU results are computed once, before the passes.
fn check_ntt(dev: &CudaDevice, rng: &mut ChaCha8Rng, lg: u32, kinds: &[NttKind]) -> CaseResult {
    let n = 1usize << lg;
    let x = random_scalars(n, rng.gen());
    let wants: Vec<Vec<Scalar>> = kinds
        .iter()
        .map(|&kind| {
            let mut want = x.clone();
            host::ntt_cpu(&mut want, kind);
            want
        })
        .collect();
    let mut want_coset = x.clone();
    host::ntt_cpu(&mut want_coset, NttKind::Inverse);
    host::ntt_cpu(&mut want_coset, NttKind::CosetForward);
    let restore = dev.ntt_pass();
    let result = (|| {
        for pass in NttPass::ALL {
            dev.set_ntt_pass(pass);
            for (&kind, want) in kinds.iter().zip(&wants) {
                let mut got = x.clone();
                dev.ntt(&mut got, kind).map_err(|e| e.to_string())?;
                if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                    return Err(format!(
                        "2^{lg} {kind:?} ({}): first difference at {i}",
                        pass.name()
                    ));
                }
            }
            let mut got = x.clone();
            dev.evals_to_coset(&mut got).map_err(|e| e.to_string())?;
            if let Some(i) = (0..n).find(|&i| got[i] != want_coset[i]) {
                return Err(format!(
                    "2^{lg} evals_to_coset ({}): first difference at {i}",
                    pass.name()
                ));
            }
        }
        Ok(())
    })();
    dev.set_ntt_pass(restore);
    result
}

/// [`CudaDevice::ntt_device_into`] of `x` with the device's pass kernel:
/// the result, and what the source buffer holds afterwards.
fn ntt_into_on(
    dev: &CudaDevice,
    x: &[Scalar],
    kind: NttKind,
) -> Result<(Vec<Scalar>, Vec<Scalar>), String> {
    let n = x.len();
    let lg = n.trailing_zeros();
    let s = dev.stream();
    let mut src = s
        .clone_htod(host::scalars_as_bytes(x))
        .map_err(|e| e.to_string())?;
    let mut dst = s
        .alloc_zeros::<u8>(n * host::FR_BYTES)
        .map_err(|e| e.to_string())?;
    dev.ntt_device_into(&mut src, &mut dst, lg, kind)
        .map_err(|e| e.to_string())?;
    let (mut got, mut left) = (vec![Scalar::ZERO; n], vec![Scalar::ZERO; n]);
    s.memcpy_dtoh(&dst, host::scalars_as_bytes_mut(&mut got))
        .map_err(|e| e.to_string())?;
    s.memcpy_dtoh(&src, host::scalars_as_bytes_mut(&mut left))
        .map_err(|e| e.to_string())?;
    Ok((got, left))
}

/// The out-of-place transforms (the bit reversal fused into a pass), every
/// kind with every pass kernel, against the CPU (`cpu`) or, at sizes where
/// the CPU is too slow, against the in-place transform's bytes; a forward
/// kind must leave its source as it was.
fn check_ntt_into(
    dev: &CudaDevice,
    rng: &mut ChaCha8Rng,
    lg: u32,
    kinds: &[NttKind],
    passes: &[NttPass],
    cpu: bool,
) -> CaseResult {
    let n = 1usize << lg;
    let x = random_scalars(n, rng.gen());
    let restore = dev.ntt_pass();
    let result = (|| {
        for &kind in kinds {
            let want = if cpu {
                let mut want = x.clone();
                host::ntt_cpu(&mut want, kind);
                want
            } else {
                let mut want = x.clone();
                dev.set_ntt_pass(restore);
                dev.ntt(&mut want, kind).map_err(|e| e.to_string())?;
                want
            };
            for &pass in passes {
                dev.set_ntt_pass(pass);
                let (got, left) = ntt_into_on(dev, &x, kind)?;
                if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                    return Err(format!(
                        "2^{lg} {kind:?} out of place ({}): first difference at {i}",
                        pass.name()
                    ));
                }
                let forward = matches!(kind, NttKind::Forward | NttKind::CosetForward);
                ensure(!forward || left == x, || {
                    format!(
                        "2^{lg} {kind:?} out of place ({}): the source changed",
                        pass.name()
                    )
                })?;
            }
        }
        Ok(())
    })();
    dev.set_ntt_pass(restore);
    if lg > 22 {
        dev.release_ntt_tables();
    }
    result
}

/// Large NTTs with pass kernel `pass` (the device's setting is restored
/// afterwards): forward then inverse must give the input back, and a few
/// forward outputs are checked by direct evaluation sum x_i w^(i k).
fn check_ntt_large(dev: &CudaDevice, rng: &mut ChaCha8Rng, lg: u32, pass: NttPass) -> CaseResult {
    let restore = dev.ntt_pass();
    dev.set_ntt_pass(pass);
    let result = check_ntt_large_with(dev, rng, lg);
    dev.set_ntt_pass(restore);
    dev.release_ntt_tables();
    result
}

fn check_ntt_large_with(dev: &CudaDevice, rng: &mut ChaCha8Rng, lg: u32) -> CaseResult {
    let n = 1usize << lg;
    let x = random_scalars(n, rng.gen());
    let mut y = x.clone();
    dev.ntt(&mut y, NttKind::Forward)
        .map_err(|e| e.to_string())?;
    let w = host::root_of_unity(lg);
    for k in [0usize, 1, rng.gen_range(0..n), n - 1] {
        let wk = w.pow_vartime([k as u64]);
        const CH: usize = 1 << 16;
        let direct = x
            .par_chunks(CH)
            .enumerate()
            .map(|(ci, c)| {
                let mut p = wk.pow_vartime([(ci * CH) as u64]);
                let mut acc = Scalar::ZERO;
                for xi in c {
                    acc += *xi * p;
                    p *= wk;
                }
                acc
            })
            .reduce(|| Scalar::ZERO, |a, b| a + b);
        ensure(direct == y[k], || {
            format!("2^{lg} forward output {k} differs from direct evaluation")
        })?;
    }
    dev.ntt(&mut y, NttKind::Inverse)
        .map_err(|e| e.to_string())?;
    ensure(y == x, || format!("2^{lg}: inverse(forward(x)) != x"))?;
    let mut z = x.clone();
    dev.ntt(&mut z, NttKind::CosetForward)
        .map_err(|e| e.to_string())?;
    dev.ntt(&mut z, NttKind::CosetInverse)
        .map_err(|e| e.to_string())?;
    dev.release_ntt_tables();
    ensure(z == x, || {
        format!("2^{lg}: coset inverse(coset forward(x)) != x")
    })
}

/// Large evaluations-to-coset: every pass kernel in `passes` must give the
/// same bytes as the first (the CPU reference is too slow at these sizes;
/// the first is checked against it at the small sizes and through the round
/// trips above).
fn check_evals_to_coset_agree(
    dev: &CudaDevice,
    rng: &mut ChaCha8Rng,
    lg: u32,
    passes: &[NttPass],
) -> CaseResult {
    let n = 1usize << lg;
    let x = random_scalars(n, rng.gen());
    let restore = dev.ntt_pass();
    let result = (|| {
        let mut first: Option<Vec<Scalar>> = None;
        for &pass in passes {
            dev.set_ntt_pass(pass);
            let mut y = x.clone();
            dev.evals_to_coset(&mut y).map_err(|e| e.to_string())?;
            match &first {
                None => first = Some(y),
                Some(f) => {
                    if let Some(i) = (0..n).find(|&i| y[i] != f[i]) {
                        return Err(format!(
                            "2^{lg} evals_to_coset: {} differs from {} at {i}",
                            pass.name(),
                            passes[0].name()
                        ));
                    }
                }
            }
        }
        Ok(())
    })();
    dev.set_ntt_pass(restore);
    dev.release_ntt_tables();
    result
}

fn ref_compute_h(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Vec<Scalar> {
    let m = a.len().max(b.len()).max(c.len());
    let n = m.next_power_of_two().max(1);
    let prep = |v: &[Scalar]| {
        let mut x = v.to_vec();
        x.resize(n, Scalar::ZERO);
        host::ntt_cpu(&mut x, NttKind::Inverse);
        host::ntt_cpu(&mut x, NttKind::CosetForward);
        x
    };
    let (mut ha, hb, hc) = (prep(a), prep(b), prep(c));
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([n as u64]) - Scalar::ONE;
    let zi = z.invert().unwrap();
    for i in 0..n {
        ha[i] = (ha[i] * hb[i] - hc[i]) * zi;
    }
    host::ntt_cpu(&mut ha, NttKind::CosetInverse);
    ha
}

/// `f` with each G1 kernel build (inlined and out-of-line Fq products); the
/// device's setting is restored afterwards.
fn with_each_g1_build<T>(
    dev: &CudaDevice,
    mut f: impl FnMut(&'static str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let restore = (dev.g1_inline(), dev.zero_one_inline());
    let mut out = Vec::with_capacity(2);
    let mut result = Ok(());
    for (inline, name) in [(true, "inline-fq"), (false, "outline-fq")] {
        // The MSM's kernels and the 0/1 sum's, both of this build.
        dev.set_g1_inline(inline);
        dev.set_zero_one_inline(inline);
        match f(name) {
            Ok(v) => out.push(v),
            Err(e) => {
                result = Err(format!("{name}: {e}"));
                break;
            }
        }
    }
    dev.set_g1_inline(restore.0);
    dev.set_zero_one_inline(restore.1);
    result.map(|()| out)
}

/// `f` with the MSM's chunks in order of length with the global-atomic sort
/// and the in-place merge, then with the shared-memory sort, in order of
/// length (staged, the default, and unstaged) and in plain order with the
/// copying merge; the device's settings are restored afterwards.
fn with_each_chunk_order(
    dev: &CudaDevice,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<(), String> {
    let restore = (
        dev.msm_chunk_order(),
        dev.msm_shared_sort(),
        dev.msm_merge_in_place(),
        dev.msm_sort_staged(),
    );
    let mut result = Ok(());
    for (on, shared, in_place, staged, name) in [
        (true, false, true, true, "chunks by length"),
        (
            true,
            true,
            true,
            true,
            "chunks by length, shared-memory sort",
        ),
        (
            true,
            true,
            true,
            false,
            "chunks by length, shared-memory sort unstaged",
        ),
        (
            false,
            true,
            false,
            true,
            "chunks in order, shared-memory sort, copying merge",
        ),
    ] {
        dev.set_msm_chunk_order(on);
        dev.set_msm_shared_sort(shared);
        dev.set_msm_merge_in_place(in_place);
        dev.set_msm_sort_staged(staged);
        if let Err(e) = f() {
            result = Err(format!("{name}: {e}"));
            break;
        }
    }
    dev.set_msm_chunk_order(restore.0);
    dev.set_msm_shared_sort(restore.1);
    dev.set_msm_merge_in_place(restore.2);
    dev.set_msm_sort_staged(restore.3);
    result
}

/// `f` with every MSM forced to windows of `c` bits (4..=23), the device's
/// own choice restored afterwards.
fn with_msm_window(dev: &CudaDevice, c: u32, f: impl FnOnce() -> CaseResult) -> CaseResult {
    let restore = dev.msm_window();
    ensure(dev.set_msm_window(Some(c)), || {
        format!("window {c} refused")
    })?;
    let res = f();
    dev.set_msm_window(restore);
    res
}

/// `f` with every MSM's first bucket sums in chunks of `t` entries, the
/// device's own choice restored afterwards.
fn with_msm_chunk(dev: &CudaDevice, t: u32, f: impl FnOnce() -> CaseResult) -> CaseResult {
    let restore = dev.msm_chunk();
    ensure(dev.set_msm_chunk(Some(t)), || format!("chunk {t} refused"))?;
    let res = f();
    dev.set_msm_chunk(restore);
    res
}

/// `f` with each form of the MSM's last steps: the bucket reduction on one
/// lane or a pair of lanes a group, split in two levels or with each
/// group's double-and-add, and the windows' sums by the chunked reduction
/// or the tree (the split form needs the tree); the device's settings are
/// restored afterwards.
fn with_each_reduction(
    dev: &CudaDevice,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<(), String> {
    let restore = (
        dev.msm_bucket_pairs(),
        dev.msm_window_tree(),
        dev.msm_bucket_split(),
    );
    let mut result = Ok(());
    'forms: for pairs in [true, false] {
        for (tree, split) in [
            (true, BucketSplit::Always),
            (true, BucketSplit::Never),
            (false, BucketSplit::Never),
        ] {
            dev.set_msm_bucket_pairs(pairs);
            dev.set_msm_window_tree(tree);
            dev.set_msm_bucket_split(split);
            if let Err(e) = f() {
                let lanes = if pairs { "lane pairs" } else { "one lane" };
                let levels = if split == BucketSplit::Always {
                    "split"
                } else {
                    "double-and-add"
                };
                let sums = if tree { "tree" } else { "chunked" };
                result = Err(format!(
                    "bucket reduction on {lanes}, {levels}, {sums} window sums: {e}"
                ));
                break 'forms;
            }
        }
    }
    dev.set_msm_bucket_pairs(restore.0);
    dev.set_msm_window_tree(restore.1);
    dev.set_msm_bucket_split(restore.2);
    result
}

fn check_msm_g1(dev: &CudaDevice, points: &[G1Affine], scalars: &[Scalar]) -> CaseResult {
    let want = ref_msm_g1(points, scalars);
    with_each_g1_build(dev, |_| {
        with_each_chunk_order(dev, || {
            with_each_reduction(dev, || {
                let got = dev.msm_g1(points, scalars).map_err(|e| e.to_string())?;
                ensure(got == want, || {
                    format!("msm_g1 of {} points differs from blstrs", points.len())
                })
            })
        })
    })
    .map(|_| ())
}

/// The 0/1 sum with both G1 builds, plain and with the pair sums of
/// `host` (the points `points` holds), which must all agree.
fn sum_selected_g1_both(
    dev: &CudaDevice,
    host: &[G1Affine],
    points: &crate::device::DevicePoints,
    mask: &[u32],
) -> Result<G1Projective, String> {
    let pairs = dev
        .upload_g1(&host::pair_sums_g1(host))
        .map_err(|e| e.to_string())?;
    let sums = with_each_g1_build(dev, |_| {
        let plain = dev
            .sum_selected_g1(points, mask)
            .map_err(|e| e.to_string())?;
        let paired = dev
            .sum_selected_g1_paired(points, &pairs, mask)
            .map_err(|e| format!("paired: {e}"))?;
        ensure(plain == paired, || "the paired sum differs".into())?;
        Ok(plain)
    })?;
    ensure(sums[0] == sums[1], || {
        "the inline-fq and outline-fq builds differ".into()
    })?;
    Ok(sums[0])
}

/// The G2 MSM with each build of its accumulation (2, 3 and 4 blocks per
/// SM) and each chunk order, each against blstrs; the device's setting is restored afterwards.
fn check_msm_g2(dev: &CudaDevice, points: &[G2Affine], scalars: &[Scalar]) -> CaseResult {
    let want = ref_msm_g2(points, scalars);
    let restore = dev.g2_accumulate_blocks();
    let mut result = Ok(());
    for blocks in crate::device::G2_ACCUMULATE_BLOCKS {
        assert!(dev.set_g2_accumulate_blocks(blocks));
        result = with_each_chunk_order(dev, || {
            with_each_reduction(dev, || {
                let got = dev
                    .msm_g2(points, scalars)
                    .map_err(|e| format!("{blocks} blocks per SM: {e}"))?;
                ensure(got == want, || {
                    format!(
                        "msm_g2 of {} points ({blocks} blocks per SM) differs from blstrs",
                        points.len()
                    )
                })
            })
        });
        if result.is_err() {
            break;
        }
    }
    dev.set_g2_accumulate_blocks(restore);
    result
}

fn random_mask(rng: &mut ChaCha8Rng, n: usize, p: f64) -> Vec<u32> {
    let mut m = vec![0u32; n.div_ceil(32)];
    for i in 0..n {
        if rng.gen_bool(p) {
            m[i / 32] |= 1 << (i % 32);
        }
    }
    m
}

fn masked_sum<P: Copy + Send + Sync, G: Group + Send + Sync + From<P>>(
    points: &[P],
    mask: &[u32],
) -> G {
    points
        .par_iter()
        .enumerate()
        .filter(|(i, _)| (mask[i / 32] >> (i % 32)) & 1 == 1)
        .map(|(_, p)| G::from(*p))
        .reduce(G::identity, |a, b| a + b)
}

const SIZES: [usize; 8] = [0, 1, 2, 3, 7, 100, 1000, (1 << 16) + 3];

/// A fixed-base table as cuzk-core lays it out:
/// table[w·half + d − 1] = d·2^(c·w)·B, d in 1..=half = 2^(c−1), built by
/// additions and doublings (independent of cuzk-core's builder).
fn fixed_table<G: Curve>(base: G, c: u32) -> Vec<G::AffineRepr>
where
    G::AffineRepr: Clone,
{
    let half = 1usize << (c - 1);
    let windows = host::fixed_base_windows(c) as usize;
    let mut proj = Vec::with_capacity(windows * half);
    let mut wbase = base;
    for _ in 0..windows {
        let mut acc = wbase;
        for _ in 0..half {
            proj.push(acc);
            acc += wbase;
        }
        for _ in 0..c {
            wbase = wbase.double();
        }
    }
    let mut out = vec![G::identity().to_affine(); proj.len()];
    G::batch_normalize(&proj, &mut out);
    out
}

/// Scalars that exercise signed digits of window c: 0, ±1, a full window,
/// half a window and one past it (the first negative digit), carries
/// through many windows, powers of two up to 2^254; then random ones.
fn fixed_base_scalars(rng: &mut ChaCha8Rng, n: usize, c: u32) -> Vec<Scalar> {
    let mut edges = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(2u64)];
    for x in [(1u64 << c) - 1, 1 << (c - 1), (1 << (c - 1)) + 1, u64::MAX] {
        edges.push(Scalar::from(x));
        edges.push(-Scalar::from(x));
    }
    for k in [c as u64, 64, 128, 200, 250, 254] {
        edges.push(Scalar::from(2u64).pow_vartime([k]));
    }
    let v: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut *rng)).collect();
    with_edges(v, &edges)
}

/// Indices to compare against scalar multiplication: all of a small
/// output, else both ends and a random sample.
/// A random base's fixed-base multiples of `n` edge and random scalars
/// with window `c`, computed by `run(table, scalars, out)` on the device,
/// against blstrs at every index of `sample_indices`.
fn fixed_base_check<G>(
    rng: &mut ChaCha8Rng,
    n: usize,
    c: u32,
    run: impl FnOnce(&[G::AffineRepr], &[Scalar], &mut [G::AffineRepr]) -> crate::Result<()>,
) -> Result<(), String>
where
    G: Curve<Scalar = Scalar> + Sync,
    G::AffineRepr: PrimeCurveAffine + PartialEq + Clone + Send + Sync,
{
    let base = G::random(&mut *rng);
    let table = fixed_table(base, c);
    let s = fixed_base_scalars(rng, n, c);
    let mut out = vec![G::AffineRepr::identity(); s.len()];
    run(&table, &s, &mut out).map_err(|e| e.to_string())?;
    let idx = sample_indices(rng, s.len());
    let bad = idx
        .par_iter()
        .find_any(|&&i| out[i] != (base * s[i]).to_affine());
    ensure(bad.is_none(), || {
        format!("point {} differs from blstrs", bad.unwrap())
    })
}

fn sample_indices(rng: &mut ChaCha8Rng, n: usize) -> Vec<usize> {
    if n <= 3000 {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..64).chain(n - 64..n).collect();
    v.extend((0..2000).map(|_| rng.gen_range(0..n)));
    v
}

pub fn run(dev: &CudaDevice, opts: &CheckOptions) -> Summary {
    println!("seed {} on {}", opts.seed, dev.name());
    let mut r = Runner {
        dev,
        opts,
        tally: Summary::default(),
        case_no: 0,
    };

    // ------------------------------------------------------------ fields
    r.case("field/fr ops", |dev, rng| {
        let xs = with_edges(
            random_scalars(1000, rng.gen()),
            &[Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::ZERO],
        );
        let ys = with_edges(
            random_scalars(1000, rng.gen()),
            &[Scalar::ZERO, -Scalar::ONE, -Scalar::ONE, Scalar::ONE],
        );
        field_ops_check(dev, 0, 32, &xs, &ys, fr_bytes, fr_from, |x, y| {
            [x * y, x + y, x - y, x.square(), -x]
        })
    });
    r.case("field/fr from montgomery", |dev, rng| {
        let xs = with_edges(
            random_scalars(1000, rng.gen()),
            &[Scalar::ZERO, Scalar::ONE, -Scalar::ONE],
        );
        let out = ArithKernels::load(dev)
            .and_then(|k| k.fr_from_mont_raw(host::scalars_as_bytes(&xs)))
            .map_err(|e| e.to_string())?;
        for (i, x) in xs.iter().enumerate() {
            ensure(out[32 * i..32 * i + 32] == x.to_bytes_le(), || {
                format!("element {i}")
            })?;
        }
        Ok(())
    });
    r.case("field/fq ops", |dev, rng| {
        let mut xs: Vec<Fp> = (0..1000).map(|_| Fp::random(&mut *rng)).collect();
        let mut ys: Vec<Fp> = (0..1000).map(|_| Fp::random(&mut *rng)).collect();
        xs = with_edges(xs, &[Fp::ZERO, Fp::ONE, -Fp::ONE, Fp::ZERO]);
        ys = with_edges(ys, &[Fp::ZERO, -Fp::ONE, -Fp::ONE, Fp::ONE]);
        field_ops_check(
            dev,
            1,
            48,
            &xs,
            &ys,
            |x| host::fp_raw_bytes(x).to_vec(),
            host::fp_from_le,
            |x, y| [x * y, x + y, x - y, x.square(), -x],
        )
    });
    // Products whose final conditional subtraction is taken or not with the
    // result next to p (or r), and sums and differences that reach m exactly.
    r.case("field/fr products near r", |dev, rng| {
        let (xs, ys) = near_modulus_pairs(rng, &FR_MODULUS, 32, |l| {
            let b: Vec<u8> = l.iter().flat_map(|w| w.to_le_bytes()).collect();
            fr_from(&b)
        });
        field_ops_check(dev, 0, 32, &xs, &ys, fr_bytes, fr_from, |x, y| {
            [x * y, x + y, x - y, x.square(), -x]
        })
    });
    // Products whose Montgomery rows meet a zero low limb (m = 0 there):
    // Fr's rows add m r's two low limb products (r's limbs 1 and 2^32 - 1)
    // without multiplying, with their own rule when m = 0. A zeroed limb 0
    // of x makes row 0's m zero; zeroed limbs of y make later rows' m zero
    // where the rest cancels. Zeroing limbs keeps an element below r.
    r.case("field/fr products with zero limbs", |dev, rng| {
        let zeroed = |s: Scalar, mask: u32| {
            let mut b = fr_bytes(&s);
            for k in 0..8 {
                if mask >> k & 1 == 1 {
                    b[4 * k..4 * k + 4].fill(0);
                }
            }
            fr_from(&b)
        };
        let xs: Vec<Scalar> = random_scalars(1024, rng.gen())
            .into_iter()
            .enumerate()
            .map(|(i, s)| zeroed(s, i as u32 | 1))
            .collect();
        let ys: Vec<Scalar> = random_scalars(1024, rng.gen())
            .into_iter()
            .enumerate()
            .map(|(i, s)| zeroed(s, (i as u32 * 37) & 0xff))
            .collect();
        field_ops_check(dev, 0, 32, &xs, &ys, fr_bytes, fr_from, |x, y| {
            [x * y, x + y, x - y, x.square(), -x]
        })
    });
    r.case("field/fq products near p", |dev, rng| {
        let (xs, ys) = near_modulus_pairs(rng, &FQ_MODULUS, 32, |l| {
            let b: Vec<u8> = l.iter().flat_map(|w| w.to_le_bytes()).collect();
            host::fp_from_le(&b)
        });
        field_ops_check(
            dev,
            1,
            48,
            &xs,
            &ys,
            |x| host::fp_raw_bytes(x).to_vec(),
            host::fp_from_le,
            |x, y| [x * y, x + y, x - y, x.square(), -x],
        )
    });
    // field_f64.cuh's products (limb products on the FP64 pipe): random
    // pairs, 0, 1, -1 and products next to the modulus.
    r.case("field/fr fp64 products", |dev, rng| {
        let xs = with_edges(
            random_scalars(2000, rng.gen()),
            &[
                Scalar::ZERO,
                Scalar::ONE,
                -Scalar::ONE,
                Scalar::ZERO,
                -Scalar::ONE,
            ],
        );
        let ys = with_edges(
            random_scalars(2000, rng.gen()),
            &[
                Scalar::ZERO,
                -Scalar::ONE,
                -Scalar::ONE,
                Scalar::ONE,
                Scalar::ONE,
            ],
        );
        let (nx, ny) = near_modulus_pairs(rng, &FR_MODULUS, 32, |l| {
            let b: Vec<u8> = l.iter().flat_map(|w| w.to_le_bytes()).collect();
            fr_from(&b)
        });
        f64_products_check(
            dev,
            32,
            &[xs, nx].concat(),
            &[ys, ny].concat(),
            fr_bytes,
            fr_from,
        )
    });
    r.case("field/fq fp64 products", |dev, rng| {
        let mut xs: Vec<Fp> = (0..2000).map(|_| Fp::random(&mut *rng)).collect();
        let mut ys: Vec<Fp> = (0..2000).map(|_| Fp::random(&mut *rng)).collect();
        xs = with_edges(xs, &[Fp::ZERO, Fp::ONE, -Fp::ONE, Fp::ZERO, -Fp::ONE]);
        ys = with_edges(ys, &[Fp::ZERO, -Fp::ONE, -Fp::ONE, Fp::ONE, Fp::ONE]);
        let (nx, ny) = near_modulus_pairs(rng, &FQ_MODULUS, 32, |l| {
            let b: Vec<u8> = l.iter().flat_map(|w| w.to_le_bytes()).collect();
            host::fp_from_le(&b)
        });
        f64_products_check(
            dev,
            48,
            &[xs, nx].concat(),
            &[ys, ny].concat(),
            |x| host::fp_raw_bytes(x).to_vec(),
            host::fp_from_le,
        )
    });
    r.case("field/fq2 ops", |dev, rng| {
        let mut xs: Vec<Fp2> = (0..1000).map(|_| Fp2::random(&mut *rng)).collect();
        let mut ys: Vec<Fp2> = (0..1000).map(|_| Fp2::random(&mut *rng)).collect();
        xs = with_edges(xs, &[Fp2::ZERO, Fp2::ONE, -Fp2::ONE, Fp2::ZERO]);
        ys = with_edges(ys, &[Fp2::ZERO, -Fp2::ONE, -Fp2::ONE, Fp2::ONE]);
        field_ops_check(
            dev,
            2,
            96,
            &xs,
            &ys,
            |x| host::fp2_raw_bytes(x).to_vec(),
            host::fp2_from_le,
            |x, y| [x * y, x + y, x - y, x.square(), -x],
        )
    });

    // ------------------------------------------------------------ curves
    r.case("curve/g1 add, double, small multiple", |dev, rng| {
        curve_ops_check(
            dev,
            rng,
            false,
            200,
            random_g1,
            host::g1_as_bytes,
            host::g1_from_xyzz,
            host::G1_XYZZ_BYTES,
        )
    });
    r.case("curve/g2 add, double, small multiple", |dev, rng| {
        curve_ops_check(
            dev,
            rng,
            true,
            100,
            random_g2,
            host::g2_as_bytes,
            host::g2_from_xyzz,
            host::G2_XYZZ_BYTES,
        )
    });

    // --------------------------------------------------------------- NTT
    let all = [
        NttKind::Forward,
        NttKind::Inverse,
        NttKind::CosetForward,
        NttKind::CosetInverse,
    ];
    for lg in 0..=16u32 {
        r.case(&format!("ntt/2^{lg} all kinds vs cpu"), |dev, rng| {
            check_ntt(dev, rng, lg, &all)
        });
    }
    for lg in [18u32, 20, 22] {
        r.case(
            &format!("ntt/2^{lg} forward, coset inverse vs cpu"),
            |dev, rng| check_ntt(dev, rng, lg, &[NttKind::Forward, NttKind::CosetInverse]),
        );
    }
    // Out of place: one element, one pass (2^1-2^11), the permuting pass
    // with two top bits (2^12-2^16) and with one (2^19, 2^20).
    for lg in [0u32, 1, 2, 3, 5, 7, 11, 12, 13, 16, 19, 20] {
        r.case(
            &format!("ntt/2^{lg} out of place, all kinds vs cpu"),
            |dev, rng| check_ntt_into(dev, rng, lg, &all, &NttPass::ALL, true),
        );
    }
    if opts.large {
        // Out of place against in place, the default pass kernel: three
        // passes (2^24, 2^27) and one top bit (2^28).
        for lg in [24u32, 27, 28] {
            r.case(
                &format!("ntt/2^{lg} out of place: forward, coset inverse give in place's bytes"),
                |dev, rng| {
                    let kinds = [NttKind::Forward, NttKind::CosetInverse];
                    check_ntt_into(dev, rng, lg, &kinds, &[dev.ntt_pass()], false)
                },
            );
        }
        // The default (r2x3) and the default before it (r3x2, runs 9-15);
        // 2^25 for an odd size with three passes.
        for lg in [24u32, 25, 27, 28] {
            for pass in [NttPass::R2ThreeBlocks, NttPass::R3TwoBlocks] {
                r.case(
                    &format!(
                        "ntt/2^{lg} round trips and direct evaluation ({})",
                        pass.name()
                    ),
                    |dev, rng| check_ntt_large(dev, rng, lg, pass),
                );
            }
        }
        for lg in [23u32, 24, 27] {
            r.case(
                &format!("ntt/2^{lg} evals_to_coset: every pass kernel gives r2x3's bytes"),
                |dev, rng| {
                    let mut passes = vec![NttPass::R2ThreeBlocks];
                    passes.extend(
                        NttPass::ALL
                            .into_iter()
                            .filter(|p| *p != NttPass::R2ThreeBlocks),
                    );
                    check_evals_to_coset_agree(dev, rng, lg, &passes)
                },
            );
        }
    }
    for m in [1usize, 2, 3, 7, 100, 1000, (1 << 16) + 3, (1 << 20) - 5] {
        r.case(&format!("ntt/compute_h {m} vs cpu"), |dev, rng| {
            let a = random_scalars(m, rng.gen());
            let b = random_scalars(m, rng.gen());
            let c = random_scalars(m, rng.gen());
            let want = ref_compute_h(&a, &b, &c);
            let got = dev.compute_h(&a, &b, &c).map_err(|e| e.to_string())?;
            ensure(got == want, || "differs from the CPU composition".into())
        });
    }

    // ---------------------------------------------------------- G1 MSM
    let mut g1_sizes = SIZES.to_vec();
    if opts.large {
        g1_sizes.push(1 << 20);
    }
    for &n in &g1_sizes {
        r.case(&format!("msm/g1 {n} random"), |dev, rng| {
            check_msm_g1(dev, &random_g1(n, rng.gen()), &random_scalars(n, rng.gen()))
        });
    }
    for n in [1000usize, (1 << 16) + 3] {
        r.case(&format!("msm/g1 {n} all-zero scalars"), |dev, rng| {
            check_msm_g1(dev, &random_g1(n, rng.gen()), &vec![Scalar::ZERO; n])
        });
        r.case(&format!("msm/g1 {n} all-one scalars"), |dev, rng| {
            check_msm_g1(dev, &random_g1(n, rng.gen()), &vec![Scalar::ONE; n])
        });
        r.case(&format!("msm/g1 {n} all scalars -1"), |dev, rng| {
            check_msm_g1(dev, &random_g1(n, rng.gen()), &vec![-Scalar::ONE; n])
        });
    }
    r.case("msm/g1 1000 with points at infinity", |dev, rng| {
        let mut p = random_g1(1000, rng.gen());
        for i in (0..1000).step_by(3) {
            p[i] = G1Affine::identity();
        }
        check_msm_g1(dev, &p, &random_scalars(1000, rng.gen()))
    });
    r.case("msm/g1 all points at infinity", |dev, rng| {
        check_msm_g1(
            dev,
            &vec![G1Affine::identity(); 100],
            &random_scalars(100, rng.gen()),
        )
    });
    r.case("msm/g1 1000 repeated points, random scalars", |dev, rng| {
        let p = random_g1(3, rng.gen());
        let pts: Vec<G1Affine> = (0..1000).map(|i| p[i % 3]).collect();
        check_msm_g1(dev, &pts, &random_scalars(1000, rng.gen()))
    });
    r.case("msm/g1 5000 repeated point and scalar", |dev, rng| {
        let p = random_g1(1, rng.gen())[0];
        let s = Scalar::random(&mut *rng);
        check_msm_g1(dev, &vec![p; 5000], &vec![s; 5000])
    });
    r.case("msm/g1 1000 P and -P cancel", |dev, rng| {
        let p = random_g1(500, rng.gen());
        let pts: Vec<G1Affine> = p.iter().copied().chain(p.iter().map(|x| -*x)).collect();
        let s = random_scalars(500, rng.gen());
        let sc: Vec<Scalar> = s.iter().chain(s.iter()).copied().collect();
        with_each_reduction(dev, || {
            let got = dev.msm_g1(&pts, &sc).map_err(|e| e.to_string())?;
            ensure(bool::from(got.is_identity()), || {
                "sum of s P + s (-P) is not infinity".into()
            })
        })
    });
    r.case(
        "msm/g1 1000 canonical scalars, some not reduced",
        |dev, rng| {
            let n = 1000;
            let p = random_g1(n, rng.gen());
            let s = random_scalars(n, rng.gen());
            // r, little-endian u64 limbs.
            let r_limbs: [u64; 4] = [
                0xffffffff00000001,
                0x53bda402fffe5bfe,
                0x3339d80809a1d805,
                0x73eda753299d7d48,
            ];
            let limbs: Vec<[u64; 4]> = s
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let mut l = host::canonical_limbs(x);
                    if i % 2 == 0 {
                        // l + r, when it fits in 256 bits: same residue, not reduced.
                        let mut carry = 0u128;
                        let mut t = [0u64; 4];
                        for k in 0..4 {
                            let v = l[k] as u128 + r_limbs[k] as u128 + carry;
                            t[k] = v as u64;
                            carry = v >> 64;
                        }
                        if carry == 0 {
                            l = t;
                        }
                    }
                    l
                })
                .collect();
            let dp = dev.upload_g1(&p).map_err(|e| e.to_string())?;
            let ds = dev
                .upload_scalars_canonical(&limbs)
                .map_err(|e| e.to_string())?;
            let got = dev
                .msm_g1_device(&dp, &ds, None)
                .map_err(|e| e.to_string())?;
            ensure(got == ref_msm_g1(&p, &s), || "differs from blstrs".into())
        },
    );
    r.case("msm/g1 indexed subset", |dev, rng| {
        let n = 3000;
        let p = random_g1(n, rng.gen());
        let ids: Vec<u32> = (0..n as u32).filter(|_| rng.gen_bool(0.3)).collect();
        let s = random_scalars(ids.len(), rng.gen());
        let sub: Vec<G1Affine> = ids.iter().map(|&i| p[i as usize]).collect();
        let dp = dev.upload_g1(&p).map_err(|e| e.to_string())?;
        let ds = dev.upload_scalars(&s).map_err(|e| e.to_string())?;
        let got = dev
            .msm_g1_device(&dp, &ds, Some(&ids))
            .map_err(|e| e.to_string())?;
        ensure(got == ref_msm_g1(&sub, &s), || "differs from blstrs".into())
    });
    r.case("msm/g1 65539 streamed from pinned memory", |dev, rng| {
        let n = (1 << 16) + 3;
        let p = random_g1(n, rng.gen());
        let s = random_scalars(n, rng.gen());
        let bytes = host::g1_as_bytes(&p);
        let mut pinned = dev.alloc_pinned(bytes.len()).map_err(|e| e.to_string())?;
        pinned
            .as_mut_slice()
            .map_err(|e| e.to_string())?
            .copy_from_slice(bytes);
        let ds = dev.upload_scalars(&s).map_err(|e| e.to_string())?;
        let got = dev
            .msm_g1_pinned(&pinned, n, &ds)
            .map_err(|e| e.to_string())?;
        ensure(got == ref_msm_g1(&p, &s), || "differs from blstrs".into())
    });
    if opts.large {
        // Past 2^30 bytes of placed entries the shared-memory sort places
        // the windows in groups (host::msm_sort_plan): the default
        // kernels, once, against blstrs.
        let n = (1 << 24) - 5;
        r.case(
            &format!("msm/g1 {n} random, sorted in window groups"),
            |dev, rng| {
                let c = crate::host::choose_window(n);
                let groups = crate::host::msm_sort_plan(n, c).groups(crate::host::num_windows(c));
                ensure(groups.len() > 1, || {
                    format!("{} window group(s)", groups.len())
                })?;
                let p = random_g1(n, rng.gen());
                let s = random_scalars(n, rng.gen());
                let got = dev.msm_g1(&p, &s).map_err(|e| e.to_string())?;
                ensure(got == ref_msm_g1(&p, &s), || "differs from blstrs".into())
            },
        );
    }
    // Windows wider than the default's 20 bits (bench_kernels'
    // CUZK_MSM_BENCH_WINDOWS rows; 22 bits take 12 windows instead of 13):
    // every build, chunk order and reduction form, with scalars at the
    // signed digits' edges.
    for c in [21u32, 22] {
        for n in [1000usize, (1 << 16) + 3] {
            r.case(&format!("msm/g1 {n} window {c}"), |dev, rng| {
                let p = random_g1(n, rng.gen());
                let s = fixed_base_scalars(rng, n, c);
                with_msm_window(dev, c, || check_msm_g1(dev, &p, &s))
            });
        }
    }
    // The first bucket sums' chunk at both ends of its range
    // (host::msm_chunk picks 64..512 by the buckets' load; the checks'
    // sizes all take 64): 2 makes every bucket of two or more entries
    // merge, through several passes; 512 sums nearly every bucket whole.
    // Every build, chunk order and reduction form.
    for t in [2u32, crate::host::MSM_CHUNK_LIMIT] {
        for n in [1000usize, (1 << 16) + 3] {
            r.case(&format!("msm/g1 {n} chunks of {t}"), |dev, rng| {
                let p = random_g1(n, rng.gen());
                let s = random_scalars(n, rng.gen());
                with_msm_chunk(dev, t, || check_msm_g1(dev, &p, &s))
            });
        }
        r.case(
            &format!("msm/g1 5000 repeated point and scalar, chunks of {t}"),
            |dev, rng| {
                let p = random_g1(1, rng.gen())[0];
                let s = Scalar::random(&mut *rng);
                with_msm_chunk(dev, t, || check_msm_g1(dev, &vec![p; 5000], &vec![s; 5000]))
            },
        );
        r.case(&format!("msm/g2 1000 chunks of {t}"), |dev, rng| {
            let p = random_g2(1000, rng.gen());
            let s = random_scalars(1000, rng.gen());
            with_msm_chunk(dev, t, || check_msm_g2(dev, &p, &s))
        });
    }
    r.case("msm/g1 rejects mismatched lengths", |dev, rng| {
        let p = random_g1(10, rng.gen());
        let s = random_scalars(11, rng.gen());
        ensure(dev.msm_g1(&p, &s).is_err(), || {
            "11 scalars over 10 points accepted".into()
        })
    });

    // ---------------------------------------------------------- G2 MSM
    for &n in &SIZES {
        r.case(&format!("msm/g2 {n} random"), |dev, rng| {
            check_msm_g2(dev, &random_g2(n, rng.gen()), &random_scalars(n, rng.gen()))
        });
    }
    r.case("msm/g2 1000 all-one scalars", |dev, rng| {
        check_msm_g2(dev, &random_g2(1000, rng.gen()), &vec![Scalar::ONE; 1000])
    });
    r.case("msm/g2 1000 all-zero scalars", |dev, rng| {
        check_msm_g2(dev, &random_g2(1000, rng.gen()), &vec![Scalar::ZERO; 1000])
    });
    r.case("msm/g2 1000 all scalars -1", |dev, rng| {
        check_msm_g2(dev, &random_g2(1000, rng.gen()), &vec![-Scalar::ONE; 1000])
    });
    r.case("msm/g2 1000 P and -P, same scalars", |dev, rng| {
        let p = random_g2(500, rng.gen());
        let pts: Vec<G2Affine> = p.iter().copied().chain(p.iter().map(|x| -*x)).collect();
        let s = random_scalars(500, rng.gen());
        let sc: Vec<Scalar> = s.iter().chain(s.iter()).copied().collect();
        check_msm_g2(dev, &pts, &sc)
    });
    r.case("msm/g2 1000 window 22", |dev, rng| {
        let p = random_g2(1000, rng.gen());
        let s = fixed_base_scalars(rng, 1000, 22);
        with_msm_window(dev, 22, || check_msm_g2(dev, &p, &s))
    });
    r.case("msm/g2 5000 repeated point and scalar", |dev, rng| {
        let p = random_g2(1, rng.gen())[0];
        let s = Scalar::random(&mut *rng);
        check_msm_g2(dev, &vec![p; 5000], &vec![s; 5000])
    });
    if opts.large {
        let n = (1 << 20) + 7;
        r.case(&format!("msm/g2 {n} random"), |dev, rng| {
            check_msm_g2(dev, &random_g2(n, rng.gen()), &random_scalars(n, rng.gen()))
        });
    }
    r.case(
        "msm/g2 1000 with points at infinity and repeats",
        |dev, rng| {
            let mut p = random_g2(1000, rng.gen());
            for i in (0..1000).step_by(3) {
                p[i] = G2Affine::identity();
            }
            for i in (1..1000).step_by(5) {
                p[i] = p[1];
            }
            check_msm_g2(dev, &p, &random_scalars(1000, rng.gen()))
        },
    );

    // ---------------------------------------------------------- 0/1 path
    for &n in &SIZES {
        r.case(&format!("sum_selected/g1 {n} random mask"), |dev, rng| {
            let p = random_g1(n, rng.gen());
            let m = random_mask(rng, n, 0.5);
            let dp = dev.upload_g1(&p).map_err(|e| e.to_string())?;
            let got = sum_selected_g1_both(dev, &p, &dp, &m)?;
            ensure(got == masked_sum::<_, G1Projective>(&p, &m), || {
                "differs from the CPU sum".into()
            })
        });
    }
    for (name, prob) in [("all set", 1.0), ("none set", 0.0)] {
        r.case(&format!("sum_selected/g1 1000 {name}"), |dev, rng| {
            let p = random_g1(1000, rng.gen());
            let m = random_mask(rng, 1000, prob);
            let dp = dev.upload_g1(&p).map_err(|e| e.to_string())?;
            let got = sum_selected_g1_both(dev, &p, &dp, &m)?;
            ensure(got == masked_sum::<_, G1Projective>(&p, &m), || {
                "differs from the CPU sum".into()
            })
        });
    }
    // The points are dealt to threads by count of set bits: masks sparse,
    // clustered in runs, and large enough for every thread of a wave.
    for (n, name) in [
        (1usize << 20, "sparse"),
        (1 << 20, "clustered"),
        ((1 << 22) + 5, "half, past one wave"),
    ] {
        r.case(&format!("sum_selected/g1 {n} {name}"), |dev, rng| {
            let p = random_g1(n, rng.gen());
            let m = match name {
                "sparse" => random_mask(rng, n, 0.001),
                "clustered" => {
                    let mut m = vec![0u32; n.div_ceil(32)];
                    for i in (n / 3..n / 3 + 100_003).chain(n - 50..n).chain([5, 77]) {
                        m[i / 32] |= 1 << (i % 32);
                    }
                    m
                }
                _ => random_mask(rng, n, 0.5),
            };
            let dp = dev.upload_g1(&p).map_err(|e| e.to_string())?;
            let got = sum_selected_g1_both(dev, &p, &dp, &m)?;
            ensure(got == masked_sum::<_, G1Projective>(&p, &m), || {
                "differs from the CPU sum".into()
            })
        });
    }
    r.case(
        "sum_selected/g1 rejects bits past the end and wrong pair sums",
        |dev, rng| {
            let p = random_g1(40, rng.gen());
            let dp = dev.upload_g1(&p).map_err(|e| e.to_string())?;
            ensure(dev.sum_selected_g1(&dp, &[0, 1 << 9]).is_err(), || {
                "accepted a bit for point 41".into()
            })?;
            // Pair sums of another length, or of the other group.
            let short = dev
                .upload_g1(&host::pair_sums_g1(&p[..38]))
                .map_err(|e| e.to_string())?;
            ensure(
                dev.sum_selected_g1_paired(&dp, &short, &[1, 0]).is_err(),
                || "accepted 19 pair sums for 40 points".into(),
            )?;
            let g2 = dev
                .upload_g2(&random_g2(20, rng.gen()))
                .map_err(|e| e.to_string())?;
            ensure(
                dev.sum_selected_g1_paired(&dp, &g2, &[1, 0]).is_err(),
                || "accepted G2 pair sums".into(),
            )
        },
    );
    for n in [0usize, 1, 7, 1000, (1 << 16) + 3] {
        r.case(&format!("sum_selected/g2 {n} random mask"), |dev, rng| {
            let p = random_g2(n, rng.gen());
            let m = random_mask(rng, n, 0.5);
            let dp = dev.upload_g2(&p).map_err(|e| e.to_string())?;
            let got = dev.sum_selected_g2(&dp, &m).map_err(|e| e.to_string())?;
            let pairs = dev
                .upload_g2(&host::pair_sums_g2(&p))
                .map_err(|e| e.to_string())?;
            let paired = dev
                .sum_selected_g2_paired(&dp, &pairs, &m)
                .map_err(|e| format!("paired: {e}"))?;
            ensure(got == masked_sum::<_, G2Projective>(&p, &m), || {
                "differs from the CPU sum".into()
            })?;
            ensure(paired == got, || "the paired sum differs".into())
        });
    }
    // The pair sums made on the device against the host's: odd sizes, one
    // launch chunk and past it (2^22 pairs), with pairs at infinity,
    // (P, -P) and (P, P).
    pair_sums_cases::<G1Affine>(&mut r, &[0, 1, 2, 7, 1001, (1 << 23) + 7]);
    pair_sums_cases::<G2Affine>(&mut r, &[0, 3, 1001]);
    for n in [1000usize, (1 << 16) + 3] {
        r.case(&format!("msm/g1 split 0/1 + rest {n}"), |dev, rng| {
            let p = random_g1(n, rng.gen());
            let s: Vec<Scalar> = (0..n)
                .map(|_| match rng.gen_range(0..20) {
                    0..=8 => Scalar::ZERO,
                    9..=17 => Scalar::ONE,
                    _ => Scalar::random(&mut *rng),
                })
                .collect();
            let dp = dev.upload_g1(&p).map_err(|e| e.to_string())?;
            let got = dev.msm_g1_split(&dp, &s).map_err(|e| e.to_string())?;
            ensure(got == ref_msm_g1(&p, &s), || "differs from blstrs".into())
        });
    }
    r.case("msm/g2 split 0/1 + rest 1000", |dev, rng| {
        let n = 1000;
        let p = random_g2(n, rng.gen());
        let s: Vec<Scalar> = (0..n)
            .map(|_| match rng.gen_range(0..3) {
                0 => Scalar::ZERO,
                1 => Scalar::ONE,
                _ => Scalar::random(&mut *rng),
            })
            .collect();
        let dp = dev.upload_g2(&p).map_err(|e| e.to_string())?;
        let got = dev.msm_g2_split(&dp, &s).map_err(|e| e.to_string())?;
        ensure(got == ref_msm_g2(&p, &s), || "differs from blstrs".into())
    });
    // Fixed-base multiplication (parameter generation), chunk boundary
    // (4 Mi points) included in the large run.
    let mut fb_sizes = vec![
        (0usize, 4u32),
        (1, 13),
        (3, 5),
        (7, 9),
        (100, 13),
        (1000, 4),
        ((1 << 16) + 3, 13),
    ];
    if r.opts.large {
        fb_sizes.push(((1 << 22) + 5, 13));
    }
    for (n, c) in fb_sizes {
        r.case(&format!("fixed_base/g1 {n} window {c}"), |dev, rng| {
            fixed_base_check::<G1Projective>(rng, n, c, |t, s, out| dev.fixed_base_g1(t, c, s, out))
        });
    }
    for (n, c) in [(0usize, 4u32), (1, 12), (7, 5), (1000, 13), (20_000, 13)] {
        r.case(&format!("fixed_base/g2 {n} window {c}"), |dev, rng| {
            fixed_base_check::<G2Projective>(rng, n, c, |t, s, out| dev.fixed_base_g2(t, c, s, out))
        });
    }
    r.case(
        "fixed_base rejects a wrong table or output size",
        |dev, rng| {
            let table = fixed_table(G1Projective::random(&mut *rng), 6);
            let s = vec![Scalar::ONE; 10];
            let mut out = vec![G1Affine::identity(); 10];
            ensure(
                dev.fixed_base_g1(&table[1..], 6, &s, &mut out).is_err(),
                || "accepted a short table".into(),
            )?;
            ensure(dev.fixed_base_g1(&table, 7, &s, &mut out).is_err(), || {
                "accepted a table of another window".into()
            })?;
            ensure(
                dev.fixed_base_g1(&table, 6, &s, &mut out[1..]).is_err(),
                || "accepted a short output".into(),
            )
        },
    );
    let _ = G1Projective::generator().to_affine();
    spmv_checks(&mut r);
    subgroup_checks(&mut r);
    r.tally
}

// ------------------------------------------------- compiled constraint system

/// A CSR matrix on the host in the compiled system's layout (row_start
/// rows + 1 entries from 0, cols into z, coef into the table).
pub struct HostCsr {
    pub row_start: Vec<u64>,
    pub cols: Vec<u32>,
    pub coef: Vec<u32>,
}

impl HostCsr {
    pub fn rows(&self) -> usize {
        self.row_start.len() - 1
    }
}

/// How [`random_csr`] draws rows.
#[derive(Clone, Copy)]
pub struct CsrShape {
    /// Entries per row: (weight, lo, hi) ranges drawn with those weights.
    pub lens: &'static [(u32, usize, usize)],
    /// Percent of entries with coefficient 0 (+1) and 1 (-1); the rest
    /// draw a table index >= 2.
    pub plus: u32,
    pub minus: u32,
    /// Columns near the row (row·nz/rows + a few hundred) instead of
    /// uniform over z: real circuits read recently allocated variables.
    pub local: bool,
}

/// The checks' shape: empty rows, short rows, both sides of SPMV_LONG and
/// long rows up to 600 entries; 45% +1, 30% -1, 25% table entries.
pub const CHECK_SHAPE: CsrShape = CsrShape {
    lens: &[
        (10, 0, 0),
        (55, 1, 8),
        (20, 9, 31),
        (5, 32, 33),
        (5, 34, 100),
        (1, 101, 600),
    ],
    plus: 45,
    minus: 30,
    local: false,
};

/// The benchmark's shape: about 4 entries per row, most ±1.
pub const BENCH_SHAPE: CsrShape = CsrShape {
    lens: &[(20, 1, 1), (20, 2, 3), (40, 4, 5), (20, 6, 7)],
    plus: 60,
    minus: 30,
    local: false,
};

/// A seeded random matrix of `rows` rows over a z of `nz` scalars and a
/// table of `table_len` (>= 2 when any entry draws from it), generated in
/// parallel pieces of rows.
pub fn random_csr(rows: usize, nz: usize, table_len: usize, shape: CsrShape, seed: u64) -> HostCsr {
    const PIECE: usize = 1 << 14;
    let total_w: u32 = shape.lens.iter().map(|l| l.0).sum();
    let pieces: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)> = (0..rows.div_ceil(PIECE))
        .into_par_iter()
        .map(|p| {
            let mut r =
                ChaCha8Rng::seed_from_u64(seed ^ (p as u64).wrapping_mul(0x9fb2_1c65_1e98_df25));
            let lo = p * PIECE;
            let hi = (lo + PIECE).min(rows);
            let (mut lens, mut cols, mut coef) = (Vec::new(), Vec::new(), Vec::new());
            for row in lo..hi {
                let mut w = r.gen_range(0..total_w);
                let &(_, a, b) = shape
                    .lens
                    .iter()
                    .find(|l| {
                        if w < l.0 {
                            true
                        } else {
                            w -= l.0;
                            false
                        }
                    })
                    .expect("weights sum to total_w");
                let len = if nz == 0 { 0 } else { r.gen_range(a..=b) };
                lens.push(len as u32);
                let centre = (row as u128 * nz as u128 / rows.max(1) as u128) as usize;
                for _ in 0..len {
                    let c = if shape.local {
                        (centre + r.gen_range(0..512usize)).min(nz - 1)
                    } else {
                        r.gen_range(0..nz)
                    };
                    cols.push(c as u32);
                    let pct = r.gen_range(0..100);
                    coef.push(if pct < shape.plus || table_len <= 2 {
                        0
                    } else if pct < shape.plus + shape.minus {
                        1
                    } else {
                        r.gen_range(2..table_len as u32)
                    });
                }
            }
            (lens, cols, coef)
        })
        .collect();
    let nnz: usize = pieces.iter().map(|p| p.1.len()).sum();
    let mut m = HostCsr {
        row_start: Vec::with_capacity(rows + 1),
        cols: Vec::with_capacity(nnz),
        coef: Vec::with_capacity(nnz),
    };
    m.row_start.push(0);
    let mut at = 0u64;
    for (lens, cols, coef) in pieces {
        for l in lens {
            at += l as u64;
            m.row_start.push(at);
        }
        m.cols.extend_from_slice(&cols);
        m.coef.extend_from_slice(&coef);
    }
    m
}

/// A coefficient table: 1, -1, then 0, 2, -2 and random elements.
fn random_table(rng: &mut ChaCha8Rng, len: usize) -> Vec<Scalar> {
    let mut t = vec![Scalar::ONE, -Scalar::ONE];
    let edges = [Scalar::ZERO, Scalar::from(2u64), -Scalar::from(2u64)];
    while t.len() < len {
        let k = t.len() - 2;
        t.push(if k < edges.len() {
            edges[k]
        } else {
            Scalar::random(&mut *rng)
        });
    }
    t.truncate(len.max(2));
    t
}

/// A witness with about 30% of its values 0, 1 or -1 (z[0] = 1).
fn random_z(rng: &mut ChaCha8Rng, n: usize) -> Vec<Scalar> {
    let mut z = random_scalars(n, rng.gen());
    let seed: u64 = rng.gen();
    z.par_chunks_mut(1 << 14)
        .enumerate()
        .for_each(|(ci, chunk)| {
            let mut r = ChaCha8Rng::seed_from_u64(seed ^ ci as u64);
            for v in chunk {
                match r.gen_range(0..10) {
                    0 => *v = Scalar::ZERO,
                    1 => *v = Scalar::ONE,
                    2 => *v = -Scalar::ONE,
                    _ => {}
                }
            }
        });
    if let Some(v) = z.first_mut() {
        *v = Scalar::ONE;
    }
    z
}

/// The plain product: every entry multiplied by its table entry (no fast
/// paths, so table[0] = 1 and table[1] = -1 are checked, not assumed).
pub fn ref_spmv(m: &HostCsr, table: &[Scalar], z: &[Scalar]) -> Vec<Scalar> {
    (0..m.rows())
        .into_par_iter()
        .map(|r| {
            let (s, e) = (m.row_start[r] as usize, m.row_start[r + 1] as usize);
            (s..e).fold(Scalar::ZERO, |acc, k| {
                acc + table[m.coef[k] as usize] * z[m.cols[k] as usize]
            })
        })
        .collect()
}

fn first_diff(got: &[Scalar], want: &[Scalar]) -> CaseResult {
    ensure(got.len() == want.len(), || {
        format!("{} outputs, {} expected", got.len(), want.len())
    })?;
    match (0..got.len())
        .into_par_iter()
        .find_first(|&i| got[i] != want[i])
    {
        Some(i) => Err(format!("first difference at {i} of {}", got.len())),
        None => Ok(()),
    }
}

fn check_spmv(
    dev: &CudaDevice,
    rng: &mut ChaCha8Rng,
    rows: usize,
    nz: usize,
    shape: CsrShape,
) -> CaseResult {
    let table = random_table(rng, 40);
    let m = random_csr(rows, nz, table.len(), shape, rng.gen());
    let z = random_z(rng, nz);
    let want = ref_spmv(&m, &table, &z);
    let got = dev
        .spmv(&m.row_start, &m.cols, &m.coef, &table, &z)
        .map_err(|e| e.to_string())?;
    first_diff(&got, &want).map_err(|e| format!("{rows} rows, {} entries: {e}", m.cols.len()))
}

/// Random density flags with probability p.
fn random_bits(rng: &mut ChaCha8Rng, n: usize, p: f64) -> Vec<bool> {
    (0..n).map(|_| rng.gen_bool(p)).collect()
}

fn ref_select(
    z: &[Scalar],
    num_inputs: usize,
    inputs: Option<&[bool]>,
    aux: Option<&[bool]>,
) -> Vec<Scalar> {
    z.iter()
        .enumerate()
        .filter(|&(i, _)| {
            if i < num_inputs {
                inputs.is_none_or(|b| b[i])
            } else {
                aux.is_none_or(|b| b[i - num_inputs])
            }
        })
        .map(|(_, v)| *v)
        .collect()
}

/// `n` scalars, a third each 0, 1 and random (the split's input).
fn mixed_scalars(rng: &mut ChaCha8Rng, n: usize) -> Vec<Scalar> {
    let mut s = random_scalars(n, rng.gen());
    let seed: u64 = rng.gen();
    s.par_chunks_mut(1 << 14)
        .enumerate()
        .for_each(|(ci, chunk)| {
            let mut r = ChaCha8Rng::seed_from_u64(seed ^ ci as u64);
            for v in chunk {
                match r.gen_range(0..3) {
                    0 => *v = Scalar::ZERO,
                    1 => *v = Scalar::ONE,
                    _ => {}
                }
            }
        });
    s
}

fn spmv_checks(r: &mut Runner) {
    let mut sizes = vec![0usize, 1, 2, 3, 7, 100, 1000, (1 << 16) + 3, 1 << 22];
    if r.opts.large {
        sizes.push((1 << 24) + 1);
    }
    for &rows in &sizes {
        r.case(&format!("spmv/random rows {rows}"), |dev, rng| {
            // z a little longer than the rows, as inputs + aux are.
            check_spmv(dev, rng, rows, rows + 3, CHECK_SHAPE)
        });
    }
    r.case("spmv/local columns 2^16+3", |dev, rng| {
        check_spmv(
            dev,
            rng,
            (1 << 16) + 3,
            (1 << 16) + 10,
            CsrShape {
                local: true,
                ..CHECK_SHAPE
            },
        )
    });
    r.case("spmv/only ±1 and a z of one element", |dev, rng| {
        check_spmv(
            dev,
            rng,
            1000,
            1,
            CsrShape {
                plus: 50,
                minus: 50,
                ..CHECK_SHAPE
            },
        )
    });
    r.case(
        "spmv/long rows (block per row, up to 10^6 entries)",
        |dev, rng| {
            let nz = 5000;
            let table = random_table(rng, 9);
            let lens = [
                SPMV_LONG,
                SPMV_LONG + 1,
                0,
                1_000_000,
                257,
                256,
                255,
                33,
                5000,
                0,
                1,
            ];
            let mut m = HostCsr {
                row_start: vec![0],
                cols: Vec::new(),
                coef: Vec::new(),
            };
            for &l in &lens {
                for _ in 0..l {
                    m.cols.push(rng.gen_range(0..nz as u32));
                    m.coef.push(rng.gen_range(0..table.len() as u32));
                }
                m.row_start.push(m.cols.len() as u64);
            }
            let z = random_z(rng, nz);
            let want = ref_spmv(&m, &table, &z);
            let got = dev
                .spmv(&m.row_start, &m.cols, &m.coef, &table, &z)
                .map_err(|e| e.to_string())?;
            first_diff(&got, &want)
        },
    );
    r.case(
        "spmv/row blocks into one output, a/b/c padded for the H step",
        |dev, rng| {
            let (rows, nz, n) = (3000usize, 2500usize, 4096usize);
            let table = random_table(rng, 17);
            let z = random_z(rng, nz);
            let dz = dev.upload_scalars(&z).map_err(|e| e.to_string())?;
            let dt = dev.upload_scalars(&table).map_err(|e| e.to_string())?;
            let mats: Vec<HostCsr> = (0..3)
                .map(|_| random_csr(rows, nz, table.len(), CHECK_SHAPE, rng.gen()))
                .collect();
            let dm: Vec<DeviceCsr> = mats
                .iter()
                .map(|m| dev.upload_csr(&m.row_start, &m.cols, &m.coef))
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?;
            let outs = dev
                .abc_device([&dm[0], &dm[1], &dm[2]], &dt, &dz, n)
                .map_err(|e| e.to_string())?;
            for (k, (m, out)) in mats.iter().zip(&outs).enumerate() {
                let mut want = ref_spmv(m, &table, &z);
                want.resize(n, Scalar::ZERO);
                let mut got = vec![Scalar::ZERO; n];
                dev.stream()
                    .memcpy_dtoh(out, host::scalars_as_bytes_mut(&mut got))
                    .map_err(|e| e.to_string())?;
                first_diff(&got, &want).map_err(|e| format!("matrix {k}: {e}"))?;
            }
            // The first matrix again in two row blocks (each rebased to start
            // at 0) written into one buffer at their first rows.
            let m = &mats[0];
            let cut = 1234;
            let mid = m.row_start[cut];
            let top: Vec<u64> = m.row_start[..=cut].to_vec();
            let bottom: Vec<u64> = m.row_start[cut..].iter().map(|s| s - mid).collect();
            let b0 = dev
                .upload_csr(&top, &m.cols[..mid as usize], &m.coef[..mid as usize])
                .map_err(|e| e.to_string())?;
            let b1 = dev
                .upload_csr(&bottom, &m.cols[mid as usize..], &m.coef[mid as usize..])
                .map_err(|e| e.to_string())?;
            let mut out = dev
                .stream()
                .alloc_zeros::<u8>(rows * host::FR_BYTES)
                .map_err(|e| e.to_string())?;
            dev.spmv_device(&b1, &dt, &dz, &mut out, cut)
                .map_err(|e| e.to_string())?;
            dev.spmv_device(&b0, &dt, &dz, &mut out, 0)
                .map_err(|e| e.to_string())?;
            ensure(
                dev.spmv_device(&b1, &dt, &dz, &mut out, cut + 1).is_err(),
                || "accepted a block running past the output".into(),
            )?;
            let mut got = vec![Scalar::ZERO; rows];
            dev.stream()
                .memcpy_dtoh(&out, host::scalars_as_bytes_mut(&mut got))
                .map_err(|e| e.to_string())?;
            first_diff(&got, &ref_spmv(m, &table, &z))
        },
    );
    r.case(
        "spmv/refuses bad matrices, short z and short tables",
        |dev, rng| {
            let table = random_table(rng, 5);
            let z = random_z(rng, 10);
            let s = |v: &[u64], c: &[u32], k: &[u32]| dev.spmv(v, c, k, &table, &z);
            ensure(s(&[0, 2, 1, 3], &[0, 1, 2], &[0, 0, 0]).is_err(), || {
                "accepted a row ending before it starts".into()
            })?;
            ensure(s(&[1, 3], &[0, 1, 2], &[0, 0, 0]).is_err(), || {
                "accepted row_start[0] != 0".into()
            })?;
            // Row starts are u32 on the device: one of 2^32 + 1 would pass
            // as 1 if cut to 32 bits (0, 1, 3 is well formed).
            ensure(
                s(&[0, (1 << 32) + 1, 3], &[0, 1, 2], &[0, 0, 0]).is_err(),
                || "accepted a row start of 2^32 + 1 (cut to 32 bits)".into(),
            )?;
            ensure(s(&[0, 1 << 40, 3], &[0, 1, 2], &[0, 0, 0]).is_err(), || {
                "accepted a row start of 2^40".into()
            })?;
            ensure(s(&[0, 2], &[0, 1, 2], &[0, 0, 0]).is_err(), || {
                "accepted unused entries".into()
            })?;
            ensure(s(&[0, 1], &[10], &[0]).is_err(), || {
                "accepted a column past z".into()
            })?;
            ensure(s(&[0, 1], &[u32::MAX], &[0]).is_err(), || {
                "accepted column 2^32 - 1".into()
            })?;
            ensure(s(&[0, 1], &[3], &[5]).is_err(), || {
                "accepted a coefficient past the table".into()
            })?;
            ensure(s(&[], &[], &[]).is_err(), || {
                "accepted an empty row_start".into()
            })?;
            let ok = s(&[0, 1, 1], &[9], &[4]).map_err(|e| e.to_string())?;
            ensure(ok == vec![table[4] * z[9], Scalar::ZERO], || {
                format!("edge indices gave {ok:?}")
            })
        },
    );

    // Density selection: the A query (every input, A-dense aux) and the B
    // query (B-dense inputs, B-dense aux) from one resident z.
    for &n in &[0usize, 1, 2, 3, 7, 100, 1000, (1 << 16) + 3, 1 << 22] {
        r.case(&format!("spmv/select a and b queries {n}"), |dev, rng| {
            let num_inputs = n.min(1 + n / 50);
            let z = random_z(rng, n);
            let a_aux = random_bits(rng, n - num_inputs, 0.7);
            let b_in = random_bits(rng, num_inputs, 0.5);
            let b_aux = random_bits(rng, n - num_inputs, 0.3);
            let dz = dev.upload_scalars(&z).map_err(|e| e.to_string())?;
            let da = dev.upload_density(&a_aux).map_err(|e| e.to_string())?;
            let dbi = dev.upload_density(&b_in).map_err(|e| e.to_string())?;
            let dba = dev.upload_density(&b_aux).map_err(|e| e.to_string())?;
            let down = |s: &DeviceScalars| dev.download_scalars(s).map_err(|e| e.to_string());
            let qa = dev
                .select_device(&dz, num_inputs, None, Some(&da))
                .map_err(|e| e.to_string())?;
            first_diff(&down(&qa)?, &ref_select(&z, num_inputs, None, Some(&a_aux)))
                .map_err(|e| format!("A query: {e}"))?;
            let qb = dev
                .select_device(&dz, num_inputs, Some(&dbi), Some(&dba))
                .map_err(|e| e.to_string())?;
            first_diff(
                &down(&qb)?,
                &ref_select(&z, num_inputs, Some(&b_in), Some(&b_aux)),
            )
            .map_err(|e| format!("B query: {e}"))?;
            // All and nothing selected.
            let all = vec![true; n - num_inputs];
            let none = vec![false; n - num_inputs];
            let got = dev
                .select(&z, num_inputs, None, Some(&all))
                .map_err(|e| e.to_string())?;
            first_diff(&got, &z).map_err(|e| format!("all selected: {e}"))?;
            let got = dev
                .select(&z, num_inputs, Some(&vec![false; num_inputs]), Some(&none))
                .map_err(|e| e.to_string())?;
            ensure(got.is_empty(), || {
                format!("nothing selected gave {} scalars", got.len())
            })
        });
    }
    r.case(
        "spmv/select refuses densities of the wrong length",
        |dev, rng| {
            let z = random_z(rng, 100);
            let bad_aux = dev.select(&z, 3, None, Some(&[true; 96]));
            let bad_in = dev.select(&z, 3, Some(&[true; 2]), Some(&[true; 97]));
            let too_many = dev.select(&z, 101, None, None);
            ensure(
                bad_aux.is_err() && bad_in.is_err() && too_many.is_err(),
                || "accepted a density that does not match z".into(),
            )
        },
    );

    // The 0/1 split on the GPU against host::split_zero_one.
    let mut split_sizes = vec![
        0usize,
        1,
        2,
        3,
        7,
        31,
        32,
        33,
        100,
        1000,
        1023,
        1024,
        1025,
        (1 << 16) + 3,
        1 << 22,
    ];
    if r.opts.large {
        split_sizes.push((1 << 26) + 7);
    }
    for n in split_sizes {
        r.case(&format!("spmv/split 0-1 on the GPU {n}"), |dev, rng| {
            let s = mixed_scalars(rng, n);
            let want = host::split_zero_one(&s);
            let ds = dev.upload_scalars(&s).map_err(|e| e.to_string())?;
            let split = dev.split_zero_one_device(&ds).map_err(|e| e.to_string())?;
            let got = dev.split_to_host(&split).map_err(|e| e.to_string())?;
            ensure(got.ones == want.ones, || "ones mask differs".into())?;
            ensure(
                got.ones_count == want.ones_count && got.zeros_count == want.zeros_count,
                || {
                    format!(
                        "counts (ones, zeros) ({}, {}), want ({}, {})",
                        got.ones_count, got.zeros_count, want.ones_count, want.zeros_count
                    )
                },
            )?;
            ensure(got.rest_ids == want.rest_ids, || "rest ids differ".into())?;
            first_diff(&got.rest_scalars, &want.rest_scalars)
                .map_err(|e| format!("rest scalars: {e}"))
        });
    }
    r.case("spmv/split all zero, all one, all other", |dev, rng| {
        for s in [
            vec![Scalar::ZERO; 5000],
            vec![Scalar::ONE; 5000],
            random_scalars(5000, rng.gen()),
        ] {
            let ds = dev.upload_scalars(&s).map_err(|e| e.to_string())?;
            let got = dev
                .split_to_host(&dev.split_zero_one_device(&ds).map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            ensure(got == host::split_zero_one(&s), || {
                "differs from the host split".into()
            })?;
        }
        Ok(())
    });

    // z from two host vectors, and the split of its aux part in place (the
    // L MSM's scalars), at offsets that cut mask words in the middle.
    for (inputs, aux) in [
        (1usize, 0usize),
        (1, 1),
        (3, 31),
        (5, 1000),
        (37, (1 << 16) + 3),
    ] {
        r.case(
            &format!("spmv/upload z and split its aux {inputs}+{aux}"),
            |dev, rng| {
                let zi = mixed_scalars(rng, inputs);
                let za = mixed_scalars(rng, aux);
                let dz = dev.upload_z(&zi, &za).map_err(|e| e.to_string())?;
                let mut z = zi.clone();
                z.extend_from_slice(&za);
                first_diff(&dev.download_scalars(&dz).map_err(|e| e.to_string())?, &z)
                    .map_err(|e| format!("z: {e}"))?;
                let split = dev
                    .split_zero_one_range(&dz, inputs, aux)
                    .map_err(|e| e.to_string())?;
                let got = dev.split_to_host(&split).map_err(|e| e.to_string())?;
                ensure(got == host::split_zero_one(&za), || {
                    "split of the aux range differs from the host split".into()
                })?;
                ensure(
                    dev.split_zero_one_range(&dz, inputs, aux + 1).is_err(),
                    || "accepted a range past the end".into(),
                )
            },
        );
    }

    // MSMs straight from the device split (mask and positions never on
    // the host), against blstrs.
    for n in [0usize, 1, 33, 1000, (1 << 16) + 3] {
        r.case(
            &format!("spmv/msm g1 from the device split {n}"),
            |dev, rng| {
                let p = random_g1(n, rng.gen());
                let s = mixed_scalars(rng, n);
                let dp = dev.upload_g1(&p).map_err(|e| e.to_string())?;
                let ds = dev.upload_scalars(&s).map_err(|e| e.to_string())?;
                let split = dev.split_zero_one_device(&ds).map_err(|e| e.to_string())?;
                let got = dev
                    .msm_g1_split_device(&dp, &split)
                    .map_err(|e| e.to_string())?;
                ensure(got == ref_msm_g1(&p, &s), || "differs from blstrs".into())?;
                let pairs = dev.pair_sums_device(&dp).map_err(|e| e.to_string())?;
                let paired = dev
                    .msm_g1_split_device_paired(&dp, &pairs, &split)
                    .map_err(|e| format!("paired: {e}"))?;
                ensure(paired == got, || "the paired 0/1 part differs".into())
            },
        );
    }
    r.case("spmv/msm g2 from the device split 1000", |dev, rng| {
        let n = 1000;
        let p = random_g2(n, rng.gen());
        let s = mixed_scalars(rng, n);
        let dp = dev.upload_g2(&p).map_err(|e| e.to_string())?;
        let ds = dev.upload_scalars(&s).map_err(|e| e.to_string())?;
        let split = dev.split_zero_one_device(&ds).map_err(|e| e.to_string())?;
        let got = dev
            .msm_g2_split_device(&dp, &split)
            .map_err(|e| e.to_string())?;
        ensure(got == ref_msm_g2(&p, &s), || "differs from blstrs".into())?;
        let pairs = dev.pair_sums_device(&dp).map_err(|e| e.to_string())?;
        let paired = dev
            .msm_g2_split_device_paired(&dp, &pairs, &split)
            .map_err(|e| format!("paired: {e}"))?;
        ensure(paired == got, || "the paired 0/1 part differs".into())?;
        ensure(
            dev.msm_g2_split_device_paired(&dp, &dp, &split).is_err(),
            || "accepted 1000 pair sums for 1000 points".into(),
        )?;
        // A split of other length or the other group's points: refused.
        let short = dev.upload_g2(&p[..999]).map_err(|e| e.to_string())?;
        let g1 = dev
            .upload_g1(&random_g1(n, rng.gen()))
            .map_err(|e| e.to_string())?;
        ensure(
            dev.msm_g2_split_device(&short, &split).is_err()
                && dev.msm_g2_split_device(&g1, &split).is_err(),
            || "accepted a split that does not match the points".into(),
        )
    });

    // The intended flow: z up once, a/b/c, the A and B queries and the
    // split of the B query, all from the one resident vector.
    r.case("spmv/pipeline from one resident z", |dev, rng| {
        let (rows, num_inputs, aux) = (20_000usize, 5usize, 19_000usize);
        let nz = num_inputs + aux;
        let table = random_table(rng, 12);
        let z = random_z(rng, nz);
        let mats: Vec<HostCsr> = (0..3)
            .map(|_| random_csr(rows, nz, table.len(), CHECK_SHAPE, rng.gen()))
            .collect();
        let b_in = random_bits(rng, num_inputs, 0.5);
        let b_aux = random_bits(rng, aux, 0.4);
        let dz = dev.upload_scalars(&z).map_err(|e| e.to_string())?;
        let dt = dev.upload_scalars(&table).map_err(|e| e.to_string())?;
        let dm: Vec<DeviceCsr> = mats
            .iter()
            .map(|m| dev.upload_csr(&m.row_start, &m.cols, &m.coef))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let n = rows.next_power_of_two();
        let [a, b, c] = dev
            .abc_device([&dm[0], &dm[1], &dm[2]], &dt, &dz, n)
            .map_err(|e| e.to_string())?;
        // H from the device buffers against H from the CPU's a/b/c.
        let want_abc: Vec<Vec<Scalar>> = mats.iter().map(|m| ref_spmv(m, &table, &z)).collect();
        let want_h = ref_compute_h(&want_abc[0], &want_abc[1], &want_abc[2]);
        let lg = n.trailing_zeros();
        let [mut ha, mut hb, mut hc] = [a, b, c];
        dev.h_device(&mut ha, &mut hb, &mut hc, lg)
            .map_err(|e| e.to_string())?;
        let mut got_h = vec![Scalar::ZERO; n];
        dev.stream()
            .memcpy_dtoh(&ha, host::scalars_as_bytes_mut(&mut got_h))
            .map_err(|e| e.to_string())?;
        first_diff(&got_h, &want_h).map_err(|e| format!("H: {e}"))?;
        let dbi = dev.upload_density(&b_in).map_err(|e| e.to_string())?;
        let dba = dev.upload_density(&b_aux).map_err(|e| e.to_string())?;
        let qb = dev
            .select_device(&dz, num_inputs, Some(&dbi), Some(&dba))
            .map_err(|e| e.to_string())?;
        let want_b = ref_select(&z, num_inputs, Some(&b_in), Some(&b_aux));
        let got = dev
            .split_to_host(&dev.split_zero_one_device(&qb).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        ensure(got == host::split_zero_one(&want_b), || {
            "split of the B query differs".into()
        })
    });
}

// ------------------------------------------------------- subgroup checks

/// What the subgroup and pair-sum checks need of G1 or G2 affine points.
trait SubgroupCase: PrimeCurveAffine + Send {
    /// The group in the checks' names.
    const NAME: &'static str;
    fn random(n: usize, seed: u64) -> Vec<Self>;
    /// A point on the curve outside the subgroup, of kind `k`.
    fn outside(rng: &mut ChaCha8Rng, k: u32) -> Self;
    fn bytes(points: &[Self]) -> &[u8];
    fn check(dev: &CudaDevice, points: &[Self]) -> crate::Result<crate::SubgroupReport>;
    /// blstrs' answer.
    fn in_subgroup(&self) -> bool;
    fn upload(dev: &CudaDevice, points: &[Self]) -> crate::Result<crate::device::DevicePoints>;
    fn download(dev: &CudaDevice, points: &crate::device::DevicePoints)
        -> crate::Result<Vec<Self>>;
    /// The host's pair sums (`host::pair_sums_g1`).
    fn pair_sums(points: &[Self]) -> Vec<Self>;
}

impl SubgroupCase for G1Affine {
    const NAME: &'static str = "g1";
    fn random(n: usize, seed: u64) -> Vec<Self> {
        random_g1(n, seed)
    }
    fn outside(rng: &mut ChaCha8Rng, k: u32) -> Self {
        crate::subgroup::g1_outside(rng, k)
    }
    fn bytes(points: &[Self]) -> &[u8] {
        host::g1_as_bytes(points)
    }
    fn check(dev: &CudaDevice, points: &[Self]) -> crate::Result<crate::SubgroupReport> {
        dev.subgroup_check_g1(points)
    }
    fn in_subgroup(&self) -> bool {
        self.is_torsion_free().into()
    }
    fn upload(dev: &CudaDevice, points: &[Self]) -> crate::Result<crate::device::DevicePoints> {
        dev.upload_g1(points)
    }
    fn download(
        dev: &CudaDevice,
        points: &crate::device::DevicePoints,
    ) -> crate::Result<Vec<Self>> {
        dev.download_g1(points)
    }
    fn pair_sums(points: &[Self]) -> Vec<Self> {
        host::pair_sums_g1(points)
    }
}

impl SubgroupCase for G2Affine {
    const NAME: &'static str = "g2";
    fn random(n: usize, seed: u64) -> Vec<Self> {
        random_g2(n, seed)
    }
    fn outside(rng: &mut ChaCha8Rng, k: u32) -> Self {
        crate::subgroup::g2_outside(rng, k)
    }
    fn bytes(points: &[Self]) -> &[u8] {
        host::g2_as_bytes(points)
    }
    fn check(dev: &CudaDevice, points: &[Self]) -> crate::Result<crate::SubgroupReport> {
        dev.subgroup_check_g2(points)
    }
    fn in_subgroup(&self) -> bool {
        self.is_torsion_free().into()
    }
    fn upload(dev: &CudaDevice, points: &[Self]) -> crate::Result<crate::device::DevicePoints> {
        dev.upload_g2(points)
    }
    fn download(
        dev: &CudaDevice,
        points: &crate::device::DevicePoints,
    ) -> crate::Result<Vec<Self>> {
        dev.download_g2(points)
    }
    fn pair_sums(points: &[Self]) -> Vec<Self> {
        host::pair_sums_g2(points)
    }
}

/// `n` random subgroup points with `outside` points outside the subgroup
/// (random curve points, small-order points, sums of both) and `inf`
/// points at infinity at random distinct positions; returns the points and
/// the sorted positions of those outside.
fn subgroup_input<A: SubgroupCase>(
    rng: &mut ChaCha8Rng,
    n: usize,
    outside: usize,
    inf: usize,
) -> (Vec<A>, Vec<usize>) {
    let mut points = A::random(n, rng.gen());
    let mut pos: Vec<usize> = Vec::new();
    let want = (outside + inf).min(n);
    while pos.len() < want {
        let p = rng.gen_range(0..n);
        if !pos.contains(&p) {
            pos.push(p);
        }
    }
    let (bad, infs) = pos.split_at(outside.min(want));
    for (k, &p) in bad.iter().enumerate() {
        points[p] = A::outside(rng, k as u32);
    }
    for &p in infs {
        points[p] = A::identity();
    }
    let mut bad = bad.to_vec();
    bad.sort_unstable();
    (points, bad)
}

/// [`subgroup_input`] with up to two points at infinity, as raw bytes.
fn subgroup_raw<A: SubgroupCase>(
    rng: &mut ChaCha8Rng,
    n: usize,
    outside: usize,
) -> (Vec<u8>, Vec<usize>) {
    let (p, bad) = subgroup_input::<A>(rng, n, outside, n.min(2));
    (A::bytes(&p).to_vec(), bad)
}

/// [`CudaDevice::pair_sums_device`] against [`host::pair_sums_g1`] (or
/// g2) on `sizes` points, from 8 points on with a pair at infinity, one
/// (P, -P) and one (P, P).
fn pair_sums_cases<A>(r: &mut Runner<'_>, sizes: &[usize])
where
    A: SubgroupCase + std::ops::Neg<Output = A> + PartialEq,
{
    for &n in sizes {
        r.case(
            &format!("sum_selected/{} pair sums of {n} points", A::NAME),
            |dev, rng| {
                let mut p = A::random(n, rng.gen());
                if n >= 8 {
                    p[0] = A::identity();
                    p[1] = A::identity();
                    p[3] = -p[2];
                    p[5] = p[4];
                }
                let dp = A::upload(dev, &p).map_err(|e| e.to_string())?;
                let got = dev
                    .pair_sums_device(&dp)
                    .and_then(|q| A::download(dev, &q))
                    .map_err(|e| e.to_string())?;
                ensure(got == A::pair_sums(&p), || "differ from the host's".into())
            },
        );
    }
}

/// The check of whole uploads of `sizes` (points, of them outside) in
/// group `A`.
fn subgroup_upload_cases<A: SubgroupCase>(r: &mut Runner<'_>, sizes: Vec<(usize, usize)>) {
    for (n, outside) in sizes {
        r.case(
            &format!("subgroup/{} {n} points, {outside} outside", A::NAME),
            |dev, rng| {
                let (points, bad) = subgroup_input::<A>(rng, n, outside, n.min(3));
                for &p in &bad {
                    ensure(!points[p].in_subgroup(), || {
                        format!("test input {p} is in the subgroup")
                    })?;
                }
                let got = A::check(dev, &points).map_err(|e| e.to_string())?;
                expect_report(got, n, &bad, "whole upload")
            },
        );
    }
}

fn expect_report(got: crate::SubgroupReport, n: usize, bad: &[usize], what: &str) -> CaseResult {
    let want = crate::SubgroupReport {
        checked: n,
        outside: bad.len(),
        first_outside: bad.first().copied(),
    };
    ensure(got == want, || {
        format!("{what}: got {got:?}, want {want:?}")
    })
}

fn subgroup_checks(r: &mut Runner<'_>) {
    use crate::subgroup::{g1_in_subgroup, g1_outside, g2_in_subgroup, g2_outside};
    let mut g1_sizes: Vec<(usize, usize)> = vec![
        (0, 0),
        (1, 0),
        (1, 1),
        (2, 1),
        (3, 2),
        (7, 3),
        (100, 10),
        (1000, 37),
        ((1 << 16) + 3, 100),
        ((1 << 22) + 1, 200),
    ];
    if r.opts.large {
        g1_sizes.push(((1 << 24) - 3, 300));
    }
    subgroup_upload_cases::<G1Affine>(r, g1_sizes);
    let mut g2_sizes: Vec<(usize, usize)> = vec![
        (0, 0),
        (1, 0),
        (1, 1),
        (3, 2),
        (7, 3),
        (100, 10),
        (1000, 37),
        ((1 << 16) + 3, 50),
        ((1 << 20) + 7, 60),
    ];
    if r.opts.large {
        g2_sizes.push(((1 << 22) + 1, 100));
    }
    subgroup_upload_cases::<G2Affine>(r, g2_sizes);
    // One point at a time, each answer against blstrs and the CPU model.
    r.case("subgroup/g1 and g2 point by point vs blstrs", |dev, rng| {
        for k in 0..60u32 {
            let p = if k % 2 == 0 {
                g1_outside(rng, k / 2)
            } else {
                G1Projective::random(&mut *rng).to_affine()
            };
            let want = bool::from(p.is_torsion_free());
            ensure(g1_in_subgroup(&p) == want, || {
                format!("model disagrees on G1 case {k}")
            })?;
            let got = dev.subgroup_check_g1(&[p]).map_err(|e| e.to_string())?;
            ensure((got.outside == 0) == want, || {
                format!("G1 case {k}: {got:?}, blstrs {want}")
            })?;
            let q = if k % 2 == 0 {
                g2_outside(rng, k / 2)
            } else {
                G2Projective::random(&mut *rng).to_affine()
            };
            let want = bool::from(q.is_torsion_free());
            ensure(g2_in_subgroup(&q) == want, || {
                format!("model disagrees on G2 case {k}")
            })?;
            let got = dev.subgroup_check_g2(&[q]).map_err(|e| e.to_string())?;
            ensure((got.outside == 0) == want, || {
                format!("G2 case {k}: {got:?}, blstrs {want}")
            })?;
        }
        Ok(())
    });
    // Streamed through two staging buffers (one pinned, one pageable) of
    // different sizes into a smaller device chunk: many pieces, the last
    // one short.
    for (g2, n, chunk, st0, st1) in [
        (false, 0usize, 10usize, 10usize, 10usize),
        (false, 10_007, 1000, 777, 1000),
        (false, (1 << 20) + 3, 1 << 18, 1 << 18, (1 << 18) + 5),
        (true, 5003, 600, 600, 512),
        (true, (1 << 18) + 1, 1 << 16, 1 << 16, 1 << 16),
    ] {
        let name = format!(
            "subgroup/{} {n} points staged through {st0} and {st1} into {chunk}",
            if g2 { "g2" } else { "g1" }
        );
        r.case(&name, |dev, rng| {
            let size = if g2 {
                host::G2_AFFINE_BYTES
            } else {
                host::G1_AFFINE_BYTES
            };
            let outside = (n / 1000).max(n.min(1)).min(40);
            let (raw, bad) = if g2 {
                subgroup_raw::<G2Affine>(rng, n, outside)
            } else {
                subgroup_raw::<G1Affine>(rng, n, outside)
            };
            let dchunk = dev.alloc_points(g2, chunk).map_err(|e| e.to_string())?;
            let mut pinned = dev.alloc_pinned(st0 * size).map_err(|e| e.to_string())?;
            let pinned = pinned.as_mut_slice().map_err(|e| e.to_string())?;
            let mut pageable = vec![0u8; st1 * size];
            let got = dev
                .subgroup_check_staged(&dchunk, &raw, [pinned, &mut pageable])
                .map_err(|e| e.to_string())?;
            expect_report(got, n, &bad, "staged")
        });
    }
    r.case(
        "subgroup/staged refuses partial points and empty chunks",
        |dev, _rng| {
            let chunk = dev.alloc_points(false, 4).map_err(|e| e.to_string())?;
            let (mut a, mut b) = (vec![0u8; 960], vec![0u8; 960]);
            let raw = vec![0u8; 95];
            ensure(
                dev.subgroup_check_staged(&chunk, &raw, [&mut a, &mut b])
                    .is_err(),
                || "accepted 95 bytes of G1 points".into(),
            )?;
            let raw = vec![0u8; 96];
            let (mut a, mut small) = (vec![0u8; 960], vec![0u8; 50]);
            ensure(
                dev.subgroup_check_staged(&chunk, &raw, [&mut a, &mut small])
                    .is_err(),
                || "accepted a staging buffer that holds no point".into(),
            )?;
            // All zeros: points at infinity, in the subgroup.
            let got = dev
                .subgroup_check_staged(&chunk, &vec![0u8; 96 * 9], [&mut a, &mut b])
                .map_err(|e| e.to_string())?;
            expect_report(got, 9, &[], "nine points at infinity")
        },
    );
}
