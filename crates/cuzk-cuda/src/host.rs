//! Host-side pieces of the backend that need no GPU: the byte views through
//! which blstrs values travel to the device, the conversion of the kernels'
//! XYZZ results back to blstrs points, the MSM window choice and signed-digit
//! decomposition (the same arithmetic the kernels do, here to be unit-tested),
//! the split of a scalar vector into its 0/1 part and the rest, and a plain
//! CPU NTT used as the reference in the GPU checks.

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::Group;

/// Bytes of one device Fr element (8 x u32 Montgomery limbs).
pub const FR_BYTES: usize = 32;
/// Bytes of a G1 affine point as blst stores it (x, y Montgomery limbs).
pub const G1_AFFINE_BYTES: usize = 96;
pub const G2_AFFINE_BYTES: usize = 192;
/// Bytes of an XYZZ accumulator (four coordinates).
pub const G1_XYZZ_BYTES: usize = 4 * 48;
pub const G2_XYZZ_BYTES: usize = 4 * 96;

const _: () = assert!(std::mem::size_of::<Scalar>() == FR_BYTES);
const _: () = assert!(std::mem::size_of::<G1Affine>() == G1_AFFINE_BYTES);
const _: () = assert!(std::mem::size_of::<G2Affine>() == G2_AFFINE_BYTES);

