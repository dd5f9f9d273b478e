//! The GPU: one CUDA context, one stream and the embedded kernel module,
//! with the host API the prover builds on (NTT, G1/G2 MSM, the 0/1 path).
//!
//! Everything runs in order on one stream; temporaries are stream-ordered
//! allocations freed when dropped. Kernel arguments are raw device pointers
//! (u64), so the cudarc event tracking is switched off: with a single stream
//! it has nothing to order and would cost two event records per launch.
//!
//! This file owns the context: opening the device, its streams, the loaded
//! kernels and the typed errors. The host API is spread over one module per
//! kernel header of kernels/ (`scan`, `ntt`, `msm`, `zero_one`,
//! `fixed_base`, `spmv`), with device buffers in `buffers` and the typed
//! launchers in `launch`; each adds its own `impl CudaDevice` block. The
//! arithmetic kernels of the checks and benchmarks (`arith`) are a module
//! and a fatbin of their own, loaded only by those.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaModule, CudaStream, DriverError};

use crate::error::{CudaError, DriverFailure, Result};
use crate::host;

mod arith;
mod buffers;
mod fixed_base;
mod launch;
mod msm;
mod ntt;
mod scan;
// The compiled constraint system's kernels (a/b/c, densities, the 0/1
// split).
mod spmv;
// Subgroup checks of parameter points.
mod subgroup;
mod zero_one;
// The expansion of a witness sent up packed by 0/1.
mod zpack;

pub(crate) use arith::ArithKernels;
pub use buffers::{DevicePoints, DeviceScalars, ScalarForm};
pub use msm::{BucketPairs, BucketSplit, G2_ACCUMULATE_BLOCKS};
pub use ntt::{HSteps, NttPass, MAX_NTT_LOG};
pub use spmv::{
    compact_scratch_bytes, CsrStaging, CsrStagingDsts, CsrWide, DeviceCsr, DeviceDensity,
    DeviceSplit, SPMV_LONG,
};
pub use subgroup::{SubgroupReport, SUBGROUP_MAX_POINTS, SUBGROUP_SCRATCH_BYTES};

use msm::{
    DEFAULT_BUCKET_PAIRS, DEFAULT_BUCKET_SPLIT, DEFAULT_CHUNK_ORDER, DEFAULT_G1_INLINE,
    DEFAULT_G2_ACCUMULATE_BLOCKS, DEFAULT_MERGE_IN_PLACE, DEFAULT_WINDOW_TREE,
    DEFAULT_ZERO_ONE_INLINE,
};
use ntt::Twiddles;

static FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cuzk.fatbin"));

/// Which group an MSM runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group_ {
    G1,
    G2,
}

impl Group_ {
    fn affine_bytes(self) -> usize {
        match self {
            Group_::G1 => host::G1_AFFINE_BYTES,
            Group_::G2 => host::G2_AFFINE_BYTES,
        }
    }
    fn xyzz_bytes(self) -> usize {
        match self {
            Group_::G1 => host::G1_XYZZ_BYTES,
            Group_::G2 => host::G2_XYZZ_BYTES,
        }
    }
}

/// G1 or G2 as the generic launchers see it: the kernels' family, the
/// points' bytes and the buckets' XYZZ form read back.
trait DeviceGroup: group::Group {
    type Affine: Copy;
    const GROUP: Group_;
    /// The names errors give: the upload and the MSM.
    const UPLOAD: &'static str;
    const MSM: &'static str;
    fn as_bytes(points: &[Self::Affine]) -> &[u8];
    fn as_bytes_mut(points: &mut [Self::Affine]) -> &mut [u8];
    fn from_xyzz(bytes: &[u8]) -> Self;
}

impl DeviceGroup for blstrs::G1Projective {
    type Affine = blstrs::G1Affine;
    const GROUP: Group_ = Group_::G1;
    const UPLOAD: &'static str = "upload_g1";
    const MSM: &'static str = "msm_g1";
    fn as_bytes(points: &[Self::Affine]) -> &[u8] {
        host::g1_as_bytes(points)
    }
    fn as_bytes_mut(points: &mut [Self::Affine]) -> &mut [u8] {
        host::g1_as_bytes_mut(points)
    }
    fn from_xyzz(bytes: &[u8]) -> Self {
        host::g1_from_xyzz(bytes)
    }
}

