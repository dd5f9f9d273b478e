//! The GPU: one CUDA context, one stream and the embedded kernel module,
//! with the host API the prover builds on (NTT, G1/G2 MSM, the 0/1 path).
//!
//! Everything runs in order on one stream; temporaries are stream-ordered
//! allocations freed when dropped. Kernel arguments are raw device pointers
//! (u64), so the cudarc event tracking is switched off: with a single stream
//! it has nothing to order and would cost two event records per launch.

use std::sync::{Arc, Mutex};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    DriverError, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use ff::{Field, PrimeField};
use group::Group;

use crate::error::{CudaError, DriverFailure, Result};
use crate::host::{self, NttKind, FR_BYTES};

static FATBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cuzk.fatbin"));

// The compiled constraint system's kernels (a/b/c, densities, the 0/1
// split): a child module, so that it shares this one's private helpers.
#[path = "spmv.rs"]
mod spmv;
pub use spmv::{compact_scratch_bytes, DeviceCsr, DeviceDensity, DeviceSplit, SPMV_LONG};

// Subgroup checks of parameter points: a child module for the same reason.
#[path = "subgroup_dev.rs"]
mod subgroup_dev;
pub use subgroup_dev::{SubgroupReport, SUBGROUP_MAX_POINTS, SUBGROUP_SCRATCH_BYTES};

/// Largest NTT: 2^28 elements (8 GiB of Fr).
pub const MAX_NTT_LOG: u32 = 28;
/// Threshold T of the chunked bucket sums: a thread adds at most T points
/// before its partial sum moves to the next pass. With 32 (runs 1-4) the
/// merge passes took 57 ms of a 2^26 G1 MSM (2.5e7 buckets averaging 32
/// points, so most spilled into a second chunk); 64 halves the chunk sums
/// and still launches 1.3e7 threads in the first pass.
const CHUNK: u32 = 64;
/// Points per fixed-base launch: 4 Mi points hold 2.2 GiB of G2 scratch
/// (scalars, XYZZ and affine results), 1.3 GiB of G1.
const FIXED_BASE_CHUNK: usize = 1 << 22;
/// Points each to_affine thread converts with one inversion (~570 Fq
/// products, against ~3 products per point for the batching).
const TO_AFFINE_PER: u32 = 32;
use host::NTT_SMEM_LOG;

use host::ntt_pass_smem;

/// The NTT pass kernel: stages per register round (R) and, for R = 3, the
/// build that keeps two blocks per SM resident (at most 128 registers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NttPass {
    R1,
    R2,
    R3,
    R3TwoBlocks,
}

impl NttPass {
    pub const ALL: [NttPass; 4] = [NttPass::R1, NttPass::R2, NttPass::R3, NttPass::R3TwoBlocks];
    /// Stages per register round.
    pub fn radix_log(self) -> u32 {
        match self {
            NttPass::R1 => 1,
            NttPass::R2 => 2,
            NttPass::R3 | NttPass::R3TwoBlocks => 3,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            NttPass::R1 => "r1",
            NttPass::R2 => "r2",
            NttPass::R3 => "r3",
            NttPass::R3TwoBlocks => "r3x2",
        }
    }
    fn index(self) -> usize {
        self as usize
    }
}

/// The pass used unless a benchmark picks another: R3 in two blocks per SM
/// (128 registers), the fastest of the four on the H200 (bench/gpu-kernels.md,
/// run 9: forward 2^27 50.7 ms against r2 56.2, r1 56.9, r3 71.9 ms).
const DEFAULT_NTT_PASS: NttPass = NttPass::R3TwoBlocks;

/// G1 MSM kernels with inlined Fq products: measured faster on the H200
/// (run 9: 2^26 points in VRAM 695.7 ms against 758.8 ms out of line).
const DEFAULT_G1_INLINE: bool = true;

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

/// Scalars as they lie in memory: blstrs' Montgomery limbs, or the canonical
/// little-endian integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarForm {
    Montgomery,
    Canonical,
}

struct Kernels {
    ntt_powers: CudaFunction,
    ntt_bitrev: CudaFunction,
    /// Indexed by [`NttPass::index`].
    ntt_pass: [CudaFunction; 4],
    ntt_h_pointwise: CudaFunction,
    scan_block: CudaFunction,
    scan_add: CudaFunction,
    msm_digits: CudaFunction,
    msm_histogram: CudaFunction,
    msm_scatter: CudaFunction,
    msm_chunk_counts: CudaFunction,
    msm_chunk_owner: CudaFunction,
    /// G1, G2, then G1 with inlined Fq products ([`CudaDevice::msm_kernel`]).
    msm_accumulate: [CudaFunction; 3],
    msm_reduce: [CudaFunction; 3],
    msm_bucket_reduce: [CudaFunction; 2],
    sum_selected: [CudaFunction; 3],
    fixed_base: [CudaFunction; 2],
    to_affine: [CudaFunction; 2],
    test_fr_ops: CudaFunction,
    test_fq_ops: CudaFunction,
    test_fq2_ops: CudaFunction,
    test_fr_from_mont: CudaFunction,
    test_g1_ops: CudaFunction,
    test_g2_ops: CudaFunction,
    bench_fq_mul: CudaFunction,
    bench_fr_mul: CudaFunction,
}

/// Points resident in device memory, for repeated MSMs over one base.
pub struct DevicePoints {
    group: Group_,
    len: usize,
    buf: CudaSlice<u8>,
}