/// The raw Montgomery limbs of scalars, as the kernels read them.
pub fn scalars_as_bytes(s: &[Scalar]) -> &[u8] {
    // SAFETY: Scalar is #[repr(transparent)] over blst_fr, a #[repr(C)]
    // struct of [u64; 4] (size checked above), with no padding; every byte
    // is initialised and u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// The bytes of a u64 slice (row starts of a matrix), for copies.
pub fn u64s_as_bytes(v: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding and every bit pattern initialised; u8 has
    // alignment 1 and the length is the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The bytes of a u32 slice (column or coefficient indices), for copies.
pub fn u32s_as_bytes(v: &[u32]) -> &[u8] {
    // SAFETY: as in `u64s_as_bytes`.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// The bytes of a bool slice (query densities, one byte a variable).
pub fn bools_as_bytes(v: &[bool]) -> &[u8] {
    // SAFETY: bool is one byte holding 0 or 1, every such byte a valid u8;
    // u8 has alignment 1 and the length is the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Mutable view of scalars' raw Montgomery limbs (for NTT results).
pub fn scalars_as_bytes_mut(s: &mut [Scalar]) -> &mut [u8] {
    // SAFETY: as in `scalars_as_bytes`; in addition every bit pattern the
    // kernels write is a reduced Montgomery residue (< r), a valid Scalar.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Affine G1 points as blst lays them out (infinity = all zeros).
pub fn g1_as_bytes(p: &[G1Affine]) -> &[u8] {
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine, a
    // #[repr(C)] pair of [u64; 6] (size checked above), without padding.
    unsafe { std::slice::from_raw_parts(p.as_ptr().cast::<u8>(), std::mem::size_of_val(p)) }
}

pub fn g2_as_bytes(p: &[G2Affine]) -> &[u8] {
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine, a
    // #[repr(C)] pair of blst_fp2 ([u64; 12]) (size checked above).
    unsafe { std::slice::from_raw_parts(p.as_ptr().cast::<u8>(), std::mem::size_of_val(p)) }
}

/// Mutable views of affine points' bytes, for results the kernels write.
pub fn g1_as_bytes_mut(p: &mut [G1Affine]) -> &mut [u8] {
    // SAFETY: as in `g1_as_bytes`; the kernels write only reduced
    // Montgomery coordinates of curve points or all zeros (blst's
    // infinity), which are valid G1Affine values.
    unsafe { std::slice::from_raw_parts_mut(p.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(p)) }
}

pub fn g2_as_bytes_mut(p: &mut [G2Affine]) -> &mut [u8] {
    // SAFETY: as in `g2_as_bytes` and `g1_as_bytes_mut`.
    unsafe { std::slice::from_raw_parts_mut(p.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(p)) }
}

/// Rows of a fixed-base table of window `c`: ceil(256 / c), each of
/// 2^(c-1) points (cuzk-core's generator uses the same layout).
pub fn fixed_base_windows(c: u32) -> u32 {
    256u32.div_ceil(c)
}

fn u64s<const N: usize>(bytes: &[u8]) -> [u64; N] {
    let mut out = [0u64; N];
    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *o = u64::from_le_bytes(c.try_into().expect("chunks_exact(8) yields 8 bytes"));
    }
    out
}

/// Fp from its raw Montgomery limbs' little-endian bytes.
pub fn fp_from_le(bytes: &[u8]) -> Fp {
    Fp::from_raw_unchecked(u64s::<6>(bytes))
}

pub fn fp2_from_le(bytes: &[u8]) -> Fp2 {
    Fp2::new(fp_from_le(&bytes[..48]), fp_from_le(&bytes[48..96]))
}

/// The raw Montgomery limbs of an Fp as little-endian bytes.
pub fn fp_raw_bytes(f: &Fp) -> [u8; 48] {
    // SAFETY: Fp is #[repr(transparent)] over blst_fp, a #[repr(C)] [u64; 6].
    let limbs: [u64; 6] = unsafe { std::mem::transmute(*f) };
    let mut out = [0u8; 48];
    for (o, l) in out.chunks_exact_mut(8).zip(limbs) {
        o.copy_from_slice(&l.to_le_bytes());
    }
    out
}

pub fn fp2_raw_bytes(f: &Fp2) -> [u8; 96] {
    let mut out = [0u8; 96];
    out[..48].copy_from_slice(&fp_raw_bytes(&f.c0()));
    out[48..].copy_from_slice(&fp_raw_bytes(&f.c1()));
    out
}

/// XYZZ (x = X/ZZ, y = Y/ZZZ) to blst's Jacobian form without an inversion:
/// Z' = ZZ*ZZZ, X' = X*ZZ*ZZZ^2, Y' = Y*ZZ^3*ZZZ^2 give X'/Z'^2 = X/ZZ and
/// Y'/Z'^3 = Y/ZZZ; ZZ = 0 (infinity) gives Z' = 0, blst's infinity.
macro_rules! xyzz_to_jacobian {
    ($x:expr, $y:expr, $zz:expr, $zzz:expr) => {{
        let (x, y, zz, zzz) = ($x, $y, $zz, $zzz);
        let zzz2 = zzz.square();
        let z = zz * zzz;
        let xj = x * zz * zzz2;
        let yj = y * zz.square() * zz * zzz2;
        (xj, yj, z)
    }};
}

/// One G1 XYZZ accumulator (192 bytes of Montgomery limbs) as a point.
pub fn g1_from_xyzz(bytes: &[u8]) -> G1Projective {
    let c: Vec<Fp> = bytes[..G1_XYZZ_BYTES]
        .chunks_exact(48)
        .map(fp_from_le)
        .collect();
    let (x, y, z) = xyzz_to_jacobian!(c[0], c[1], c[2], c[3]);
    if bool::from(z.is_zero()) {
        return G1Projective::identity();
    }
    G1Projective::from_raw_unchecked(x, y, z)
}

pub fn g2_from_xyzz(bytes: &[u8]) -> G2Projective {
    let c: Vec<Fp2> = bytes[..G2_XYZZ_BYTES]
        .chunks_exact(96)
        .map(fp2_from_le)
        .collect();
    let (x, y, z) = xyzz_to_jacobian!(c[0], c[1], c[2], c[3]);
    if bool::from(z.is_zero()) {
        return G2Projective::identity();
    }
    G2Projective::from_raw_unchecked(x, y, z)
}

/// Number of c-bit windows for 255-bit scalars with signed digits: the top
/// window must hold at most c-1 bits plus the carry, so c*W >= 256.
pub fn num_windows(c: u32) -> u32 {
    256u32.div_ceil(c)
}

/// The widest window [`choose_window`] picks. 22 bits measured again
/// after the shared sort and the split reduction (run 58, H100): G1 2^24
/// 117.17 ms against 93.56, 2^26 401.77 against 368.56, 2^27 794.75
/// against 713.63 (the sort's passes double, the reduction grows 3.6x).
pub const MAX_WINDOW: u32 = 20;

/// Window width for an MSM of n points, by measurement where there is one
/// (H200, bench/gpu-kernels.md runs 19 and 20: `CUZK_MSM_BENCH_WINDOWS`
/// rows of `bench_kernels --filter msm`, every width from the model's -3
/// to +3 and 14..20, G1 and G2 alike):
/// - from 2^23 points, c = 20 ([`MAX_WINDOW`]): G1 2^24 114.4 ms (c=16
///   123.2, c=19 127.0, c=21 156.9), G1 2^26 423.5 (c=19 471.0, c=21
///   476.6, c=22, the model's, 456.4), G2 2^24 335.0 (c=19 364.7, c=21
///   414.5). Wider windows lose at every size: past 2^19 buckets a window
///   the bucket tables and sums outgrow the 50 MB L2.
///   Re-swept after the shared sort, the split reduction, Karatsuba Fq
///   and the load's chunk (run 63, H100, c-3..c+3): G1 2^23 50.30 ms
///   (c=19 59.91, c=22 74.00), 2^24 93.77 (c=19 114.84, c=22 115.65),
///   2^26 354.08 (c=19 442.68, c=22 395.02).
/// - from 2^17 to 2^22 points, c = 16 (re-swept in run 63, H100: G1 2^20
///   8.01 ms, c=15 11.72, c=17 11.27; 2^22 27.54, c=17 33.77, c=19
///   32.65). Runs 19-20: G1 2^18 3.40 ms (c=13 4.52, c=14,
///   the model's, 5.16, c=17 7.52), G1 2^20 9.1 (c=15 13.5, c=17 15.0), G1
///   2^22 32.2 (c=18, the model's, 40.1, c=20 38.8), G2 2^22 97.4 (c=18
///   117.4, c=20 114.2). 16 bits is far ahead of its neighbours (15 and 17
///   lose 30-120%): at 15 and 17 the top window starts at bit 255 and
///   holds only the signed digits' carry, about half the points in one
///   bucket (run 21, call 28: the sort 12.9 -> 21.8 ms at 2^24, three merge
///   passes, a window more to accumulate); 2^23 is between the measured
///   sizes.
/// - below 2^17 points (not measured), the model: minimise n*W (one mixed
///   addition per point and window) + 2.6*W*2^(c-1) (two full additions
///   per bucket in the bucket reduction, a full addition costing ~1.3
///   mixed ones).
///
/// W*n stays below 2^32 (u32 positions in the sorted list) at every size
/// the kernels take (W = 13 at c = 20: n < 2^28.3).
pub fn choose_window(n: usize) -> u32 {
    if n >= 1 << 23 {
        return MAX_WINDOW;
    }
    if n >= 1 << 17 {
        return 16;
    }
    let mut best = (f64::INFINITY, 8u32);
    for c in 4u32..=16 {
        let w = num_windows(c) as f64;
        if (num_windows(c) as u64) * (n as u64) >= (1u64 << 32) {
            continue;
        }
        let cost = n as f64 * w + 2.6 * w * (1u64 << (c - 1)) as f64;
        if cost < best.0 {
            best = (cost, c);
        }
    }
    best.1
}

/// Lanes of a warp, log2: the widest butterfly of the MSM's window tree.
const WARP_LG: u32 = 5;
/// Items each lane of the window tree sums in sequence before the
/// butterfly, log2, while enough items are left: a butterfly costs each
/// lane one addition per level, 5 per item at 32 lanes, where a sequence
/// costs 1, and the first level is wide (2^17-2^18 items); 4 in sequence
/// then 32 lanes take 128 items to one in 8 additions.
const FOLD_SEQ_LG: u32 = 2;

/// The levels of the MSM's window tree (`msm_fold_*`) for `per_window`
/// items a window (a power of two): (log2 items summed in sequence by a
/// lane, log2 lanes of its butterfly) per level; 2^14 items: (2, 5), (2,
/// 5); 2^10: (2, 5), (0, 3).
pub fn msm_fold_spans(per_window: usize) -> Vec<(u32, u32)> {
    debug_assert!(per_window.is_power_of_two());
    let mut lg = per_window.trailing_zeros();
    let mut out = Vec::new();
    while lg > 0 {
        let lanes = lg.min(WARP_LG);
        let seq = (lg - lanes).min(FOLD_SEQ_LG);
        out.push((seq, lanes));
        lg -= seq + lanes;
    }
    out
}

/// Threads per block of the MSM's shared-memory sort (MSM_SORT_BLOCK in
/// kernels/msm_sort.cuh).
pub const MSM_SORT_BLOCK: u32 = 512;
/// Scalars per tile of `msm_sort_digits` / `msm_sort_place`
/// (MSM_SORT_TILE): 32 a thread, so that a tile's entries of one (window,
/// part) land in runs of ~32 consecutive places (256 bytes) at 512 parts,
/// and the tiles' counts (W·parts·tiles words, 27M at 2^26 points) stay
/// small beside the keys.
pub const MSM_SORT_TILE: usize = 16384;
/// Low bits of a bucket index that `msm_sort_buckets` sorts in shared
/// memory (2^10 counters): at c = 20 a window has 512 parts, so a window's
/// last pass alone runs 512 blocks (about one wave of 512-thread blocks on
/// the H200's 132 SMs) of ~3.3e4 entries at 2^24 points.
const MSM_SORT_LOW_BITS: u32 = 10;
/// Bytes of `tmp` (8 an entry) up to which the sort places every window in
/// one group; beyond, one window at a time, so that `tmp` adds at most one
/// window's worth (8 bytes a scalar) to the keys (W·m u32, the sorted list
/// written over them).
const MSM_SORT_ONE_GROUP_BYTES: u64 = 1 << 30;

/// How the MSM's shared-memory sort cuts its work (kernels/msm_sort.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmSortPlan {
    /// Low bits of a bucket index sorted by `msm_sort_buckets`.
    pub lg_low: u32,
    /// Parts of a window (2^(c - 1 - lg_low)).
    pub parts: u32,
    /// Tiles of [`MSM_SORT_TILE`] scalars.
    pub tiles: u32,
    /// The most windows placed at once (`tmp` holds 8 bytes an entry of them).
    pub group_windows: u32,
    /// Scalars `msm_sort_place` orders by part in shared memory at a time
    /// before writing them as runs; 0, each entry written where it goes.
    pub place_stage: u32,
    /// Entries `msm_sort_buckets` orders by bucket in shared memory at a
    /// time; 0, each entry written where it goes.
    pub bucket_stage: u32,
}

impl MsmSortPlan {
    /// The same plan with both passes writing each entry where it goes
    /// (the form before the staged one; kept for measurement).
    pub fn unstaged(self) -> Self {
        MsmSortPlan {
            place_stage: 0,
            bucket_stage: 0,
            ..self
        }
    }

    /// Dynamic shared memory of `msm_sort_place` for windows [w0, w1) in
    /// blocks of `block` threads (the device's: [`MSM_SORT_BLOCK`]).
    pub fn place_smem(&self, w0: u32, w1: u32, block: u32) -> u32 {
        if self.place_stage == 0 {
            4 * (w1 - w0) * self.parts
        } else {
            staged_smem(self.place_stage, self.parts, block)
        }
    }

    /// Dynamic shared memory of `msm_sort_buckets` in blocks of `block`
    /// threads.
    pub fn buckets_smem(&self, block: u32) -> u32 {
        if self.bucket_stage == 0 {
            4 * ((1 << self.lg_low) + block)
        } else {
            staged_smem(self.bucket_stage, 1 << self.lg_low, block)
        }
    }

    /// The window groups [w0, w1), in order, covering all `windows`.
    pub fn groups(&self, windows: u32) -> Vec<(u32, u32)> {
        let count = windows.div_ceil(self.group_windows).max(1);
        let (each, extra) = (windows / count, windows % count);
        let mut out = Vec::with_capacity(count as usize);
        let mut w0 = 0;
        for g in 0..count {
            let w1 = w0 + each + u32::from(g < extra);
            out.push((w0, w1));
            w0 = w1;
        }
        out
    }
}

/// Entries a thread of a staged sort pass holds between counting and
/// placing them (MSM_SORT_STAGE_PER_THREAD in kernels/msm_sort.cuh): 16
/// with [`MSM_SORT_SMEM`] of 96 KiB, chosen in run 63 (bench/gpu-kernels.md;
/// H100, `CUZK_MSM_BENCH_SORT_TUNINGS`, every sum checked): G1 2^26 343.94
/// ms against 352.08 for 8 a thread in 48 KiB, 2^24 91.49 against 93.29;
/// in the build of 8 a thread, 11 low bits, blocks of 256 or 128, or 4 a
/// thread were 0.5-12% slower and 9 low bits in 64 KiB within 1%.
pub const MSM_SORT_STAGE_PER_THREAD: u32 = 16;

/// Shared memory a staged pass takes (the three sort kernels opt in to it
/// at device open, `CudaDevice::open`; a card that allows a block less
/// takes what it allows, [`MsmSortTuning::fitted`]).
const MSM_SORT_SMEM: u32 = 96 * 1024;

/// The shared-memory sort's geometry: threads a block, low bits of a
/// bucket sorted in the buckets pass, dynamic shared memory a block may
/// take (the digits pass's (window, part) counters and a staged pass's
/// stage and counters), and entries a thread stages. [`Self::DEFAULT`] is
/// what every MSM uses; `CudaDevice::set_msm_sort_tuning` swaps in
/// another for the benchmark's sweep (`CUZK_MSM_BENCH_SORT_TUNINGS`).
/// Whatever the tuning, the kernels sort the same entries into the same
/// buckets: a staged pass whose stage is larger than the kernel's own
/// MSM_SORT_STAGE_PER_THREAD a thread takes it in steps of that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmSortTuning {
    pub block: u32,
    pub lg_low: u32,
    pub smem: u32,
    pub per_thread: u32,
}

impl MsmSortTuning {
    pub const DEFAULT: MsmSortTuning = MsmSortTuning {
        block: MSM_SORT_BLOCK,
        lg_low: MSM_SORT_LOW_BITS,
        smem: MSM_SORT_SMEM,
        per_thread: MSM_SORT_STAGE_PER_THREAD,
    };

    /// `block:lg_low:smem_kib:per_thread`, as the sweep's list spells one.
    pub fn parse(s: &str) -> Option<MsmSortTuning> {
        let v: Vec<u32> = s
            .split(':')
            .map(|x| x.trim().parse().ok())
            .collect::<Option<_>>()?;
        let [block, lg_low, kib, per_thread] = v[..] else {
            return None;
        };
        let t = MsmSortTuning {
            block,
            lg_low,
            smem: kib.checked_mul(1024)?,
            per_thread,
        };
        t.valid().then_some(t)
    }

    /// Within what the kernels take: whole warps up to their
    /// `__launch_bounds__` ([`MSM_SORT_BLOCK`]), a buckets pass of 2^6 to
    /// 2^12 counters, 16 KiB to 227 KiB (sm_90's most a block may opt in
    /// to; a device with less refuses the tuning when it is set) and 1 to
    /// 64 entries a thread.
    pub fn valid(&self) -> bool {
        self.block >= 32
            && self.block <= MSM_SORT_BLOCK
            && self.block.is_multiple_of(32)
            && (6..=12).contains(&self.lg_low)
            && (16 * 1024..=227 * 1024).contains(&self.smem)
            && (1..=64).contains(&self.per_thread)
    }

    /// `CUZK_MSM_SORT_TUNING`, when set: the geometry a device opens with
    /// (checks under a measured geometry). A value that does not parse is
    /// an error, so that a run never takes the default unnoticed.
    pub fn from_env() -> Result<Option<MsmSortTuning>, String> {
        let Ok(v) = std::env::var("CUZK_MSM_SORT_TUNING") else {
            return Ok(None);
        };
        MsmSortTuning::parse(&v).map(Some).ok_or_else(|| {
            format!("CUZK_MSM_SORT_TUNING={v:?} is not block:lg_low:smem_kib:per_thread within the sort kernels' limits")
        })
    }

    /// [`Self::DEFAULT`] on a card that gives a block at most `optin`
    /// bytes of shared memory: its shared memory cut to what the card
    /// allows (whole KiB, at least the 48 KiB every card gives without
    /// opting in); the plans then stage fewer entries a pass
    /// (`sort_stage`), the entries and sums the same.
    pub fn fitted(optin: u32) -> MsmSortTuning {
        MsmSortTuning {
            smem: Self::DEFAULT.smem.min(optin / 1024 * 1024).max(48 * 1024),
            ..Self::DEFAULT
        }
    }

    /// The row name the sweep prints: "b512 l10 s96 p16".
    pub fn name(&self) -> String {
        format!(
            "b{} l{} s{} p{}",
            self.block,
            self.lg_low,
            self.smem / 1024,
            self.per_thread
        )
    }
}

/// A staged pass's shared memory: `stage` entries of 8 bytes, then 3
/// counters per key (`keys` of them) and a block of scan scratch.
fn staged_smem(stage: u32, keys: u32, block: u32) -> u32 {
    8 * stage + 4 * (3 * keys + block)
}

/// The largest stage (a multiple of the block, at most `t.per_thread`
/// entries a thread) whose pass fits `t.smem` beside `keys` counters; 0
/// where not even one entry a thread does (the pass then writes each entry
/// where it goes).
fn sort_stage(keys: u32, t: &MsmSortTuning) -> u32 {
    let room = (t.smem as u64).saturating_sub(staged_smem(0, keys, t.block) as u64) / 8;
    let per_thread = (room / t.block as u64).min(t.per_thread as u64);
    per_thread as u32 * t.block
}

/// The shared-memory sort's plan for `m` scalars at `c`-bit windows.
pub fn msm_sort_plan(m: usize, c: u32) -> MsmSortPlan {
    msm_sort_plan_tuned(m, c, &MsmSortTuning::DEFAULT)
}

/// [`msm_sort_plan`] under another geometry (the digits pass keeps its
/// (window, part) counters in `t.smem`, so a window has at most that many
/// parts over W: fewer low bits than that allows are raised).
pub fn msm_sort_plan_tuned(m: usize, c: u32, t: &MsmSortTuning) -> MsmSortPlan {
    let w = num_windows(c);
    let slots = t.smem / 4;
    let mut lg_low = (c - 1).min(t.lg_low);
    while lg_low < c - 1 && w << (c - 1 - lg_low) > slots {
        lg_low += 1;
    }
    let group_windows = if 8 * w as u64 * m as u64 <= MSM_SORT_ONE_GROUP_BYTES {
        w
    } else {
        1
    };
    MsmSortPlan {
        lg_low,
        parts: 1 << (c - 1 - lg_low),
        tiles: m.div_ceil(MSM_SORT_TILE).max(1) as u32,
        group_windows,
        place_stage: sort_stage(1 << (c - 1 - lg_low), t),
        bucket_stage: sort_stage(1 << lg_low, t),
    }
}

/// Whether the MSM sorts its (window, bucket) entries through shared
/// memory (kernels/msm_sort.cuh) rather than with a global atomic per entry
/// in each of two passes (msm_histogram, msm_scatter). The shared-memory
/// sort first wrote each entry straight to its place and lost (call 30:
/// G1 2^24 114.5 ms against 109.6, 2^26 444.8 against 425.7; call 32: its
/// scattered stores moved twice their bytes through DRAM). With its passes
/// staged (each stage of entries ordered in shared memory, then written as
/// runs) it wins at every size (2026-12-06 call 70, H100, rows of `bench_
/// kernels --filter msm_g --reps 3`: G1 2^20 8.78 -> 8.52 ms, 2^24 104.52 ->
/// 102.00, 2^26 400.81 -> 396.42, G2 2^24 326.97 -> 324.50; call 71: the sort
/// phase at G1 2^26 42.3 ms against the atomic one's 47.3 and the unstaged
/// one's 83.7; the 2^27 partition with z prepared 1479.1 ms against 1492.9).
/// It also holds 4 bytes an entry less: its sorted list is written over
/// the digits' keys, which the atomic sort's scatter cannot do.
pub const DEFAULT_SHARED_SORT: bool = true;

/// The sort a device opens with, and the one [`msm_scratch_bytes`] states
/// the bytes of: `CUZK_MSM_SORT` = `shared` or `atomic` (measuring a whole
/// prover with either), else [`DEFAULT_SHARED_SORT`]; read once a process,
/// so that a budget and the devices it plans for agree.
pub fn msm_shared_sort_from_env() -> bool {
    static SHARED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SHARED.get_or_init(
        || match std::env::var("CUZK_MSM_SORT").as_deref().map(str::trim) {
            Ok("shared") => true,
            Ok("atomic") => false,
            _ => DEFAULT_SHARED_SORT,
        },
    )
}

/// Fewest and most entries one thread of an MSM's first bucket sums
/// takes (its chunk, T): [`msm_chunk`] picks between them.
/// `MSM_CHUNK_LIMIT` is the most the chunk-order kernels' shared
/// counters hold (CHUNK_ORDER_MAX_T in kernels/msm.cuh).
pub const MSM_CHUNK_MIN: u32 = 64;
pub const MSM_CHUNK_MAX: u32 = 512;
pub const MSM_CHUNK_LIMIT: u32 = 512;

/// Entries a thread of the first bucket sums takes (the chunk T) in an
/// MSM of `m` scalars with `c`-bit windows: twice the buckets' mean load
/// `m / 2^(c-1)` rounded down to a power of two, within
/// [`MSM_CHUNK_MIN`]..=[`MSM_CHUNK_MAX`], so that nearly every bucket is
/// summed by one thread. A bucket of more than T entries is summed in
/// several chunks whose sums `msm_merge_*` adds afterwards at ~3x an
/// accumulated addition's cost (its 210 registers leave 2 blocks an SM).
/// Measured (H100, call 97, bench/gpu-kernels.md run 60; G1 rows, reps
/// 2, "merge chunks" and "accumulate" profiled): at 2^26 (128 a bucket)
/// T = 64 362.07 ms (merge 10.92, accumulate 305.01), 128 356.83 (3.98,
/// 307.00), **256 354.58** (0.40, 307.91), 512 354.17 (0.32, 307.98); at
/// 2^24 (32 a bucket) 94.03 / 93.97 / 94.04 / 93.81, equal. 64 had been
/// chosen when buckets averaged 32 entries. `CUZK_MSM_CHUNK` (a number
/// from 2 to [`MSM_CHUNK_LIMIT`], read once a process so that a budget
/// and the devices agree) fixes T at every size, for measuring.
pub fn msm_chunk(m: usize, c: u32) -> u32 {
    static FIXED: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let fixed = *FIXED.get_or_init(|| {
        std::env::var("CUZK_MSM_CHUNK")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|t| (2..=MSM_CHUNK_LIMIT).contains(t))
    });
    fixed.unwrap_or_else(|| chunk_for_load(m, c))
}

/// [`msm_chunk`]'s choice without the override.
fn chunk_for_load(m: usize, c: u32) -> u32 {
    let mean = (m >> (c.max(1) - 1)).max(1);
    let twice = 2usize << mean.ilog2();
    twice.clamp(MSM_CHUNK_MIN as usize, MSM_CHUNK_MAX as usize) as u32
}

/// Slack on [`msm_scratch_bytes`]: the scan's block sums (two buffers of
/// blocks + 1 words per scan), the window counts and offsets uploaded for
/// the last reduction, and rounding in the chunk bounds.
const MSM_SCRATCH_SLACK: u64 = 32 << 20;

/// Peak device bytes one MSM of `m` scalars allocates (bases excluded), as
/// `CudaDevice`'s MSM allocates them (src/device/msm.rs, `msm_windows` and the
/// 0/1 split): the uploaded scalars, ids and 0/1 mask of the split, then the
/// largest of the sort phase (of the sort [`msm_shared_sort_from_env`]
/// picks: the shared-memory sort's W·m u32 keys, its sorted list written
/// over them, and [`msm_sort_plan`]'s `tmp`; or the atomic sort's keys and
/// sorted entries, W·m u32 each, with histogram, offsets and cursor of S =
/// W·2^(c−1) buckets; a device switched to the other sort after it opened,
/// as the benchmarks and checks do, is outside this figure), the
/// accumulation phase (sorted entries, bucket tables, one XYZZ item per
/// chunk of 64 points, or of a smaller [`msm_chunk`], and per bucket; a
/// larger chunk allocates less) and the reduction passes (each pass's
/// items beside the next one's). A caller that budgets device memory asks
/// this instead of restating the allocation pattern; the GPU
/// checks compare it with the driver pool's measured high-water mark.
pub fn msm_scratch_bytes(m: usize, g2: bool) -> u64 {
    if m == 0 {
        return 0;
    }
    const FR: u64 = 32;
    let c = choose_window(m);
    let w = num_windows(c) as u64;
    let m = m as u64;
    let s = w << (c - 1);
    let wm = w * m;
    let xyzz = if g2 { G2_XYZZ_BYTES } else { G1_XYZZ_BYTES } as u64;
    let inputs = m * FR + 4 * m + m / 8 + 8;
    // The shared-memory sort (the one [`msm_shared_sort_from_env`] picks,
    // by default): the keys, which the sorted list is written over, and the
    // tiles' scanned counts throughout; first the tiles' counts, then
    // (those freed) the buckets' counts and offsets and `tmp` for the
    // largest window group. The atomic sort: keys and sorted list, counts,
    // offsets and cursors.
    let sort = if msm_shared_sort_from_env() {
        let plan = msm_sort_plan(m as usize, c);
        let tile_counts = w * plan.parts as u64 * plan.tiles as u64;
        let tmp = 8 * plan.group_windows as u64 * m;
        4 * wm + 4 * tile_counts + 4 + (4 * tile_counts).max(8 * s + 4 + tmp)
    } else {
        8 * wm + 16 * s
    };
    // Chunk bounds at the load's smallest T (or a smaller fixed one): an
    // upper bound for any larger T, so the figure never falls as m grows
    // (the planners search part sizes by it).
    let t = msm_chunk(m as usize, c).min(MSM_CHUNK_MIN) as u64;
    let bound1 = wm / t + s;
    let bound2 = bound1 / t + s;
    let accumulate = 4 * wm + 20 * s + 4 * bound1 + xyzz * bound1;
    let reduce = 20 * s + (4 + xyzz) * bound1 + (4 + xyzz) * bound2;
    inputs + sort.max(accumulate).max(reduce) + MSM_SCRATCH_SLACK
}

/// Fewest points a thread of the 0/1 sum takes (small sums run fewer
/// threads rather than a wide final reduction).
pub const SUM_SELECTED_MIN: usize = 64;

/// Most threads the 0/1 sum runs (about one wave on today's largest
/// cards: 132 SMs x 16 blocks x 128 threads is 2^18 x 1.03; the device
/// clamps its measured wave to this), so that its scratch has a bound
/// known before a device is opened.
pub const SUM_SELECTED_MAX_THREADS: usize = 1 << 18;

/// Upper bound of the device bytes the 0/1 sum over `n` points allocates
/// (src/device/zero_one.rs, `sum_selected_at`): the mask words' counts and
/// their prefix, one XYZZ item per thread and the reduction's next items
/// beside them. The sum runs before the rest's MSM of a split and frees
/// all of it first, so a split MSM needs the larger of this and
/// [`msm_scratch_bytes`] of the rest.
pub fn zero_one_scratch_bytes(n: usize, g2: bool) -> u64 {
    if n == 0 {
        return 0;
    }
    let words = n.div_ceil(32) as u64 + 1;
    let xyzz = if g2 { G2_XYZZ_BYTES } else { G1_XYZZ_BYTES } as u64;
    let threads = n.div_ceil(SUM_SELECTED_MIN).min(SUM_SELECTED_MAX_THREADS) as u64;
    8 * words + 2 * threads * xyzz + MSM_SCRATCH_SLACK
}

/// Device bytes the NTTs of a 2^lg domain allocate beside the data: the
/// cached twiddle table (n/2 powers, kept until `release_ntt_tables`) and
/// the two power tables of a coset or scaling step (2·2^ceil(lg/2) each,
/// held while the step runs, as `power_tables` makes them).
pub fn ntt_scratch_bytes(lg: u32) -> u64 {
    const FR: u64 = 32;
    let n = 1u64 << lg;
    (n / 2).max(1) * FR + 4 * ((1u64 << lg.div_ceil(2)) + 1) * FR
}

/// Canonical little-endian u64 limbs of a scalar.
pub fn canonical_limbs(s: &Scalar) -> [u64; 4] {
    u64s::<4>(&s.to_bytes_le())
}

/// Signed c-bit digits d_w in [-2^(c-1), 2^(c-1)] with
/// sum d_w 2^(c w) = s, exactly as msm_histogram/msm_scatter compute them.
pub fn signed_digits(limbs: &[u64; 4], c: u32) -> Vec<i64> {
    let w_count = num_windows(c);
    let mut carry = 0u64;
    let mut out = Vec::with_capacity(w_count as usize);
    for w in 0..w_count {
        let bit = w * c;
        let mut v = 0u64;
        for k in 0..c {
            let b = bit + k;
            if b < 256 && (limbs[(b / 64) as usize] >> (b % 64)) & 1 == 1 {
                v |= 1 << k;
            }
        }
        let d = v + carry;
        if d > 1 << (c - 1) {
            out.push(d as i64 - (1i64 << c));
            carry = 1;
        } else {
            out.push(d as i64);
            carry = 0;
        }
    }
    out
}

/// A scalar vector split for the prover: scalars equal to one become bits of
/// `ones` (the 0/1 path sums those points), zeros are dropped, and the rest
/// keep their positions in `rest_ids` for an indexed MSM.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZeroOneSplit {
    /// Bit i set when scalar i is one; ceil(n/32) words, bits past n clear.
    pub ones: Vec<u32>,
    pub ones_count: usize,
    pub zeros_count: usize,
    /// Positions of the other scalars, increasing.
    pub rest_ids: Vec<u32>,
    pub rest_scalars: Vec<Scalar>,
}

