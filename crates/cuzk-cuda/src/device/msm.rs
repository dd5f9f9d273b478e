//! Pippenger MSM over G1 and G2 (kernels/msm.cuh): signed-digit windows,
//! the counting sort of (window, bucket) entries, chunked XYZZ bucket sums
//! and the per-window reduction, with the windows combined on the host.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};
use group::Group;

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::{CudaDevice, DeviceGroup, DevicePoints, DeviceScalars, Group_, ScalarForm};
use crate::error::{CudaError, Result};
use crate::host::{self, FR_BYTES};

typed_kernels! {
    /// `msm_digits`: each scalar's signed c-bit digits, as sort keys
    /// (window-major, W·n keys).
    MsmDigits["msm_digits"](scalars: DevPtr, n: u32, mont: u32, c: u32, windows: u32, keys: DevPtr);
    /// `msm_histogram`: one window's bucket counts.
    MsmHistogram["msm_histogram"](keys: DevPtr, n: u32, hist: DevPtr);
    /// `msm_scatter`: one window's entries to their sorted places.
    MsmScatter["msm_scatter"](
        keys: DevPtr,
        ids: DevPtr,
        n: u32,
        lo: u32,
        hi: u32,
        cursor: DevPtr,
        sorted: DevPtr,
    );
    /// `msm_sort_digits`: each scalar's signed digits as keys, and each
    /// tile's entries per (window, part) of the buckets
    /// (kernels/msm_sort.cuh).
    MsmSortDigits["msm_sort_digits"](
        scalars: DevPtr,
        n: u32,
        mont: u32,
        c: u32,
        windows: u32,
        lg_low: u32,
        parts: u32,
        tiles: u32,
        keys: DevPtr,
        tile_hist: DevPtr,
    );
    /// `msm_sort_place`: windows [w0, w1)'s entries to their parts' ranges.
    MsmSortPlace["msm_sort_place"](
        keys: DevPtr,
        ids: DevPtr,
        n: u32,
        w0: u32,
        w1: u32,
        lg_low: u32,
        parts: u32,
        tiles: u32,
        part_off: DevPtr,
        tmp: DevPtr,
        stage: u32,
    );
    /// `msm_sort_buckets`: each (window, part) of a group sorted by bucket,
    /// with the buckets' counts and offsets.
    MsmSortBuckets["msm_sort_buckets"](
        tmp: DevPtr,
        part_off: DevPtr,
        tiles: u32,
        lg_low: u32,
        wp0: u32,
        total_parts: u32,
        count: DevPtr,
        off: DevPtr,
        sorted: DevPtr,
        stage: u32,
    );
    /// `msm_chunk_counts`: chunks of at most `t` items per segment, and the
    /// largest count.
    MsmChunkCounts["msm_chunk_counts"](count: DevPtr, s: u32, t: u32, out: DevPtr, max_out: DevPtr);
    /// `msm_chunk_owner`: each chunk's segment.
    MsmChunkOwner["msm_chunk_owner"](chunk_off: DevPtr, s: u32, owner: DevPtr);
    /// `msm_chunk_len_hist`: each tile's chunks counted by length.
    MsmChunkLenHist["msm_chunk_len_hist"](
        seg_count: DevPtr,
        chunk_off: DevPtr,
        owner: DevPtr,
        s: u32,
        t: u32,
        tile_hist: DevPtr,
    );
    /// `msm_chunk_order`: chunk ids, longest chunks first.
    MsmChunkOrder["msm_chunk_order"](
        seg_count: DevPtr,
        chunk_off: DevPtr,
        owner: DevPtr,
        s: u32,
        t: u32,
        tile_off: DevPtr,
        order: DevPtr,
    );
    /// `msm_accumulate_g1`, `_g2`, `_g1i`, and G2 under register caps for 3
    /// and 4 blocks per SM (`_g2o3`, `_g2o4`): the chunked bucket sums from
    /// the affine points.
    MsmAccumulate[
        "msm_accumulate_g1",
        "msm_accumulate_g2",
        "msm_accumulate_g1i",
        "msm_accumulate_g2o3",
        "msm_accumulate_g2o4",
    ](
        points: DevPtr,
        sorted: DevPtr,
        seg_count: DevPtr,
        seg_off: DevPtr,
        chunk_off: DevPtr,
        owner: DevPtr,
        s: u32,
        t: u32,
        order: DevPtr,
        out: DevPtr,
    );
    /// `msm_reduce_g1`, `_g2`, `_g1i`: one more pass of chunked sums over
    /// XYZZ items.
    MsmReduce["msm_reduce_g1", "msm_reduce_g2", "msm_reduce_g1i"](
        items: DevPtr,
        seg_count: DevPtr,
        seg_off: DevPtr,
        chunk_off: DevPtr,
        owner: DevPtr,
        s: u32,
        t: u32,
        out: DevPtr,
    );
    /// `msm_merge_counts`: threads each bucket's in-place merge pass needs.
    MsmMergeCounts["msm_merge_counts"](cnt: DevPtr, s: u32, stride: u32, t: u32, out: DevPtr);
    /// `msm_merge_g1`, `_g2`, `_g1i`: one pass of the in-place merge of
    /// each bucket's chunk sums.
    MsmMerge["msm_merge_g1", "msm_merge_g2", "msm_merge_g1i"](
        items: DevPtr,
        cnt: DevPtr,
        off: DevPtr,
        moff: DevPtr,
        owner: DevPtr,
        s: u32,
        stride: u32,
        t: u32,
    );
    /// `msm_bucket_reduce_g1`, `_g2`: each window's buckets, weighted, in
    /// 2^lg_groups groups; with `tsum` (not null) split: each group's
    /// weighted sum to `out`, its plain sum to `tsum`.
    MsmBucketReduce["msm_bucket_reduce_g1", "msm_bucket_reduce_g2"](
        items: DevPtr,
        count: DevPtr,
        off: DevPtr,
        windows: u32,
        buckets: u32,
        lg_groups: u32,
        out: DevPtr,
        tsum: DevPtr,
    );
    /// `msm_bucket_pairs_g1`, `_g2`, `_g1i`: the same reduction with each
    /// group on a pair of lanes, two items per group (split as above with
    /// `tsum`: one item per group in each).
    MsmBucketPairs["msm_bucket_pairs_g1", "msm_bucket_pairs_g2", "msm_bucket_pairs_g1i"](
        items: DevPtr,
        count: DevPtr,
        off: DevPtr,
        windows: u32,
        buckets: u32,
        lg_groups: u32,
        out: DevPtr,
        tsum: DevPtr,
    );
    /// `msm_group_sums_g1`, `_g2`, `_g1i`: the split reduction's second
    /// level, sum g T_g over 2^(lg_groups - lg_threads) groups a thread.
    MsmGroupSums["msm_group_sums_g1", "msm_group_sums_g2", "msm_group_sums_g1i"](
        tsum: DevPtr,
        windows: u32,
        lg_groups: u32,
        lg_threads: u32,
        out: DevPtr,
    );
    /// `msm_window_join_g1`, `_g2`, `_g1i`: each window's sum, a + per u.
    MsmWindowJoin["msm_window_join_g1", "msm_window_join_g2", "msm_window_join_g1i"](
        a: DevPtr,
        u: DevPtr,
        windows: u32,
        per: u32,
        out: DevPtr,
    );
    /// `msm_fold_g1`, `_g2`, `_g1i`: one level of the windows' sums as a
    /// tree, 2^(lg_seq + lg_lanes) items to one.
    MsmFold["msm_fold_g1", "msm_fold_g2", "msm_fold_g1i"](
        items: DevPtr,
        lanes: u32,
        lg_seq: u32,
        lg_lanes: u32,
        out: DevPtr,
    );
}