impl DeviceGroup for blstrs::G2Projective {
    type Affine = blstrs::G2Affine;
    const GROUP: Group_ = Group_::G2;
    const UPLOAD: &'static str = "upload_g2";
    const MSM: &'static str = "msm_g2";
    fn as_bytes(points: &[Self::Affine]) -> &[u8] {
        host::g2_as_bytes(points)
    }
    fn as_bytes_mut(points: &mut [Self::Affine]) -> &mut [u8] {
        host::g2_as_bytes_mut(points)
    }
    fn from_xyzz(bytes: &[u8]) -> Self {
        host::g2_from_xyzz(bytes)
    }
}

/// The production kernels, each a typed handle (`launch`) declared beside
/// its host code.
struct Kernels {
    ntt_powers: ntt::NttPowers,
    ntt_bitrev: ntt::NttBitrev,
    ntt_bitrev_tiled: ntt::NttBitrevTiled,
    /// Indexed by [`NttPass::index`].
    ntt_pass: [ntt::NttPassKernel; NttPass::ALL.len()],
    /// The same builds' permuting passes (out-of-place transforms).
    ntt_perm_pass: [ntt::NttPermPassKernel; NttPass::ALL.len()],
    h_finish_bitrev: ntt::HFinishBitrev,
    h_finish_tiled: ntt::HFinishTiled,
    scan_block: scan::ScanBlock,
    scan_add: scan::ScanAdd,
    msm_digits: msm::MsmDigits,
    msm_histogram: msm::MsmHistogram,
    msm_scatter: msm::MsmScatter,
    msm_sort_digits: msm::MsmSortDigits,
    msm_sort_place: msm::MsmSortPlace,
    msm_sort_buckets: msm::MsmSortBuckets,
    msm_chunk_counts: msm::MsmChunkCounts,
    msm_chunk_owner: msm::MsmChunkOwner,
    msm_chunk_len_hist: msm::MsmChunkLenHist,
    msm_chunk_order: msm::MsmChunkOrder,
    /// G1, G2, G1 with inlined Fq products ([`CudaDevice::msm_kernel`]),
    /// then G2 under register caps for 3 and 4 blocks per SM.
    msm_accumulate: [msm::MsmAccumulate; 5],
    msm_reduce: [msm::MsmReduce; 3],
    msm_bucket_reduce: [msm::MsmBucketReduce; 2],
    /// Indexed like `msm_reduce` ([`CudaDevice::msm_kernel`]).
    msm_bucket_pairs: [msm::MsmBucketPairs; 3],
    msm_fold: [msm::MsmFold; 3],
    /// Indexed like `msm_reduce` ([`CudaDevice::msm_kernel`]).
    msm_group_sums: [msm::MsmGroupSums; 3],
    msm_window_join: [msm::MsmWindowJoin; 3],
    msm_merge_counts: msm::MsmMergeCounts,
    /// Indexed like `msm_reduce` ([`CudaDevice::msm_kernel`]).
    msm_merge: [msm::MsmMerge; 3],
    sum_selected: [zero_one::SumSelected; 3],
    mask_popcount: zero_one::MaskPopcount,
    pair_sums: [zero_one::PairSums; 2],
    fixed_base: [fixed_base::FixedBase; 2],
    to_affine: [fixed_base::ToAffine; 2],
    expand_z: zpack::ExpandZ,
}