impl ZeroOneSplit {
    pub fn len(&self) -> usize {
        self.ones_count + self.zeros_count + self.rest_ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The sums of consecutive pairs of G1 points, `out[i] = points[2i] +
/// points[2i + 1]` (an odd last point has none), affine: what the paired
/// 0/1 sums (`CudaDevice::sum_selected_g1_paired`) keep beside the points.
pub fn pair_sums_g1(points: &[G1Affine]) -> Vec<G1Affine> {
    pair_sums::<G1Projective>(points)
}

/// [`pair_sums_g1`] for G2.
pub fn pair_sums_g2(points: &[G2Affine]) -> Vec<G2Affine> {
    pair_sums::<G2Projective>(points)
}

fn pair_sums<G>(points: &[G::AffineRepr]) -> Vec<G::AffineRepr>
where
    G: group::Curve,
    G::AffineRepr: group::prime::PrimeCurveAffine<Curve = G> + Send + Sync,
{
    use group::prime::PrimeCurveAffine;
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 12;
    let mut out = vec![G::AffineRepr::identity(); points.len() / 2];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, o)| {
        let sums: Vec<G> = (0..o.len())
            .map(|k| {
                let i = 2 * (c * CHUNK + k);
                points[i].to_curve() + points[i + 1]
            })
            .collect();
        G::batch_normalize(&sums, o);
    });
    out
}

