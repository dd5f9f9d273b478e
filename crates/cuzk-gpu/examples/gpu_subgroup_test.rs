//! GPU checks and timings of the parameter loader's subgroup checks on the
//! GPU ([`cuzk_gpu::GpuSubgroupChecker`] behind cuzk-core's seam), run on
//! the GPU machine from `scripts/gpu-subgroup-test.sh` (no cargo there).
//!
//!   gpu_subgroup_test [--seed N] [--log-points N] [--no-cpu]
//!
//! Checks: the backend's staged check in pieces of many sizes (one point,
//! odd, larger than the input) equals blstrs on points in and out of the
//! subgroup at random positions and points at infinity; a VRAM limit
//! smaller than a piece shrinks the pieces instead of failing; a parameter
//! file with one point moved out of the subgroup in each section in turn is
//! refused by the loader with the GPU checker exactly as with the CPU's
//! (same section, index and offset), and the good file loads the same.
//! Timing (`--log-points`, default 22): a file of 2^N G1 and 2^(N-3) G2
//! points loaded without the subgroup check, with the GPU's and (unless
//! `--no-cpu`) with the CPU's, and the GPU check alone on the decoded
//! points, in points per second. The last line is `N passed, M failed`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use blstrs::{G1Affine, G2Affine};
use cuzk_core::params::{MappedParameters, Parameters, Section, VerifyingKey};
use cuzk_core::subgroup::{CpuSubgroupChecker, SubgroupChecker};
use cuzk_cuda::checks::{ensure, random_g1, random_g2, Summary};
use cuzk_cuda::host::{g1_as_bytes, g2_as_bytes};
use cuzk_cuda::subgroup::{g1_outside, g2_outside};
use cuzk_gpu::{BudgetConfig, CudaBackend, GpuConfig, GpuSubgroupChecker};
use group::prime::PrimeCurveAffine;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// `n` points with a few at infinity and `bad` outside the subgroup, at
/// random positions (the reference answer is blstrs' on the result).
fn mixed<A: Copy>(
    rng: &mut ChaCha8Rng,
    mut points: Vec<A>,
    bad: usize,
    identity: A,
    outside: impl Fn(&mut ChaCha8Rng, u32) -> A,
) -> Vec<A> {
    let n = points.len();
    for _ in 0..3.min(n) {
        points[rng.gen_range(0..n)] = identity;
    }
    for k in 0..bad.min(n) {
        let i = rng.gen_range(0..n);
        points[i] = outside(rng, k as u32);
    }
    points
}

fn reference_g1(points: &[G1Affine]) -> Option<usize> {
    points
        .par_iter()
        .position_first(|p| !bool::from(p.is_torsion_free()))
}
fn reference_g2(points: &[G2Affine]) -> Option<usize> {
    points
        .par_iter()
        .position_first(|p| !bool::from(p.is_torsion_free()))
}

