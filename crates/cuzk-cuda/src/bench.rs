//! Kernel benchmarks (`cuzk bench-kernels` and the `bench_kernels` example):
//! G1 MSM at 2^20/2^24/2^26 with points resident and streamed from pinned
//! host memory, G2 MSM at 2^24, the 0/1 path at 2^26 with half the scalars
//! one, NTT at 2^20, 2^24, 2^26 and 2^27, and the compiled constraint system's kernels
//! (`--filter spmv`: M·z at 2^20/2^24/2^27 rows, density selection and the
//! 0/1 split at 2^27), and the subgroup checks of parameter points
//! (`--filter subgroup`: G1 at 2^24 and G2 at 2^22 resident, G1 at 2^24
//! streamed from host memory as the parameter loader does). Each row
//! carries the work it must do, the floor that work gives on this card,
//! and the measured gap.
//!
//! Floors. Arithmetic: one Montgomery product of n 32-bit limbs needs at
//! least 2n^2 multiply-adds for a*b and 2n^2 for m*p (lo and hi halves), so
//! 576 IMAD for Fq (n = 12) and 256 for Fr (n = 8); an Fq2 product is 3 Fq
//! products (Karatsuba). A mixed XYZZ addition is 10 products (8M + 2S), a
//! full one 14 (12M + 2S). The card's IMAD rate is SMs x 64/clock x clock,
//! read off the device. Memory: every input read once and every output
//! written once at the device-to-device copy bandwidth measured here. The
//! floor is the larger of the two.

#[cfg(feature = "cuda")]
use std::time::Instant;

#[cfg(feature = "cuda")]
use cudarc::driver::sys::CUdevice_attribute;
use serde::Serialize;

#[cfg(feature = "cuda")]
use crate::checks::{random_g1, random_g2, random_scalars};
#[cfg(feature = "cuda")]
use crate::device::{ArithKernels, BucketPairs, BucketSplit, CudaDevice, DevicePoints};
use crate::error::{CudaError, Result};
#[cfg(feature = "cuda")]
use crate::host::{self, NttKind};