/// Splits `scalars` into its 0/1 part and the rest (see [`ZeroOneSplit`]).
/// Comparison is on Montgomery limbs, so this is one pass of equality tests.
pub fn split_zero_one(scalars: &[Scalar]) -> ZeroOneSplit {
    let mut ones = vec![0u32; scalars.len().div_ceil(32)];
    let mut split = ZeroOneSplit::default();
    for (i, s) in scalars.iter().enumerate() {
        if *s == Scalar::ZERO {
            split.zeros_count += 1;
        } else if *s == Scalar::ONE {
            ones[i / 32] |= 1 << (i % 32);
            split.ones_count += 1;
        } else {
            split.rest_ids.push(i as u32);
            split.rest_scalars.push(*s);
        }
    }
    split.ones = ones;
    split
}

/// Which transform an NTT call performs (bellperson's conventions: natural
/// order in and out, the coset `g*<w>` with g = Fr's multiplicative generator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum NttKind {
    Forward,
    Inverse,
    CosetForward,
    CosetInverse,
}

/// Primitive 2^lg-th root of unity of Fr.
pub fn root_of_unity(lg: u32) -> Scalar {
    let mut w = Scalar::ROOT_OF_UNITY;
    for _ in lg..Scalar::S {
        w = w.square();
    }
    w
}