struct TempDir(PathBuf);
impl TempDir {
    fn new() -> Self {
        let d = std::env::temp_dir().join(format!("cuzk-gpu-subgroup-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a temporary directory");
        TempDir(d)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn params(seed: u64, g1: usize, g2: usize) -> Parameters {
    let g = G1Affine::generator();
    let h = G2Affine::generator();
    let part = |k: u64, n: usize| Arc::new(random_g1(n, seed ^ k));
    Parameters {
        vk: VerifyingKey {
            alpha_g1: g,
            beta_g1: g,
            beta_g2: h,
            gamma_g2: h,
            delta_g1: g,
            delta_g2: h,
            ic: vec![g; 2],
        },
        h: part(1, g1 / 2).into(),
        l: part(2, g1 / 4).into(),
        a: part(3, g1 / 8).into(),
        b_g1: part(4, g1 - g1 / 2 - g1 / 4 - g1 / 8).into(),
        b_g2: Arc::new(random_g2(g2, seed ^ 5)).into(),
    }
}

fn write(p: &Parameters, path: &Path) -> Result<Vec<u8>, String> {
    let mut v = Vec::new();
    p.write(&mut v).map_err(|e| e.to_string())?;
    std::fs::write(path, &v).map_err(|e| e.to_string())?;
    Ok(v)
}

/// The error's text with the checker's name taken out, for comparing the
/// GPU's refusal with the CPU's.
fn refusal(r: cuzk_core::Result<Parameters>, checker: &str) -> Result<String, String> {
    match r {
        Err(e @ cuzk_core::Error::Format { .. }) => Ok(e.to_string().replace(checker, "CHECKER")),
        Err(e) => Err(format!("not a format error: {e}")),
        Ok(_) => Err("accepted".into()),
    }
}

fn main() -> std::process::ExitCode {
    let mut seed: u64 = rand::random();
    let mut log_points = 22u32;
    let mut cpu = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).unwrap_or(seed),
            "--log-points" => log_points = args.next().and_then(|v| v.parse().ok()).unwrap_or(22),
            "--no-cpu" => cpu = false,
            other => {
                eprintln!("unknown argument {other}");
                return std::process::ExitCode::from(2);
            }
        }
    }
    println!("seed {seed}");
    let mut r = Summary::default();
    let backend = match CudaBackend::open(GpuConfig::default()) {
        Ok(b) => Arc::new(b),
        Err(e) => {
            println!("cannot open GPU 0: {e}");
            println!("0 passed, 1 failed");
            return std::process::ExitCode::from(1);
        }
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    // The backend's staged check, pieces of every shape.
    for (n, piece, bad) in [
        (0usize, 10usize, 0usize),
        (1, 1, 1),
        (1, 5, 0),
        (777, 1, 3),
        (10_007, 1000, 5),
        (10_007, 10_007, 1),
        (50_001, 65_536, 7),
        ((1 << 20) + 3, 1 << 18, 40),
    ] {
        let s = rng.gen();
        let g1 = mixed(
            &mut rng,
            random_g1(n, s),
            bad,
            G1Affine::identity(),
            g1_outside,
        );
        let want1 = reference_g1(&g1);
        r.run(
            &format!("backend g1 {n} points in pieces of {piece}, {bad} outside"),
            || {
                let got = backend
                    .subgroup_first_outside_in(false, g1_as_bytes(&g1), piece)
                    .map_err(|e| e.to_string())?;
                ensure(got == want1, || format!("got {got:?}, blstrs {want1:?}"))
            },
        );
        if n <= 50_001 {
            let s = rng.gen();
            let g2 = mixed(
                &mut rng,
                random_g2(n, s),
                bad,
                G2Affine::identity(),
                g2_outside,
            );
            let want2 = reference_g2(&g2);
            r.run(
                &format!("backend g2 {n} points in pieces of {piece}, {bad} outside"),
                || {
                    let got = backend
                        .subgroup_first_outside_in(true, g2_as_bytes(&g2), piece)
                        .map_err(|e| e.to_string())?;
                    ensure(got == want2, || format!("got {got:?}, blstrs {want2:?}"))
                },
            );
        }
    }

    // A budget smaller than one piece: smaller pieces, the same answer.
    r.run("a 4 MiB VRAM limit shrinks the pieces", || {
        let small = CudaBackend::open(GpuConfig {
            budget: BudgetConfig {
                vram_limit: Some(4 << 20),
                ..BudgetConfig::default()
            },
            workers_per_device: 1,
            ..GpuConfig::default()
        })
        .map_err(|e| e.to_string())?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 7);
        let g1 = mixed(
            &mut rng,
            random_g1(200_000, seed ^ 8),
            5,
            G1Affine::identity(),
            g1_outside,
        );
        let want = reference_g1(&g1);
        let got = small
            .subgroup_first_outside(false, g1_as_bytes(&g1))
            .map_err(|e| e.to_string())?;
        ensure(got == want, || format!("got {got:?}, blstrs {want:?}"))?;
        ensure(small.budget().peak() <= 4 << 20, || {
            format!("budget peak {} above the limit", small.budget().peak())
        })
    });