#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Timed repetitions per row (median reported), after one warm-up.
    pub reps: usize,
    /// Only rows whose name contains this.
    pub filter: Option<String>,
    /// Divide every size by 2^shrink (a quick run; the sizes use 0).
    pub shrink: u32,
    pub seed: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Card {
    pub name: String,
    pub sms: u32,
    pub clock_mhz: f64,
    pub imad_per_s: f64,
    pub copy_gb_s: f64,
    /// Measured products per second: Fq (PTX inline, C++ CIOS inline, as
    /// the kernels call it) and Fr (PTX, CIOS).
    pub fq_mul_per_s: [f64; 3],
    pub fr_mul_per_s: [f64; 2],
    /// Measured Fq squarings per second as the kernels call them
    /// (`Fp::sqr`: a squaring routine, not a product).
    pub fq_sqr_per_s: f64,
    /// Fq and Fr products on the FP64 pipe (kernels/field_f64.cuh):
    /// product, square, and one chain each of PTX and FP64 products side by
    /// side.
    pub fq_f64_per_s: [f64; 3],
    pub fr_f64_per_s: [f64; 3],
    /// The macros the kernels were built with (`crate::KERNEL_DEFINES`).
    pub kernel_defines: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchRow {
    pub name: String,
    pub log_size: u32,
    /// What the operation must do, in words.
    pub work: String,
    /// Lower bound from the arithmetic, ms.
    pub compute_floor_ms: f64,
    /// Lower bound from memory traffic, ms.
    pub memory_floor_ms: f64,
    pub floor_ms: f64,
    pub median_ms: f64,
    pub min_ms: f64,
    /// median / floor.
    pub gap: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub card: Card,
    pub rows: Vec<BenchRow>,
}

/// Opens GPU `ordinal` and runs the benchmarks; without the `cuda` feature
/// this answers [`CudaError::NotCompiled`].
pub fn run_on_device(ordinal: usize, opts: &BenchOptions) -> Result<BenchReport> {
    #[cfg(feature = "cuda")]
    {
        let dev = CudaDevice::open(ordinal)?;
        run(&dev, opts)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (ordinal, opts);
        Err(CudaError::NotCompiled)
    }
}

const FQ_MUL_IMAD: f64 = 576.0;
const FR_MUL_IMAD: f64 = 256.0;
#[cfg(feature = "cuda")]
const MADD_MULS: f64 = 10.0;
#[cfg(feature = "cuda")]
const ADD_MULS: f64 = 14.0;

#[cfg(feature = "cuda")]
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[cfg(feature = "cuda")]
fn time_it(dev: &CudaDevice, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    f()?; // warm-up: module load, twiddle tables, allocator pools
    dev.synchronize()?;
    let mut ts = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        dev.synchronize()?;
        let t = Instant::now();
        f()?;
        dev.synchronize()?;
        ts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let min = ts.iter().copied().fold(f64::INFINITY, f64::min);
    Ok((median(ts), min))
}

#[cfg(feature = "cuda")]
/// The error of a driver call in a benchmark's own setup (not a kernel's):
/// `op` on `size` (elements or bytes) for the rows of `kernel`, on `device`.
fn setup_err<E: Into<crate::error::DriverFailure>>(
    device: &str,
    op: &'static str,
    kernel: &'static str,
    size: usize,
) -> impl FnOnce(E) -> CudaError {
    let device = device.to_string();
    move |e| CudaError::Driver {
        op,
        kernel,
        size,
        device,
        source: e.into(),
    }
}

#[cfg(feature = "cuda")]
fn card(dev: &CudaDevice) -> Result<Card> {
    let attr = |a| {
        dev.context()
            .attribute(a)
            .map_err(setup_err(dev.name(), "device attribute", "bench", 0))
    };
    let sms = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let clock_khz = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? as f64;
    let clock_mhz = clock_khz / 1e3;
    // 64 IMAD lanes per SM per clock on sm_80..sm_90 (half the FP32 rate).
    let imad_per_s = sms as f64 * 64.0 * clock_khz * 1e3;
    // Device-to-device copy of 4 GiB: bytes read + written over time.
    let bytes = 4usize << 30;
    let src = dev.stream().alloc_zeros::<u8>(bytes).map_err(setup_err(
        dev.name(),
        "alloc",
        "bench copy",
        bytes,
    ))?;
    let mut dst = dev.stream().alloc_zeros::<u8>(bytes).map_err(setup_err(
        dev.name(),
        "alloc",
        "bench copy",
        bytes,
    ))?;
    let (ms, _) = time_it(dev, 5, || {
        dev.stream().memcpy_dtod(&src, &mut dst).map_err(setup_err(
            dev.name(),
            "copy",
            "bench copy",
            bytes,
        ))
    })?;
    let copy_gb_s = 2.0 * bytes as f64 / (ms * 1e-3) / 1e9;
    let arith = ArithKernels::load(dev)?;
    // In this order (a profiler picks bench_fq_mul's variants by launch
    // index: 4 launches each, variants 0-3 then 4-6).
    let fq_mul_per_s = mul_rates(&arith, true, [0, 1, 2], sms)?;
    let fr_mul_per_s = mul_rates(&arith, false, [0, 1], sms)?;
    let [fq_sqr_per_s] = mul_rates(&arith, true, [3], sms)?;
    let fq_f64_per_s = mul_rates(&arith, true, [4, 5, 6], sms)?;
    let fr_f64_per_s = mul_rates(&arith, false, [4, 5, 6], sms)?;
    Ok(Card {
        name: dev.name().to_string(),
        sms,
        clock_mhz,
        imad_per_s,
        copy_gb_s,
        fq_mul_per_s,
        fr_mul_per_s,
        fq_sqr_per_s,
        fq_f64_per_s,
        fr_f64_per_s,
        kernel_defines: crate::KERNEL_DEFINES.to_string(),
    })
}

/// Products per second of bench_{fq,fr}_mul's `variants`, in that order.
#[cfg(feature = "cuda")]
fn mul_rates<const K: usize>(
    arith: &ArithKernels<'_>,
    fq: bool,
    variants: [u32; K],
    sms: u32,
) -> Result<[f64; K]> {
    let mut rates = [0.0; K];
    for (r, v) in rates.iter_mut().zip(variants) {
        *r = arith.mul_throughput(fq, v, sms)?;
    }
    Ok(rates)
}

#[cfg(feature = "cuda")]
fn msm_work(n: usize, g2: bool) -> (String, f64) {
    let c = host::choose_window(n);
    let w = host::num_windows(c) as f64;
    let b = (1u64 << (c - 1)) as f64;
    let fq = if g2 { 3.0 } else { 1.0 };
    let madds = n as f64 * w;
    // Bucket reduction (2 per bucket) and merging the chunk sums (one per
    // chunk of 64 entries).
    let adds = 2.0 * w * b + madds / 64.0;
    let muls = (madds * MADD_MULS + adds * ADD_MULS) * fq;
    (
        format!(
            "c={c}, {w} windows: {madds:.3e} mixed + {adds:.3e} full XYZZ adds = {muls:.3e} Fq mul"
        ),
        muls * FQ_MUL_IMAD,
    )
}

/// The window widths to time an MSM of `n` points at besides its own, from
/// CUZK_MSM_BENCH_WINDOWS: unset, none; "auto", the size's width -3..+3;
/// else a comma list of widths. Widths outside 4..=23 or with W·n >= 2^32
/// (the sort's u32 positions) are left out.
#[cfg(feature = "cuda")]
fn bench_windows(n: usize) -> Vec<u32> {
    let Ok(v) = std::env::var("CUZK_MSM_BENCH_WINDOWS") else {
        return Vec::new();
    };
    let own = host::choose_window(n);
    let listed: Vec<u32> = if v.trim() == "auto" {
        (own.saturating_sub(3)..=own + 3).collect()
    } else {
        v.split(',').filter_map(|s| s.trim().parse().ok()).collect()
    };
    listed
        .into_iter()
        .filter(|&c| {
            c != own
                && (4..=23).contains(&c)
                && (host::num_windows(c) as u64) * (n as u64) < 1 << 32
        })
        .collect()
}

/// `random_g1(n, seed)`, or where `CUZK_BENCH_POINTS_DIR` names a folder,
/// the same points read from `g1-2^<lg>-<seed>.bin` there when an earlier
/// process wrote them (2^26 take about a minute and a half to make on the
/// GPU machine's host, ~5 s to read back), else made and written there for
/// the next. A file of the wrong length or whose sampled points are off
/// the curve is made again.
#[cfg(feature = "cuda")]
fn bench_g1_points(n: usize, seed: u64) -> Vec<blstrs::G1Affine> {
    use std::io::{Read, Write};
    let Some(dir) = std::env::var_os("CUZK_BENCH_POINTS_DIR") else {
        return random_g1(n, seed);
    };
    let path = std::path::Path::new(&dir).join(format!("g1-{n}-{seed:x}.bin"));
    let bytes = n * std::mem::size_of::<blstrs::G1Affine>();
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes as u64) {
        let mut v = vec![<blstrs::G1Affine as group::prime::PrimeCurveAffine>::identity(); n];
        let read = std::fs::File::open(&path)
            .and_then(|mut f| f.read_exact(host::g1_as_bytes_mut(&mut v)));
        // The file holds what `g1_as_bytes` wrote (blst's affine points are
        // plain words: any bytes are a value, if not a point); a sample off
        // the curve (a file changed since) is not used.
        let step = (n / 1024).max(1);
        if read.is_ok() && v.iter().step_by(step).all(|p| bool::from(p.is_on_curve())) {
            eprintln!(
                "2^{} G1 points read from {}",
                n.trailing_zeros(),
                path.display()
            );
            return v;
        }
        eprintln!(
            "{}: not a usable points file; making them again",
            path.display()
        );
    }
    let v = random_g1(n, seed);
    let written = std::fs::File::create(&path).and_then(|mut f| f.write_all(host::g1_as_bytes(&v)));
    if let Err(e) = written {
        eprintln!(
            "{}: points not kept for the next process: {e}",
            path.display()
        );
        let _ = std::fs::remove_file(&path);
    }
    v
}

/// The shared-memory sort's geometries the sweep times
/// (`CUZK_MSM_BENCH_SORT_TUNINGS`, a comma list of
/// `block:lg_low:smem_kib:per_thread`, e.g. "256:10:48:8,512:11:96:16";
/// entries that do not parse are reported and left out), as rows "msm_g1
/// sort b.. l.. s.. p.." beside the default's, each sum checked against
/// the default's. Empty when unset.
#[cfg(feature = "cuda")]
fn bench_sort_tunings() -> Vec<host::MsmSortTuning> {
    let Ok(v) = std::env::var("CUZK_MSM_BENCH_SORT_TUNINGS") else {
        return Vec::new();
    };
    v.split(',')
        .filter(|s| !s.trim().is_empty())
        .filter_map(|s| {
            let t = host::MsmSortTuning::parse(s);
            if t.is_none() {
                eprintln!("CUZK_MSM_BENCH_SORT_TUNINGS: {s:?} is not block:lg_low:smem_kib:per_thread within the kernels' limits; left out");
            }
            t
        })
        .collect()
}