/// Largest NTT pass held in shared memory: 2^11 Fr (72 KiB with the
/// padding slots of kernels/ntt.cuh's `PassShared`; three blocks fit an
/// H200 SM's 228 KiB). Cards with less shared memory an SM take smaller
/// blocks ([`ntt_smem_log_for`]).
pub const NTT_SMEM_LOG: u32 = 11;

/// The smallest block [`ntt_smem_log_for`] picks (2^9 Fr, 18 KiB).
pub const NTT_SMEM_LOG_MIN: u32 = 9;

/// Shared memory the driver keeps for itself beside each resident block
/// (1 KiB on sm_80 and later).
const SMEM_RESERVED_PER_BLOCK: u32 = 1024;

/// The NTT pass block (log2 of its elements) for a card with
/// `smem_per_sm` bytes of shared memory an SM: the largest of 2^9..2^11
/// that keeps three blocks resident, as the measured configuration does on
/// sm_90 (r2x3: three blocks of 256 threads at 80 registers, 228 KiB an
/// SM, 2^11); where none does, the one that keeps the most. sm_80 (164
/// KiB) gets 2^10, sm_86 / sm_89 (100 KiB) 2^9: more passes over memory
/// (2^27 in four instead of three) rather than one or two blocks an SM.
/// Chosen by that rule, not measured: every card lent so far is sm_90.
pub fn ntt_smem_log_for(smem_per_sm: u32) -> u32 {
    let resident = |l: u32| smem_per_sm / (ntt_pass_smem(l) + SMEM_RESERVED_PER_BLOCK);
    (NTT_SMEM_LOG_MIN..=NTT_SMEM_LOG)
        .rev()
        .find(|&l| resident(l) >= 3)
        .unwrap_or(NTT_SMEM_LOG_MIN)
}

/// The fused passes of the GPU's NTT of 2^lg elements, bottom up: (s0, k)
/// for the stages on index bits [s0, s0 + k). The first pass (s0 = 0) reads
/// contiguous runs of 2^k elements; later ones take 2^lgL groups at a
/// stride (lgL = 2 unless the sweep's `CUZK_NTT_LGL_MAX` says otherwise),
/// so they hold lgL stages fewer. DIF runs them in reverse. The sweep's
/// `CUZK_NTT_SPLIT` (stages of each pass bottom up, "11,8,8") replaces the
/// plan of the size it sums to, where every pass fits. Seven other splits
/// of 2^27 (run 63, H100, forward out of place, reps 3) were all slower
/// than this plan's 9,9,9 at lgL 2 (38.20 ms): 9,9,9 at lgL 0 38.42,
/// 10,9,8 38.87, 10,10,7 39.23, 9,9,9 at lgL 1 39.70, 11,9,7 40.26,
/// 11,8,8 40.71; the inverse rows moved within 1.7% either way.
pub fn ntt_pass_plan(lg: u32) -> Vec<(u32, u32)> {
    ntt_pass_plan_in(lg, NTT_SMEM_LOG)
}

/// [`ntt_pass_plan`] with blocks of 2^smem_log elements at most
/// ([`ntt_smem_log_for`] the card's).
pub fn ntt_pass_plan_in(lg: u32, smem_log: u32) -> Vec<(u32, u32)> {
    if let Some(p) = ntt_split_override(lg, smem_log) {
        return p;
    }
    let mut passes = Vec::new();
    let mut s0 = 0u32;
    let later_max = smem_log - ntt_lgl_max();
    while s0 < lg {
        let max_k = smem_log - ntt_pass_lgl(s0);
        let remaining = lg - s0;
        // Spread the stages evenly over the passes still needed.
        let count = if remaining <= max_k {
            1
        } else {
            1 + (remaining - max_k).div_ceil(later_max)
        };
        let k = remaining.div_ceil(count).min(max_k);
        passes.push((s0, k));
        s0 += k;
    }
    passes
}

/// Most low index bits a later pass's block spans: 2 (runs of 4 elements,
/// a 128-byte line), or `CUZK_NTT_LGL_MAX` (0 to 3) for the NTT sweep; read
/// once a process.
fn ntt_lgl_max() -> u32 {
    static V: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        std::env::var("CUZK_NTT_LGL_MAX")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|&v| v <= 3)
            .unwrap_or(2)
    })
}

/// `CUZK_NTT_SPLIT`'s passes for an NTT of 2^lg, if it sums to lg and
/// each pass fits a block (2^smem_log with its lgL); read once a process,
/// saying so on stderr where it does not parse or does not fit an sm_90
/// block, so that a sweep's row is never the default's under another name.
fn ntt_split_override(lg: u32, smem_log: u32) -> Option<Vec<(u32, u32)>> {
    static V: std::sync::OnceLock<Option<Vec<u32>>> = std::sync::OnceLock::new();
    let ks = V.get_or_init(|| {
        let v = std::env::var("CUZK_NTT_SPLIT").ok()?;
        let ks: Option<Vec<u32>> = v.split(',').map(|k| k.trim().parse().ok()).collect();
        let fits = ks.as_deref().and_then(|ks| {
            ntt_split_passes(ks.iter().sum(), ks, ntt_lgl_max(), NTT_SMEM_LOG)
        });
        if fits.is_none() {
            eprintln!("CUZK_NTT_SPLIT={v:?} is not a list of passes that fit a block of 2^{NTT_SMEM_LOG} with lgL <= {}: ignored", ntt_lgl_max());
        }
        ks
    });
    ntt_split_passes(lg, ks.as_deref()?, ntt_lgl_max(), smem_log)
}