    // The loader: one point out of the subgroup in each section in turn.
    let gpu = GpuSubgroupChecker::new(vec![backend.clone()]).expect("one backend");
    let dir = TempDir::new();
    r.run(
        "loader: gpu and cpu checkers refuse the same point, accept the same file",
        || {
            let p = params(seed ^ 9, 40_000, 5_000);
            let path = dir.0.join("small.params");
            let good = write(&p, &path)?;
            let m = MappedParameters::open(&path).map_err(|e| e.to_string())?;
            let a = m.load_with(Some(&gpu)).map_err(|e| e.to_string())?;
            ensure(a.h == p.h && a.b_g2 == p.b_g2, || {
                "loaded other points".into()
            })?;
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 10);
            for s in Section::ALL {
                let len = m.len(s);
                let i = rng.gen_range(0..len);
                let off = m
                    .layout
                    .sections
                    .iter()
                    .find(|x| x.0 == s)
                    .expect("section")
                    .1 as usize
                    + i * s.point_size();
                let point = if s == Section::BG2 {
                    g2_outside(&mut rng, i as u32).to_uncompressed().to_vec()
                } else {
                    g1_outside(&mut rng, i as u32).to_uncompressed().to_vec()
                };
                let mut bad = good.clone();
                bad[off..off + point.len()].copy_from_slice(&point);
                let bpath = dir.0.join(format!("bad-{}.params", s.name()));
                std::fs::write(&bpath, &bad).map_err(|e| e.to_string())?;
                let bm = MappedParameters::open(&bpath).map_err(|e| e.to_string())?;
                let by_gpu = refusal(bm.load_with(Some(&gpu)), &gpu.name())?;
                let by_cpu = refusal(bm.load_with(Some(&CpuSubgroupChecker)), "cpu")?;
                ensure(by_gpu == by_cpu, || format!("gpu: {by_gpu}; cpu: {by_cpu}"))?;
                let want = format!("{} point {i} at offset {off}", s.name());
                ensure(by_gpu.contains(&want), || format!("{by_gpu} lacks {want}"))?;
            }
            Ok(())
        },
    );

    // Timing: the loader on a larger file.
    let n1 = 1usize << log_points;
    let n2 = n1 >> 3;
    r.run(
        &format!("timing: load 2^{log_points} G1 + 2^{} G2 points", log_points - 3),
        || {
            let t = Instant::now();
            let p = params(seed ^ 11, n1, n2);
            let path = dir.0.join("large.params");
            write(&p, &path)?;
            drop(p);
            println!("  made the file in {:.2} s", t.elapsed().as_secs_f64());
            let m = MappedParameters::open(&path).map_err(|e| e.to_string())?;
            let time = |c: Option<&dyn SubgroupChecker>| -> Result<(f64, Parameters), String> {
                let t = Instant::now();
                let p = m.load_with(c).map_err(|e| e.to_string())?;
                Ok((t.elapsed().as_secs_f64(), p))
            };
            let (_, _) = time(None)?; // page cache warm
            let (plain, p) = time(None)?;
            let (with_gpu, _) = time(Some(&gpu))?;
            let total = (n1 + n2) as f64;
            println!(
                "  load, curve check only: {plain:.3} s ({:.3e} points/s)",
                total / plain
            );
            println!(
                "  load, subgroup on the GPU: {with_gpu:.3} s ({:.3e} points/s)",
                total / with_gpu
            );
            for (name, g2, raw, n) in [
                ("g1", false, g1_as_bytes(p.h.in_memory().unwrap()), p.h.len()),
                ("g2", true, g2_as_bytes(p.b_g2.in_memory().unwrap()), p.b_g2.len()),
            ] {
                let t = Instant::now();
                let got = backend.subgroup_first_outside(g2, raw).map_err(|e| e.to_string())?;
                let s = t.elapsed().as_secs_f64();
                ensure(got.is_none(), || format!("{name}: {got:?} outside"))?;
                println!(
                    "  gpu check alone, {name} {n} points from host memory: {s:.3} s ({:.3e} points/s)",
                    n as f64 / s
                );
            }
            if cpu {
                let (with_cpu, _) = time(Some(&CpuSubgroupChecker))?;
                println!(
                    "  load, subgroup on the CPU ({} threads): {with_cpu:.3} s ({:.3e} points/s)",
                    rayon::current_num_threads(),
                    total / with_cpu
                );
            }
            Ok(())
        },
    );
    println!("{} passed, {} failed", r.passed, r.failed);
    if r.failed == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    }
}