/// Times `f` with every MSM's window width `c`, restoring the device's.
#[cfg(feature = "cuda")]
fn time_window(
    dev: &CudaDevice,
    reps: usize,
    c: u32,
    f: impl FnMut() -> Result<()>,
) -> Result<(f64, f64)> {
    let restore = dev.msm_window();
    dev.set_msm_window(Some(c));
    let t = time_it(dev, reps, f);
    dev.set_msm_window(restore);
    t
}

/// Times `run` with the other sort than the device's, then with the other
/// merge of the chunk sums, then with the bucket reduction never and always
/// split (each restored after): (row suffix, times).
#[cfg(feature = "cuda")]
fn other_sort_and_merge(
    dev: &CudaDevice,
    reps: usize,
    mut run: impl FnMut() -> Result<()>,
) -> Result<Vec<(&'static str, (f64, f64))>> {
    let shared = dev.msm_shared_sort();
    dev.set_msm_shared_sort(!shared);
    let sort = time_it(dev, reps, &mut run);
    // The shared-memory sort in its other form (staged or not) too.
    let staged = dev.msm_sort_staged();
    dev.set_msm_shared_sort(true);
    dev.set_msm_sort_staged(!staged);
    let other_form = time_it(dev, reps, &mut run);
    dev.set_msm_sort_staged(staged);
    dev.set_msm_shared_sort(shared);
    let in_place = dev.msm_merge_in_place();
    dev.set_msm_merge_in_place(!in_place);
    let merge = time_it(dev, reps, &mut run);
    dev.set_msm_merge_in_place(in_place);
    // The bucket reduction never split, then always (the default splits
    // by size: BucketSplit::Auto).
    let split = dev.msm_bucket_split();
    dev.set_msm_bucket_split(BucketSplit::Never);
    let tail = time_it(dev, reps, &mut run);
    dev.set_msm_bucket_split(BucketSplit::Always);
    let two_levels = time_it(dev, reps, &mut run);
    dev.set_msm_bucket_split(split);
    Ok(vec![
        (if shared { "sort-atomic" } else { "sort-shared" }, sort?),
        (
            if staged {
                "sort-shared-unstaged"
            } else {
                "sort-shared-staged"
            },
            other_form?,
        ),
        (
            if in_place {
                "merge-copy"
            } else {
                "merge-in-place"
            },
            merge?,
        ),
        ("bucket-tail", tail?),
        ("bucket-split", two_levels?),
    ])
}

/// How the MSM's chunk order is named in the rows.
#[cfg(feature = "cuda")]
fn chunk_order_name(on: bool) -> &'static str {
    if on {
        "chunks-by-length"
    } else {
        "chunks-in-order"
    }
}

/// The forms of the MSM's last steps besides the default, as (which
/// groups' bucket reductions run on lane pairs, windows' sums by the tree,
/// row suffix): every group on one lane, every group on pairs, the chunked
/// window sums, then both of run 13's changes undone (run 12's kernels).
#[cfg(feature = "cuda")]
fn reduction_forms(dev: &CudaDevice) -> Vec<(BucketPairs, bool, &'static str)> {
    let (pairs, tree) = (dev.msm_bucket_pairs(), dev.msm_window_tree());
    let mut forms = vec![(BucketPairs::from(false), tree, "bucket-one-lane")];
    forms.push((BucketPairs::from(true), tree, "bucket-pairs"));
    forms.push((pairs, !tree, "window-chunks"));
    forms.push((BucketPairs::from(false), !tree, "run12-reduce"));
    forms.retain(|f| (f.0, f.1) != (pairs, tree));
    forms
}

/// Times `f` with the MSM's last steps in `form` (see [`reduction_forms`]),
/// restoring the device's settings.
#[cfg(feature = "cuda")]
fn time_reduction_form(
    dev: &CudaDevice,
    reps: usize,
    form: (BucketPairs, bool),
    f: impl FnMut() -> Result<()>,
) -> Result<(f64, f64)> {
    let restore = (dev.msm_bucket_pairs(), dev.msm_window_tree());
    dev.set_msm_bucket_pairs(form.0);
    dev.set_msm_window_tree(form.1);
    let t = time_it(dev, reps, f);
    dev.set_msm_bucket_pairs(restore.0);
    dev.set_msm_window_tree(restore.1);
    t
}

/// How a G1 kernel build is named in the rows.
#[cfg(feature = "cuda")]
fn g1_build(inline: bool) -> &'static str {
    if inline {
        "inline-fq"
    } else {
        "outline-fq"
    }
}

#[cfg(feature = "cuda")]
#[allow(clippy::too_many_arguments)]
fn row(
    card: &Card,
    name: &str,
    lg: u32,
    work: String,
    imad: f64,
    bytes: f64,
    t: (f64, f64),
) -> BenchRow {
    let compute_floor_ms = imad / card.imad_per_s * 1e3;
    let memory_floor_ms = bytes / (card.copy_gb_s * 1e9) * 1e3;
    let floor_ms = compute_floor_ms.max(memory_floor_ms);
    BenchRow {
        name: name.to_string(),
        log_size: lg,
        work,
        compute_floor_ms,
        memory_floor_ms,
        floor_ms,
        median_ms: t.0,
        min_ms: t.1,
        gap: t.0 / floor_ms,
    }
}