impl DevicePoints {
    pub fn len(&self) -> usize {
        self.len
    }
    /// Treats the first `len` points of the buffer as the vector (a
    /// streamed chunk shorter than the buffer); false, and unchanged, if
    /// the buffer holds fewer.
    pub fn set_len(&mut self, len: usize) -> bool {
        if len * self.group.affine_bytes() > self.buf.len() {
            return false;
        }
        self.len = len;
        true
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Scalars resident in device memory.
pub struct DeviceScalars {
    len: usize,
    form: ScalarForm,
    buf: CudaSlice<u8>,
}

impl DeviceScalars {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Where an MSM's scalars are: a device address, their count and form.
#[derive(Clone, Copy)]
struct ScalarsAt {
    ptr: u64,
    len: usize,
    montgomery: bool,
}

/// An indexed MSM's point ids: on the host (checked, then uploaded), or
/// already on the device, written by a kernel that bounds them (the GPU
/// 0/1 split's positions, below its length).
#[derive(Clone, Copy)]
enum Ids<'a> {
    Host(&'a [u32]),
    Device { ptr: u64, len: usize },
}

/// One NTT twiddle table kept between calls: tw[i] = w^i, i < n/2, for the
/// forward root w (the inverse transforms read it too: w^-e = -w^(n/2-e)).
struct Twiddles {
    lg: u32,
    buf: CudaSlice<u8>,
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
    subgroup: subgroup_dev::SubgroupKernels,
    label: String,
    name: String,
    ordinal: usize,
    twiddles: Mutex<Option<Twiddles>>,
    ntt_pass: std::sync::atomic::AtomicU8,
    /// Whether the G1 accumulation, reduction and 0/1 kernels are the
    /// builds with inlined Fq products.
    g1_inline: std::sync::atomic::AtomicBool,
}

fn ptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    // Event tracking is off (see the module doc), so the guard does nothing.
    let (p, _guard) = s.device_ptr(stream);
    p
}

fn cfg1d(threads: usize, block: u32) -> LaunchConfig {
    let blocks = threads.div_ceil(block as usize).max(1) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
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
            ntt_powers: f("ntt_powers")?,
            ntt_bitrev: f("ntt_bitrev")?,
            ntt_pass: [
                f("ntt_pass_r1")?,
                f("ntt_pass_r2")?,
                f("ntt_pass_r3")?,
                f("ntt_pass_r3x2")?,
            ],
            ntt_h_pointwise: f("ntt_h_pointwise")?,
            scan_block: f("scan_block")?,
            scan_add: f("scan_add")?,
            msm_digits: f("msm_digits")?,
            msm_histogram: f("msm_histogram")?,
            msm_scatter: f("msm_scatter")?,
            msm_chunk_counts: f("msm_chunk_counts")?,
            msm_chunk_owner: f("msm_chunk_owner")?,
            msm_accumulate: [
                f("msm_accumulate_g1")?,
                f("msm_accumulate_g2")?,
                f("msm_accumulate_g1i")?,
            ],
            msm_reduce: [
                f("msm_reduce_g1")?,
                f("msm_reduce_g2")?,
                f("msm_reduce_g1i")?,
            ],
            msm_bucket_reduce: [f("msm_bucket_reduce_g1")?, f("msm_bucket_reduce_g2")?],
            sum_selected: [
                f("sum_selected_g1")?,
                f("sum_selected_g2")?,
                f("sum_selected_g1i")?,
            ],
            fixed_base: [f("fixed_base_g1")?, f("fixed_base_g2")?],
            to_affine: [f("to_affine_g1")?, f("to_affine_g2")?],
            test_fr_ops: f("test_fr_ops")?,
            test_fq_ops: f("test_fq_ops")?,
            test_fq2_ops: f("test_fq2_ops")?,
            test_fr_from_mont: f("test_fr_from_mont")?,
            test_g1_ops: f("test_g1_ops")?,
            test_g2_ops: f("test_g2_ops")?,
            bench_fq_mul: f("bench_fq_mul")?,
            bench_fr_mul: f("bench_fr_mul")?,
        };
        let spmv = spmv::SpmvKernels::load(&f)?;
        let subgroup = subgroup_dev::SubgroupKernels::load(&f)?;
        for f in &k.ntt_pass {
            f.set_attribute(
                CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                ntt_pass_smem(NTT_SMEM_LOG) as i32,
            )
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
            ntt_pass: std::sync::atomic::AtomicU8::new(DEFAULT_NTT_PASS as u8),
            g1_inline: std::sync::atomic::AtomicBool::new(DEFAULT_G1_INLINE),
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
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    fn alloc<T: DeviceRepr>(&self, kernel: &'static str, len: usize) -> Result<CudaSlice<T>> {
        // SAFETY: every buffer from here is written by a kernel or a copy
        // before it is read (the kernels' index bounds guarantee it).
        unsafe { self.stream.alloc::<T>(len.max(1)) }.map_err(|e| self.err("alloc", kernel, len, e))
    }

    fn zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        kernel: &'static str,
        len: usize,
    ) -> Result<CudaSlice<T>> {
        self.stream
            .alloc_zeros::<T>(len.max(1))
            .map_err(|e| self.err("alloc_zeros", kernel, len, e))
    }

    fn upload<T: DeviceRepr>(&self, kernel: &'static str, data: &[T]) -> Result<CudaSlice<T>> {
        if data.is_empty() {
            return self.alloc(kernel, 1);
        }
        self.stream
            .clone_htod(data)
            .map_err(|e| self.err("copy to device", kernel, data.len(), e))
    }

    fn download<T: DeviceRepr + Default + Clone>(
        &self,
        kernel: &'static str,
        src: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>> {
        let mut out = vec![T::default(); len];
        if len > 0 {
            self.stream
                .memcpy_dtoh(&src.slice(0..len), &mut out)
                .map_err(|e| self.err("copy to host", kernel, len, e))?;
        }
        Ok(out)
    }

    fn p<T>(&self, s: &CudaSlice<T>) -> u64 {
        ptr(s, &self.stream)
    }

    // ------------------------------------------------------------ launches

    fn launch(
        &self,
        f: &CudaFunction,
        kernel: &'static str,
        size: usize,
        cfg: LaunchConfig,
        args: &[&dyn Arg],
    ) -> Result<()> {
        let mut b = self.stream.launch_builder(f);
        for a in args {
            a.push(&mut b);
        }
        // SAFETY: each call site passes the kernel's parameters in order with
        // matching types (u32 / u64 device pointers), and sizes its grid so
        // that the kernel's own bounds checks keep every access in bounds of
        // the buffers passed.
        unsafe { b.launch(cfg) }.map_err(|e| self.err("launch", kernel, size, e))?;
        Ok(())
    }

    // ---------------------------------------------------------------- scan

    /// Exclusive scan of `input[0..n]` into `out[0..=n]` (out[n] = total).
    fn scan(&self, input: &CudaSlice<u32>, out: &CudaSlice<u32>, n: usize) -> Result<()> {
        let blocks = n.div_ceil(1024).max(1);
        let sums: CudaSlice<u32> = self.alloc("scan", blocks + 1)?;
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 0,
        };
        if blocks == 1 {
            // The block total lands straight in out[n].
            let total_ptr = self.p(out) + 4 * n as u64;
            self.launch(
                &self.k.scan_block,
                "scan_block",
                n,
                cfg,
                &[&self.p(input), &self.p(out), &(n as u32), &total_ptr],
            )?;
            return Ok(());
        }
        self.launch(
            &self.k.scan_block,
            "scan_block",
            n,
            cfg,
            &[&self.p(input), &self.p(out), &(n as u32), &self.p(&sums)],
        )?;
        let sums_scanned: CudaSlice<u32> = self.alloc("scan", blocks + 1)?;
        self.scan(&sums, &sums_scanned, blocks)?;
        let total_ptr = self.p(&sums_scanned) + 4 * blocks as u64;
        self.launch(
            &self.k.scan_add,
            "scan_add",
            n,
            cfg1d(n, 256),
            &[
                &self.p(out),
                &(n as u32),
                &self.p(&sums_scanned),
                &total_ptr,
            ],
        )?;
        Ok(())
    }

    // ----------------------------------------------------------------- NTT

    /// Tables lo[j] = c*base^j (j < 2^lo_bits), hi[j] = base^(j*2^lo_bits),
    /// covering exponents below 2^lg.
    fn power_tables(
        &self,
        base: Scalar,
        c: Scalar,
        lg: u32,
    ) -> Result<(CudaSlice<u8>, CudaSlice<u8>, u32)> {
        let lo_bits = lg.div_ceil(2);
        let hi_bits = lg - lo_bits;
        let mut lo = Vec::with_capacity(1 << lo_bits);
        let mut p = c;
        for _ in 0..(1u32 << lo_bits) {
            lo.push(p);
            p *= base;
        }
        let step = base.pow_vartime([1u64 << lo_bits]);
        let mut hi = Vec::with_capacity(1 << hi_bits);
        let mut p = Scalar::ONE;
        for _ in 0..(1u32 << hi_bits) {
            hi.push(p);
            p *= step;
        }
        Ok((
            self.upload("ntt tables", host::scalars_as_bytes(&lo))?,
            self.upload("ntt tables", host::scalars_as_bytes(&hi))?,
            lo_bits,
        ))
    }

    // The twiddle table and the power tables are what
    // [`host::ntt_scratch_bytes`] states: keep the two in step.
    fn with_twiddles<R>(&self, lg: u32, f: impl FnOnce(u64) -> Result<R>) -> Result<R> {
        let mut cache = self.twiddles.lock().unwrap_or_else(|p| p.into_inner());
        let hit = matches!(&*cache, Some(t) if t.lg == lg);
        if !hit {
            *cache = None; // free the old table first: at 2^28 it is 4 GiB
            let w = host::root_of_unity(lg);
            let count = (1usize << lg) / 2;
            let (lo, hi, lo_bits) = self.power_tables(w, Scalar::ONE, lg)?;
            let buf: CudaSlice<u8> = self.alloc("ntt twiddles", count.max(1) * FR_BYTES)?;
            self.launch(
                &self.k.ntt_powers,
                "ntt_powers",
                count,
                cfg1d(count, 256),
                &[
                    &self.p(&buf),
                    &(count as u32),
                    &self.p(&lo),
                    &self.p(&hi),
                    &lo_bits,
                ],
            )?;
            *cache = Some(Twiddles { lg, buf });
        }
        let t = cache.as_ref().expect("filled above");
        f(self.p(&t.buf))
    }

    /// Drops the cached twiddle table (up to 4 GiB at 2^28).
    pub fn release_ntt_tables(&self) {
        *self.twiddles.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Picks the NTT pass kernel (benchmarks compare them; the default is
    /// [`DEFAULT_NTT_PASS`]).
    pub fn set_ntt_pass(&self, pass: NttPass) {
        self.ntt_pass
            .store(pass as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// Uses (or not) the G1 MSM kernels with inlined Fq products.
    pub fn set_g1_inline(&self, inline: bool) {
        self.g1_inline
            .store(inline, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn g1_inline(&self) -> bool {
        self.g1_inline.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Index into the accumulation, reduction and 0/1 kernel arrays.
    fn msm_kernel(&self, group: Group_) -> usize {
        match group {
            Group_::G1 if self.g1_inline() => 2,
            Group_::G1 => 0,
            Group_::G2 => 1,
        }
    }

    pub fn ntt_pass(&self) -> NttPass {
        NttPass::ALL[self.ntt_pass.load(std::sync::atomic::Ordering::Relaxed) as usize]
    }

    fn check_ntt_buffer(&self, data: &CudaSlice<u8>, lg: u32) -> Result<()> {
        if lg > MAX_NTT_LOG {
            return Err(CudaError::Unsupported {
                kernel: "ntt",
                size: 1 << lg,
                limit: 1 << MAX_NTT_LOG,
                device: self.label.clone(),
            });
        }
        let n = 1usize << lg;
        if data.len() < n * FR_BYTES {
            return Err(self.bad(
                "ntt",
                n,
                format!(
                    "buffer of {} bytes holds fewer than 2^{lg} elements",
                    data.len()
                ),
            ));
        }
        Ok(())
    }

    /// Runs the passes: DIT (bit-reversed in, natural out) bottom up, or DIF
    /// (natural in, bit-reversed out, inverse root) top down. `scale`: the
    /// DIT's first pass multiplies element p by c*base^bitrev(p) on load.
    fn ntt_run_passes(
        &self,
        d: u64,
        lg: u32,
        dif: bool,
        scale: Option<(&CudaSlice<u8>, &CudaSlice<u8>, u32)>,
    ) -> Result<()> {
        let n = 1usize << lg;
        let pass = self.ntt_pass();
        let kernel = &self.k.ntt_pass[pass.index()];
        let mut passes = host::ntt_pass_plan(lg);
        if dif {
            passes.reverse();
        }
        let (plo, phi, plo_bits) = match scale {
            Some((lo, hi, bits)) => (self.p(lo), self.p(hi), bits),
            None => (0, 0, 0),
        };
        self.with_twiddles(lg, |tw| {
            for &(s0, k) in &passes {
                let lgl = host::ntt_pass_lgl(s0);
                let log_e = k + lgl;
                let threads = host::ntt_pass_threads(log_e, k, pass.radix_log());
                let cfg = LaunchConfig {
                    grid_dim: (1u32 << (lg - log_e), 1, 1),
                    block_dim: (threads, 1, 1),
                    shared_mem_bytes: ntt_pass_smem(log_e),
                };
                let scale_here = u32::from(scale.is_some() && s0 == 0 && !dif);
                self.launch(
                    kernel,
                    "ntt_pass",
                    n,
                    cfg,
                    &[
                        &d,
                        &tw,
                        &lg,
                        &s0,
                        &k,
                        &lgl,
                        &u32::from(dif),
                        &plo,
                        &phi,
                        &plo_bits,
                        &scale_here,
                    ],
                )?;
            }
            Ok(())
        })
    }

    /// NTT of `n = 2^lg` Fr elements already on the device at `data`,
    /// natural order in and out.
    pub fn ntt_device(&self, data: &mut CudaSlice<u8>, lg: u32, kind: NttKind) -> Result<()> {
        self.check_ntt_buffer(data, lg)?;
        let n = 1usize << lg;
        let d = self.p(data);
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        match kind {
            NttKind::Forward | NttKind::CosetForward => {
                // Bit reversal (with the coset scaling x_i *= g^i fused in),
                // then DIT.
                if kind == NttKind::CosetForward {
                    let (lo, hi, lo_bits) = self.power_tables(g, Scalar::ONE, lg)?;
                    self.bitrev(d, lg, Some((&lo, &hi, lo_bits)), false)?;
                } else {
                    self.bitrev(d, lg, None, false)?;
                }
                if lg > 0 {
                    self.ntt_run_passes(d, lg, false, None)?;
                }
            }
            NttKind::Inverse | NttKind::CosetInverse => {
                // DIF, then the bit reversal with x_j *= n^-1 (g^-j) fused
                // in (j the element's place after the permutation).
                if lg > 0 {
                    self.ntt_run_passes(d, lg, true, None)?;
                }
                let n_inv = Scalar::from(n as u64).invert().expect("n is nonzero in Fr");
                let base = if kind == NttKind::CosetInverse {
                    g.invert().expect("g is nonzero")
                } else {
                    Scalar::ONE
                };
                let (lo, hi, lo_bits) = self.power_tables(base, n_inv, lg)?;
                self.bitrev(d, lg, Some((&lo, &hi, lo_bits)), true)?;
            }
        }
        Ok(())
    }

    /// Evaluations on the domain to evaluations on the coset g<w>, natural
    /// order in and out: the same result as [`NttKind::Inverse`] followed by
    /// [`NttKind::CosetForward`], with no permutation (DIF leaves the
    /// coefficients bit-reversed, the DIT reads them so) and the scaling by
    /// n^-1 g^i fused into the DIT's first pass.
    pub fn evals_to_coset_device(&self, data: &mut CudaSlice<u8>, lg: u32) -> Result<()> {
        self.check_ntt_buffer(data, lg)?;
        if lg == 0 {
            // One element: its own coefficient and coset value.
            return Ok(());
        }
        let n = 1usize << lg;
        let d = self.p(data);
        let n_inv = Scalar::from(n as u64).invert().expect("n is nonzero in Fr");
        let (lo, hi, lo_bits) = self.power_tables(Scalar::MULTIPLICATIVE_GENERATOR, n_inv, lg)?;
        self.ntt_run_passes(d, lg, true, None)?;
        self.ntt_run_passes(d, lg, false, Some((&lo, &hi, lo_bits)))
    }

    /// In-place bit reversal; with tables, the scaling by c*base^i of each
    /// element's place before (`after` false) or after the permutation.
    fn bitrev(
        &self,
        d: u64,
        lg: u32,
        scale: Option<(&CudaSlice<u8>, &CudaSlice<u8>, u32)>,
        after: bool,
    ) -> Result<()> {
        let n = 1usize << lg;
        let (lo, hi, lo_bits, mode) = match scale {
            Some((lo, hi, bits)) => (self.p(lo), self.p(hi), bits, if after { 2u32 } else { 1 }),
            None => (0, 0, 0, 0),
        };
        self.launch(
            &self.k.ntt_bitrev,
            "ntt_bitrev",
            n,
            cfg1d(n, 256),
            &[&d, &lg, &lo, &hi, &lo_bits, &mode],
        )
    }

    /// NTT of host data in place (length a power of two, at most 2^28).
    pub fn ntt(&self, values: &mut [Scalar], kind: NttKind) -> Result<()> {
        let n = values.len();
        if !n.is_power_of_two() {
            return Err(self.bad("ntt", n, "length is not a power of two".into()));
        }
        let lg = n.trailing_zeros();
        let mut buf = self.upload("ntt", host::scalars_as_bytes(values))?;
        self.ntt_device(&mut buf, lg, kind)?;
        self.stream
            .memcpy_dtoh(&buf, host::scalars_as_bytes_mut(values))
            .map_err(|e| self.err("copy to host", "ntt", n, e))?;
        Ok(())
    }

    /// [`CudaDevice::evals_to_coset_device`] of host data in place (length a
    /// power of two, at most 2^28).
    pub fn evals_to_coset(&self, values: &mut [Scalar]) -> Result<()> {
        let n = values.len();
        if !n.is_power_of_two() {
            return Err(self.bad("ntt", n, "length is not a power of two".into()));
        }
        let lg = n.trailing_zeros();
        let mut buf = self.upload("ntt", host::scalars_as_bytes(values))?;
        self.evals_to_coset_device(&mut buf, lg)?;
        self.stream
            .memcpy_dtoh(&buf, host::scalars_as_bytes_mut(values))
            .map_err(|e| self.err("copy to host", "ntt", n, e))?;
        Ok(())
    }

    /// H's pointwise step on the coset: a_i = (a_i b_i - c_i) / Z, with
    /// Z = g^n - 1 the vanishing polynomial's value on the coset `g<w>`.
    pub fn h_pointwise_device(
        &self,
        a: &mut CudaSlice<u8>,
        b: &CudaSlice<u8>,
        c: &CudaSlice<u8>,
        n: usize,
    ) -> Result<()> {
        if a.len() < n * FR_BYTES || b.len() < n * FR_BYTES || c.len() < n * FR_BYTES {
            return Err(self.bad(
                "ntt_h_pointwise",
                n,
                "a buffer holds fewer than n elements".into(),
            ));
        }
        let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([n as u64]) - Scalar::ONE;
        let z_inv = z
            .invert()
            .expect("g^n != 1: g is not a root of unity of this order");
        let zb = self.upload("ntt_h_pointwise", host::scalars_as_bytes(&[z_inv]))?;
        self.launch(
            &self.k.ntt_h_pointwise,
            "ntt_h_pointwise",
            n,
            cfg1d(n, 256),
            &[
                &self.p(a),
                &self.p(b),
                &self.p(c),
                &(n as u32),
                &self.p(&zb),
            ],
        )
    }

    /// The whole H computation of Groth16 on the GPU: a, b, c are the
    /// evaluations (zero-padded to n = 2^lg); returns the n coefficients of
    /// (a*b - c)/Z computed through the coset, as bellperson does.
    pub fn compute_h(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Vec<Scalar>> {
        let m = a.len().max(b.len()).max(c.len());
        let n = m.next_power_of_two().max(1);
        let lg = n.trailing_zeros();
        let pad = |v: &[Scalar]| -> Result<CudaSlice<u8>> {
            let mut buf: CudaSlice<u8> = self.zeros("compute_h", n * FR_BYTES)?;
            if !v.is_empty() {
                self.stream
                    .memcpy_htod(
                        host::scalars_as_bytes(v),
                        &mut buf.slice_mut(0..v.len() * FR_BYTES),
                    )
                    .map_err(|e| self.err("copy to device", "compute_h", n, e))?;
            }
            Ok(buf)
        };
        let mut bufs = [pad(a)?, pad(b)?, pad(c)?];
        for buf in bufs.iter_mut() {
            self.evals_to_coset_device(buf, lg)?;
        }
        let [mut ha, hb, hc] = bufs;
        self.h_pointwise_device(&mut ha, &hb, &hc, n)?;
        self.ntt_device(&mut ha, lg, NttKind::CosetInverse)?;
        let mut out = vec![Scalar::ZERO; n];
        self.stream
            .memcpy_dtoh(&ha, host::scalars_as_bytes_mut(&mut out))
            .map_err(|e| self.err("copy to host", "compute_h", n, e))?;
        Ok(out)
    }

    // ----------------------------------------------------------------- MSM

    pub fn upload_g1(&self, points: &[G1Affine]) -> Result<DevicePoints> {
        Ok(DevicePoints {
            group: Group_::G1,
            len: points.len(),
            buf: self.upload("upload_g1", host::g1_as_bytes(points))?,
        })
    }
    pub fn upload_g2(&self, points: &[G2Affine]) -> Result<DevicePoints> {
        Ok(DevicePoints {
            group: Group_::G2,
            len: points.len(),
            buf: self.upload("upload_g2", host::g2_as_bytes(points))?,
        })
    }
    /// Uploads points from any host buffer holding their raw bytes (e.g.
    /// pinned memory); `bytes.len()` must be a whole number of points.
    pub fn upload_points_raw(&self, g2: bool, bytes: &[u8]) -> Result<DevicePoints> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        if !bytes.len().is_multiple_of(group.affine_bytes()) {
            return Err(self.bad(
                "upload_points",
                bytes.len(),
                "not a whole number of affine points".into(),
            ));
        }
        Ok(DevicePoints {
            group,
            len: bytes.len() / group.affine_bytes(),
            buf: self.upload("upload_points", bytes)?,
        })
    }
    pub fn upload_scalars(&self, scalars: &[Scalar]) -> Result<DeviceScalars> {
        Ok(DeviceScalars {
            len: scalars.len(),
            form: ScalarForm::Montgomery,
            buf: self.upload("upload_scalars", host::scalars_as_bytes(scalars))?,
        })
    }
    /// Canonical scalars as little-endian u64 limbs (any 256-bit value; the
    /// kernels reduce it mod r).
    pub fn upload_scalars_canonical(&self, limbs: &[[u64; 4]]) -> Result<DeviceScalars> {
        let bytes: Vec<u8> = limbs
            .iter()
            .flatten()
            .flat_map(|l| l.to_le_bytes())
            .collect();
        let buf = self.upload("upload_scalars", &bytes)?;
        Ok(DeviceScalars {
            len: limbs.len(),
            form: ScalarForm::Canonical,
            buf,
        })
    }

    /// sum s_i P_i over Montgomery scalars; points.len() >= scalars.len().
    pub fn msm_g1(&self, points: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective> {
        let n = scalars.len();
        if points.len() < n {
            return Err(self.bad(
                "msm_g1",
                n,
                format!("{} points for {n} scalars", points.len()),
            ));
        }
        let p = self.upload_g1(&points[..n])?;
        let s = self.upload_scalars(scalars)?;
        self.msm_g1_device(&p, &s, None)
    }

    pub fn msm_g2(&self, points: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective> {
        let n = scalars.len();
        if points.len() < n {
            return Err(self.bad(
                "msm_g2",
                n,
                format!("{} points for {n} scalars", points.len()),
            ));
        }
        let p = self.upload_g2(&points[..n])?;
        let s = self.upload_scalars(scalars)?;
        self.msm_g2_device(&p, &s, None)
    }

    /// MSM over resident points; `ids` (if any) gives, for each scalar, the
    /// index of its point (the indexed MSM of the split's non-0/1 part).
    pub fn msm_g1_device(
        &self,
        points: &DevicePoints,
        scalars: &DeviceScalars,
        ids: Option<&[u32]>,
    ) -> Result<G1Projective> {
        let at = self.scalars_at(scalars);
        let sums = self.msm_windows(Group_::G1, points, at, ids.map(Ids::Host), None, "msm_g1")?;
        Ok(combine_windows(
            sums.0.iter().map(|b| host::g1_from_xyzz(b)).collect(),
            sums.1,
        ))
    }

    pub fn msm_g2_device(
        &self,
        points: &DevicePoints,
        scalars: &DeviceScalars,
        ids: Option<&[u32]>,
    ) -> Result<G2Projective> {
        let at = self.scalars_at(scalars);
        let sums = self.msm_windows(Group_::G2, points, at, ids.map(Ids::Host), None, "msm_g2")?;
        Ok(combine_windows(
            sums.0.iter().map(|b| host::g2_from_xyzz(b)).collect(),
            sums.1,
        ))
    }

    fn scalars_at(&self, s: &DeviceScalars) -> ScalarsAt {
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
        let sums = self.msm_windows(Group_::G1, points, at, None, None, kernel)?;
        Ok(combine_windows(
            sums.0.iter().map(|b| host::g1_from_xyzz(b)).collect(),
            sums.1,
        ))
    }

    /// Room for `len` affine points on the device, uninitialised, for a
    /// caller that fills it from another stream of this context (with
    /// [`Self::points_address`]) and makes this device's stream wait for
    /// that copy ([`Self::wait_event`]) before an MSM reads it. The
    /// allocation has completed when this returns.
    pub fn alloc_points(&self, g2: bool, len: usize) -> Result<DevicePoints> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let buf: CudaSlice<u8> = self.alloc("alloc_points", len * group.affine_bytes())?;
        self.synchronize()?;
        Ok(DevicePoints { group, len, buf })
    }

    /// The device address of `points`' first byte, for copies into it.
    pub fn points_address(&self, points: &DevicePoints) -> u64 {
        self.p(&points.buf)
    }

    /// An uninitialised buffer of `len` Montgomery scalars for copies from
    /// another stream of this context ([`Self::scalars_address`]); the
    /// caller fills every element before a kernel reads it (ordered by an
    /// event this device's stream waits for).
    pub fn alloc_scalars(&self, len: usize) -> Result<DeviceScalars> {
        let buf: CudaSlice<u8> = self.alloc("alloc_scalars", len * FR_BYTES)?;
        self.synchronize()?;
        Ok(DeviceScalars {
            len,
            form: ScalarForm::Montgomery,
            buf,
        })
    }

    /// The device address of `scalars`' first byte, for copies into it.
    pub fn scalars_address(&self, scalars: &DeviceScalars) -> u64 {
        self.p(&scalars.buf)
    }

    /// Makes this device's stream wait (on the device, not the host) for
    /// `event`, recorded on another stream of the same context: work
    /// enqueued here afterwards starts only once the event has completed.
    pub fn wait_event(&self, event: &cudarc::driver::CudaEvent) -> Result<()> {
        self.stream
            .wait(event)
            .map_err(|e| self.err("stream wait", "wait_event", 0, e))
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
        let sums = self.msm_windows(Group_::G1, &points, at, None, Some(&copied), kernel)?;
        Ok(combine_windows(
            sums.0.iter().map(|b| host::g1_from_xyzz(b)).collect(),
            sums.1,
        ))
    }

    /// Runs the Pippenger kernels; returns each window's sum (XYZZ bytes)
    /// and the window width. `points_ready` (if any) is waited for before
    /// the first kernel that reads the points. The most its buffers hold
    /// at once is stated by [`host::msm_scratch_bytes`], which callers
    /// budget with: a change to the buffers here changes that function.
    fn msm_windows(
        &self,
        group: Group_,
        points: &DevicePoints,
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
        let c = host::choose_window(m);
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

        // 1-2: counting sort of (window, bucket) entries, window by window.
        let keys: CudaSlice<u32> = self.alloc(kernel, w as usize * m)?;
        self.launch(
            &self.k.msm_digits,
            "msm_digits",
            m,
            cfg1d(m, 256),
            &[&sc, &(m as u32), &mont, &c, &w, &self.p(&keys)],
        )?;
        let hist: CudaSlice<u32> = self.zeros(kernel, s)?;
        for win in 0..w as u64 {
            let kp = self.p(&keys) + 4 * win * m as u64;
            let hp = self.p(&hist) + 4 * win * b as u64;
            self.launch(
                &self.k.msm_histogram,
                "msm_histogram",
                m,
                cfg1d(m, 256),
                &[&kp, &(m as u32), &hp],
            )?;
        }
        let off0: CudaSlice<u32> = self.alloc(kernel, s + 1)?;
        self.scan(&hist, &off0, s)?;
        let mut cursor: CudaSlice<u32> = self.alloc(kernel, s)?;
        self.stream
            .memcpy_dtod(&off0.slice(0..s), &mut cursor)
            .map_err(|e| self.err("copy", kernel, m, e))?;
        let total_bound = w as usize * m;
        let sorted: CudaSlice<u32> = self.alloc(kernel, total_bound)?;
        for win in 0..w as u64 {
            let kp = self.p(&keys) + 4 * win * m as u64;
            let cp = self.p(&cursor) + 4 * win * b as u64;
            self.launch(
                &self.k.msm_scatter,
                "msm_scatter",
                m,
                cfg1d(m, 256),
                &[&kp, &ids_ptr, &(m as u32), &cp, &self.p(&sorted)],
            )?;
        }
        drop((cursor, keys));
        prof.mark(self, "sort")?;

        // 3: chunked bucket sums, first pass from the affine points.
        let (cnt1, off1, owner1, max1, bound1) = self.chunk_plan(&hist, s, total_bound, kernel)?;
        let items1: CudaSlice<u8> = self.alloc(kernel, bound1 * group.xyzz_bytes())?;
        if let Some(ev) = points_ready {
            self.stream
                .wait(ev)
                .map_err(|e| self.err("stream wait", kernel, m, e))?;
        }
        self.launch(
            &self.k.msm_accumulate[self.msm_kernel(group)],
            "msm_accumulate",
            m,
            cfg1d(bound1, 128),
            &[
                &self.p(&points.buf),
                &self.p(&sorted),
                &self.p(&hist),
                &self.p(&off0),
                &self.p(&off1),
                &self.p(&owner1),
                &(s as u32),
                &CHUNK,
                &self.p(&items1),
            ],
        )?;
        drop(owner1);
        drop((sorted, hist, off0));
        prof.mark(self, "accumulate")?;
        let (items, cnt, off, _) =
            self.reduce_segments(group, items1, cnt1, off1, s, max1, bound1, kernel)?;
        prof.mark(self, "merge chunks")?;

        // 4: per-window bucket reduction by G groups, then sum the groups.
        // G is chosen for ~2^17 threads in all (the SMs' resident-thread
        // capacity at this kernel's register use), keeping at least 16
        // buckets per thread so the final k*T_g multiplication stays small
        // beside the running sums.
        let lg_g = {
            let want = (1usize << 17)
                .div_ceil(w as usize)
                .next_power_of_two()
                .trailing_zeros();
            want.min(c - 1 - 4.min(c - 1))
        };
        let groups = 1usize << lg_g;
        let parts: CudaSlice<u8> = self.alloc(kernel, w as usize * groups * group.xyzz_bytes())?;
        self.launch(
            &self.k.msm_bucket_reduce[gi],
            "msm_bucket_reduce",
            m,
            cfg1d(w as usize * groups, 64),
            &[
                &self.p(&items),
                &self.p(&cnt),
                &self.p(&off),
                &w,
                &(b as u32),
                &lg_g,
                &self.p(&parts),
            ],
        )?;
        drop((items, cnt, off));
        prof.mark(self, "bucket reduce")?;
        let wcnt = self.upload(kernel, &vec![groups as u32; w as usize])?;
        let woff_host: Vec<u32> = (0..=w as usize).map(|i| (i * groups) as u32).collect();
        let woff = self.upload(kernel, &woff_host)?;
        let (sums, _, soff, _) = self.reduce_segments(
            group,
            parts,
            wcnt,
            woff,
            w as usize,
            groups,
            w as usize * groups,
            kernel,
        )?;
        // Each window holds exactly one item now, at soff[w] = w.
        let _ = soff;
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

    /// Chunks of at most CHUNK items over segments with `count` items:
    /// (chunks per segment, their offsets, each chunk's segment, the largest
    /// chunk count, the total chunk bound). Reads the maximum back (one
    /// synchronisation) so that the caller runs only the passes it needs.
    #[allow(clippy::type_complexity)]
    fn chunk_plan(
        &self,
        count: &CudaSlice<u32>,
        s: usize,
        items_bound: usize,
        kernel: &'static str,
    ) -> Result<(CudaSlice<u32>, CudaSlice<u32>, CudaSlice<u32>, usize, usize)> {
        let cnt: CudaSlice<u32> = self.alloc(kernel, s)?;
        let maxbuf: CudaSlice<u32> = self.zeros(kernel, 1)?;
        self.launch(
            &self.k.msm_chunk_counts,
            "msm_chunk_counts",
            s,
            cfg1d(s, 256),
            &[
                &self.p(count),
                &(s as u32),
                &CHUNK,
                &self.p(&cnt),
                &self.p(&maxbuf),
            ],
        )?;
        let off: CudaSlice<u32> = self.alloc(kernel, s + 1)?;
        self.scan(&cnt, &off, s)?;
        let bound = items_bound / CHUNK as usize + s;
        let owner: CudaSlice<u32> = self.alloc(kernel, bound)?;
        self.launch(
            &self.k.msm_chunk_owner,
            "msm_chunk_owner",
            s,
            cfg1d(s, 256),
            &[&self.p(&off), &(s as u32), &self.p(&owner)],
        )?;
        let max = self.download(kernel, &maxbuf, 1)?[0] as usize;
        Ok((cnt, off, owner, max, bound))
    }

    /// Repeats the chunked reduction until every segment holds at most one
    /// item. `max_count` is the largest segment's item count, `bound` bounds
    /// the total.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn reduce_segments(
        &self,
        group: Group_,
        mut items: CudaSlice<u8>,
        mut cnt: CudaSlice<u32>,
        mut off: CudaSlice<u32>,
        s: usize,
        mut max_count: usize,
        mut bound: usize,
        kernel: &'static str,
    ) -> Result<(CudaSlice<u8>, CudaSlice<u32>, CudaSlice<u32>, usize)> {
        while max_count > 1 {
            let (cnt2, off2, owner2, max2, bound2) = self.chunk_plan(&cnt, s, bound, kernel)?;
            let items2: CudaSlice<u8> = self.alloc(kernel, bound2 * group.xyzz_bytes())?;
            self.launch(
                &self.k.msm_reduce[self.msm_kernel(group)],
                "msm_reduce",
                bound,
                cfg1d(bound2, 128),
                &[
                    &self.p(&items),
                    &self.p(&cnt),
                    &self.p(&off),
                    &self.p(&off2),
                    &self.p(&owner2),
                    &(s as u32),
                    &CHUNK,
                    &self.p(&items2),
                ],
            )?;
            items = items2;
            cnt = cnt2;
            off = off2;
            bound = bound2;
            max_count = max2;
        }
        Ok((items, cnt, off, bound))
    }

    // ------------------------------------------------------------ 0/1 path

    /// Sum of the points whose bit is set in `mask` (bit i of word i/32);
    /// bits at or past `points.len()` must be clear.
    pub fn sum_selected_g1(&self, points: &DevicePoints, mask: &[u32]) -> Result<G1Projective> {
        let b = self.sum_selected(Group_::G1, points, mask, "sum_selected_g1")?;
        Ok(host::g1_from_xyzz(&b))
    }
    pub fn sum_selected_g2(&self, points: &DevicePoints, mask: &[u32]) -> Result<G2Projective> {
        let b = self.sum_selected(Group_::G2, points, mask, "sum_selected_g2")?;
        Ok(host::g2_from_xyzz(&b))
    }

    fn sum_selected(
        &self,
        group: Group_,
        points: &DevicePoints,
        mask: &[u32],
        kernel: &'static str,
    ) -> Result<Vec<u8>> {
        let n = points.len;
        if points.group != group {
            return Err(self.bad(kernel, n, "points of the other group".into()));
        }
        if mask.len() != n.div_ceil(32) {
            return Err(self.bad(
                kernel,
                n,
                format!("mask of {} words for {n} points", mask.len()),
            ));
        }
        if !n.is_multiple_of(32) && mask.last().is_some_and(|&w| w >> (n % 32) != 0) {
            return Err(self.bad(kernel, n, "mask bits set past the last point".into()));
        }
        if n == 0 {
            return Ok(vec![0u8; group.xyzz_bytes()]);
        }
        let mbuf = self.upload(kernel, mask)?;
        self.sum_selected_at(group, points, self.p(&mbuf), kernel)
    }

    /// [`Self::sum_selected`] over a mask already on the device:
    /// `points.len().div_ceil(32)` words at `mask`, bits past the last
    /// point clear (the caller's checks, or the kernel that wrote it).
    fn sum_selected_at(
        &self,
        group: Group_,
        points: &DevicePoints,
        mask: u64,
        kernel: &'static str,
    ) -> Result<Vec<u8>> {
        let n = points.len;
        if n == 0 {
            return Ok(vec![0u8; group.xyzz_bytes()]);
        }
        // 8 words (256 points) per thread: 2^18 threads at 2^26 points.
        const WORDS: u32 = 8;
        let n_words = n.div_ceil(32);
        let threads = n_words.div_ceil(WORDS as usize);
        let parts: CudaSlice<u8> = self.alloc(kernel, threads * group.xyzz_bytes())?;
        self.launch(
            &self.k.sum_selected[self.msm_kernel(group)],
            kernel,
            n,
            cfg1d(threads, 128),
            &[
                &self.p(&points.buf),
                &mask,
                &(n_words as u32),
                &WORDS,
                &self.p(&parts),
                &(threads as u32),
            ],
        )?;
        let cnt = self.upload(kernel, &[threads as u32])?;
        let off = self.upload(kernel, &[0u32, threads as u32])?;
        let (items, _, _, _) =
            self.reduce_segments(group, parts, cnt, off, 1, threads, threads, kernel)?;
        self.download(kernel, &items, group.xyzz_bytes())
    }

    /// sum s_i P_i by the split: the 0/1 part through the 0/1 path, the rest
    /// through an indexed MSM over the same resident points.
    pub fn msm_g1_split(&self, points: &DevicePoints, scalars: &[Scalar]) -> Result<G1Projective> {
        if points.len != scalars.len() {
            return Err(self.bad(
                "msm_g1_split",
                scalars.len(),
                format!("{} points", points.len),
            ));
        }
        let split = host::split_zero_one(scalars);
        let ones = self.sum_selected_g1(points, &split.ones)?;
        let rest_s = self.upload_scalars(&split.rest_scalars)?;
        let rest = self.msm_g1_device(points, &rest_s, Some(&split.rest_ids))?;
        Ok(ones + rest)
    }

    pub fn msm_g2_split(&self, points: &DevicePoints, scalars: &[Scalar]) -> Result<G2Projective> {
        if points.len != scalars.len() {
            return Err(self.bad(
                "msm_g2_split",
                scalars.len(),
                format!("{} points", points.len),
            ));
        }
        let split = host::split_zero_one(scalars);
        let ones = self.sum_selected_g2(points, &split.ones)?;
        let rest_s = self.upload_scalars(&split.rest_scalars)?;
        let rest = self.msm_g2_device(points, &rest_s, Some(&split.rest_ids))?;
        Ok(ones + rest)
    }

    // ---------------------------------------------------- fixed base

    /// out[i] = scalars[i] · B in affine form, for the base B whose
    /// fixed-base table of window `window` is `table`
    /// (table[w·2^(c−1) + d − 1] = d·2^(c·w)·B, cuzk-core's layout).
    /// Parameter generation's bulk: every query point is such a multiple.
    pub fn fixed_base_g1(
        &self,
        table: &[G1Affine],
        window: u32,
        scalars: &[Scalar],
        out: &mut [G1Affine],
    ) -> Result<()> {
        self.fixed_base_g1_in(table, window, scalars, out, FIXED_BASE_CHUNK)
    }
    pub fn fixed_base_g2(
        &self,
        table: &[G2Affine],
        window: u32,
        scalars: &[Scalar],
        out: &mut [G2Affine],
    ) -> Result<()> {
        self.fixed_base_g2_in(table, window, scalars, out, FIXED_BASE_CHUNK)
    }
    /// [`Self::fixed_base_g1`] in chunks of at most `chunk` points (at
    /// least 1), so that its device memory is
    /// [`Self::fixed_base_bytes`]`(false, table.len(), chunk)`.
    pub fn fixed_base_g1_in(
        &self,
        table: &[G1Affine],
        window: u32,
        scalars: &[Scalar],
        out: &mut [G1Affine],
        chunk: usize,
    ) -> Result<()> {
        self.fixed_base(
            Group_::G1,
            host::g1_as_bytes(table),
            window,
            scalars,
            host::g1_as_bytes_mut(out),
            chunk,
        )
    }
    /// [`Self::fixed_base_g2`] in chunks of at most `chunk` points.
    pub fn fixed_base_g2_in(
        &self,
        table: &[G2Affine],
        window: u32,
        scalars: &[Scalar],
        out: &mut [G2Affine],
        chunk: usize,
    ) -> Result<()> {
        self.fixed_base(
            Group_::G2,
            host::g2_as_bytes(table),
            window,
            scalars,
            host::g2_as_bytes_mut(out),
            chunk,
        )
    }

    /// Device bytes one fixed-base chunk holds besides its table: scalars,
    /// XYZZ results and affine results.
    pub fn fixed_base_scratch_bytes(g2: bool, points: usize) -> usize {
        points.min(FIXED_BASE_CHUNK) * Self::fixed_base_bytes_per_point(g2)
    }

    /// Device bytes per point of a fixed-base chunk (scalar, XYZZ result,
    /// affine result).
    pub fn fixed_base_bytes_per_point(g2: bool) -> usize {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        FR_BYTES + group.xyzz_bytes() + group.affine_bytes()
    }

    /// Every device byte a fixed-base call over `points` points with a
    /// table of `table_points` points allocates at once when it runs in
    /// chunks of at most `chunk` points: the table and one chunk's scratch
    /// (the allocations of [`Self::fixed_base_g1_in`] and `_g2_in`).
    pub fn fixed_base_bytes(g2: bool, table_points: usize, points: usize, chunk: usize) -> usize {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let chunk = points.min(chunk.clamp(1, FIXED_BASE_CHUNK));
        table_points * group.affine_bytes() + chunk * Self::fixed_base_bytes_per_point(g2)
    }

    /// The largest chunk (at most the default of 2^22 points, at least 1)
    /// whose [`Self::fixed_base_bytes`] fit `room` bytes; None when not even
    /// one point does.
    pub fn fixed_base_chunk_for(g2: bool, table_points: usize, room: usize) -> Option<usize> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let left = room.checked_sub(table_points * group.affine_bytes())?;
        let chunk = (left / Self::fixed_base_bytes_per_point(g2)).min(FIXED_BASE_CHUNK);
        (chunk >= 1).then_some(chunk)
    }

    fn fixed_base(
        &self,
        group: Group_,
        table: &[u8],
        window: u32,
        scalars: &[Scalar],
        out: &mut [u8],
        max_chunk: usize,
    ) -> Result<()> {
        let kernel = "fixed_base";
        let n = scalars.len();
        if !(2..=20).contains(&window) {
            return Err(self.bad(kernel, n, format!("window {window} outside 2..=20")));
        }
        let windows = host::fixed_base_windows(window);
        let want = windows as usize * (1usize << (window - 1)) * group.affine_bytes();
        if table.len() != want {
            return Err(self.bad(
                kernel,
                n,
                format!(
                    "table of {} bytes, window {window} needs {want}",
                    table.len()
                ),
            ));
        }
        if out.len() != n * group.affine_bytes() {
            return Err(self.bad(
                kernel,
                n,
                format!("output of {} bytes for {n} points", out.len()),
            ));
        }
        if n == 0 {
            return Ok(());
        }
        let gi = (group == Group_::G2) as usize;
        let dtable = self.upload(kernel, table)?;
        // Device memory: the table and one chunk's scalars, XYZZ and affine
        // results, as `fixed_base_bytes` states.
        let chunk = n.min(max_chunk.clamp(1, FIXED_BASE_CHUNK));
        let xyzz: CudaSlice<u8> = self.alloc(kernel, chunk * group.xyzz_bytes())?;
        let affine: CudaSlice<u8> = self.alloc(kernel, chunk * group.affine_bytes())?;
        let mut dscalars: CudaSlice<u8> = self.alloc(kernel, chunk * FR_BYTES)?;
        let ab = group.affine_bytes();
        for (s, o) in scalars.chunks(chunk).zip(out.chunks_mut(chunk * ab)) {
            let m = s.len();
            self.stream
                .memcpy_htod(
                    host::scalars_as_bytes(s),
                    &mut dscalars.slice_mut(0..m * FR_BYTES),
                )
                .map_err(|e| self.err("copy to device", kernel, m, e))?;
            self.launch(
                &self.k.fixed_base[gi],
                kernel,
                m,
                cfg1d(m, 128),
                &[
                    &self.p(&dtable),
                    &window,
                    &windows,
                    &self.p(&dscalars),
                    &self.p(&xyzz),
                    &(m as u32),
                ],
            )?;
            let threads = m.div_ceil(TO_AFFINE_PER as usize);
            let cfg = cfg1d(threads, 128);
            // The kernel strides by the whole grid: size `per` from it so
            // that every point is covered.
            let grid = cfg.grid_dim.0 as usize * cfg.block_dim.0 as usize;
            let per = m.div_ceil(grid) as u32;
            self.launch(
                &self.k.to_affine[gi],
                "to_affine",
                m,
                cfg,
                &[&self.p(&xyzz), &self.p(&affine), &(m as u32), &per],
            )?;
            self.stream
                .memcpy_dtoh(&affine.slice(0..m * ab), o)
                .map_err(|e| self.err("copy to host", kernel, m, e))?;
        }
        self.synchronize()
    }

    // ------------------------------------------- arithmetic kernels (tests)

    /// Runs test_{fr,fq,fq2}_ops: per element [a*b, a+b, a-b, a^2, -a,
    /// a*b by the second multiplication (C++ CIOS / schoolbook Fq2)], raw
    /// Montgomery bytes in and out. `which`: 0 = Fr, 1 = Fq, 2 = Fq2.
    pub fn field_ops_raw(&self, which: u32, a: &[u8], b: &[u8], elem: usize) -> Result<Vec<u8>> {
        let n = a.len() / elem;
        let f = match which {
            0 => &self.k.test_fr_ops,
            1 => &self.k.test_fq_ops,
            _ => &self.k.test_fq2_ops,
        };
        let (da, db) = (self.upload("field_ops", a)?, self.upload("field_ops", b)?);
        let out: CudaSlice<u8> = self.alloc("field_ops", 6 * n * elem)?;
        self.launch(
            f,
            "test_field_ops",
            n,
            cfg1d(n, 128),
            &[&self.p(&da), &self.p(&db), &self.p(&out), &(n as u32)],
        )?;
        self.download("field_ops", &out, 6 * n * elem)
    }

    pub fn fr_from_mont_raw(&self, a: &[u8]) -> Result<Vec<u8>> {
        let n = a.len() / FR_BYTES;
        let da = self.upload("fr_from_mont", a)?;
        let out: CudaSlice<u8> = self.alloc("fr_from_mont", a.len())?;
        self.launch(
            &self.k.test_fr_from_mont,
            "test_fr_from_mont",
            n,
            cfg1d(n, 128),
            &[&self.p(&da), &self.p(&out), &(n as u32)],
        )?;
        self.download("fr_from_mont", &out, a.len())
    }

    /// Runs test_g{1,2}_ops: per pair [P+Q mixed, P+Q xyzz, 2P, k*P] as XYZZ.
    pub fn curve_ops_raw(&self, g2: bool, p: &[u8], q: &[u8], ks: &[u32]) -> Result<Vec<u8>> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let n = ks.len();
        let (dp, dq, dk) = (
            self.upload("curve_ops", p)?,
            self.upload("curve_ops", q)?,
            self.upload("curve_ops", ks)?,
        );
        let out: CudaSlice<u8> = self.alloc("curve_ops", 4 * n * group.xyzz_bytes())?;
        let f = if g2 {
            &self.k.test_g2_ops
        } else {
            &self.k.test_g1_ops
        };
        self.launch(
            f,
            "test_curve_ops",
            n,
            cfg1d(n, 64),
            &[
                &self.p(&dp),
                &self.p(&dq),
                &self.p(&dk),
                &self.p(&out),
                &(n as u32),
            ],
        )?;
        self.download("curve_ops", &out, 4 * n * group.xyzz_bytes())
    }

    /// Products per second of the Montgomery multiplication: `fq` picks Fq
    /// (else Fr); variant 0 = PTX inline, 1 = C++ CIOS inline, 2 = what the
    /// kernels use (out of line for Fq). Median of 3 timed runs.
    pub fn mul_throughput(&self, fq: bool, variant: u32, sms: u32) -> Result<f64> {
        let threads = sms as usize * 2048;
        let elem = if fq { 48 } else { 32 };
        let mut seed = 0x1234_5678_9abc_def1u64;
        // Values below the modulus: top limb cleared keeps them reduced.
        let host_data: Vec<u8> = (0..2 * threads * elem)
            .map(|i| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if i % elem >= elem - 4 {
                    0
                } else {
                    seed as u8
                }
            })
            .collect();
        let data = self.upload("mul_throughput", &host_data)?;
        let iters = 256u32;
        let f = if fq {
            &self.k.bench_fq_mul
        } else {
            &self.k.bench_fr_mul
        };
        let mut ts = Vec::new();
        for rep in 0..4 {
            self.synchronize()?;
            let t = std::time::Instant::now();
            self.launch(
                f,
                "bench_mul",
                threads,
                cfg1d(threads, 256),
                &[&self.p(&data), &iters, &variant],
            )?;
            self.synchronize()?;
            if rep > 0 {
                ts.push(t.elapsed().as_secs_f64());
            }
        }
        ts.sort_by(|a, b| a.total_cmp(b));
        Ok(2.0 * threads as f64 * iters as f64 / ts[1])
    }

    /// Pinned (page-locked) host memory of `len` bytes on this device's
    /// context, for streaming points at full PCIe/NVLink-C2C speed.
    pub fn alloc_pinned(&self, len: usize) -> Result<cudarc::driver::PinnedHostSlice<u8>> {
        // SAFETY: the memory is uninitialised; callers fill it before use
        // (the bench writes every byte before the first copy).
        unsafe { self.ctx.alloc_pinned_with_flags::<u8>(len.max(1), 0) }
            .map_err(|e| self.err("cuMemHostAlloc", "pinned", len, e))
    }

    /// Copies raw point bytes from pinned memory into a new device buffer.
    pub fn upload_points_pinned(
        &self,
        g2: bool,
        src: &cudarc::driver::PinnedHostSlice<u8>,
        len: usize,
    ) -> Result<DevicePoints> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let bytes = len * group.affine_bytes();
        let mut buf: CudaSlice<u8> = self.alloc("upload_points_pinned", bytes)?;
        let host = src
            .as_slice()
            .map_err(|e| self.err("pinned slice", "upload_points_pinned", len, e))?;
        self.stream
            .memcpy_htod(&host[..bytes], &mut buf)
            .map_err(|e| self.err("copy to device", "upload_points_pinned", len, e))?;
        Ok(DevicePoints { group, len, buf })
    }
}

/// Lets the default stream-ordered memory pool keep up to a quarter of the
/// card's memory after a synchronisation. With the driver's default
/// threshold (0) every synchronisation handed freed memory back to the
/// system, so each MSM mapped its multi-GB temporaries afresh.
fn keep_pool_memory(ctx: &Arc<CudaContext>) -> std::result::Result<(), DriverError> {
    use cudarc::driver::sys;
    let total = ctx.total_mem()? as u64;
    ctx.bind_to_thread()?;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: plain driver calls on this context's device; `pool` is an out
    // parameter and the attribute value a u64, as the driver API specifies
    // for CU_MEMPOOL_ATTR_RELEASE_THRESHOLD.
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()).result()?;
        let mut threshold: u64 = total / 4;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
        .result()?;
    }
    Ok(())
}

/// Phase timer of the MSM, on when CUZK_MSM_PROFILE is set: synchronises
/// after each phase and prints the times to stderr (for tuning only: the
/// synchronisations cost a little).
struct PhaseTimer {
    on: bool,
    last: std::time::Instant,
    phases: Vec<(&'static str, f64)>,
}

impl PhaseTimer {
    fn new() -> Self {
        PhaseTimer {
            on: std::env::var_os("CUZK_MSM_PROFILE").is_some(),
            last: std::time::Instant::now(),
            phases: Vec::new(),
        }
    }
    fn mark(&mut self, dev: &CudaDevice, name: &'static str) -> Result<()> {
        if self.on {
            dev.synchronize()?;
            let now = std::time::Instant::now();
            self.phases
                .push((name, (now - self.last).as_secs_f64() * 1e3));
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
        }
    }
}

/// sum_w 2^(c w) S_w by Horner, on the host (W <= 64 windows).
fn combine_windows<G: Group>(sums: Vec<G>, c: u32) -> G {
    let mut acc = G::identity();
    for s in sums.into_iter().rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc += s;
    }
    acc
}

/// A kernel argument: a u32 or a u64 (device pointer).
trait Arg {
    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>);
}
impl Arg for u32 {
    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>) {
        b.arg(self);
    }
}
impl Arg for u64 {
    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>) {
        b.arg(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunk picked for a room is the largest whose stated bytes fit
    /// it; a room below the table and one point gives none.
    #[test]
    fn fixed_base_chunks_fit_their_room() {
        for g2 in [false, true] {
            let per = CudaDevice::fixed_base_bytes_per_point(g2);
            let table = 1000;
            let t_bytes = CudaDevice::fixed_base_bytes(g2, table, 0, 1);
            assert_eq!(CudaDevice::fixed_base_chunk_for(g2, table, t_bytes), None);
            assert_eq!(
                CudaDevice::fixed_base_chunk_for(g2, table, t_bytes + per - 1),
                None
            );
            for room in [t_bytes + per, t_bytes + 7 * per + 3, 1 << 30, 1 << 40] {
                let c = CudaDevice::fixed_base_chunk_for(g2, table, room).unwrap();
                assert!((1..=FIXED_BASE_CHUNK).contains(&c));
                let n = 1 << 30;
                assert!(
                    CudaDevice::fixed_base_bytes(g2, table, n, c) <= room,
                    "{room}"
                );
                if c < FIXED_BASE_CHUNK {
                    assert!(CudaDevice::fixed_base_bytes(g2, table, n, c + 1) > room);
                }
            }
            // Fewer points than the chunk: only those points' scratch.
            assert_eq!(
                CudaDevice::fixed_base_bytes(g2, table, 5, 1 << 20),
                t_bytes + 5 * per
            );
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