/// An open GPU with the cuzk kernels loaded.
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Host-to-device copies that overlap the main stream's kernels.
    copy_stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    k: Kernels,
    spmv: spmv::SpmvKernels,
    subgroup: subgroup::SubgroupKernels,
    label: String,
    name: String,
    ordinal: usize,
    twiddles: Mutex<Option<Twiddles>>,
    /// Each profiled H's steps (name, ms) since the last take; None: H is
    /// not profiled.
    h_profile: Mutex<Option<Vec<ntt::HSteps>>>,
    ntt_pass: std::sync::atomic::AtomicU8,
    /// Whether the G1 accumulation, reduction and 0/1 kernels are the
    /// builds with inlined Fq products.
    g1_inline: std::sync::atomic::AtomicBool,
    /// Whether the G1 0/1 sum uses the kernel with inlined Fq products.
    zero_one_inline: std::sync::atomic::AtomicBool,
    /// Blocks per SM of the G2 accumulation build in use (2, 3 or 4).
    g2_accumulate_blocks: std::sync::atomic::AtomicU32,
    /// Whether the MSM's first bucket sums take their chunks longest first.
    chunk_order: std::sync::atomic::AtomicBool,
    /// Whether the MSM sorts its entries through shared memory
    /// (`msm_sort_*`) or with global atomics (`msm_histogram`/`msm_scatter`).
    shared_sort: std::sync::atomic::AtomicBool,
    /// Whether that sort's passes order each stage of entries in shared
    /// memory before writing them (`MsmSortPlan::place_stage`).
    sort_staged: std::sync::atomic::AtomicBool,
    /// Whether the MSM merges chunk sums in place (`msm_merge_*`).
    merge_in_place: std::sync::atomic::AtomicBool,
    /// Whether the bucket reduction runs each group on a pair of lanes.
    /// Bit 0: G1's bucket reduction on lane pairs; bit 1: G2's.
    bucket_pairs: std::sync::atomic::AtomicU8,
    /// Whether the windows' last sums run as a tree of warp butterflies.
    window_tree: std::sync::atomic::AtomicBool,
    /// When the bucket reduction leaves each group's b_lo T_g to a second
    /// level (`msm_group_sums_*`) instead of a double-and-add
    /// (`msm::BucketSplit` as a byte).
    bucket_split: std::sync::atomic::AtomicU8,
    /// A window width every MSM uses instead of its size's (0: none), for
    /// benchmarks only.
    msm_window: std::sync::atomic::AtomicU32,
    /// A chunk every MSM's first bucket sums use instead of
    /// host::msm_chunk's (0: none), for checks and benchmarks only.
    msm_chunk: std::sync::atomic::AtomicU32,
    /// The shared-memory sort's geometry (host::MsmSortTuning::DEFAULT
    /// unless the benchmark's sweep swaps in another).
    msm_sort_tuning: Mutex<host::MsmSortTuning>,
    /// The NTT pass block, log2 of its elements (host::ntt_smem_log_for the
    /// card's shared memory an SM).
    ntt_smem_log: u32,
    /// Threads of one full wave of each `sum_selected` build (indexed like
    /// `Kernels::sum_selected`): blocks resident per SM x SMs x block.
    sum_selected_wave: [usize; 3],
}