#[cfg(feature = "cuda")]
/// Runs the benchmark rows; prints progress to stderr.
pub fn run(dev: &CudaDevice, opts: &BenchOptions) -> Result<BenchReport> {
    let card = card(dev)?;
    eprintln!(
        "card: {} ({} SMs, {:.0} MHz, {:.2e} IMAD/s, copy {:.0} GB/s; NTT pass blocks of 2^{}); kernels built with {}",
        card.name,
        card.sms,
        card.clock_mhz,
        card.imad_per_s,
        card.copy_gb_s,
        dev.ntt_block_log(),
        if card.kernel_defines.is_empty() {
            "the defaults"
        } else {
            &card.kernel_defines
        }
    );
    eprintln!(
        "Fq mul/s: ptx {:.3e}, cios {:.3e}, as called {:.3e} (IMAD floor {:.3e}); Fq sqr/s as called {:.3e}; Fr mul/s: ptx {:.3e}, cios {:.3e} (floor {:.3e})",
        card.fq_mul_per_s[0], card.fq_mul_per_s[1], card.fq_mul_per_s[2], card.imad_per_s / FQ_MUL_IMAD,
        card.fq_sqr_per_s,
        card.fr_mul_per_s[0], card.fr_mul_per_s[1], card.imad_per_s / FR_MUL_IMAD
    );
    eprintln!(
        "on the FP64 pipe /s: Fq product {:.3e}, square {:.3e}, PTX and FP64 chains side by side {:.3e}; Fr {:.3e}, {:.3e}, {:.3e}",
        card.fq_f64_per_s[0], card.fq_f64_per_s[1], card.fq_f64_per_s[2],
        card.fr_f64_per_s[0], card.fr_f64_per_s[1], card.fr_f64_per_s[2]
    );
    let want = |name: &str| {
        opts.filter
            .as_ref()
            .is_none_or(|f| name.contains(f.as_str()))
    };
    let sz = |lg: u32| lg.saturating_sub(opts.shrink);
    let mut rows = Vec::new();
    let mut push = |r: BenchRow| {
        eprintln!(
            "{:<28} 2^{:<2} {:>10.2} ms (floor {:.2} ms, gap {:.2}x)",
            r.name, r.log_size, r.median_ms, r.floor_ms, r.gap
        );
        rows.push(r);
    };

    // ---- G1 MSM: resident and streamed.
    let lg_max = sz(26);
    let need_g1 = ["msm_g1", "msm_g1 sort", "sum_selected_g1"]
        .iter()
        .any(|n| want(n));
    // Rows of other window widths (CUZK_MSM_BENCH_WINDOWS), with the
    // default kernels, named "msm_g1 vram c=<c>" / "msm_g2 vram c=<c>".
    if need_g1 {
        // CUZK_MSM_BENCH_LOGS (say "26") keeps only those of the G1 sizes,
        // and the points are made for the largest size a row uses (2^26 take
        // about a minute and a half on the host).
        let keep: Option<Vec<u32>> = std::env::var("CUZK_MSM_BENCH_LOGS")
            .ok()
            .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect());
        let mut g1_logs: Vec<u32> = [sz(20), sz(24), sz(26)]
            .into_iter()
            .filter(|lg| keep.as_ref().is_none_or(|k| k.contains(lg)))
            .collect();
        // Other sizes below 2^26 (2^22, where the first bucket sums' chunk
        // is 256 at c = 16) only when listed.
        if let Some(k) = keep.as_ref() {
            for &lg in k {
                if (1..sz(26)).contains(&lg) && !g1_logs.contains(&lg) {
                    g1_logs.push(lg);
                }
            }
            g1_logs.sort_unstable();
        }
        // 2^27, the H MSM of a 2^27 partition in one part, only when
        // listed (~17 GB of VRAM): its points are the 2^26 ones twice. A
        // point meets its twin in a bucket about 2^-20 a window, so the
        // accumulation does a random MSM's work, but over 6.4 GB of points
        // rather than a real one's 12.9: the row's 713.6 ms on an H100
        // against 2 x 368.6 for two halves did not carry over to the
        // partition's H MSM (call 95: 724.5 in one part, 724.9 in two).
        if keep.as_ref().is_some_and(|k| k.contains(&sz(27))) && !g1_logs.contains(&sz(27)) {
            g1_logs.push(sz(27));
        }
        let lg_points = if want("sum_selected_g1") {
            lg_max.max(g1_logs.iter().copied().max().unwrap_or(0))
        } else {
            g1_logs.iter().copied().max().unwrap_or(0)
        };
        let n_max = 1usize << lg_points;
        let n_made = n_max.min(1 << lg_max);
        eprintln!(
            "generating 2^{} G1 points and 2^{lg_points} scalars ...",
            n_made.trailing_zeros()
        );
        let mut points = bench_g1_points(n_made, opts.seed);
        while points.len() < n_max {
            points.extend_from_within(..(n_max - points.len()).min(n_made));
        }
        let scalars = random_scalars(n_max, opts.seed ^ 1);
        // The streamed rows' pinned copy: the points made (to 2^26).
        let bytes = host::g1_as_bytes(&points[..n_made]);
        let mut pinned = dev.alloc_pinned(bytes.len())?;
        pinned
            .as_mut_slice()
            .map_err(setup_err(&card.name, "pinned slice", "bench", bytes.len()))?
            .copy_from_slice(bytes);
        for lg in g1_logs {
            let n = 1usize << lg;
            let (work, imad) = msm_work(n, false);
            let mem = n as f64 * (96.0 + 32.0);
            if want("msm_g1 vram") {
                let dp = dev.upload_g1(&points[..n])?;
                let ds = dev.upload_scalars(&scalars[..n])?;
                // The default kernels first, then the other G1 build.
                let default = dev.g1_inline();
                for inline in [default, !default] {
                    dev.set_g1_inline(inline);
                    let t = time_it(dev, opts.reps, || {
                        dev.msm_g1_device(&dp, &ds, None).map(|_| ())
                    })?;
                    let name = if inline == default {
                        "msm_g1 vram".to_string()
                    } else {
                        format!("msm_g1 vram {}", g1_build(inline))
                    };
                    push(row(&card, &name, lg, work.clone(), imad, mem, t));
                }
                dev.set_g1_inline(default);
                // The default kernels with the other chunk order.
                let order = dev.msm_chunk_order();
                dev.set_msm_chunk_order(!order);
                let t = time_it(dev, opts.reps, || {
                    dev.msm_g1_device(&dp, &ds, None).map(|_| ())
                })?;
                dev.set_msm_chunk_order(order);
                let name = format!("msm_g1 vram {}", chunk_order_name(!order));
                push(row(&card, &name, lg, work.clone(), imad, mem, t));
                // The default kernels with the other sort, then the other
                // merge.
                for (form, t) in other_sort_and_merge(dev, opts.reps, || {
                    dev.msm_g1_device(&dp, &ds, None).map(|_| ())
                })? {
                    let name = format!("msm_g1 vram {form}");
                    push(row(&card, &name, lg, work.clone(), imad, mem, t));
                }
                // The default kernels with the other forms of the last steps.
                for (pairs, tree, form) in reduction_forms(dev) {
                    let t = time_reduction_form(dev, opts.reps, (pairs, tree), || {
                        dev.msm_g1_device(&dp, &ds, None).map(|_| ())
                    })?;
                    let name = format!("msm_g1 vram {form}");
                    push(row(&card, &name, lg, work.clone(), imad, mem, t));
                }
            }
            if want("msm_g1 vram") {
                let windows = bench_windows(n);
                if !windows.is_empty() {
                    let dp = dev.upload_g1(&points[..n])?;
                    let ds = dev.upload_scalars(&scalars[..n])?;
                    for c in windows {
                        let t = time_window(dev, opts.reps, c, || {
                            dev.msm_g1_device(&dp, &ds, None).map(|_| ())
                        })?;
                        let name = format!("msm_g1 vram c={c}");
                        push(row(&card, &name, lg, work.clone(), imad, mem, t));
                    }
                }
            }
            if want("msm_g1 sort") {
                let tunings = bench_sort_tunings();
                if !tunings.is_empty() {
                    let dp = dev.upload_g1(&points[..n])?;
                    let ds = dev.upload_scalars(&scalars[..n])?;
                    let default = dev.msm_sort_tuning();
                    let want_sum = dev.msm_g1_device(&dp, &ds, None)?;
                    let t = time_it(dev, opts.reps, || {
                        dev.msm_g1_device(&dp, &ds, None).map(|_| ())
                    })?;
                    let name = format!("msm_g1 sort {} (default)", default.name());
                    push(row(&card, &name, lg, work.clone(), imad, mem, t));
                    for tuning in tunings.into_iter().filter(|t| *t != default) {
                        if let Err(e) = dev.set_msm_sort_tuning(Some(tuning)) {
                            eprintln!("msm_g1 sort {}: not run: {e}", tuning.name());
                            continue;
                        }
                        let got = dev.msm_g1_device(&dp, &ds, None);
                        let t = time_it(dev, opts.reps, || {
                            dev.msm_g1_device(&dp, &ds, None).map(|_| ())
                        });
                        dev.set_msm_sort_tuning(Some(default))?;
                        // Every geometry sorts the same entries: a sum that
                        // differs is a fault of the tuned kernels, named in
                        // the row so that no one adopts it.
                        let name = match got {
                            Ok(sum) if sum == want_sum => format!("msm_g1 sort {}", tuning.name()),
                            Ok(_) => format!("msm_g1 sort {} WRONG SUM", tuning.name()),
                            Err(e) => {
                                eprintln!("msm_g1 sort {}: {e}", tuning.name());
                                continue;
                            }
                        };
                        push(row(&card, &name, lg, work.clone(), imad, mem, t?));
                    }
                }
            }
            if want("msm_g1 pinned") && n <= n_made {
                let ds = dev.upload_scalars(&scalars[..n])?;
                let t = time_it(dev, opts.reps, || {
                    dev.msm_g1_pinned(&pinned, n, &ds).map(|_| ())
                })?;
                push(row(
                    &card,
                    "msm_g1 pinned",
                    lg,
                    work + " + H2D of the points (overlapping the sort)",
                    imad,
                    mem,
                    t,
                ));
            }
        }
        drop(pinned);
        if want("sum_selected_g1") {
            let lg = lg_max;
            let n = 1usize << lg;
            // Half the scalars one: every other bit from a seeded stream.
            let mut state = opts.seed | 1;
            let mask: Vec<u32> = (0..n / 32)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u32
                })
                .collect();
            let ones: u64 = mask.iter().map(|w| w.count_ones() as u64).sum();
            let dp = dev.upload_g1(&points[..n])?;
            let default = dev.zero_one_inline();
            dev.set_zero_one_inline(!default);
            let t = time_it(dev, opts.reps, || {
                dev.sum_selected_g1(&dp, &mask).map(|_| ())
            })?;
            dev.set_zero_one_inline(default);
            let muls = ones as f64 * MADD_MULS;
            push(row(
                &card,
                &format!("sum_selected_g1 (0/1) {}", g1_build(!default)),
                lg,
                format!("{ones} selected: {ones} mixed adds = {muls:.3e} Fq mul"),
                muls * FQ_MUL_IMAD,
                n as f64 * 96.0,
                t,
            ));
            let t = time_it(dev, opts.reps, || {
                dev.sum_selected_g1(&dp, &mask).map(|_| ())
            })?;
            let muls = ones as f64 * MADD_MULS;
            push(row(
                &card,
                "sum_selected_g1 (0/1)",
                lg,
                format!("{ones} selected: {ones} mixed adds = {muls:.3e} Fq mul"),
                muls * FQ_MUL_IMAD,
                n as f64 * 96.0,
                t,
            ));
            // With the points' pair sums resident beside them: one addition
            // a pair with a bit set.
            let clock = Instant::now();
            let pairs = dev.pair_sums_device(&dp)?;
            dev.synchronize()?;
            eprintln!(
                "pair sums of 2^{lg} points made on the device in {:.1} ms",
                clock.elapsed().as_secs_f64() * 1e3
            );
            let t = time_it(dev, opts.reps, || {
                dev.sum_selected_g1_paired(&dp, &pairs, &mask).map(|_| ())
            })?;
            let adds: u64 = mask
                .iter()
                .map(|&w| ((w | w >> 1) & 0x5555_5555).count_ones() as u64)
                .sum();
            let muls = adds as f64 * MADD_MULS;
            push(row(
                &card,
                "sum_selected_g1 (0/1) paired",
                lg,
                format!("{ones} selected: {adds} mixed adds = {muls:.3e} Fq mul"),
                muls * FQ_MUL_IMAD,
                n as f64 * 96.0 * 1.5,
                t,
            ));
        }
    }

    // ---- G2 MSM, resident.
    if want("msm_g2") {
        let lg = sz(24);
        let n = 1usize << lg;
        eprintln!("generating 2^{lg} G2 points ...");
        let points = random_g2(n, opts.seed ^ 2);
        let scalars = random_scalars(n, opts.seed ^ 3);
        let (work, imad) = msm_work(n, true);
        let dp = dev.upload_g2(&points)?;
        let ds = dev.upload_scalars(&scalars)?;
        // A row of this size: its name and times (points and scalars read
        // once: the memory floor).
        let mut g2_row = |name: &str, t: (f64, f64)| {
            push(row(
                &card,
                name,
                lg,
                work.clone(),
                imad,
                n as f64 * (192.0 + 32.0),
                t,
            ))
        };
        // The default build of the accumulation first, then the others.
        let default = dev.g2_accumulate_blocks();
        let mut builds = vec![default];
        builds.extend(
            crate::device::G2_ACCUMULATE_BLOCKS
                .iter()
                .filter(|&&b| b != default),
        );
        for blocks in builds {
            dev.set_g2_accumulate_blocks(blocks);
            let t = time_it(dev, opts.reps, || {
                dev.msm_g2_device(&dp, &ds, None).map(|_| ())
            })?;
            let name = if blocks == default {
                "msm_g2 vram".to_string()
            } else {
                format!("msm_g2 vram o{blocks}")
            };
            g2_row(&name, t);
        }
        dev.set_g2_accumulate_blocks(default);
        for c in bench_windows(n) {
            let t = time_window(dev, opts.reps, c, || {
                dev.msm_g2_device(&dp, &ds, None).map(|_| ())
            })?;
            g2_row(&format!("msm_g2 vram c={c}"), t);
        }
        let order = dev.msm_chunk_order();
        dev.set_msm_chunk_order(!order);
        let t = time_it(dev, opts.reps, || {
            dev.msm_g2_device(&dp, &ds, None).map(|_| ())
        })?;
        dev.set_msm_chunk_order(order);
        g2_row(&format!("msm_g2 vram {}", chunk_order_name(!order)), t);
        for (form, t) in other_sort_and_merge(dev, opts.reps, || {
            dev.msm_g2_device(&dp, &ds, None).map(|_| ())
        })? {
            g2_row(&format!("msm_g2 vram {form}"), t);
        }
        for (pairs, tree, form) in reduction_forms(dev) {
            let t = time_reduction_form(dev, opts.reps, (pairs, tree), || {
                dev.msm_g2_device(&dp, &ds, None).map(|_| ())
            })?;
            g2_row(&format!("msm_g2 vram {form}"), t);
        }
    }

    // ---- NTT, resident: 2^20, 2^24, 2^26, 2^27; every pass kernel, or the
    // comma list of names in CUZK_NTT_BENCH_PASSES (say "r2x3,r3x2"), the
    // device's current pass (CUZK_NTT_PASS at open) first.
    let ntt_passes: Vec<crate::NttPass> = {
        let default = dev.ntt_pass();
        let listed: Option<Vec<crate::NttPass>> =
            std::env::var("CUZK_NTT_BENCH_PASSES").ok().map(|v| {
                v.split(',')
                    .filter_map(|s| crate::NttPass::from_name(s.trim()))
                    .collect()
            });
        let mut passes = vec![default];
        passes.extend(
            listed
                .unwrap_or_else(|| crate::NttPass::ALL.to_vec())
                .into_iter()
                .filter(|p| *p != default),
        );
        passes
    };
    // CUZK_NTT_BENCH_LOGS (say "24") replaces the sizes, for a profiler
    // that should see one size only.
    let ntt_logs: Vec<u32> = std::env::var("CUZK_NTT_BENCH_LOGS")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|s| s.trim().parse().ok())
                .filter(|&lg| lg <= crate::device::MAX_NTT_LOG)
                .collect()
        })
        .unwrap_or_else(|| vec![sz(20), sz(24), sz(26), sz(27)]);
    for lg in ntt_logs {
        if !want("ntt") {
            break;
        }
        let n = 1usize << lg;
        let x = random_scalars(n, opts.seed ^ 4);
        let mut buf = dev
            .stream()
            .clone_htod(host::scalars_as_bytes(&x))
            .map_err(setup_err(&card.name, "copy to device", "bench ntt", n))?;
        // The out-of-place rows' second buffer.
        let mut out = dev
            .stream()
            .alloc_zeros::<u8>(n * host::FR_BYTES)
            .map_err(setup_err(&card.name, "allocate", "bench ntt", n))?;
        // Forward, inverse, and the H step's evaluations-to-coset (two
        // transforms' worth of butterflies), with each pass kernel; forward
        // and inverse also out of place (the bit reversal in a pass).
        let default = dev.ntt_pass();
        let muls = (n as f64 / 2.0) * lg as f64;
        for &pass in &ntt_passes {
            dev.set_ntt_pass(pass);
            // (name, transforms per run, the run)
            type Run<'a, B> = (&'a str, f64, &'a dyn Fn(&mut B) -> Result<()>);
            let runs: [Run<'_, _>; 3] = [
                ("forward", 1.0, &|b| dev.ntt_device(b, lg, NttKind::Forward)),
                ("inverse", 1.0, &|b| dev.ntt_device(b, lg, NttKind::Inverse)),
                ("evals->coset", 2.0, &|b| dev.evals_to_coset_device(b, lg)),
            ];
            for (what, times, f) in runs {
                let t = time_it(dev, opts.reps, || f(&mut buf))?;
                push(row(
                    &card,
                    &format!("ntt {what} vram {}", pass.name()),
                    lg,
                    format!("{:.3e} butterflies (1 Fr mul each)", muls * times),
                    muls * times * FR_MUL_IMAD,
                    times * 2.0 * n as f64 * 32.0,
                    t,
                ));
            }
            for (what, kind) in [("forward", NttKind::Forward), ("inverse", NttKind::Inverse)] {
                let t = time_it(dev, opts.reps, || {
                    dev.ntt_device_into(&mut buf, &mut out, lg, kind)
                })?;
                push(row(
                    &card,
                    &format!("ntt {what} out of place vram {}", pass.name()),
                    lg,
                    format!("{muls:.3e} butterflies (1 Fr mul each)"),
                    muls * FR_MUL_IMAD,
                    2.0 * n as f64 * 32.0,
                    t,
                ));
            }
        }
        dev.set_ntt_pass(default);
        drop(out);
        dev.release_ntt_tables();
    }

    // ---- Subgroup checks of parameter points.
    if want("subgroup") {
        subgroup_rows(dev, &card, opts, &want, &mut push)?;
    }

    // ---- The compiled constraint system: a/b/c, densities, the 0/1 split.
    if want("spmv") {
        spmv_rows(dev, &card, opts, &want, &mut push)?;
    }

    // ---- Large device allocations (printed only): z's upload and the
    // MSM's keys pay ~1 ms per GB for theirs inside a partition though the
    // pool does not grow (2026-12-04 calls 38-42); which patterns cost it.
    if want("alloc") {
        alloc_lines(dev, sz(27))?;
    }
    if let (true, Some(f)) = (rows.is_empty(), opts.filter.as_ref()) {
        // The filter picks groups by a part of their names ("msm_g1",
        // "ntt", "sum_selected"...), not by a row's whole name.
        eprintln!("no benchmark row matched --filter {f:?} (it matches a part of a group's name, such as msm_g1, msm_g2, ntt, sum_selected)");
    }
    Ok(BenchReport { card, rows })
}