/// Threads per block of msm_digits.
const MSM_DIGITS_BLOCK: u32 = 256;
/// Threads per block of msm_histogram.
const MSM_HISTOGRAM_BLOCK: u32 = 256;
/// Threads per block of msm_scatter.
const MSM_SCATTER_BLOCK: u32 = 256;
/// Bytes of `sorted` one pass of msm_scatter aims to write into (0: a
/// window in one pass), `CUZK_MSM_SCATTER_KB` for measuring and checking;
/// default 16 MiB, with at most [`MAX_SCATTER_PASSES`] passes a window
/// (larger windows take larger regions). H200, G1, c = 20, the scatter
/// step of `CUZK_MSM_PROFILE`: 2^24 points (64 MB a window), one pass
/// 12.45 ms of sort, 4 passes of 16 MiB **9.87** (2026-12-04 call 33), 16
/// of 4 MiB slower; 2^26 (256 MB a window, call 34): one pass 39.1 ms, 8
/// passes of 32 MiB 33.1, **4 of 64 MiB 27.0** (G1 2^26 410.6 -> 396.1
/// ms), 16 of 16 MiB lost 13.8 ms (call 33): each pass reads the window's
/// keys again.
const SCATTER_REGION_KB: usize = 16 << 10;
/// The most scatter passes a window takes (the fewest that measured best
/// at both 2^24 and 2^26, see [`SCATTER_REGION_KB`]).
const MAX_SCATTER_PASSES: usize = 4;

/// [`MAX_SCATTER_PASSES`], or `CUZK_MSM_SCATTER_PASSES_MAX` (measuring).
fn max_scatter_passes() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("CUZK_MSM_SCATTER_PASSES_MAX")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&p| p > 0)
            .unwrap_or(MAX_SCATTER_PASSES)
    })
}

fn scatter_region_bytes() -> usize {
    static REGION: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *REGION.get_or_init(|| {
        std::env::var("CUZK_MSM_SCATTER_KB")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(SCATTER_REGION_KB)
            << 10
    })
}

/// Threads per block of msm_chunk_counts (at most 1024: its block maximum
/// goes through 32 warps' shared slots).
const MSM_CHUNK_COUNTS_BLOCK: u32 = 256;
/// Threads per block of msm_chunk_owner.
const MSM_CHUNK_OWNER_BLOCK: u32 = 256;
/// Threads per block of msm_chunk_len_hist and msm_chunk_order: their
/// `__launch_bounds__` (CHUNK_ORDER_BLOCK in kernels/msm.cuh).
const MSM_CHUNK_ORDER_BLOCK: u32 = 256;
/// Chunks per block of msm_chunk_len_hist and msm_chunk_order
/// (CHUNK_ORDER_TILE: 4 per thread).
const MSM_CHUNK_ORDER_TILE: usize = 1024;
/// The most chunk lengths the order kernels' shared counters hold
/// (CHUNK_ORDER_MAX_T); no chunk may exceed it.
const MSM_CHUNK_ORDER_MAX_T: u32 = host::MSM_CHUNK_LIMIT;
/// Threads per block of msm_accumulate_*. The G1 kernel has no register
/// cap (164 registers: 3 blocks an SM); capped for 4 (128 registers and
/// spills) it measured +16% / +15% at 2^24 / 2^26 (run 54, H100: 108.39 /
/// 423.07 ms against 93.62 / 369.14), and two chains a warp (run 49, 191
/// registers) slower too. Other block sizes have not been measured.
const MSM_ACCUMULATE_BLOCK: u32 = 128;
/// Threads per block of msm_reduce_* (the 0/1 path's reduction too).
const MSM_REDUCE_BLOCK: u32 = 128;
/// Threads per block of msm_bucket_reduce_* and msm_bucket_pairs_*.
const MSM_BUCKET_REDUCE_BLOCK: u32 = 64;
/// Threads per block of msm_fold_*.
const MSM_FOLD_BLOCK: u32 = 128;

// The chunk T of the bucket sums (a thread adds at most T points before
// its partial sum moves to the merge) is host::msm_chunk's, by size. With
// 32 (runs 1-4) the merge passes took 57 ms of a 2^26 G1 MSM (2.5e7
// buckets averaging 32 points, so most spilled into a second chunk).
const _: () = assert!(host::MSM_CHUNK_MAX <= MSM_CHUNK_ORDER_MAX_T);

/// Whether the first bucket sums take their chunks longest first (a warp
/// then sums chunks of one length instead of waiting on its longest). H200
/// (run 12): G1 2^26 702.96 -> 550.77 ms, G1 2^24 182.90 -> 140.99, G2
/// 2^24 690.65 -> 515.85; the sort itself 33 us at 2^22.
pub(super) const DEFAULT_CHUNK_ORDER: bool = true;

/// Whether the MSM merges each bucket's chunk sums in place
/// (`msm_merge_*`, only the buckets with more than one) rather than by
/// copying passes over every bucket (`msm_reduce_*`): those took 5.3 ms of
/// a 2^24 G1 MSM and 11-13 ms of a 2^24 G2 one at c = 20 (2026-12-04, calls
/// 28-29), where only the top window's ~3e4 buckets hold more than one
/// chunk. Measured (call 30, "merge chunks" phase): G1 2^24 5.3 -> 0.5 ms,
/// G2 2^24 11-13 -> 1.0 ms; rows: G1 2^24 119.2 -> 114.5 ms (shared sort
/// both), G2 2^24 345.1 -> 333.0, G1 2^26 446.3 -> 444.8, G1 2^20 9.9 ->
/// 9.6.
pub(super) const DEFAULT_MERGE_IN_PLACE: bool = true;

/// G1 MSM kernels with inlined Fq products. Inlined was faster on the H200
/// until the products' final subtraction became a borrow chain (run 9:
/// 2^26 points in VRAM 695.7 ms against 758.8 ms out of line); since then
/// out of line is faster at every size (run 17, 2026-12-03 call 18, median
/// of 2: 2^20 9.47 against 9.84 ms, 2^24 114.24 against 118.13, 2^26
/// 460.55 against 473.30), while the 0/1 sum at 2^26 is 2% slower (20.41
/// against 19.99 ms). The 0/1 sum has its own choice
/// ([`DEFAULT_ZERO_ONE_INLINE`]).
pub(super) const DEFAULT_G1_INLINE: bool = false;

/// The G1 0/1 sum (`sum_selected_g1i`) with inlined Fq products: with the
/// points dealt by count (run 20, 2026-12-03 call 23, median of 3), 2^26
/// points, half selected: 18.28 ms inlined against 19.15 out of line. On
/// an H100 with the Karatsuba Fq product (run 48) out of line is faster
/// (run 51: 16.35 against 17.33; run 63: 17.01 against 17.86); the H200
/// has not timed both since run 20, so the choice waits for it.
pub(super) const DEFAULT_ZERO_ONE_INLINE: bool = true;

/// Blocks of `MSM_ACCUMULATE_BLOCK` threads that the G2 accumulation's
/// register cap leaves room for on one SM: 2 (uncapped, 204 registers on
/// sm_90), 3 (168) or 4 (128, with spills). H200, G2 MSM 2^24 with chunks
/// by length (bench/gpu-kernels.md run 12): 515.9 / **498.9** / 521.0 ms;
/// with chunks in order (run 11) 3 blocks gained nothing (681 / 683 / 710).
/// Since: run 17 (H200) 358.52 / **334.68** / 369.03; run 48 (H100, Fq by
/// Karatsuba, Fq2 by interleaved rows) 336.26 / **327.58** / 354.60.
pub(super) const DEFAULT_G2_ACCUMULATE_BLOCKS: u32 = 3;
/// The builds of the G2 accumulation, by blocks per SM.
pub const G2_ACCUMULATE_BLOCKS: [u32; 3] = [2, 3, 4];

/// For which group the per-window bucket reduction runs each group of
/// buckets on a pair of lanes (`msm_bucket_pairs_*`: one point live per
/// lane across an addition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketPairs {
    pub g1: bool,
    pub g2: bool,
}

/// The same form for both groups.
impl From<bool> for BucketPairs {
    fn from(on: bool) -> Self {
        BucketPairs { g1: on, g2: on }
    }
}