impl CudaDevice {
    /// Opens GPU `ordinal`. Where libcuda is missing or no GPU is present
    /// this returns [`CudaError::NoGpu`] without touching the driver further.
    pub fn open(ordinal: usize) -> Result<Self> {
        // SAFETY: only probes whether the shared library can be loaded;
        // cudarc panics on a missing libcuda if any other call comes first.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(CudaError::NoGpu {
                reason: "libcuda is not installed on this machine".into(),
            });
        }
        let count = CudaContext::device_count().map_err(|e| CudaError::NoGpu {
            reason: format!("the CUDA driver reports no usable device: {e}"),
        })?;
        if ordinal >= count.max(0) as usize {
            return Err(CudaError::NoGpu {
                reason: format!("device {ordinal} requested, {count} present"),
            });
        }
        let label = format!("{ordinal}");
        let drv = |op: &'static str, e: DriverError| CudaError::Driver {
            op,
            kernel: "open",
            size: 0,
            device: label.clone(),
            source: DriverFailure::Driver(e),
        };
        let ctx = CudaContext::new(ordinal).map_err(|e| drv("context creation", e))?;
        // SAFETY: this type uses one stream only and orders all work on it.
        unsafe { ctx.disable_event_tracking() };
        let name = ctx.name().map_err(|e| drv("device name", e))?;
        let label = format!("{ordinal} ({name})");
        let drv = |op: &'static str, e: DriverError| CudaError::Driver {
            op,
            kernel: "open",
            size: 0,
            device: label.clone(),
            source: DriverFailure::Driver(e),
        };
        let stream = ctx.new_stream().map_err(|e| drv("stream creation", e))?;
        let copy_stream = ctx.new_stream().map_err(|e| drv("stream creation", e))?;
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(FATBIN.to_vec()))
            .map_err(|e| drv("loading the embedded fatbin", e))?;
        let f = |name: &'static str| {
            module
                .load_function(name)
                .map_err(|e| drv("kernel lookup", e))
        };
        let k = Kernels {
            ntt_powers: ntt::NttPowers::load(&f)?,
            ntt_bitrev: ntt::NttBitrev::load(&f)?,
            ntt_bitrev_tiled: ntt::NttBitrevTiled::load(&f)?,
            ntt_pass: ntt::NttPassKernel::load_all(&f)?,
            ntt_perm_pass: ntt::NttPermPassKernel::load_all(&f)?,
            h_finish_bitrev: ntt::HFinishBitrev::load(&f)?,
            h_finish_tiled: ntt::HFinishTiled::load(&f)?,
            scan_block: scan::ScanBlock::load(&f)?,
            scan_add: scan::ScanAdd::load(&f)?,
            msm_digits: msm::MsmDigits::load(&f)?,
            msm_histogram: msm::MsmHistogram::load(&f)?,
            msm_scatter: msm::MsmScatter::load(&f)?,
            msm_sort_digits: msm::MsmSortDigits::load(&f)?,
            msm_sort_place: msm::MsmSortPlace::load(&f)?,
            msm_sort_buckets: msm::MsmSortBuckets::load(&f)?,
            msm_chunk_counts: msm::MsmChunkCounts::load(&f)?,
            msm_chunk_owner: msm::MsmChunkOwner::load(&f)?,
            msm_chunk_len_hist: msm::MsmChunkLenHist::load(&f)?,
            msm_chunk_order: msm::MsmChunkOrder::load(&f)?,
            msm_accumulate: msm::MsmAccumulate::load_all(&f)?,
            msm_reduce: msm::MsmReduce::load_all(&f)?,
            msm_bucket_reduce: msm::MsmBucketReduce::load_all(&f)?,
            msm_bucket_pairs: msm::MsmBucketPairs::load_all(&f)?,
            msm_fold: msm::MsmFold::load_all(&f)?,
            msm_group_sums: msm::MsmGroupSums::load_all(&f)?,
            msm_window_join: msm::MsmWindowJoin::load_all(&f)?,
            msm_merge_counts: msm::MsmMergeCounts::load(&f)?,
            msm_merge: msm::MsmMerge::load_all(&f)?,
            sum_selected: zero_one::SumSelected::load_all(&f)?,
            mask_popcount: zero_one::MaskPopcount::load(&f)?,
            pair_sums: zero_one::PairSums::load_all(&f)?,
            fixed_base: fixed_base::FixedBase::load_all(&f)?,
            to_affine: fixed_base::ToAffine::load_all(&f)?,
            expand_z: zpack::ExpandZ::load(&f)?,
        };
        let sms = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .map_err(|e| drv("device attribute (SM count)", e))?
            .max(1) as usize;
        let sum_selected_wave = zero_one::waves(&k.sum_selected, sms)
            .map_err(|e| drv("occupancy of the 0/1 sum", e))?;
        let spmv = spmv::SpmvKernels::load(&f)?;
        let subgroup = subgroup::SubgroupKernels::load(&f)?;
        // The NTT's pass blocks by the card's shared memory an SM
        // (host::ntt_smem_log_for: 2^11 elements on sm_90).
        let smem_per_sm = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            )
            .map_err(|e| drv("device attribute (shared memory an SM)", e))?;
        let ntt_smem_log = host::ntt_smem_log_for(smem_per_sm.max(0) as u32);
        for pass in &k.ntt_pass {
            pass.raise_smem_limit(ntt_smem_log)
                .map_err(|e| drv("raising an NTT pass's shared memory limit", e))?;
        }
        for pass in &k.ntt_perm_pass {
            pass.raise_smem_limit(ntt_smem_log)
                .map_err(|e| drv("raising an NTT pass's shared memory limit", e))?;
        }
        keep_pool_memory(&ctx)
            .map_err(|e| drv("setting the memory pool's release threshold", e))?;
        Ok(CudaDevice {
            ctx,
            stream,
            copy_stream,
            _module: module,
            k,
            spmv,
            subgroup,
            label,
            name,
            ordinal,
            twiddles: Mutex::new(None),
            h_profile: Mutex::new(None),
            ntt_pass: std::sync::atomic::AtomicU8::new(NttPass::from_env() as u8),
            g1_inline: std::sync::atomic::AtomicBool::new(DEFAULT_G1_INLINE),
            zero_one_inline: std::sync::atomic::AtomicBool::new(DEFAULT_ZERO_ONE_INLINE),
            g2_accumulate_blocks: std::sync::atomic::AtomicU32::new(DEFAULT_G2_ACCUMULATE_BLOCKS),
            chunk_order: std::sync::atomic::AtomicBool::new(DEFAULT_CHUNK_ORDER),
            shared_sort: std::sync::atomic::AtomicBool::new(host::msm_shared_sort_from_env()),
            sort_staged: std::sync::atomic::AtomicBool::new(true),
            merge_in_place: std::sync::atomic::AtomicBool::new(DEFAULT_MERGE_IN_PLACE),
            bucket_pairs: std::sync::atomic::AtomicU8::new(
                u8::from(DEFAULT_BUCKET_PAIRS.g1) | u8::from(DEFAULT_BUCKET_PAIRS.g2) << 1,
            ),
            window_tree: std::sync::atomic::AtomicBool::new(DEFAULT_WINDOW_TREE),
            bucket_split: std::sync::atomic::AtomicU8::new(DEFAULT_BUCKET_SPLIT.to_u8()),
            msm_window: std::sync::atomic::AtomicU32::new(0),
            msm_chunk: std::sync::atomic::AtomicU32::new(0),
            msm_sort_tuning: Mutex::new(host::MsmSortTuning::DEFAULT),
            ntt_smem_log,
            sum_selected_wave,
        })
        .and_then(|dev| {
            // The sort's default geometry fitted to the card's shared
            // memory, its kernels opted in to it; or CUZK_MSM_SORT_TUNING
            // (block:lg_low:smem_kib:per_thread), the geometry every MSM of
            // the process uses, for running the checks under a geometry
            // the sweep measured. The budgets' figure stays the default's
            // (host::msm_scratch_bytes).
            match host::MsmSortTuning::from_env() {
                Ok(t) => dev.set_msm_sort_tuning(t)?,
                Err(why) => return Err(dev.bad("msm_sort", 0, why)),
            }
            Ok(dev)
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }
    /// (free, total) device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx
            .mem_get_info()
            .map_err(|e| self.err("mem_get_info", "memory", 0, e))
    }

    fn err(
        &self,
        op: &'static str,
        kernel: &'static str,
        size: usize,
        e: DriverError,
    ) -> CudaError {
        CudaError::Driver {
            op,
            kernel,
            size,
            device: self.label.clone(),
            source: DriverFailure::Driver(e),
        }
    }

    fn bad(&self, kernel: &'static str, size: usize, what: String) -> CudaError {
        CudaError::BadInput {
            kernel,
            what,
            size,
            device: self.label.clone(),
        }
    }

    /// Waits for all queued work; kernel faults surface here.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| self.err("synchronize", "stream", 0, e))
    }

    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    /// The default memory pool's reserved and used bytes now, where the
    /// driver answers (benchmarks).
    pub fn pool_usage(&self) -> Option<(u64, u64)> {
        pool_usage(&self.ctx)
    }

    /// Sets the device's default pool's release threshold (shared by every
    /// `CudaDevice` of this GPU in the process): the reserved bytes, in use
    /// or not, it keeps at a synchronisation; `None` puts back the one set
    /// at open. Memory used past it (resident parameters count) means every
    /// synchronisation returns all free memory and the next large
    /// allocation maps it again.
    pub fn set_pool_keep(&self, bytes: Option<u64>) -> Result<()> {
        match bytes {
            Some(b) => set_pool_release_threshold(&self.ctx, b),
            None => keep_pool_memory(&self.ctx),
        }
        .map_err(|e| self.err("setting the pool's release threshold", "pool", 0, e))
    }

    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
}