#[cfg(feature = "cuda")]
/// Times `alloc_scalars` of 2^lg scalars (allocation on the device's
/// stream and the wait for it) in three patterns, five times each, with the
/// pool's reserved / used bytes after each pattern.
fn alloc_lines(dev: &CudaDevice, lg: u32) -> Result<()> {
    let n = 1usize << lg;
    let gb = |b: u64| b as f64 / 1e9;
    let pool = |dev: &CudaDevice| {
        dev.pool_usage().map_or("?".to_string(), |(r, u)| {
            format!("{:.2} / {:.2} GB", gb(r), gb(u))
        })
    };
    let timed = |dev: &CudaDevice, len: usize| -> Result<(crate::DeviceScalars, f64)> {
        dev.synchronize()?;
        let clock = Instant::now();
        let s = dev.alloc_scalars(len)?;
        Ok((s, clock.elapsed().as_secs_f64() * 1e3))
    };
    // 1. The same size again and again, freed between.
    let mut same = Vec::new();
    for _ in 0..5 {
        let (z, ms) = timed(dev, n)?;
        same.push(ms);
        drop(z);
    }
    eprintln!(
        "alloc 2^{lg} scalars ({:.2} GB), freed between: {same:.2?} ms; pool {}",
        gb(n as u64 * 32),
        pool(dev)
    );
    // 2. Freed while a later, smaller allocation stays (the MSM's keys,
    // then its chunk arrays), then the same size again.
    let mut after = Vec::new();
    for _ in 0..5 {
        let (z, _) = timed(dev, n)?;
        let (other, _) = timed(dev, n / 4)?;
        drop(z);
        let (z, ms) = timed(dev, n)?;
        after.push(ms);
        drop((z, other));
    }
    eprintln!(
        "alloc 2^{lg} scalars again while a quarter-size one allocated after the first stays: {after:.2?} ms; pool {}",
        pool(dev)
    );
    // 3. Half the size, twice, then the whole size (pieces to coalesce).
    let mut halves = Vec::new();
    for _ in 0..5 {
        let (a, _) = timed(dev, n / 2)?;
        let (b, _) = timed(dev, n / 2)?;
        drop((a, b));
        let (z, ms) = timed(dev, n)?;
        halves.push(ms);
        drop(z);
    }
    eprintln!(
        "alloc 2^{lg} scalars after two halves were freed: {halves:.2?} ms; pool {}",
        pool(dev)
    );
    Ok(())
}