/// The passes (s0, k) of the split `ks` (stages per pass, bottom up) for
/// an NTT of 2^lg whose later passes span up to `lgl_max` low bits, where
/// it sums to lg and every pass fits a block of 2^smem_log (for the sweep,
/// and for the emulator's checks of other splits).
pub fn ntt_split_passes(
    lg: u32,
    ks: &[u32],
    lgl_max: u32,
    smem_log: u32,
) -> Option<Vec<(u32, u32)>> {
    if ks.iter().sum::<u32>() != lg {
        return None;
    }
    let mut s0 = 0;
    let mut out = Vec::with_capacity(ks.len());
    for &k in ks {
        if k == 0 || k + s0.min(lgl_max) > smem_log {
            return None;
        }
        out.push((s0, k));
        s0 += k;
    }
    Some(out)
}

/// Shared memory of an NTT pass over 2^log elements: two arrays of 16-byte
/// halves, one padding slot after every 8 (kernels/ntt.cuh, `PassShared`).
pub fn ntt_pass_smem(log: u32) -> u32 {
    let e = 1u32 << log;
    2 * (e + (e >> 3)) * 16
}

/// Threads of an NTT pass block over 2^log_e elements in rounds of up to
/// `radix_log` stages (each thread takes a group of 2^radix_log elements).
pub fn ntt_pass_threads(log_e: u32, k: u32, radix_log: u32) -> u32 {
    (1u32 << log_e.saturating_sub(radix_log.min(k))).clamp(32, 256)
}

/// Low index bits a pass block spans (lgL): 2^lgL groups side by side.
pub fn ntt_pass_lgl(s0: u32) -> u32 {
    s0.min(ntt_lgl_max())
}

/// Top index bits the permuting pass of an out-of-place transform of 2^lg
/// elements spans (its stages are [0, k)): up to 2, so that a block's
/// bit-reversed places come in runs of 4 (a 128-byte line), within the
/// shared memory of a pass and the bits above the stages.
pub fn ntt_perm_lgl(lg: u32, k: u32) -> u32 {
    ntt_perm_lgl_in(lg, k, NTT_SMEM_LOG)
}

/// [`ntt_perm_lgl`] with blocks of 2^smem_log elements at most.
pub fn ntt_perm_lgl_in(lg: u32, k: u32, smem_log: u32) -> u32 {
    2u32.min(lg - k).min(smem_log - k)
}

/// Plain iterative radix-2 NTT on the CPU, the reference for the GPU checks.
pub fn ntt_cpu(values: &mut [Scalar], kind: NttKind) {
    let n = values.len();
    assert!(n.is_power_of_two(), "NTT length must be a power of two");
    let lg = n.trailing_zeros();
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    if kind == NttKind::CosetForward {
        let mut p = Scalar::ONE;
        for v in values.iter_mut() {
            *v *= p;
            p *= g;
        }
    }
    let inverse = matches!(kind, NttKind::Inverse | NttKind::CosetInverse);
    let mut w = root_of_unity(lg);
    if inverse {
        w = w.invert().expect("roots of unity are nonzero");
    }
    for i in 0..n {
        let r = if lg == 0 {
            0
        } else {
            i.reverse_bits() >> (usize::BITS - lg)
        };
        if i < r {
            values.swap(i, r);
        }
    }
    let mut m = 1;
    while m < n {
        let wm = w.pow_vartime([(n / (2 * m)) as u64]);
        for start in (0..n).step_by(2 * m) {
            let mut t = Scalar::ONE;
            for j in 0..m {
                let u = values[start + j];
                let v = values[start + j + m] * t;
                values[start + j] = u + v;
                values[start + j + m] = u - v;
                t *= wm;
            }
        }
        m *= 2;
    }
    if inverse {
        let n_inv = Scalar::from(n as u64).invert().expect("n is nonzero in Fr");
        let g_inv = g.invert().expect("the generator is nonzero");
        let mut p = n_inv;
        for v in values.iter_mut() {
            *v *= p;
            if kind == NttKind::CosetInverse {
                p *= g_inv;
            }
        }
    }
}

#[cfg(test)]
mod tests {

    /// A CPU model of kernels/ntt.cuh's pass kernels, loop for loop (blocks,
    /// groups of a round, the DIF twiddle read as -w^(n/2-e), the coset
    /// scaling on the first DIT pass's load): checks the index arithmetic
    /// and the pass plan against `ntt_cpu` without a GPU.
    fn model_pass(
        d: &mut [Scalar],
        tw: &[Scalar],
        lg: u32,
        (s0, k): (u32, u32),
        radix: u32,
        dif: bool,
        scale: Option<&dyn Fn(usize) -> Scalar>,
    ) {
        let lgl = ntt_pass_lgl(s0);
        let e_count = 1usize << (k + lgl);
        let lo_groups_lg = s0 - lgl;
        let half = 1usize << (lg - 1);
        for b in 0..1usize << (lg - k - lgl) {
            let lo_base = (b & ((1 << lo_groups_lg) - 1)) << lgl;
            let base = ((b >> lo_groups_lg) << (s0 + k)) | lo_base;
            let index = |e: usize| base + ((e >> lgl) << s0) + (e & ((1 << lgl) - 1));
            let mut sh: Vec<Scalar> = (0..e_count)
                .map(|e| {
                    let idx = index(e);
                    match scale {
                        Some(f) => d[idx] * f(idx.reverse_bits() >> (usize::BITS - lg)),
                        None => d[idx],
                    }
                })
                .collect();
            let (full, rest) = (k / radix, k % radix);
            let rounds = full + u32::from(rest != 0);
            for rr in 0..rounds {
                let r = if dif { rounds - 1 - rr } else { rr };
                let j = r * radix;
                let size = if r < full { radix } else { rest };
                for g in 0..1usize << (k + lgl - size) {
                    let lo_off = g & ((1 << lgl) - 1);
                    let q = g >> lgl;
                    let jm_low = q & ((1 << j) - 1);
                    let mid0 = ((q >> j) << (j + size)) | jm_low;
                    let at = |t: usize| ((mid0 | (t << j)) << lgl) | lo_off;
                    let mut x: Vec<Scalar> = (0..1usize << size).map(|t| sh[at(t)]).collect();
                    for ii in 0..size {
                        let i = if dif { size - 1 - ii } else { ii };
                        let shift = lg - s0 - j - i - 1;
                        for c in 0..1usize << i {
                            let jm = jm_low | (c << j);
                            let texp = ((jm << s0) | (lo_base + lo_off)) << shift;
                            let w = if dif {
                                tw[(half - texp) % half]
                            } else {
                                tw[texp]
                            };
                            for hi in 0..1usize << (size - 1 - i) {
                                let t0 = (hi << (i + 1)) | c;
                                let t1 = t0 | (1 << i);
                                let (u, v) = (x[t0], x[t1]);
                                if !dif {
                                    let v = if texp != 0 { v * w } else { v };
                                    x[t0] = u + v;
                                    x[t1] = u - v;
                                } else {
                                    x[t0] = u + v;
                                    x[t1] = if texp != 0 { (v - u) * w } else { u - v };
                                }
                            }
                        }
                    }
                    for (t, v) in x.into_iter().enumerate() {
                        sh[at(t)] = v;
                    }
                }
            }
            for (e, v) in sh.into_iter().enumerate() {
                d[index(e)] = v;
            }
        }
    }

    fn model_passes(
        d: &mut [Scalar],
        lg: u32,
        radix: u32,
        dif: bool,
        scale: Option<&dyn Fn(usize) -> Scalar>,
    ) {
        let w = root_of_unity(lg);
        let tw: Vec<Scalar> = std::iter::successors(Some(Scalar::ONE), |p| Some(*p * w))
            .take((1usize << lg) / 2)
            .collect();
        let mut plan = ntt_pass_plan(lg);
        if dif {
            plan.reverse();
        }
        for (p, &pass) in plan.iter().enumerate() {
            let scale_here = if p == 0 && !dif { scale } else { None };
            model_pass(d, &tw, lg, pass, radix, dif, scale_here);
        }
    }

    fn bitrev_in_place(d: &mut [Scalar]) {
        let lg = d.len().trailing_zeros();
        for i in 0..d.len() {
            let r = if lg == 0 {
                0
            } else {
                i.reverse_bits() >> (usize::BITS - lg)
            };
            if i < r {
                d.swap(i, r);
            }
        }
    }