/// Pairs for G2 only. sm_90 ptxas, G2: 36 bytes of spill stores against
/// 3896 for the one-lane form, G1: 210 registers and none against 255 and
/// 8. Measured on the H200 (bench/gpu-kernels.md run 13, both with the
/// window tree): G2 2^24 482.3 ms with pairs against 488.9 on one lane,
/// 2^22 167.6 against 163.7; G1 one lane is faster at 2^20 (11.0 against
/// 12.0 ms), 2^22 (47.2 against 54.3) and 2^24 (138.9 against 140.5),
/// slower only at 2^26 (548.6 against 543.9): G1 stays on one lane.
pub(super) const DEFAULT_BUCKET_PAIRS: BucketPairs = BucketPairs {
    g1: false,
    g2: true,
};

/// Whether the windows' final sums run as a tree of warp butterflies
/// (`msm_fold_*`: log2(32) additions in sequence per level) instead of the
/// chunked reduction (up to 64 in sequence per level, its last levels on
/// 1-16 blocks: 10.2 ms of G2's kernels at 2^22, run 10). The tree
/// measured (run 13, H200): G2 2^22 176.0 -> 167.6 ms, G1 2^18 6.84 ->
/// 5.92.
pub(super) const DEFAULT_WINDOW_TREE: bool = true;

/// When the per-window bucket reduction is split in two levels (each
/// group's b_lo T_g left to `msm_group_sums_*` over the groups' sums
/// instead of a double-and-add of up to c - 1 bits in every thread: ~30 of
/// a thread's ~94 additions at c = 20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketSplit {
    /// Where the first level fills the card (its group count not capped
    /// by the window width): there the saved additions are throughput. On
    /// fewer threads each level's chain of additions is the time and the
    /// second level's adds to it. Measured on an H100 (bench/gpu-kernels.md
    /// run 45): G1 2^24 (c = 20, split) 101.56 -> 100.29 ms, 2^26 394.20 ->
    /// 392.25, G2 2^24 324.16 -> 317.97; G1 2^20 (c = 16) split 8.79
    /// against 8.46 unsplit, which Auto keeps.
    Auto,
    Always,
    Never,
}

pub(super) const DEFAULT_BUCKET_SPLIT: BucketSplit = BucketSplit::Auto;

impl BucketSplit {
    pub(super) fn to_u8(self) -> u8 {
        match self {
            BucketSplit::Auto => 0,
            BucketSplit::Always => 1,
            BucketSplit::Never => 2,
        }
    }

    fn from_u8(v: u8) -> Self {
        match v {
            1 => BucketSplit::Always,
            2 => BucketSplit::Never,
            _ => BucketSplit::Auto,
        }
    }
}

/// Groups a thread of the split reduction's second level takes (log2).
const GROUP_SUMS_PER_THREAD_LG: u32 = 3;

/// Where an MSM's scalars are: a device address, their count and form.
#[derive(Clone, Copy)]
pub(super) struct ScalarsAt {
    pub(super) ptr: u64,
    pub(super) len: usize,
    pub(super) montgomery: bool,
}

/// Where an MSM's points are: a run of `len` points of `group` from a
/// device address (a resident set, or a range of one).
#[derive(Clone, Copy)]
pub(super) struct PointsAt {
    pub(super) group: Group_,
    pub(super) ptr: u64,
    pub(super) len: usize,
}

/// An indexed MSM's point ids: on the host (checked, then uploaded), or
/// already on the device, written by a kernel that bounds them (the GPU
/// 0/1 split's positions, below its length).
#[derive(Clone, Copy)]
pub(super) enum Ids<'a> {
    Host(&'a [u32]),
    Device { ptr: u64, len: usize },
}