#[cfg(feature = "cuda")]
/// The subgroup checks: G1 at 2^24 and G2 at 2^22 points resident (the
/// kernels alone), and G1 at 2^24 streamed from host memory through two
/// pinned 2^22-point staging buffers into a 2^22-point device chunk (the
/// parameter loader's path). Compute floor: the Fq products of each test
/// (crate::subgroup); memory floor: the points read once. Prints points
/// per second beside each row.
fn subgroup_rows(
    dev: &CudaDevice,
    card: &Card,
    opts: &BenchOptions,
    want: &dyn Fn(&str) -> bool,
    push: &mut dyn FnMut(BenchRow),
) -> Result<()> {
    use crate::subgroup::{G1_FQ_PRODUCTS, G2_FQ_PRODUCTS};
    let sz = |lg: u32| lg.saturating_sub(opts.shrink);
    let drv = |op| setup_err(&card.name, op, "bench subgroup", 0);
    let mut report = |r: BenchRow, n: usize| {
        eprintln!(
            "{:<28} {:.3e} points/s ({:.1} ns a point)",
            r.name,
            n as f64 / (r.median_ms * 1e-3),
            r.median_ms * 1e6 / n as f64
        );
        push(r);
    };
    // The check over resident points: (group, log size, Fq products a
    // point, bytes a point).
    let vram = |g: &str, lg: u32, products: u32, bytes: f64, dp: &DevicePoints| {
        let n = dp.len();
        let muls = n as f64 * products as f64;
        let work = format!("{n} points x {products} Fq mul = {muls:.3e} Fq mul");
        let t = time_it(dev, opts.reps, || {
            let r = dev.subgroup_check_device(dp)?;
            assert_eq!(r.outside, 0, "random {g} points are in the subgroup");
            Ok(())
        })?;
        let name = format!("subgroup_{} vram", g.to_lowercase());
        let r = row(
            card,
            &name,
            lg,
            work.clone(),
            muls * FQ_MUL_IMAD,
            n as f64 * bytes,
            t,
        );
        Ok::<_, CudaError>((r, work, muls))
    };
    if want("subgroup_g1") {
        let lg = sz(24);
        let n = 1usize << lg;
        eprintln!("generating 2^{lg} G1 points ...");
        let points = random_g1(n, opts.seed ^ 5);
        let dp = dev.upload_g1(&points)?;
        let (r, work, muls) = vram("G1", lg, G1_FQ_PRODUCTS, 96.0, &dp)?;
        report(r, n);
        drop(dp);
        let chunk_n = n.min(1 << sz(22));
        let chunk = dev.alloc_points(false, chunk_n)?;
        let mut s0 = dev.alloc_pinned(chunk_n * 96)?;
        let mut s1 = dev.alloc_pinned(chunk_n * 96)?;
        let raw = host::g1_as_bytes(&points);
        let t = time_it(dev, opts.reps, || {
            let a = s0.as_mut_slice().map_err(drv("pinned slice"))?;
            let b = s1.as_mut_slice().map_err(drv("pinned slice"))?;
            let r = dev.subgroup_check_staged(&chunk, raw, [a, b])?;
            assert_eq!(r.outside, 0, "random G1 points are in the subgroup");
            Ok(())
        })?;
        let r = row(
            card,
            "subgroup_g1 from host",
            lg,
            work,
            muls * FQ_MUL_IMAD,
            n as f64 * 96.0,
            t,
        );
        report(r, n);
    }
    if want("subgroup_g2") {
        let lg = sz(22);
        let n = 1usize << lg;
        eprintln!("generating 2^{lg} G2 points ...");
        let dp = dev.upload_g2(&random_g2(n, opts.seed ^ 6))?;
        report(vram("G2", lg, G2_FQ_PRODUCTS, 192.0, &dp)?.0, n);
    }
    Ok(())
}