    #[test]
    fn pass_model_matches_the_reference_ntt() {
        use ff::Field;
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        // Sizes that exercise one pass, several, and uneven round splits
        // (k mod R != 0) for each round size.
        for lg in [1u32, 2, 3, 5, 8, 11, 12, 14, 17] {
            let n = 1usize << lg;
            let x: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            for radix in 1..=3u32 {
                // Forward: bit reversal, then DIT.
                let mut want = x.clone();
                ntt_cpu(&mut want, NttKind::Forward);
                let mut got = x.clone();
                bitrev_in_place(&mut got);
                model_passes(&mut got, lg, radix, false, None);
                assert!(got == want, "forward 2^{lg} R={radix}");
                // Inverse: DIF, then the bit reversal and n^-1.
                let mut want = x.clone();
                ntt_cpu(&mut want, NttKind::Inverse);
                let mut got = x.clone();
                model_passes(&mut got, lg, radix, true, None);
                bitrev_in_place(&mut got);
                let n_inv = Scalar::from(n as u64).invert().unwrap();
                got.iter_mut().for_each(|v| *v *= n_inv);
                assert!(got == want, "inverse 2^{lg} R={radix}");
                // Evaluations to coset: DIF, DIT with n^-1 g^i on load.
                let mut want = x.clone();
                ntt_cpu(&mut want, NttKind::Inverse);
                ntt_cpu(&mut want, NttKind::CosetForward);
                let mut got = x.clone();
                model_passes(&mut got, lg, radix, true, None);
                let g = Scalar::MULTIPLICATIVE_GENERATOR;
                let powers: Vec<Scalar> = std::iter::successors(Some(n_inv), |p| Some(*p * g))
                    .take(n)
                    .collect();
                let scale = |i: usize| powers[i];
                model_passes(&mut got, lg, radix, false, Some(&scale));
                assert!(got == want, "evals->coset 2^{lg} R={radix}");
            }
        }
    }

    #[test]
    fn smaller_cards_take_smaller_pass_blocks() {
        assert_eq!(ntt_smem_log_for(228 * 1024), 11, "sm_90");
        assert_eq!(ntt_smem_log_for(164 * 1024), 10, "sm_80");
        assert_eq!(ntt_smem_log_for(100 * 1024), 9, "sm_86/89");
        assert_eq!(ntt_smem_log_for(48 * 1024), 9, "the least");
        for smem_log in NTT_SMEM_LOG_MIN..=NTT_SMEM_LOG {
            for lg in 1..=28u32 {
                let plan = assert_plan_covers(lg, smem_log);
                let k = plan[0].1;
                assert!(k + ntt_perm_lgl_in(lg, k, smem_log) <= smem_log.min(lg));
            }
        }
        assert_eq!(ntt_pass_plan_in(27, 10).len(), 4);
        assert_eq!(ntt_pass_plan_in(27, 9).len(), 4);
    }

    /// The plan of 2^lg in blocks of 2^smem_log: contiguous passes, each
    /// within a block with its lgL, every stage once.
    fn assert_plan_covers(lg: u32, smem_log: u32) -> Vec<(u32, u32)> {
        let plan = ntt_pass_plan_in(lg, smem_log);
        let mut s = 0;
        for &(s0, k) in &plan {
            assert_eq!(s0, s, "2^{lg} in 2^{smem_log}: passes are contiguous");
            assert!(
                k >= 1 && k + ntt_pass_lgl(s0) <= smem_log,
                "2^{lg} in 2^{smem_log}: pass fits"
            );
            s += k;
        }
        assert_eq!(s, lg, "2^{lg} in 2^{smem_log}: every stage once");
        plan
    }