impl CudaDevice {
    /// Uses (or not) the G1 MSM kernels with inlined Fq products.
    pub fn set_g1_inline(&self, inline: bool) {
        self.g1_inline
            .store(inline, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn g1_inline(&self) -> bool {
        self.g1_inline.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Uses the G2 accumulation built for `blocks` blocks per SM (one of
    /// [`G2_ACCUMULATE_BLOCKS`]); returns false, changing nothing, for
    /// another count.
    pub fn set_g2_accumulate_blocks(&self, blocks: u32) -> bool {
        if !G2_ACCUMULATE_BLOCKS.contains(&blocks) {
            return false;
        }
        self.g2_accumulate_blocks
            .store(blocks, std::sync::atomic::Ordering::Relaxed);
        true
    }

    pub fn g2_accumulate_blocks(&self) -> u32 {
        self.g2_accumulate_blocks
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Orders (or not) the first bucket sums' chunks longest first.
    pub fn set_msm_chunk_order(&self, on: bool) {
        self.chunk_order
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn msm_chunk_order(&self) -> bool {
        self.chunk_order.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sorts the MSM's entries through shared memory (true) or with
    /// global atomics (false, the sort before 2026-12-04). For benchmarks
    /// and checks: budgets read [`host::msm_scratch_bytes`], which states
    /// the sort a device opens with ([`host::msm_shared_sort_from_env`]);
    /// the atomic one holds 4·W·m bytes more than the shared one.
    pub fn set_msm_shared_sort(&self, on: bool) {
        self.shared_sort
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn msm_shared_sort(&self) -> bool {
        self.shared_sort.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the shared-memory sort's passes order their entries in
    /// shared memory a stage at a time before writing them (true, the
    /// default) or write each entry where it goes (false, the form
    /// measured in 2026-12-04's calls 30-32).
    pub fn set_msm_sort_staged(&self, on: bool) {
        self.sort_staged
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn msm_sort_staged(&self) -> bool {
        self.sort_staged.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sorts every later MSM's entries under `t` (None: the default
    /// geometry as far as this card's shared memory allows,
    /// [`host::MsmSortTuning::fitted`], what [`CudaDevice::open`] sets),
    /// for the benchmark's sweep; the entries and so the sums are the same
    /// whatever the geometry, only [`host::msm_scratch_bytes`] states the
    /// default's bytes. Raises the three sort kernels' dynamic shared
    /// memory limit to `t.smem` where that is above the driver's default.
    /// Errors, changing nothing, where `t` is not
    /// [`host::MsmSortTuning::valid`] or the device cannot give a block
    /// that much shared memory.
    pub fn set_msm_sort_tuning(&self, t: Option<host::MsmSortTuning>) -> Result<()> {
        let optin = self
            .ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )
            .map_err(|e| self.err("device attribute", "msm_sort", 0, e))?;
        let t = t.unwrap_or_else(|| host::MsmSortTuning::fitted(optin.max(0) as u32));
        if !t.valid() {
            return Err(self.bad(
                "msm_sort",
                0,
                format!(
                    "sort tuning {} is outside what the sort kernels take",
                    t.name()
                ),
            ));
        }
        if i64::from(t.smem) > i64::from(optin) {
            return Err(self.bad(
                "msm_sort",
                0,
                format!(
                    "sort tuning {}: {} bytes of shared memory a block, above the {optin} this device allows",
                    t.name(),
                    t.smem
                ),
            ));
        }
        for f in [
            &self.k.msm_sort_digits.0,
            &self.k.msm_sort_place.0,
            &self.k.msm_sort_buckets.0,
        ] {
            f.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                t.smem.max(48 * 1024) as i32,
            )
            .map_err(|e| self.err("raising the shared memory limit", "msm_sort", 0, e))?;
        }
        *self
            .msm_sort_tuning
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = t;
        Ok(())
    }

    /// The sort's geometry ([`Self::set_msm_sort_tuning`]).
    pub fn msm_sort_tuning(&self) -> host::MsmSortTuning {
        *self
            .msm_sort_tuning
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Merges the MSM's chunk sums in place (true) or by copying passes
    /// (false, the merge before 2026-12-04).
    pub fn set_msm_merge_in_place(&self, on: bool) {
        self.merge_in_place
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn msm_merge_in_place(&self) -> bool {
        self.merge_in_place
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs (or not) the bucket reduction's groups on pairs of lanes, per
    /// group (a bool sets both).
    pub fn set_msm_bucket_pairs(&self, on: impl Into<BucketPairs>) {
        let on = on.into();
        let bits = u8::from(on.g1) | u8::from(on.g2) << 1;
        self.bucket_pairs
            .store(bits, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn msm_bucket_pairs(&self) -> BucketPairs {
        let bits = self.bucket_pairs.load(std::sync::atomic::Ordering::Relaxed);
        BucketPairs {
            g1: bits & 1 == 1,
            g2: bits & 2 == 2,
        }
    }

    /// Sums (or not) the windows' last items by a tree of warp butterflies
    /// instead of the chunked reduction.
    pub fn set_msm_window_tree(&self, on: bool) {
        self.window_tree
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn msm_window_tree(&self) -> bool {
        self.window_tree.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// When the bucket reduction is split in two levels (see
    /// [`BucketSplit`]); with the window tree only.
    pub fn set_msm_bucket_split(&self, when: BucketSplit) {
        self.bucket_split
            .store(when.to_u8(), std::sync::atomic::Ordering::Relaxed);
    }

    pub fn msm_bucket_split(&self) -> BucketSplit {
        BucketSplit::from_u8(self.bucket_split.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Makes every MSM use windows of `c` bits (4..=23) instead of the
    /// width its size calls for, or, with None, go back to that width.
    /// For benchmarks that measure the choice only: the device bytes an
    /// MSM takes ([`host::msm_scratch_bytes`], which budgets read) are
    /// those of the size's own width. Returns false, changing nothing, for
    /// a width out of range.
    pub fn set_msm_window(&self, c: Option<u32>) -> bool {
        let v = match c {
            None => 0,
            Some(c) if (4..=23).contains(&c) => c,
            Some(_) => return false,
        };
        self.msm_window
            .store(v, std::sync::atomic::Ordering::Relaxed);
        true
    }

    /// The window width set by [`Self::set_msm_window`], if any.
    pub fn msm_window(&self) -> Option<u32> {
        match self.msm_window.load(std::sync::atomic::Ordering::Relaxed) {
            0 => None,
            c => Some(c),
        }
    }

    /// Makes every MSM's first bucket sums take chunks of `t` entries
    /// (2..=[`host::MSM_CHUNK_LIMIT`]) instead of [`host::msm_chunk`]'s,
    /// or, with None, go back to those. For checks and benchmarks only: a
    /// chunk below 64 takes more device bytes than
    /// [`host::msm_scratch_bytes`] states. Returns false, changing
    /// nothing, for a chunk out of range.
    pub fn set_msm_chunk(&self, t: Option<u32>) -> bool {
        let v = match t {
            None => 0,
            Some(t) if (2..=host::MSM_CHUNK_LIMIT).contains(&t) => t,
            Some(_) => return false,
        };
        self.msm_chunk
            .store(v, std::sync::atomic::Ordering::Relaxed);
        true
    }

    /// The chunk set by [`Self::set_msm_chunk`], if any.
    pub fn msm_chunk(&self) -> Option<u32> {
        match self.msm_chunk.load(std::sync::atomic::Ordering::Relaxed) {
            0 => None,
            t => Some(t),
        }
    }

    /// Chunk ids of a chunk plan (`cnt` items per segment, `off` the
    /// segments' first chunks, `owner` each chunk's segment, at most
    /// `bound` chunks), longest chunks first: a counting sort on the
    /// length, tile by tile.
    #[allow(clippy::too_many_arguments)]
    fn chunk_order(
        &self,
        count: &CudaSlice<u32>,
        off: &CudaSlice<u32>,
        owner: &CudaSlice<u32>,
        s: usize,
        bound: usize,
        t: u32,
        kernel: &'static str,
    ) -> Result<CudaSlice<u32>> {
        let tiles = bound.div_ceil(MSM_CHUNK_ORDER_TILE).max(1);
        let cfg = cudarc::driver::LaunchConfig {
            grid_dim: (tiles as u32, 1, 1),
            block_dim: (MSM_CHUNK_ORDER_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let cells = t as usize * tiles;
        let tile_hist: CudaSlice<u32> = self.alloc(kernel, cells)?;
        self.k.msm_chunk_len_hist.launch(
            self,
            "msm_chunk_len_hist",
            bound,
            cfg,
            self.p(count),
            self.p(off),
            self.p(owner),
            s as u32,
            t,
            self.p(&tile_hist),
        )?;
        let tile_off: CudaSlice<u32> = self.alloc(kernel, cells + 1)?;
        self.scan(&tile_hist, &tile_off, cells)?;
        drop(tile_hist);
        let order: CudaSlice<u32> = self.alloc(kernel, bound)?;
        self.k.msm_chunk_order.launch(
            self,
            "msm_chunk_order",
            bound,
            cfg,
            self.p(count),
            self.p(off),
            self.p(owner),
            s as u32,
            t,
            self.p(&tile_off),
            self.p(&order),
        )?;
        Ok(order)
    }

    /// Index into the accumulation kernels.
    fn accumulate_kernel(&self, group: Group_) -> usize {
        match (group, self.g2_accumulate_blocks()) {
            (Group_::G2, 3) => 3,
            (Group_::G2, 4) => 4,
            _ => self.msm_kernel(group),
        }
    }

    /// Uses (or not) the G1 0/1 sum with inlined Fq products.
    pub fn set_zero_one_inline(&self, inline: bool) {
        self.zero_one_inline
            .store(inline, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn zero_one_inline(&self) -> bool {
        self.zero_one_inline
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Index into the 0/1 sum's kernel array (like [`Self::msm_kernel`]'s,
    /// with the G1 build of [`Self::set_zero_one_inline`]).
    pub(super) fn zero_one_kernel(&self, group: Group_) -> usize {
        match group {
            Group_::G1 if self.zero_one_inline() => 2,
            Group_::G1 => 0,
            Group_::G2 => 1,
        }
    }

    /// Index into the accumulation, reduction and 0/1 kernel arrays.
    pub(super) fn msm_kernel(&self, group: Group_) -> usize {
        match group {
            Group_::G1 if self.g1_inline() => 2,
            Group_::G1 => 0,
            Group_::G2 => 1,
        }
    }

    /// sum s_i P_i over Montgomery scalars; points.len() >= scalars.len().
    pub fn msm_g1(&self, points: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective> {
        self.msm_host(points, scalars)
    }

    pub fn msm_g2(&self, points: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective> {
        self.msm_host(points, scalars)
    }

    fn msm_host<G: DeviceGroup>(&self, points: &[G::Affine], scalars: &[Scalar]) -> Result<G> {
        let n = scalars.len();
        if points.len() < n {
            return Err(self.bad(
                G::MSM,
                n,
                format!("{} points for {n} scalars", points.len()),
            ));
        }
        let p = self.upload_points::<G>(&points[..n])?;
        let s = self.upload_scalars(scalars)?;
        self.msm_device(&p, &s, None)
    }

    /// MSM over resident points; `ids` (if any) gives, for each scalar, the
    /// index of its point (the indexed MSM of the split's non-0/1 part).
    pub fn msm_g1_device(
        &self,
        points: &DevicePoints,
        scalars: &DeviceScalars,
        ids: Option<&[u32]>,
    ) -> Result<G1Projective> {
        self.msm_device(points, scalars, ids)
    }

    pub fn msm_g2_device(
        &self,
        points: &DevicePoints,
        scalars: &DeviceScalars,
        ids: Option<&[u32]>,
    ) -> Result<G2Projective> {
        self.msm_device(points, scalars, ids)
    }

    fn msm_device<G: DeviceGroup>(
        &self,
        points: &DevicePoints,
        scalars: &DeviceScalars,
        ids: Option<&[u32]>,
    ) -> Result<G> {
        let at = self.scalars_at(scalars);
        let pts = self.points_at(points, 0);
        let (sums, c) = self.msm_windows(G::GROUP, pts, at, ids.map(Ids::Host), None, G::MSM)?;
        Ok(window_sum(&sums, c))
    }

    /// The points of `p` from point `first` on (`first` at most its length).
    pub(super) fn points_at(&self, p: &DevicePoints, first: usize) -> PointsAt {
        let first = first.min(p.len);
        PointsAt {
            group: p.group,
            ptr: self.p(&p.buf) + (first * p.group.affine_bytes()) as u64,
            len: p.len - first,
        }
    }

    pub(super) fn scalars_at(&self, s: &DeviceScalars) -> ScalarsAt {
        ScalarsAt {
            ptr: self.p(&s.buf),
            len: s.len,
            montgomery: s.form == ScalarForm::Montgomery,
        }
    }

    /// G1 MSM over `count` Montgomery-form scalars that already lie on the
    /// device, starting at element `first` of `scalars` (a buffer another
    /// stream of this context filled, e.g. H's coefficients straight from
    /// the NTT), against `points[0..count]`. The caller makes sure the
    /// buffer's writes have completed (a synchronisation or an event this
    /// device's stream waited for) and that it outlives the call.
    pub fn msm_g1_scalars_on_device(
        &self,
        points: &DevicePoints,
        scalars: &CudaSlice<u8>,
        first: usize,
        count: usize,
    ) -> Result<G1Projective> {
        self.msm_g1_on_device_at(self.points_at(points, 0), scalars, first, count)
    }

    /// [`Self::msm_g1_scalars_on_device`] of the range `first..first + count`
    /// of both the scalars and the points: one part of a resident MSM run
    /// in parts, each part's scratch that of `count` points
    /// ([`host::msm_scratch_bytes`]).
    pub fn msm_g1_range_on_device(
        &self,
        points: &DevicePoints,
        scalars: &CudaSlice<u8>,
        first: usize,
        count: usize,
    ) -> Result<G1Projective> {
        if first > points.len {
            return Err(self.bad(
                "msm_g1",
                count,
                format!("points from {first} of {}", points.len),
            ));
        }
        self.msm_g1_on_device_at(self.points_at(points, first), scalars, first, count)
    }

    fn msm_g1_on_device_at(
        &self,
        points: PointsAt,
        scalars: &CudaSlice<u8>,
        first: usize,
        count: usize,
    ) -> Result<G1Projective> {
        let kernel = "msm_g1";
        let end = first
            .checked_add(count)
            .and_then(|e| e.checked_mul(FR_BYTES))
            .filter(|&e| e <= scalars.len());
        if end.is_none() {
            return Err(self.bad(
                kernel,
                count,
                format!(
                    "scalars {first}..{first}+{count} past a buffer of {} bytes",
                    scalars.len()
                ),
            ));
        }
        let at = ScalarsAt {
            ptr: self.p(scalars) + (first * FR_BYTES) as u64,
            len: count,
            montgomery: true,
        };
        let (sums, c) = self.msm_windows(Group_::G1, points, at, None, None, kernel)?;
        Ok(window_sum(&sums, c))
    }

    /// G1 MSM with the points streamed from pinned host memory: the copy
    /// runs on a second stream while the scalars are decomposed and sorted
    /// (which needs no points); the bucket accumulation waits for it.
    pub fn msm_g1_pinned(
        &self,
        src: &cudarc::driver::PinnedHostSlice<u8>,
        n: usize,
        scalars: &DeviceScalars,
    ) -> Result<G1Projective> {
        let kernel = "msm_g1_pinned";
        let bytes = n * host::G1_AFFINE_BYTES;
        if src.len() < bytes {
            return Err(self.bad(kernel, n, format!("pinned buffer of {} bytes", src.len())));
        }
        let mut buf: CudaSlice<u8> = self.alloc(kernel, bytes)?;
        let ev = |st: &CudaStream| {
            st.record_event(None)
                .map_err(|e| self.err("event", kernel, n, e))
        };
        // The copy stream waits for the allocation (stream-ordered on the
        // main stream); the main stream later waits for the copy, and frees
        // the buffer in its own order after the kernels that read it.
        let allocated = ev(&self.stream)?;
        self.copy_stream
            .wait(&allocated)
            .map_err(|e| self.err("stream wait", kernel, n, e))?;
        let host = src
            .as_slice()
            .map_err(|e| self.err("pinned slice", kernel, n, e))?;
        self.copy_stream
            .memcpy_htod(&host[..bytes], &mut buf)
            .map_err(|e| self.err("copy to device", kernel, n, e))?;
        let copied = ev(&self.copy_stream)?;
        let points = DevicePoints {
            group: Group_::G1,
            len: n,
            buf,
        };
        let at = self.scalars_at(scalars);
        let pts = self.points_at(&points, 0);
        let (sums, c) = self.msm_windows(Group_::G1, pts, at, None, Some(&copied), kernel)?;
        Ok(window_sum(&sums, c))
    }

    /// Runs the Pippenger kernels; returns each window's sum (XYZZ bytes)
    /// and the window width. `points_ready` (if any) is waited for before
    /// the first kernel that reads the points. The most its buffers hold
    /// at once is stated by [`host::msm_scratch_bytes`], which callers
    /// budget with: a change to the buffers here changes that function.
    pub(super) fn msm_windows(
        &self,
        group: Group_,
        points: PointsAt,
        scalars: ScalarsAt,
        ids: Option<Ids<'_>>,
        points_ready: Option<&cudarc::driver::CudaEvent>,
        kernel: &'static str,
    ) -> Result<(Vec<Vec<u8>>, u32)> {
        let m = scalars.len;
        if points.group != group {
            return Err(self.bad(kernel, m, "points of the other group".into()));
        }
        match ids {
            Some(Ids::Device { len, .. }) => {
                if len != m {
                    return Err(self.bad(kernel, m, format!("{len} ids for {m} scalars")));
                }
            }
            Some(Ids::Host(ids)) => {
                if ids.len() != m {
                    return Err(self.bad(kernel, m, format!("{} ids for {m} scalars", ids.len())));
                }
                if let Some(bad) = ids.iter().find(|&&i| i as usize >= points.len) {
                    return Err(self.bad(
                        kernel,
                        m,
                        format!("id {bad} past {} points", points.len),
                    ));
                }
            }
            None => {
                if points.len < m {
                    return Err(self.bad(
                        kernel,
                        m,
                        format!("{} points for {m} scalars", points.len),
                    ));
                }
            }
        }
        if points.len >= 1 << 31 {
            return Err(CudaError::Unsupported {
                kernel,
                size: points.len,
                limit: (1 << 31) - 1,
                device: self.label.clone(),
            });
        }
        if m == 0 {
            if let Some(ev) = points_ready {
                self.stream
                    .wait(ev)
                    .map_err(|e| self.err("stream wait", kernel, m, e))?;
            }
            return Ok((Vec::new(), 1));
        }
        let c = self.msm_window().unwrap_or_else(|| host::choose_window(m));
        let w = host::num_windows(c);
        if (w as u64) * (m as u64) >= 1 << 32 {
            return Err(CudaError::Unsupported {
                kernel,
                size: m,
                limit: ((1u64 << 32) / w as u64) as usize,
                device: self.label.clone(),
            });
        }
        let b = 1usize << (c - 1);
        let s = w as usize * b;
        let gi = (group == Group_::G2) as usize;
        let mont = scalars.montgomery as u32;
        let ids_buf = match ids {
            Some(Ids::Host(v)) => Some(self.upload(kernel, v)?),
            _ => None,
        };
        let ids_ptr = match ids {
            Some(Ids::Device { ptr, .. }) => ptr,
            _ => ids_buf.as_ref().map_or(0u64, |b| self.p(b)),
        };
        let sc = scalars.ptr;
        let mut prof = PhaseTimer::new();
        prof.mark(self, "setup")?;

        // 1-2: the entries sorted by (window, bucket): `hist` holds each
        // bucket's count, `off0` its first place (and the total at s).
        let total_bound = w as usize * m;
        let (hist, off0, sorted) = if self.msm_shared_sort() {
            let r = self.sort_shared(sc, mont, ids_ptr, m, c, kernel)?;
            prof.mark(self, "sort")?;
            r
        } else {
            // Marks "digits", "histogram" and "scan" itself.
            let r = self.sort_atomic(sc, mont, ids_ptr, m, c, kernel, &mut prof)?;
            prof.mark(self, "scatter")?;
            r
        };

        // 3: chunked bucket sums, first pass from the affine points.
        let t = self.msm_chunk().unwrap_or_else(|| host::msm_chunk(m, c));
        let (cnt1, off1, owner1, max1, bound1) =
            self.chunk_plan(&hist, s, total_bound, t, kernel)?;
        let items1: CudaSlice<u8> = self.alloc(kernel, bound1 * group.xyzz_bytes())?;
        if let Some(ev) = points_ready {
            self.stream
                .wait(ev)
                .map_err(|e| self.err("stream wait", kernel, m, e))?;
        }
        let order = if self.msm_chunk_order() {
            let o = self.chunk_order(&hist, &off1, &owner1, s, bound1, t, kernel)?;
            prof.mark(self, "chunk order")?;
            Some(o)
        } else {
            None
        };
        self.k.msm_accumulate[self.accumulate_kernel(group)].launch(
            self,
            "msm_accumulate",
            m,
            cfg1d(bound1, MSM_ACCUMULATE_BLOCK),
            points.ptr,
            self.p(&sorted),
            self.p(&hist),
            self.p(&off0),
            self.p(&off1),
            self.p(&owner1),
            s as u32,
            t,
            order.as_ref().map_or(0, |o| self.p(o)),
            self.p(&items1),
        )?;
        drop((owner1, order));
        drop((sorted, hist, off0));
        prof.mark(self, "accumulate")?;
        let (items, cnt, off) = if self.msm_merge_in_place() {
            self.merge_in_place(group, &items1, &cnt1, &off1, s, max1, bound1, t, kernel)?;
            (items1, cnt1, off1)
        } else {
            let (items, cnt, off, _) =
                self.reduce_segments(group, items1, cnt1, off1, s, max1, bound1, t, kernel)?;
            (items, cnt, off)
        };
        prof.mark(self, "merge chunks")?;

        // 4: per-window bucket reduction by G groups, then sum the groups.
        // G is chosen for ~2^17 threads in all, keeping at least 16
        // buckets per thread so that, unsplit, the final k*T_g
        // multiplication stays small beside the running sums. With lane
        // pairs a group takes two threads: half as many groups keep the
        // thread count, and the groups' b_lo * T multiplications (during
        // which the odd lane idles) are halved beside the running sums.
        // Split (the default) no group multiplies: see DEFAULT_BUCKET_SPLIT.
        // 2^17 is not one wave: at 254 registers in blocks of 64 an SM
        // keeps 8 warps (run 47's ncu, H100: 12.5% occupancy, G1 2^24's
        // first level 3328 x 64 threads, 7.78 ms), so the first level runs
        // in ~6 waves; the target itself has not been swept.
        let pairs = match group {
            Group_::G1 => self.msm_bucket_pairs().g1,
            Group_::G2 => self.msm_bucket_pairs().g2,
        };
        let want = (1usize << (17 - pairs as u32))
            .div_ceil(w as usize)
            .next_power_of_two()
            .trailing_zeros();
        let lg_g = want.min(c - 1 - 4.min(c - 1));
        // The first level fills the card (its group count not capped by the
        // window width): where the split form pays (BucketSplit::Auto).
        let fills = lg_g == want;
        let groups = 1usize << lg_g;
        let (ip, cp, op) = (self.p(&items), self.p(&cnt), self.p(&off));
        let name = "msm_bucket_reduce";
        let fk = self.msm_kernel(group);
        let split = self.msm_window_tree()
            && match self.msm_bucket_split() {
                BucketSplit::Auto => fills,
                BucketSplit::Always => true,
                BucketSplit::Never => false,
            };
        let launch_reduce = |out: DevPtr, tsum: DevPtr, per_window: usize| {
            let cfg = cfg1d(w as usize * per_window, MSM_BUCKET_REDUCE_BLOCK);
            if pairs {
                self.k.msm_bucket_pairs[fk]
                    .launch(self, name, m, cfg, ip, cp, op, w, b as u32, lg_g, out, tsum)
            } else {
                self.k.msm_bucket_reduce[gi]
                    .launch(self, name, m, cfg, ip, cp, op, w, b as u32, lg_g, out, tsum)
            }
        };
        let sums = if split {
            // Each group's acc_g and T_g; then sum_g g T_g per window from
            // the T_g (a second level of 2^lg_h threads a window), both
            // folded, and each window's sum_g acc_g + per sum_g g T_g.
            let xb = group.xyzz_bytes();
            let accs: CudaSlice<u8> = self.alloc(kernel, w as usize * groups * xb)?;
            let tsums: CudaSlice<u8> = self.alloc(kernel, w as usize * groups * xb)?;
            launch_reduce(self.p(&accs), self.p(&tsums), groups << pairs as u32)?;
            drop((items, cnt, off));
            let lg_h = lg_g.saturating_sub(GROUP_SUMS_PER_THREAD_LG);
            let lanes = (w as usize) << lg_h;
            let weighted: CudaSlice<u8> = self.alloc(kernel, lanes * xb)?;
            self.k.msm_group_sums[fk].launch(
                self,
                "msm_group_sums",
                m,
                cfg1d(lanes, MSM_BUCKET_REDUCE_BLOCK),
                self.p(&tsums),
                w,
                lg_g,
                lg_h,
                self.p(&weighted),
            )?;
            drop(tsums);
            prof.mark(self, "bucket reduce")?;
            let a = self.fold_windows(group, accs, w as usize, groups, kernel)?;
            let u = self.fold_windows(group, weighted, w as usize, 1 << lg_h, kernel)?;
            let sums: CudaSlice<u8> = self.alloc(kernel, w as usize * xb)?;
            self.k.msm_window_join[fk].launch(
                self,
                "msm_window_join",
                m,
                cfg1d(w as usize, MSM_FOLD_BLOCK),
                self.p(&a),
                self.p(&u),
                w,
                (b >> lg_g) as u32,
                self.p(&sums),
            )?;
            sums
        } else {
            // Items each window leaves: one per group, or two with pairs.
            let per_window = groups << pairs as u32;
            let parts: CudaSlice<u8> =
                self.alloc(kernel, w as usize * per_window * group.xyzz_bytes())?;
            launch_reduce(self.p(&parts), 0, per_window)?;
            drop((items, cnt, off));
            prof.mark(self, "bucket reduce")?;
            if self.msm_window_tree() {
                self.fold_windows(group, parts, w as usize, per_window, kernel)?
            } else {
                let wcnt = self.upload(kernel, &vec![per_window as u32; w as usize])?;
                let woff_host: Vec<u32> =
                    (0..=w as usize).map(|i| (i * per_window) as u32).collect();
                let woff = self.upload(kernel, &woff_host)?;
                let (sums, _, soff, _) = self.reduce_segments(
                    group,
                    parts,
                    wcnt,
                    woff,
                    w as usize,
                    per_window,
                    w as usize * per_window,
                    host::MSM_CHUNK_MIN,
                    kernel,
                )?;
                // Each window holds exactly one item now, at soff[w] = w.
                let _ = soff;
                sums
            }
        };
        let bytes = self.download(kernel, &sums, w as usize * group.xyzz_bytes())?;
        prof.mark(self, "window sums")?;
        prof.report(&format!("{kernel} n={m} c={c}"));
        Ok((
            bytes
                .chunks_exact(group.xyzz_bytes())
                .map(|c| c.to_vec())
                .collect(),
            c,
        ))
    }

    /// The entries of an MSM of `m` scalars at `c`-bit windows sorted by
    /// (window, bucket) through shared memory (kernels/msm_sort.cuh):
    /// returns each bucket's count, the buckets' offsets (s + 1, the total
    /// last) and the sorted list (point id | sign << 31), written over the
    /// digits' keys (W·m words, the list's first `offsets[s]` meaningful).
    #[allow(clippy::type_complexity)]
    fn sort_shared(
        &self,
        scalars: u64,
        mont: u32,
        ids: u64,
        m: usize,
        c: u32,
        kernel: &'static str,
    ) -> Result<(CudaSlice<u32>, CudaSlice<u32>, CudaSlice<u32>)> {
        let tuning = self.msm_sort_tuning();
        let block = tuning.block;
        let plan = match host::msm_sort_plan_tuned(m, c, &tuning) {
            p if self.msm_sort_staged() => p,
            p => p.unstaged(),
        };
        let w = host::num_windows(c);
        let s = (w as usize) << (c - 1);
        let slots = (w * plan.parts) as usize;
        let hist_len = slots * plan.tiles as usize;
        let tile_hist: CudaSlice<u32> = self.alloc(kernel, hist_len)?;
        let keys: CudaSlice<u32> = self.alloc(kernel, w as usize * m)?;
        let smem = |bytes: u32| LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: bytes,
        };
        self.k.msm_sort_digits.launch(
            self,
            "msm_sort_digits",
            m,
            LaunchConfig {
                grid_dim: (plan.tiles, 1, 1),
                ..smem(4 * slots as u32)
            },
            scalars,
            m as u32,
            mont,
            c,
            w,
            plan.lg_low,
            plan.parts,
            plan.tiles,
            self.p(&keys),
            self.p(&tile_hist),
        )?;
        let part_off: CudaSlice<u32> = self.alloc(kernel, hist_len + 1)?;
        self.scan(&tile_hist, &part_off, hist_len)?;
        drop(tile_hist);
        let hist: CudaSlice<u32> = self.alloc(kernel, s)?;
        let off0: CudaSlice<u32> = self.alloc(kernel, s + 1)?;
        // The sorted list is written over the keys. A group [w0, w1) reads
        // the keys of its windows, [w0·m, w1·m), into `tmp` before its
        // buckets pass writes anything, and that pass writes the entries of
        // windows below w1, at most w1·m of them (zero digits are dropped),
        // so to places below w1·m: keys a later group reads stay untouched.
        // The list needs no W·m words of its own (4 bytes an entry: 7 GB of
        // a 2^27 MSM's 15 GB sort peak).
        let tmp: CudaSlice<u8> = self.alloc(kernel, 8 * plan.group_windows as usize * m)?;
        let total_parts = w * plan.parts;
        for (w0, w1) in plan.groups(w) {
            let group_slots = ((w1 - w0) * plan.parts) as usize;
            self.k.msm_sort_place.launch(
                self,
                "msm_sort_place",
                m,
                LaunchConfig {
                    grid_dim: (plan.tiles, 1, 1),
                    ..smem(plan.place_smem(w0, w1, block))
                },
                self.p(&keys),
                ids,
                m as u32,
                w0,
                w1,
                plan.lg_low,
                plan.parts,
                plan.tiles,
                self.p(&part_off),
                self.p(&tmp),
                plan.place_stage,
            )?;
            self.k.msm_sort_buckets.launch(
                self,
                "msm_sort_buckets",
                m,
                LaunchConfig {
                    grid_dim: (group_slots as u32, 1, 1),
                    ..smem(plan.buckets_smem(block))
                },
                self.p(&tmp),
                self.p(&part_off),
                plan.tiles,
                plan.lg_low,
                w0 * plan.parts,
                total_parts,
                self.p(&hist),
                self.p(&off0),
                self.p(&keys),
                plan.bucket_stage,
            )?;
        }
        drop((tmp, part_off));
        Ok((hist, off0, keys))
    }

    /// The sort with a global atomic per entry in each of two passes
    /// (msm_digits, msm_histogram and msm_scatter, window by window): the
    /// default until the shared-memory sort's passes were staged (2026-12-06,
    /// [`host::DEFAULT_SHARED_SORT`]).
    /// `prof` marks its steps but the last (the scatter).
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn sort_atomic(
        &self,
        scalars: u64,
        mont: u32,
        ids: u64,
        m: usize,
        c: u32,
        kernel: &'static str,
        prof: &mut PhaseTimer,
    ) -> Result<(CudaSlice<u32>, CudaSlice<u32>, CudaSlice<u32>)> {
        let w = host::num_windows(c);
        let b = 1usize << (c - 1);
        let s = w as usize * b;
        let keys: CudaSlice<u32> = self.alloc(kernel, w as usize * m)?;
        prof.mark(self, "keys alloc")?;
        self.k.msm_digits.launch(
            self,
            "msm_digits",
            m,
            cfg1d(m, MSM_DIGITS_BLOCK),
            scalars,
            m as u32,
            mont,
            c,
            w,
            self.p(&keys),
        )?;
        prof.mark(self, "digits")?;
        let hist: CudaSlice<u32> = self.zeros(kernel, s)?;
        for win in 0..w as u64 {
            let kp = self.p(&keys) + 4 * win * m as u64;
            let hp = self.p(&hist) + 4 * win * b as u64;
            self.k.msm_histogram.launch(
                self,
                "msm_histogram",
                m,
                cfg1d(m, MSM_HISTOGRAM_BLOCK),
                kp,
                m as u32,
                hp,
            )?;
        }
        prof.mark(self, "histogram")?;
        let off0: CudaSlice<u32> = self.alloc(kernel, s + 1)?;
        self.scan(&hist, &off0, s)?;
        let mut cursor: CudaSlice<u32> = self.alloc(kernel, s)?;
        self.stream
            .memcpy_dtod(&off0.slice(0..s), &mut cursor)
            .map_err(|e| self.err("copy", kernel, m, e))?;
        prof.mark(self, "scan")?;
        let total_bound = w as usize * m;
        let sorted: CudaSlice<u32> = self.alloc(kernel, total_bound)?;
        prof.mark(self, "sorted alloc")?;
        // Passes per window: each writes the entries of 1/passes of the
        // buckets, a range of `sorted` of about scatter_region bytes, or
        // larger where that would take more than the most passes (each
        // pass reads the window's keys again).
        let region = scatter_region_bytes();
        let passes = match (4 * m).div_ceil(region.max(1)) {
            _ if region == 0 => 1,
            p => p.min(max_scatter_passes()).clamp(1, b),
        };
        for win in 0..w as u64 {
            let kp = self.p(&keys) + 4 * win * m as u64;
            let cp = self.p(&cursor) + 4 * win * b as u64;
            for pass in 0..passes {
                let (lo, hi) = (b * pass / passes, b * (pass + 1) / passes);
                self.k.msm_scatter.launch(
                    self,
                    "msm_scatter",
                    m,
                    cfg1d(m, MSM_SCATTER_BLOCK),
                    kp,
                    ids,
                    m as u32,
                    lo as u32,
                    hi as u32,
                    cp,
                    self.p(&sorted),
                )?;
            }
        }
        drop((cursor, keys));
        Ok((hist, off0, sorted))
    }

    /// Sums each window's `per_window` items (a power of two, window by
    /// window in `items`) to one by levels of `msm_fold_*`, each level's
    /// spans as [`host::msm_fold_spans`] plans them; returns the W sums.
    fn fold_windows(
        &self,
        group: Group_,
        mut items: CudaSlice<u8>,
        w: usize,
        per_window: usize,
        kernel: &'static str,
    ) -> Result<CudaSlice<u8>> {
        let mut per = per_window;
        for (lg_seq, lg_lanes) in host::msm_fold_spans(per_window) {
            let lanes = (w * per) >> lg_seq;
            let out: CudaSlice<u8> =
                self.alloc(kernel, (lanes >> lg_lanes) * group.xyzz_bytes())?;
            self.k.msm_fold[self.msm_kernel(group)].launch(
                self,
                "msm_fold",
                lanes,
                cfg1d(lanes, MSM_FOLD_BLOCK),
                self.p(&items),
                lanes as u32,
                lg_seq,
                lg_lanes,
                self.p(&out),
            )?;
            items = out;
            per >>= lg_seq + lg_lanes;
        }
        Ok(items)
    }

    /// Chunks of at most `t` items over segments with `count` items:
    /// (chunks per segment, their offsets, each chunk's segment, the largest
    /// chunk count, the total chunk bound). Reads the maximum back (one
    /// synchronisation) so that the caller runs only the passes it needs.
    #[allow(clippy::type_complexity)]
    pub(super) fn chunk_plan(
        &self,
        count: &CudaSlice<u32>,
        s: usize,
        items_bound: usize,
        t: u32,
        kernel: &'static str,
    ) -> Result<(CudaSlice<u32>, CudaSlice<u32>, CudaSlice<u32>, usize, usize)> {
        let cnt: CudaSlice<u32> = self.alloc(kernel, s)?;
        let maxbuf: CudaSlice<u32> = self.zeros(kernel, 1)?;
        self.k.msm_chunk_counts.launch(
            self,
            "msm_chunk_counts",
            s,
            cfg1d(s, MSM_CHUNK_COUNTS_BLOCK),
            self.p(count),
            s as u32,
            t,
            self.p(&cnt),
            self.p(&maxbuf),
        )?;
        let bound = items_bound / t as usize + s;
        let (off, owner) = self.offsets_and_owners(&cnt, s, bound, kernel)?;
        let max = self.download(kernel, &maxbuf, 1)?[0] as usize;
        Ok((cnt, off, owner, max, bound))
    }

    /// From `counts` of s segments: their offsets (an exclusive scan, s + 1
    /// entries) and, for each of the first `len` places (at least the
    /// counts' total), the segment it belongs to (`msm_chunk_owner`).
    fn offsets_and_owners(
        &self,
        counts: &CudaSlice<u32>,
        s: usize,
        len: usize,
        kernel: &'static str,
    ) -> Result<(CudaSlice<u32>, CudaSlice<u32>)> {
        let off: CudaSlice<u32> = self.alloc(kernel, s + 1)?;
        self.scan(counts, &off, s)?;
        let owner: CudaSlice<u32> = self.alloc(kernel, len)?;
        self.k.msm_chunk_owner.launch(
            self,
            "msm_chunk_owner",
            s,
            cfg1d(s, MSM_CHUNK_OWNER_BLOCK),
            self.p(&off),
            s as u32,
            self.p(&owner),
        )?;
        Ok((off, owner))
    }

    /// Merges each bucket's chunk sums in place (`msm_merge_*`, passes of
    /// stride t^p) until its sum sits at its first chunk's place
    /// `off[s]`; buckets with one chunk sum get no thread. `max_count` is
    /// the most chunk sums a bucket has, `bound` bounds the chunk sums.
    #[allow(clippy::too_many_arguments)]
    fn merge_in_place(
        &self,
        group: Group_,
        items: &CudaSlice<u8>,
        cnt: &CudaSlice<u32>,
        off: &CudaSlice<u32>,
        s: usize,
        max_count: usize,
        bound: usize,
        t: u32,
        kernel: &'static str,
    ) -> Result<()> {
        let mut live = max_count;
        let mut stride = 1usize;
        while live > 1 {
            let threads: CudaSlice<u32> = self.alloc(kernel, s)?;
            self.k.msm_merge_counts.launch(
                self,
                "msm_merge_counts",
                s,
                cfg1d(s, MSM_CHUNK_COUNTS_BLOCK),
                self.p(cnt),
                s as u32,
                stride as u32,
                t,
                self.p(&threads),
            )?;
            // Threads: one per t live sums of the buckets with more than
            // one, at most one a bucket plus, for the buckets of more than
            // t live sums (at most bound / stride / t of them), one per t
            // and one more.
            let most = 2 * (bound / stride).div_ceil(t as usize) + s;
            let (moff, owner) = self.offsets_and_owners(&threads, s, most, kernel)?;
            self.k.msm_merge[self.msm_kernel(group)].launch(
                self,
                "msm_merge",
                s,
                cfg1d(most, MSM_REDUCE_BLOCK),
                self.p(items),
                self.p(cnt),
                self.p(off),
                self.p(&moff),
                self.p(&owner),
                s as u32,
                stride as u32,
                t,
            )?;
            live = live.div_ceil(t as usize);
            stride *= t as usize;
        }
        Ok(())
    }

    /// Repeats the chunked reduction until every segment holds at most one
    /// item. `max_count` is the largest segment's item count, `bound` bounds
    /// the total.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub(super) fn reduce_segments(
        &self,
        group: Group_,
        mut items: CudaSlice<u8>,
        mut cnt: CudaSlice<u32>,
        mut off: CudaSlice<u32>,
        s: usize,
        mut max_count: usize,
        mut bound: usize,
        t: u32,
        kernel: &'static str,
    ) -> Result<(CudaSlice<u8>, CudaSlice<u32>, CudaSlice<u32>, usize)> {
        while max_count > 1 {
            let (cnt2, off2, owner2, max2, bound2) = self.chunk_plan(&cnt, s, bound, t, kernel)?;
            let items2: CudaSlice<u8> = self.alloc(kernel, bound2 * group.xyzz_bytes())?;
            self.k.msm_reduce[self.msm_kernel(group)].launch(
                self,
                "msm_reduce",
                bound,
                cfg1d(bound2, MSM_REDUCE_BLOCK),
                self.p(&items),
                self.p(&cnt),
                self.p(&off),
                self.p(&off2),
                self.p(&owner2),
                s as u32,
                t,
                self.p(&items2),
            )?;
            items = items2;
            cnt = cnt2;
            off = off2;
            bound = bound2;
            max_count = max2;
        }
        Ok((items, cnt, off, bound))
    }
}

/// Phase timer of the MSM, on when CUZK_MSM_PROFILE is set: synchronises
/// after each phase and prints the times to stderr (for tuning only: the
/// synchronisations cost a little).
struct PhaseTimer {
    on: bool,
    last: std::time::Instant,
    phases: Vec<(&'static str, f64)>,
    /// The memory pool's (reserved, used) bytes after each phase.
    pool: Vec<Option<(u64, u64)>>,
}

impl PhaseTimer {
    fn new() -> Self {
        PhaseTimer {
            on: std::env::var_os("CUZK_MSM_PROFILE").is_some(),
            last: std::time::Instant::now(),
            phases: Vec::new(),
            pool: Vec::new(),
        }
    }
    fn mark(&mut self, dev: &CudaDevice, name: &'static str) -> Result<()> {
        if self.on {
            dev.synchronize()?;
            let now = std::time::Instant::now();
            self.phases
                .push((name, (now - self.last).as_secs_f64() * 1e3));
            self.pool.push(super::pool_usage(dev.context()));
            self.last = now;
        }
        Ok(())
    }
    fn report(&self, what: &str) {
        if self.on {
            let parts: Vec<String> = self
                .phases
                .iter()
                .map(|(n, t)| format!("{n} {t:.2}"))
                .collect();
            eprintln!("msm profile {what}: {} ms", parts.join(", "));
            // The pool after each step, GB reserved / used.
            let gb = |b: u64| b as f64 / 1e9;
            let pool: Vec<String> = self
                .phases
                .iter()
                .zip(&self.pool)
                .filter_map(|((n, _), p)| p.map(|(r, u)| format!("{n} {:.2}/{:.2}", gb(r), gb(u))))
                .collect();
            if !pool.is_empty() {
                eprintln!("msm pool {what}: {} GB reserved/used", pool.join(", "));
            }
        }
    }
}

/// The MSM's value from its windows' sums as the kernels leave them (XYZZ
/// bytes) and the window width.
pub(super) fn window_sum<G: DeviceGroup>(sums: &[Vec<u8>], c: u32) -> G {
    combine_windows(sums.iter().map(|b| G::from_xyzz(b)).collect(), c)
}

/// sum_w 2^(c w) S_w by Horner, on the host (W <= 64 windows).
pub(super) fn combine_windows<G: Group>(sums: Vec<G>, c: u32) -> G {
    let mut acc = G::identity();
    for s in sums.into_iter().rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc += s;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_combine_by_horner() {
        use group::Group;
        let g = G1Projective::generator();
        // sums S_0 = g, S_1 = 2g with c = 3: g + 8 * 2g = 17 g.
        let got = combine_windows(vec![g, g.double()], 3);
        assert_eq!(got, g * Scalar::from(17u64));
        assert_eq!(
            combine_windows::<G1Projective>(vec![], 5),
            G1Projective::identity()
        );
    }
}