#[cfg(feature = "cuda")]
/// One matrix product M·z at 2^20, 2^24 and 2^27 rows (~3.8 entries per
/// row, 90% of them ±1, z as long as the rows, columns uniform over z: the
/// gather's worst case), columns near the row at 2^27, and the density
/// selection and the 0/1 split over 2^27 scalars. Memory floor: row_start,
/// cols and coef read once, one 32-byte z sector per entry (no reuse: the
/// floor for uniform columns, an overestimate for local ones), the short
/// rows' products written and read back, the output written once; compute
/// floor: the table products.
fn spmv_rows(
    dev: &CudaDevice,
    card: &Card,
    opts: &BenchOptions,
    want: &dyn Fn(&str) -> bool,
    push: &mut dyn FnMut(BenchRow),
) -> Result<()> {
    use crate::checks::{random_csr, CsrShape, BENCH_SHAPE};
    let sz = |lg: u32| lg.saturating_sub(opts.shrink);
    let lg_max = sz(27);
    let n_max = 1usize << lg_max;
    eprintln!("generating 2^{lg_max} scalars for z ...");
    let z = random_scalars(n_max, opts.seed ^ 5);
    let table: Vec<blstrs::Scalar> = random_scalars(16, opts.seed ^ 6);
    let dt = dev.upload_scalars(&table)?;
    let mut cases: Vec<(&str, u32, CsrShape)> = vec![
        ("spmv random cols", sz(20), BENCH_SHAPE),
        ("spmv random cols", sz(24), BENCH_SHAPE),
        ("spmv random cols", lg_max, BENCH_SHAPE),
        (
            "spmv local cols",
            lg_max,
            CsrShape {
                local: true,
                ..BENCH_SHAPE
            },
        ),
    ];
    cases.retain(|c| want(c.0));
    for (name, lg, shape) in cases {
        let rows = 1usize << lg;
        eprintln!("generating a 2^{lg}-row matrix ({name}) ...");
        let m = random_csr(rows, rows, table.len(), shape, opts.seed ^ lg as u64);
        let nnz = m.cols.len();
        let products = m.coef.iter().filter(|&&c| c >= 2).count();
        let dm = dev.upload_csr(&m.row_start, &m.cols, &m.coef)?;
        drop(m);
        let dz = dev.upload_scalars(&z[..rows])?;
        let mut out = dev
            .stream()
            .alloc_zeros::<u8>(rows * host::FR_BYTES)
            .map_err(setup_err(&card.name, "alloc", "bench spmv", rows))?;
        let t = time_it(dev, opts.reps, || {
            dev.spmv_device(&dm, &dt, &dz, &mut out, 0)
        })?;
        // row_start and prow_start, the output; a ±1 entry's col, coef
        // and z sector; a product entry's coef, its (col, coef) copy, z
        // sector, and the product written and read back.
        let p = dm.products() as f64;
        let bytes =
            12.0 * (rows + 1) as f64 + 32.0 * rows as f64 + 40.0 * (nnz as f64 - p) + 108.0 * p;
        push(row(
            card,
            name,
            lg,
            format!(
                "{nnz} entries ({:.2}/row), {products} table products ({} in short rows), {} long rows",
                nnz as f64 / rows as f64,
                dm.products(),
                dm.long_rows()
            ),
            products as f64 * FR_MUL_IMAD,
            bytes,
            t,
        ));
    }
    if want("spmv select") || want("spmv split") {
        let lg = lg_max;
        let n = n_max;
        let dz = dev.upload_scalars(&z)?;
        if want("spmv select") {
            // The A query: every input (a few), 70% of the aux.
            let mut state = opts.seed | 1;
            let bits: Vec<bool> = (0..n - 8)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state % 10 < 7
                })
                .collect();
            let selected = bits.iter().filter(|b| **b).count() + 8;
            let dd = dev.upload_density(&bits)?;
            let t = time_it(dev, opts.reps, || {
                dev.select_device(&dz, 8, None, Some(&dd)).map(|_| ())
            })?;
            push(row(
                card,
                "spmv select (A query)",
                lg,
                format!("{selected} of {n} scalars kept"),
                0.0,
                // Flags read twice, the kept scalars read and written.
                2.0 * n as f64 + 64.0 * selected as f64,
                t,
            ));
        }
        if want("spmv split") {
            // A third each 0, 1 and other.
            let mut s = z.clone();
            for (i, v) in s.iter_mut().enumerate() {
                match i.wrapping_mul(0x9e37_79b9) % 3 {
                    0 => *v = blstrs::Scalar::from(0u64),
                    1 => *v = blstrs::Scalar::from(1u64),
                    _ => {}
                }
            }
            let rest = n - s
                .iter()
                .filter(|v| bool::from(ff::Field::is_zero(*v)) || **v == blstrs::Scalar::from(1u64))
                .count();
            let ds = dev.upload_scalars(&s)?;
            drop(s);
            let t = time_it(dev, opts.reps, || {
                dev.split_zero_one_device(&ds).map(|_| ())
            })?;
            push(row(
                card,
                "spmv split 0/1",
                lg,
                format!("{rest} of {n} neither 0 nor 1"),
                0.0,
                // Scalars read by both passes, the mask and the rest written.
                2.0 * 32.0 * n as f64 + n as f64 / 8.0 + 36.0 * rest as f64,
                t,
            ));
        }
    }
    Ok(())
}