    #[test]
    fn pass_plan_covers_every_stage_within_shared_memory() {
        for lg in 1..=28u32 {
            assert_eq!(assert_plan_covers(lg, NTT_SMEM_LOG), ntt_pass_plan(lg));
        }
        assert_eq!(ntt_pass_plan(27), vec![(0, 9), (9, 9), (18, 9)]);
        // The permuting pass: the plan's first, within shared memory and
        // the index bits; two top bits (128-byte runs) at every size
        // measured but 2^19, 2^20 and 2^28 (one).
        for lg in 1..=28u32 {
            let (s0, k) = ntt_pass_plan(lg)[0];
            let l = ntt_perm_lgl(lg, k);
            assert!(s0 == 0 && k + l <= NTT_SMEM_LOG && k + l <= lg, "2^{lg}");
            let want = if lg <= 11 {
                0
            } else if [19, 20, 28].contains(&lg) {
                1
            } else {
                2
            };
            assert_eq!(l, want, "2^{lg}");
        }
    }
    use super::*;
    use group::{Curve, Group};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(rand::random())
    }

    /// msm_bucket_pairs_* as it runs, over the integers mod 2^64 (a point
    /// is a number, addition is +, doubling is 2x): lane by lane and step
    /// by step, a shuffle reading the partner lane's value of that step.
    /// `sums[w * b + k]` is bucket k's sum (None: empty bucket).
    fn model_bucket_pairs(sums: &[Option<u64>], w: usize, b: usize, lg_g: u32) -> Vec<u64> {
        let groups = 1usize << lg_g;
        let per = b >> lg_g;
        let mut out = vec![0u64; 2 * w * groups];
        for t in 0..w * groups {
            let (wi, g) = (t >> lg_g, t & (groups - 1));
            let b_lo = g * per;
            let mut v = [0u64; 2]; // [even lane, odd lane]
            for i in 0..=per {
                let shfl = [v[1], v[0]];
                let even_arg = if i < per {
                    sums[wi * b + b_lo + per - 1 - i].unwrap_or(0)
                } else {
                    0
                };
                v = [v[0].wrapping_add(even_arg), v[1].wrapping_add(shfl[1])];
            }
            out[2 * t + 1] = v[1];
            let shfl = [v[1], v[0]];
            v = [0, shfl[1]];
            for i in (0..usize::BITS - b_lo.leading_zeros()).rev() {
                v[0] = v[0].wrapping_add(v[0]);
                if (b_lo >> i) & 1 == 1 {
                    let tv = [v[1], v[0]];
                    v[0] = v[0].wrapping_add(tv[0]);
                }
            }
            out[2 * t] = v[0];
        }
        out
    }

    /// msm_fold_* over every level of [`msm_fold_spans`]: butterflies of
    /// shuffles within each span of lanes, the span's first lane writing.
    fn model_fold(mut items: Vec<u64>, w: usize) -> Vec<u64> {
        let per = items.len() / w;
        for (lg_seq, lg_lanes) in msm_fold_spans(per) {
            let run = 1usize << lg_seq;
            let span = 1usize << lg_lanes;
            let mut lanes: Vec<u64> = items
                .chunks(run)
                .map(|c| c.iter().fold(0u64, |a, &x| a.wrapping_add(x)))
                .collect();
            let mut k = 1;
            while k < span {
                let before = lanes.clone();
                for (l, v) in lanes.iter_mut().enumerate() {
                    // Lanes pair within a warp: l ^ k stays in l's span.
                    assert_eq!((l ^ k) / span, l / span);
                    *v = v.wrapping_add(before[l ^ k]);
                }
                k <<= 1;
            }
            items = lanes.iter().step_by(span).copied().collect();
        }
        assert_eq!(items.len(), w);
        items
    }

    #[test]
    fn fold_spans_cover_the_window() {
        assert!(msm_fold_spans(1).is_empty());
        assert_eq!(msm_fold_spans(2), vec![(0, 1)]);
        assert_eq!(msm_fold_spans(1 << 14), vec![(2, 5), (2, 5)]);
        assert_eq!(msm_fold_spans(1 << 10), vec![(2, 5), (0, 3)]);
        for lg in 0..20 {
            let levels = msm_fold_spans(1 << lg);
            assert_eq!(levels.iter().map(|(s, l)| s + l).sum::<u32>(), lg);
            assert!(levels
                .iter()
                .all(|&(s, l)| l <= WARP_LG && s <= FOLD_SEQ_LG));
        }
    }

    /// The pairs' bucket reduction and the window tree give each window
    /// sum (k + 1) S_k, at the shapes msm_windows launches (c from 4 up,
    /// groups as it picks them, empty buckets included).
    #[test]
    fn bucket_pairs_and_window_tree_weigh_buckets() {
        let mut r = rng();
        for (c, w, lg_g) in [
            (4u32, 3usize, 0u32),
            (5, 2, 1),
            (8, 4, 3),
            (9, 3, 4),
            (13, 2, 8),
        ] {
            let b = 1usize << (c - 1);
            let sums: Vec<Option<u64>> = (0..w * b)
                .map(|_| r.gen_bool(0.8).then(|| r.gen::<u64>()))
                .collect();
            let got = model_fold(model_bucket_pairs(&sums, w, b, lg_g), w);
            for (wi, &g) in got.iter().enumerate() {
                let want = (0..b).fold(0u64, |acc, k| {
                    acc.wrapping_add(sums[wi * b + k].unwrap_or(0).wrapping_mul(k as u64 + 1))
                });
                assert_eq!(g, want, "c={c} window {wi} lg_g={lg_g}");
            }
        }
    }

    #[test]
    fn scalar_bytes_are_montgomery_limbs() {
        let mut r = rng();
        let s = Scalar::random(&mut r);
        let bytes = scalars_as_bytes(std::slice::from_ref(&s));
        // Montgomery form: limbs = s * 2^256 mod r, recovered by dividing by R.
        let raw = u64s::<4>(bytes);
        let r_inv = Scalar::from_u64s_le(&[0, 0, 0, 1])
            .unwrap()
            .invert()
            .unwrap(); // 2^192
        let raw_canon = Scalar::from_u64s_le(&raw).unwrap();
        // raw_canon = s * 2^256; divide by 2^256 = (2^192) * 2^64
        let two64 = Scalar::from(u64::MAX) + Scalar::ONE;
        let back = raw_canon * r_inv * two64.invert().unwrap();
        assert_eq!(back, s);
        let mut v = vec![s];
        scalars_as_bytes_mut(&mut v).copy_from_slice(bytes);
        assert_eq!(v[0], s);
    }

    #[test]
    fn xyzz_round_trip_g1_g2() {
        let mut r = rng();
        for _ in 0..4 {
            let p = G1Projective::random(&mut r).to_affine();
            let k = Fp::random(&mut r);
            // XYZZ with ZZ = k^2, ZZZ = k^3: X = x*k^2, Y = y*k^3.
            let (zz, zzz) = (k.square(), k.square() * k);
            let mut bytes = Vec::new();
            for c in [p.x() * zz, p.y() * zzz, zz, zzz] {
                // SAFETY: Fp is #[repr(transparent)] over blst_fp ([u64; 6]).
                let limbs: [u64; 6] = unsafe { std::mem::transmute(c) };
                for l in limbs {
                    bytes.extend_from_slice(&l.to_le_bytes());
                }
            }
            assert_eq!(g1_from_xyzz(&bytes), G1Projective::from(p));
            let inf = vec![0u8; G1_XYZZ_BYTES];
            assert_eq!(g1_from_xyzz(&inf), G1Projective::identity());

            let q = G2Projective::random(&mut r).to_affine();
            let k = Fp2::random(&mut r);
            let (zz, zzz) = (k.square(), k.square() * k);
            let mut bytes = Vec::new();
            for c in [q.x() * zz, q.y() * zzz, zz, zzz] {
                // SAFETY: Fp2 is #[repr(transparent)] over blst_fp2 ([u64; 12]).
                let limbs: [u64; 12] = unsafe { std::mem::transmute(c) };
                for l in limbs {
                    bytes.extend_from_slice(&l.to_le_bytes());
                }
            }
            assert_eq!(g2_from_xyzz(&bytes), G2Projective::from(q));
        }
    }

    #[test]
    fn signed_digits_recompose() {
        let mut r = rng();
        let mut cases = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE];
        for _ in 0..50 {
            cases.push(Scalar::random(&mut r));
        }
        for c in [2u32, 3, 4, 7, 8, 13, 16, 20, 23] {
            for s in &cases {
                let d = signed_digits(&canonical_limbs(s), c);
                assert_eq!(d.len() as u32, num_windows(c));
                let half = 1i64 << (c - 1);
                let mut acc = Scalar::ZERO;
                let base = Scalar::from(1u64 << c);
                for &x in d.iter().rev() {
                    assert!(-half <= x && x <= half, "digit {x} out of range for c={c}");
                    acc *= base;
                    let mag = Scalar::from(x.unsigned_abs());
                    acc += if x < 0 { -mag } else { mag };
                }
                assert_eq!(acc, *s, "c = {c}");
            }
        }
    }

    #[test]
    fn window_choice_is_sane() {
        assert!(choose_window(1) <= 6);
        for lg in [10usize, 16, 20, 24, 26, 28] {
            let c = choose_window(1 << lg);
            assert!((4..=23).contains(&c));
            assert!((num_windows(c) as u64) << lg < 1u64 << 32);
        }
        assert!(choose_window(1 << 26) >= choose_window(1 << 16));
        // As measured: 16 bits from 2^17 to 2^22 points, 20 from 2^23.
        for lg in [17usize, 18, 20, 22] {
            assert_eq!(choose_window((1 << lg) + 1), 16, "2^{lg}");
        }
        for lg in [23usize, 24, 26, 27, 28] {
            assert_eq!(choose_window(1 << lg), MAX_WINDOW, "2^{lg}");
        }
        // The model below: non-decreasing in n, at most 16.
        let mut last = 0;
        for n in (0..17).map(|lg| 1usize << lg) {
            let c = choose_window(n);
            assert!(c >= last && c <= 16, "{n}: {c}");
            last = c;
        }
    }

    #[test]
    fn the_chunk_follows_the_buckets_load() {
        // Twice the mean load m / 2^(c-1), rounded down to a power of
        // two, 64..=512.
        assert_eq!(chunk_for_load(1 << 24, 20), 64, "2^24: 32 a bucket");
        assert_eq!(chunk_for_load((1 << 25) - 1, 20), 64);
        assert_eq!(chunk_for_load(1 << 25, 20), 128, "2^25: 64 a bucket");
        assert_eq!(chunk_for_load(1 << 26, 20), 256);
        assert_eq!(chunk_for_load(3 << 25, 20), 256);
        assert_eq!(chunk_for_load(1 << 27, 20), 512);
        assert_eq!(chunk_for_load(1 << 28, 20), MSM_CHUNK_MAX);
        assert_eq!(chunk_for_load(1 << 22, 16), 256);
        assert_eq!(chunk_for_load(1 << 20, 16), 64);
        for n in [0usize, 1, 2, 7, 1000, 1 << 16] {
            assert_eq!(
                chunk_for_load(n, choose_window(n.max(1))),
                MSM_CHUNK_MIN,
                "{n}"
            );
        }
        // Every choice fits the chunk-order kernels' counters.
        for lg in 0..=28usize {
            let t = chunk_for_load(1 << lg, choose_window(1 << lg));
            assert!((MSM_CHUNK_MIN..=MSM_CHUNK_LIMIT).contains(&t) && t.is_power_of_two());
        }
    }

    #[test]
    fn split_zero_one_partitions() {
        let mut r = rng();
        for n in [0usize, 1, 2, 3, 7, 33, 100, 1000] {
            let scalars: Vec<Scalar> = (0..n)
                .map(|_| match r.gen_range(0..3) {
                    0 => Scalar::ZERO,
                    1 => Scalar::ONE,
                    _ => Scalar::random(&mut r),
                })
                .collect();
            let s = split_zero_one(&scalars);
            assert_eq!(s.len(), n);
            assert_eq!(s.ones.len(), n.div_ceil(32));
            for (i, sc) in scalars.iter().enumerate() {
                let bit = (s.ones[i / 32] >> (i % 32)) & 1 == 1;
                assert_eq!(bit, *sc == Scalar::ONE);
            }
            let rebuilt: Vec<Scalar> = s.rest_ids.iter().map(|&i| scalars[i as usize]).collect();
            assert_eq!(rebuilt, s.rest_scalars);
            assert!(s
                .rest_scalars
                .iter()
                .all(|x| *x != Scalar::ZERO && *x != Scalar::ONE));
        }
    }

    #[test]
    fn cpu_ntt_matches_naive_dft() {
        let mut r = rng();
        for lg in 0..=6u32 {
            let n = 1usize << lg;
            let x: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut r)).collect();
            let w = root_of_unity(lg);
            let naive: Vec<Scalar> = (0..n)
                .map(|k| {
                    let wk = w.pow_vartime([k as u64]);
                    let mut acc = Scalar::ZERO;
                    let mut p = Scalar::ONE;
                    for xi in &x {
                        acc += *xi * p;
                        p *= wk;
                    }
                    acc
                })
                .collect();
            let mut y = x.clone();
            ntt_cpu(&mut y, NttKind::Forward);
            assert_eq!(y, naive);
            ntt_cpu(&mut y, NttKind::Inverse);
            assert_eq!(y, x);
            let mut z = x.clone();
            ntt_cpu(&mut z, NttKind::CosetForward);
            ntt_cpu(&mut z, NttKind::CosetInverse);
            assert_eq!(z, x);
        }
    }

    #[test]
    fn root_of_unity_has_exact_order() {
        for lg in [1u32, 2, 10, 28] {
            let w = root_of_unity(lg);
            let mut p = w;
            for _ in 0..lg - 1 {
                p = p.square();
            }
            assert_eq!(p, -Scalar::ONE);
        }
        let _ = G1Projective::generator().to_affine();
    }
}