/// The default stream-ordered memory pool of `ctx`'s device (the one
/// every `stream.alloc` draws from), with the context bound to this thread.
fn default_pool(
    ctx: &Arc<CudaContext>,
) -> std::result::Result<cudarc::driver::sys::CUmemoryPool, DriverError> {
    use cudarc::driver::sys;
    ctx.bind_to_thread()?;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: a plain driver query on this context's device; `pool` is an
    // out parameter.
    unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()).result()? };
    Ok(pool)
}

/// One u64 attribute of a memory pool.
fn pool_attribute(
    pool: cudarc::driver::sys::CUmemoryPool,
    attr: cudarc::driver::sys::CUmemPool_attribute,
) -> std::result::Result<u64, DriverError> {
    let mut v = 0u64;
    // SAFETY: `pool` comes from default_pool; the attributes read here
    // (reserved / used bytes) are u64s, as the driver API specifies.
    unsafe {
        cudarc::driver::sys::cuMemPoolGetAttribute(pool, attr, (&mut v as *mut u64).cast())
            .result()?
    };
    Ok(v)
}

/// Lets the default stream-ordered memory pool keep all it reserved (up to
/// the card's memory) after a synchronisation. With the driver's default
/// threshold (0) every synchronisation handed freed memory back to the
/// system, so each MSM mapped its multi-GB temporaries afresh; with a
/// quarter of the card (the default until 2026-12-04) resident parameters
/// alone passed it, and the porep-like 2^27 partition's H step took 288.0
/// ms against 275.0 when the pool keeps all, its B G2 MSM 117.3 against
/// 92.4 (H200, call 45). What the pool keeps is this process's own memory,
/// which the VRAM budget already bounds; `measure_free` (cuzk-gpu) trims
/// the pool before it asks the driver what is free.
fn keep_pool_memory(ctx: &Arc<CudaContext>) -> std::result::Result<(), DriverError> {
    let total = ctx.total_mem()? as u64;
    // CUZK_POOL_KEEP_GIB replaces it, for measuring.
    let threshold: u64 = std::env::var("CUZK_POOL_KEEP_GIB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(total, |g| g << 30);
    set_pool_release_threshold(ctx, threshold)
}

/// The default pool's release threshold: the reserved bytes (in use or
/// not) it holds on to at a synchronisation before handing free memory
/// back to the system.
fn set_pool_release_threshold(
    ctx: &Arc<CudaContext>,
    bytes: u64,
) -> std::result::Result<(), DriverError> {
    use cudarc::driver::sys;
    let pool = default_pool(ctx)?;
    let mut threshold = bytes;
    // SAFETY: `pool` comes from default_pool; the attribute value is a u64,
    // as the driver API specifies for CU_MEMPOOL_ATTR_RELEASE_THRESHOLD.
    unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
        .result()?;
    }
    Ok(())
}