/// The report as a fixed-width table.
pub fn table(r: &BenchReport) -> String {
    let mut s = format!(
        "card: {} | {} SMs @ {:.0} MHz | IMAD {:.2e}/s | copy {:.0} GB/s | kernels built with {}\n\
         measured mul/s: Fq ptx {:.3e}, Fq cios {:.3e}, Fq as called {:.3e} (floor {:.3e}), Fq sqr {:.3e} | Fr ptx {:.3e}, Fr cios {:.3e} (floor {:.3e})\n\
         on the FP64 pipe /s: Fq product {:.3e}, square {:.3e}, PTX + FP64 side by side {:.3e} | Fr {:.3e}, {:.3e}, {:.3e}\n",
        r.card.name, r.card.sms, r.card.clock_mhz, r.card.imad_per_s, r.card.copy_gb_s,
        if r.card.kernel_defines.is_empty() { "the defaults" } else { &r.card.kernel_defines },
        r.card.fq_mul_per_s[0], r.card.fq_mul_per_s[1], r.card.fq_mul_per_s[2], r.card.imad_per_s / FQ_MUL_IMAD,
        r.card.fq_sqr_per_s,
        r.card.fr_mul_per_s[0], r.card.fr_mul_per_s[1], r.card.imad_per_s / FR_MUL_IMAD,
        r.card.fq_f64_per_s[0], r.card.fq_f64_per_s[1], r.card.fq_f64_per_s[2],
        r.card.fr_f64_per_s[0], r.card.fr_f64_per_s[1], r.card.fr_f64_per_s[2]
    );
    s += &format!(
        "{:<24} {:>5} {:>11} {:>11} {:>11} {:>11} {:>7}  {}\n",
        "kernel", "size", "median ms", "min ms", "floor ms", "(mem ms)", "gap", "work"
    );
    for row in &r.rows {
        s += &format!(
            "{:<24} {:>5} {:>11.2} {:>11.2} {:>11.2} {:>11.2} {:>6.2}x  {}\n",
            row.name,
            format!("2^{}", row.log_size),
            row.median_ms,
            row.min_ms,
            row.floor_ms,
            row.memory_floor_ms,
            row.gap,
            row.work
        );
    }
    s
}