/// The default memory pool's reserved and used bytes (for the MSM
/// profile); `None` where the driver does not say.
pub(super) fn pool_usage(ctx: &Arc<CudaContext>) -> Option<(u64, u64)> {
    use cudarc::driver::sys::CUmemPool_attribute as A;
    let pool = default_pool(ctx).ok()?;
    let reserved = pool_attribute(pool, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT).ok()?;
    let used = pool_attribute(pool, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT).ok()?;
    Some((reserved, used))
}

#[cfg(test)]
mod tests {
    use super::launch::check_signatures;
    use super::*;

    /// Every launcher's parameter list is its kernel's, in the header that
    /// defines it.
    #[test]
    fn launchers_match_the_kernels() {
        use super::{
            arith::*, fixed_base::*, msm::*, ntt::*, scan::*, spmv::*, subgroup::*, zero_one::*,
            zpack::*,
        };
        let table = [
            (
                include_str!("../../kernels/scan.cuh"),
                vec![ScanBlock::SIGNATURE, ScanAdd::SIGNATURE],
            ),
            (
                include_str!("../../kernels/ntt.cuh"),
                vec![
                    NttPowers::SIGNATURE,
                    NttBitrev::SIGNATURE,
                    NttBitrevTiled::SIGNATURE,
                    NttPassKernel::SIGNATURE,
                    NttPermPassKernel::SIGNATURE,
                    HFinishBitrev::SIGNATURE,
                    HFinishTiled::SIGNATURE,
                ],
            ),
            (
                include_str!("../../kernels/msm.cuh"),
                vec![
                    MsmDigits::SIGNATURE,
                    MsmHistogram::SIGNATURE,
                    MsmScatter::SIGNATURE,
                    MsmChunkCounts::SIGNATURE,
                    MsmChunkOwner::SIGNATURE,
                    MsmChunkLenHist::SIGNATURE,
                    MsmChunkOrder::SIGNATURE,
                    MsmAccumulate::SIGNATURE,
                    MsmReduce::SIGNATURE,
                    MsmBucketReduce::SIGNATURE,
                    MsmBucketPairs::SIGNATURE,
                    MsmFold::SIGNATURE,
                    MsmGroupSums::SIGNATURE,
                    MsmWindowJoin::SIGNATURE,
                    MsmMergeCounts::SIGNATURE,
                    MsmMerge::SIGNATURE,
                ],
            ),
            (
                include_str!("../../kernels/zero_one.cuh"),
                vec![
                    SumSelected::SIGNATURE,
                    MaskPopcount::SIGNATURE,
                    PairSums::SIGNATURE,
                ],
            ),
            (
                include_str!("../../kernels/msm_sort.cuh"),
                vec![
                    MsmSortDigits::SIGNATURE,
                    MsmSortPlace::SIGNATURE,
                    MsmSortBuckets::SIGNATURE,
                ],
            ),
            (
                include_str!("../../kernels/fixed.cuh"),
                vec![FixedBase::SIGNATURE, ToAffine::SIGNATURE],
            ),
            (
                include_str!("../../kernels/spmv.cuh"),
                vec![
                    SpmvProducts::SIGNATURE,
                    SpmvShort::SIGNATURE,
                    SpmvLong::SIGNATURE,
                    CsrNarrow::SIGNATURE,
                    CsrCheck::SIGNATURE,
                    CsrProdCount::SIGNATURE,
                    CsrProdWrite::SIGNATURE,
                    CsrLongCount::SIGNATURE,
                    CsrLongWrite::SIGNATURE,
                    SelectCount::SIGNATURE,
                    SelectWrite::SIGNATURE,
                    SplitCount::SIGNATURE,
                    SplitWrite::SIGNATURE,
                ],
            ),
            (
                include_str!("../../kernels/zpack.cuh"),
                vec![ExpandZ::SIGNATURE],
            ),
            (
                include_str!("../../kernels/subgroup.cuh"),
                vec![SubgroupG1::SIGNATURE, SubgroupG2::SIGNATURE],
            ),
            (
                include_str!("../../kernels/tests.cu"),
                vec![
                    FieldOps::SIGNATURE,
                    FrFromMont::SIGNATURE,
                    CurveOps::SIGNATURE,
                    MulThroughput::SIGNATURE,
                ],
            ),
        ];
        // The table names every kernel the modules declare, once.
        let mut listed: Vec<&str> = table
            .iter()
            .flat_map(|(_, sigs)| sigs.iter().flat_map(|s| s.symbols.iter().copied()))
            .collect();
        let mut declared: Vec<&str> = [
            arith::SIGNATURES,
            fixed_base::SIGNATURES,
            msm::SIGNATURES,
            ntt::SIGNATURES,
            scan::SIGNATURES,
            spmv::SIGNATURES,
            subgroup::SIGNATURES,
            zero_one::SIGNATURES,
            zpack::SIGNATURES,
        ]
        .iter()
        .flat_map(|m| m.iter().flat_map(|s| s.symbols.iter().copied()))
        .collect();
        listed.sort_unstable();
        declared.sort_unstable();
        assert_eq!(
            listed, declared,
            "the table lists other kernels than the modules declare"
        );
        for (source, signatures) in table {
            check_signatures(source, &signatures);
        }
    }

    /// On CI (no libcuda, no GPU) opening must answer NoGpu, not panic; on
    /// the GPU machine device 0 opens. An absurd ordinal is never a device.
    #[test]
    fn open_answers_instead_of_panicking() {
        match CudaDevice::open(0) {
            Ok(dev) => assert!(!dev.name().is_empty()),
            Err(CudaError::NoGpu { reason }) => assert!(!reason.is_empty()),
            Err(e) => panic!("unexpected error opening GPU 0: {e}"),
        }
        assert!(matches!(
            CudaDevice::open(10_000),
            Err(CudaError::NoGpu { .. })
        ));
    }
}
