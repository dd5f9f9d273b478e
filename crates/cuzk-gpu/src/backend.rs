//! The CUDA prover backend: for each partition of a batch, H on the device
//! (or in parts, or on the host, as the staging plan says) and the five
//! MSMs on cuzk-cuda's kernels, every device buffer reserved from the
//! device's [`VramBudget`] first.
//!
//! Several workers share a device (`GpuConfig::workers_per_device`): each
//! partition runs on a slot of its own (a cuzk-cuda device handle with its
//! own streams), all slots share the budget, the pinned pool and the
//! resident parameters. A partition is admitted before it touches the
//! device: it plans against what it could have (the budget less the
//! resident parameters other partitions are using), waits in the budget's
//! first-come queue until that working set is free (evicting resident
//! parameter sets no partition uses, least recently used first), and takes
//! it whole as a [`Grant`]. Its steps then reserve from the grant and never
//! wait, so no partition fails for memory another one holds, and only one
//! that does not fit the whole budget on any plan is refused.
//!
//! Buffers and their reservations live in the same scope, so an error or a
//! panic releases both. Parameters stay resident in VRAM across calls when
//! the plan allows, several sets at once when they fit, in the device's
//! [`ResidencyTable`] under a parameter id (the daemon's, or one derived
//! from the parameters' identity); an entry knows its parameters by weak
//! references to their point vectors, which keep the addresses from being
//! reused by other parameters without keeping the host memory alive.
//!
//! Two kinds of device memory are in play: cuzk-cuda allocates its
//! temporaries from the device's default stream-ordered pool, and so do the
//! a/b/c staging buffers here (cudarc's `alloc` on our own stream). Both
//! show in the pool's high-water mark, which [`PartitionReport`] carries so
//! that the estimates of [`crate::plan`] can be checked against it.
//!
//! This file holds the backend, admission and a partition's phases, in
//! order in `prove_partition_in` (host preparation spawned, admission,
//! where the bases are read, H, the H MSM, the host preparation joined,
//! the other MSMs); its parts live beside it: `query` (the five MSMs and
//! where each reads its points), `bases` (which
//! parameters a resident copy holds, and uploading them, from a mapped
//! file a piece at a time), `resident` (naming, making resident, listing
//! and evicting sets), `mirror` (the pinned mirror the streamed plans
//! read), `prep` (the host path's query selections and 0/1 splits),
//! `compiled` (the device path of compiled witnesses) and `subgroup` (the
//! parameter loader's point checks).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaSlice, CudaStream, DriverError};
use cuzk_core::domain::log_domain_size;
use cuzk_core::points::Points;
use cuzk_core::prover::{check_shape, MsmResults, ProverBackend};
use cuzk_core::{Parameters, Phase, PhaseTimings, ProvingAssignment, SpanOn};
use cuzk_cuda::host::{g1_as_bytes, g2_as_bytes, scalars_as_bytes, scalars_as_bytes_mut, NttKind};
use cuzk_cuda::{CudaDevice, DevicePoints, ZeroOneSplit};
use ff::{Field, PrimeField};
use group::Group;
use rayon::prelude::*;

use crate::budget::{BudgetError, Grant, Reservation, Try, VramBudget, MAX_WAIT};
use crate::error::{GpuError, Result};
use crate::pinned::PinnedPool;
use crate::plan::{
    self, BaseStaging, Footprint, HStaging, PartitionSizes, StagingPlan, G1_POINT, G2_POINT,
};
use crate::residency::ResidencyTable;

const G1: u64 = G1_POINT;
const G2: u64 = G2_POINT;
use crate::split::split_zero_one_par;
use crate::GpuConfig;

mod bases;
mod compiled;
pub use compiled::{CompiledFit, CompiledPlacement, H_PARTS};
use compiled::{DeviceCompiled, ResidentShape};
mod mirror;
mod prep;
mod query;
mod resident;
mod subgroup;
use bases::{ResidentBases, WeakKey};
pub use mirror::live_mirrors;
use mirror::{MirrorPart, PinnedMirror};
use prep::{host_prep, HostPrep};
use query::{G1Query, QueryBases};
pub use subgroup::SUBGROUP_PIECE_POINTS;

/// What one partition did: its plan, phase times and memory.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PartitionReport {
    pub index: usize,
    #[serde(serialize_with = "plan_name")]
    pub plan: StagingPlan,
    pub timings: PhaseTimings,
    /// Budget bytes reserved at the peak of this partition.
    pub peak_reserved: u64,
    /// The driver pool's high-water mark during this partition (bytes the
    /// pool really held at once: cuzk-cuda's temporaries plus ours).
    pub pool_high: u64,
    /// Host work before the device was taken (density filtering and the
    /// 0/1 splits; on the compiled path, the witness's 0/1 form written
    /// into pinned memory), in milliseconds; included in `timings.total`.
    pub host_prep_ms: f64,
    /// Whether a/b/c went up from pinned memory.
    pub pinned: bool,
    /// How long the MSMs after H's waited for the host preparation
    /// (density selection, 0/1 splits) running beside the GPU work.
    pub prep_wait_ms: f64,
    /// Whether a/b/c, the query selections and the 0/1 splits were made
    /// on the device from a compiled system (no host preparation).
    pub abc_on_device: bool,
    /// Row blocks the compiled system's matrices went up in for a/b/c (0
    /// when they were resident, or on the host path).
    pub abc_row_blocks: usize,
    /// Parts the H MSM ran in: 1, but for a compiled system that fits the
    /// card beside its parameters only with the H MSM's scratch cut
    /// ([`crate::CompiledFit`]; 2 for the 2^27 partition on an 80 GB card).
    pub h_msm_parts: usize,
    /// Bytes the upload phase copied to the device, and how long its copies
    /// took from the first one enqueued until the device had them all, in
    /// milliseconds (the rest of the phase is allocation and waiting);
    /// zero where not measured (the host path).
    pub upload_bytes: u64,
    pub upload_copy_ms: f64,
    /// Of the upload phase before the copies: the wait for what the
    /// device's stream still had to do, then z's allocation, in
    /// milliseconds (zero on the host path).
    pub upload_wait_ms: f64,
    pub upload_alloc_ms: f64,
    /// Bytes the upload phase sent over the link: `upload_bytes` less what
    /// packing z by 0/1 saved (equal to it when everything went raw).
    pub upload_sent_bytes: u64,
}

fn plan_name<S: serde::Serializer>(p: &StagingPlan, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{:?}/{:?}", p.h, p.bases))
}

/// H's coefficients: still on the device where the NTTs left them (read
/// by the H MSM in place, under a reservation of their size), or in a host
/// vector (the one-at-a-time and host plans).
enum HCoeffs<'a> {
    Device { buf: Staged<'a>, _held: Reservation },
    Host(Vec<Scalar>),
}

/// Drops cuzk-cuda's cached NTT twiddles when the H step ends.
struct ReleaseTables<'a>(&'a CudaDevice);

impl Drop for ReleaseTables<'_> {
    fn drop(&mut self) {
        self.0.release_ntt_tables();
    }
}

/// A staging buffer on our stream. Dropping it first waits for cuzk-cuda's
/// stream, whose kernels may still read it (an error can return between a
/// launch and its completion), then frees it and waits for the free, so the
/// reservation dropped after it matches the device.
struct Staged<'a> {
    buf: Option<CudaSlice<u8>>,
    dev: &'a CudaDevice,
    stream: &'a Arc<CudaStream>,
}

impl Staged<'_> {
    fn get(&mut self) -> &mut CudaSlice<u8> {
        self.buf.as_mut().expect("present until drop")
    }
    fn slice(&self) -> &CudaSlice<u8> {
        self.buf.as_ref().expect("present until drop")
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        // Errors here cannot be returned; a failed synchronisation means
        // the context is already broken and the free fails with it.
        let _ = self.dev.synchronize();
        drop(self.buf.take());
        let _ = self.stream.synchronize();
    }
}

/// One worker's handle on the device: cuzk-cuda's device (its own stream
/// and module) and a stream of ours for the a/b/c staging buffers.
struct Slot {
    dev: CudaDevice,
    stream: Arc<CudaStream>,
    /// The slot's place in `slots`: its stream's index in the timeline.
    index: u32,
}

/// What a partition works with: its slot's device and stream, its grant's
/// budget, and the backend's shared state (pinned pool, settings).
struct Worker<'a> {
    b: &'a CudaBackend,
    dev: &'a CudaDevice,
    stream: &'a Arc<CudaStream>,
    /// The partition's working set, which every step reserves from.
    grant: &'a VramBudget,
}

/// The partition being admitted.
#[derive(Clone, Copy)]
struct Admit<'a> {
    params: &'a Parameters,
    id: &'a str,
    sizes: &'a PartitionSizes,
    index: usize,
    /// A compiled partition's needs: its plan is H all on the device and
    /// the parameters resident, whatever the budget would pick.
    compiled: Option<CompiledNeed<'a>>,
}

/// What a compiled partition asks of its admission.
#[derive(Clone, Copy)]
struct CompiledNeed<'a> {
    /// Its working set.
    working: u64,
    /// Its constraint system, to be made resident in the admission unless
    /// it is by then (a Resident placement whose system is not up): its
    /// bytes wait in the queue with the working set, so the partition
    /// takes its turn instead of streaming while others wait.
    system: Option<(&'a cuzk_core::compiled::CompiledCircuit, ResidentShape)>,
}

/// What a partition was admitted with.
struct Admission {
    plan: StagingPlan,
    /// The resident set it proves with: its clone pins the set in the
    /// table. Dropped before the grant, so a waiter woken by the grant's
    /// release finds the set unused.
    bases: Option<Arc<ResidentBases>>,
    grant: Grant,
    /// The compiled system uploaded in the admission (see
    /// [`CompiledNeed::system`]).
    compiled: Option<Arc<DeviceCompiled>>,
}

/// The GPU prover of one device.
pub struct CudaBackend {
    /// One slot per worker (`GpuConfig::workers_per_device`): partitions on
    /// different slots run at once on the device, on separate streams.
    slots: Vec<Mutex<Slot>>,
    next_slot: AtomicUsize,
    /// The device's primary context.
    ctx: Arc<CudaContext>,
    budget: VramBudget,
    pinned: PinnedPool,
    config: GpuConfig,
    label: String,
    /// The parameter sets resident on the device, by id. A partition
    /// clones an entry's Arc, so eviction frees the points (and their
    /// reservation) only when the last partition using them is done.
    resident: Mutex<ResidencyTable<ResidentBases>>,
    /// Ids callers gave parameters ([`Self::name_parameters`]), for the
    /// sets a partition makes resident itself.
    names: Mutex<Vec<(WeakKey, String)>>,
    mirror: Mutex<Option<Arc<PinnedMirror>>>,
    /// Host preparation vectors of finished partitions, refilled by the
    /// next ones (`GpuConfig::reuse_host_buffers`).
    prep_pool: Mutex<Vec<HostPrep>>,
    /// Held while a partition plans and, if needed, uploads parameters.
    planning: Mutex<()>,
    reports: Mutex<Vec<PartitionReport>>,
    /// Parameter sets uploaded so far (each upload of a resident set).
    uploads: std::sync::atomic::AtomicU64,
    /// The driver pool's largest high-water mark seen so far.
    pool_high_max: std::sync::atomic::AtomicU64,
    /// The compiled constraint systems resident on the device, least
    /// recently used first (`compiled`): partitions clone an Arc while
    /// they use it.
    compiled: Mutex<Vec<Arc<compiled::DeviceCompiled>>>,
    /// The compiled systems seen, their resident shapes and row-block
    /// plans (least recently made first).
    system_plans: Mutex<Vec<Arc<compiled::SystemPlans>>>,
    /// Whether the compiled path's z goes up packed by 0/1
    /// (`GpuConfig::pack_witness`, changed by [`Self::set_pack_witness`]).
    pack_witness: std::sync::atomic::AtomicBool,
    /// Whether compiled partitions send a witness's 0/1 form made on the
    /// synthesis side (`GpuConfig::zero_one_form`, changed by
    /// [`Self::set_zero_one_form`]).
    zero_one_form: std::sync::atomic::AtomicBool,
    /// Whether compiled partitions write the 0/1 form into pinned memory
    /// before they wait for the device (on; changed by
    /// [`Self::set_stage_form`]).
    stage_form: std::sync::atomic::AtomicBool,
    /// The fewest parts a compiled partition's H MSM of more than
    /// [`compiled::H_PARTS_MIN_ABOVE`] scalars runs in
    /// ([`compiled::DEFAULT_H_PARTS_MIN`]; changed by
    /// [`Self::set_h_parts_min`] to measure the parts against each other).
    h_parts_min: AtomicUsize,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Whatever panicked while holding these left no half-updated state
    // (the guarded values are replaced whole), so poisoning is ignored.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".into()
    }
}

impl CudaBackend {
    /// Opens `config.device`, measures its free memory and sets up the
    /// budget.
    pub fn open(config: GpuConfig) -> Result<Self> {
        let dev = CudaDevice::open(config.device)?;
        let label = format!("{} ({})", config.device, dev.name());
        let mut devs = vec![dev];
        for _ in 1..config.workers_per_device.max(1) {
            devs.push(CudaDevice::open(config.device)?);
        }
        let drv = |op: &'static str, e: DriverError| GpuError::Driver {
            op,
            device: label.clone(),
            source: Box::new(e),
        };
        let ctx = CudaContext::new(config.device).map_err(|e| drv("context", e))?;
        // SAFETY: every use of our buffers by cuzk-cuda's stream is ordered
        // by explicit synchronisation of both streams (see `stage`), so
        // cudarc's per-buffer events have nothing to add.
        unsafe { ctx.disable_event_tracking() };
        let mut slots = Vec::with_capacity(devs.len());
        for (index, dev) in (0u32..).zip(devs) {
            let stream = ctx.new_stream().map_err(|e| drv("stream creation", e))?;
            slots.push(Mutex::new(Slot { dev, stream, index }));
        }
        let pinned = PinnedPool::new(ctx.clone(), config.max_pinned_cache as usize);
        let mut me = CudaBackend {
            slots,
            next_slot: AtomicUsize::new(0),
            ctx,
            budget: VramBudget::new(label.clone(), 0, config.budget),
            pinned,
            config,
            label,
            resident: Mutex::new(ResidencyTable::new()),
            names: Mutex::new(Vec::new()),
            mirror: Mutex::new(None),
            prep_pool: Mutex::new(Vec::new()),
            planning: Mutex::new(()),
            reports: Mutex::new(Vec::new()),
            uploads: std::sync::atomic::AtomicU64::new(0),
            compiled: Mutex::new(Vec::new()),
            system_plans: Mutex::new(Vec::new()),
            pool_high_max: std::sync::atomic::AtomicU64::new(0),
            pack_witness: std::sync::atomic::AtomicBool::new(config.pack_witness),
            h_parts_min: AtomicUsize::new(compiled::DEFAULT_H_PARTS_MIN),
            zero_one_form: std::sync::atomic::AtomicBool::new(config.zero_one_form),
            stage_form: std::sync::atomic::AtomicBool::new(true),
        };
        let free = me.measure_free()?;
        me.budget = VramBudget::new(me.label.clone(), free, config.budget);
        Ok(me)
    }

    pub fn budget(&self) -> &VramBudget {
        &self.budget
    }
    /// The CUDA ordinal of this backend's device.
    pub fn device_ordinal(&self) -> usize {
        self.config.device
    }
    /// Worker slots (partitions that can run at once on this device).
    pub fn workers(&self) -> usize {
        self.slots.len()
    }

    /// A free slot, or (all busy) the next in turn, waited for.
    fn acquire_slot(&self) -> MutexGuard<'_, Slot> {
        for s in &self.slots {
            match s.try_lock() {
                Ok(g) => return g,
                // A worker panicked on this slot; its streams are idle and
                // its buffers were freed while unwinding.
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        let i = self.next_slot.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        relock(&self.slots[i])
    }

    /// A free slot, or None when every worker is proving.
    fn try_acquire_slot(&self) -> Option<MutexGuard<'_, Slot>> {
        self.slots.iter().find_map(|s| match s.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        })
    }

    /// Per-partition reports of the calls so far (oldest first); taking
    /// them empties the list.
    pub fn take_reports(&self) -> Vec<PartitionReport> {
        std::mem::take(&mut *relock(&self.reports))
    }

    /// Drops resident parameters (their VRAM returns to the budget once
    /// no partition in flight uses them), their pinned mirror and the kept
    /// host preparation vectors.
    pub fn evict_parameters(&self) {
        let gone = relock(&self.resident).clear();
        drop(gone);
        self.budget.notify();
        *relock(&self.mirror) = None;
        relock(&self.prep_pool).clear();
    }

    /// A grant of `bytes` of this device's budget for work that is not a
    /// partition (parameter generation's fixed-base scratch), so that it
    /// is counted with the partitions' memory instead of beside it: waits
    /// in the budget's queue like a partition, making room by evicting
    /// unused resident parameter sets and compiled systems, least recently
    /// used first. Fails at once when `bytes` exceed the whole budget, and
    /// after `MAX_WAIT`.
    pub fn grant_outside(&self, bytes: u64, what: &'static str) -> Result<Grant> {
        let exhausted = || {
            GpuError::Budget(BudgetError::Exhausted {
                device: self.label.clone(),
                what,
                bytes,
                available: self.budget.available(),
                capacity: self.budget.capacity(),
                reserved: self.budget.reserved(),
            })
        };
        if bytes > self.budget.capacity() {
            return Err(exhausted());
        }
        self.budget.wait_in_queue(MAX_WAIT, exhausted, || {
            let _planning = relock(&self.planning);
            if bytes > self.budget.available() {
                let mut table = relock(&self.resident);
                let shortfall = bytes - self.budget.available();
                if let Some(victims) = table.victims(shortfall, None) {
                    if let Err(e) = self.evict_locked(&mut table, &victims) {
                        return Try::Fail(e);
                    }
                } else {
                    drop(table);
                    if !self.drop_unused_compiled() {
                        // Partitions in flight hold the rest: wait for them.
                        return Try::Wait;
                    }
                }
            }
            if bytes > self.budget.available() {
                return Try::Wait;
            }
            match self.budget.grant(bytes, what) {
                Ok(g) => Try::Done(g),
                Err(_) => Try::Wait,
            }
        })
    }

    /// The plan a partition of `sizes` gets with the whole budget to
    /// itself, or the error naming both sizes when it fits no plan: such a
    /// partition is the only kind that fails here (`admit` plans with the
    /// same capacity when others' sets are in the way), so the daemon
    /// refuses its job when it is submitted
    /// ([`cuzk_core::accel::DeviceBackend::check_fits`]).
    pub fn best_plan(&self, sizes: &PartitionSizes) -> Result<StagingPlan, plan::PlanError> {
        plan::plan(sizes, self.budget.capacity(), 0)
    }

    /// The most device memory the driver's pool held at once since this
    /// backend opened (sampled at each partition's start and end).
    pub fn pool_high_water(&self) -> u64 {
        self.pool_high_max.load(Ordering::Relaxed)
    }

    /// (name, total bytes, free bytes now) of the device.
    pub fn memory_info(&self) -> Result<(String, u64, u64)> {
        let slot = self.acquire_slot();
        let (free, total) = slot.dev.memory()?;
        Ok((slot.dev.name().to_string(), total as u64, free as u64))
    }

    /// Whether the device still works: a worker slot's stream synchronizes
    /// and the driver answers a memory query. A context that a sticky
    /// error (an illegal address, an ECC error) left unusable answers both
    /// with that error. The daemon probes GPUs it took out of service so.
    pub fn probe(&self) -> Result<()> {
        let slot = self.acquire_slot();
        slot.dev.synchronize()?;
        slot.dev.memory()?;
        Ok(())
    }

    fn drv(&self, op: &'static str, e: DriverError) -> GpuError {
        GpuError::Driver {
            op,
            device: self.label.clone(),
            source: Box::new(e),
        }
    }

    /// An upload's error as ours: a driver call's with `op`, a packed
    /// piece's expansion as cuzk-cuda's.
    fn upload_err(&self, op: &'static str, e: crate::upload::UploadError) -> GpuError {
        match e {
            crate::upload::UploadError::Driver(e) => self.drv(op, e),
            crate::upload::UploadError::Expand(e) => GpuError::Cuda(e),
        }
    }

    fn default_pool(&self) -> Result<sys::CUmemoryPool> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| self.drv("binding the context", e))?;
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        // SAFETY: an out-parameter query on this context's device.
        unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, self.ctx.cu_device()).result() }
            .map_err(|e| self.drv("cuDeviceGetDefaultMemPool", e))?;
        Ok(pool)
    }

    /// Free device memory with every stream idle and the default pool
    /// trimmed, so memory this process freed counts as free (cuzk-cuda
    /// raises the pool's release threshold, which otherwise keeps it).
    pub fn measure_free(&self) -> Result<u64> {
        let slots: Vec<_> = self.slots.iter().map(relock).collect();
        for s in &slots[1..] {
            self.sync_slot(s)?;
        }
        self.measure_free_in(&slots[0])
    }

    fn sync_slot(&self, slot: &Slot) -> Result<()> {
        slot.dev.synchronize()?;
        slot.stream
            .synchronize()
            .map_err(|e| self.drv("synchronize", e))
    }

    /// Free memory after `slot`'s streams are idle and the pool trimmed
    /// (other slots' streams are not waited for).
    fn measure_free_in(&self, slot: &Slot) -> Result<u64> {
        self.sync_slot(slot)?;
        let pool = self.default_pool()?;
        // SAFETY: trimming only releases memory no allocation holds.
        unsafe { sys::cuMemPoolTrimTo(pool, 0).result() }
            .map_err(|e| self.drv("cuMemPoolTrimTo", e))?;
        let (free, _) = slot.dev.memory()?;
        Ok(free as u64)
    }

    /// What [`Self::measure_free_in`] reads, without trimming the pool:
    /// the driver's free memory plus what the default pool holds unused.
    /// Trimming at every admission handed the pool's cached memory back
    /// before each partition, so its first large allocations mapped it
    /// again: z's 4.3 GB at 2^27 took 5-10 ms (H200, 2026-12-04 calls
    /// 43-47) against 0.02 ms when the pool reuses a block.
    fn free_keeping_pool(&self, slot: &Slot) -> Result<u64> {
        self.sync_slot(slot)?;
        let (free, _) = slot.dev.memory()?;
        let unused = slot
            .dev
            .pool_usage()
            .map_or(0, |(reserved, used)| reserved.saturating_sub(used));
        Ok(free as u64 + unused)
    }

    /// The pool's high-water mark since the last reset, then resets it.
    fn pool_high_and_reset(&self) -> Result<u64> {
        let pool = self.default_pool()?;
        let mut high: u64 = 0;
        // SAFETY: CU_MEMPOOL_ATTR_USED_MEM_HIGH is a u64 attribute; setting
        // it takes the value 0 only (a reset), as the driver API specifies.
        unsafe {
            sys::cuMemPoolGetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                (&mut high as *mut u64).cast(),
            )
            .result()
            .map_err(|e| self.drv("cuMemPoolGetAttribute", e))?;
            let mut zero: u64 = 0;
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
                (&mut zero as *mut u64).cast(),
            )
            .result()
            .map_err(|e| self.drv("cuMemPoolSetAttribute", e))?;
        }
        self.pool_high_max.fetch_max(high, Ordering::Relaxed);
        Ok(high)
    }

    /// Admits one partition (see the module docs): waits in the budget's
    /// queue until its plan's working set (and its parameters, when the
    /// plan keeps them resident and they are not yet) fit, evicting unused
    /// resident sets as needed; returns the plan, the resident bases it
    /// proves with and its grant. Fails only when the partition cannot fit
    /// the whole budget on any plan, or after `MAX_WAIT`.
    fn admit(
        &self,
        slot: &Slot,
        params: &Parameters,
        sizes: &PartitionSizes,
        index: usize,
        compiled: Option<CompiledNeed<'_>>,
        t: &mut PhaseTimings,
    ) -> Result<Admission> {
        let id = self.id_of(params);
        // What the last try needed, for the error after `MAX_WAIT`.
        let need = std::cell::Cell::new(0u64);
        let timed_out = || {
            GpuError::Budget(BudgetError::Exhausted {
                device: self.label.clone(),
                what: "a partition's working set (gave up waiting)",
                bytes: need.get(),
                available: self.budget.available(),
                capacity: self.budget.capacity(),
                reserved: self.budget.reserved(),
            })
        };
        self.budget.wait_in_queue(MAX_WAIT, timed_out, || {
            let what = Admit {
                params,
                id: &id,
                sizes,
                index,
                compiled,
            };
            match self.try_admit(slot, &what, t, &need) {
                Ok(Some(a)) => Try::Done(a),
                Ok(None) => Try::Wait,
                Err(e) => Try::Fail(e),
            }
        })
    }

    /// One try of [`Self::admit`], first in the queue: Ok(None) to wait.
    fn try_admit(
        &self,
        slot: &Slot,
        what: &Admit<'_>,
        t: &mut PhaseTimings,
        last_need: &std::cell::Cell<u64>,
    ) -> Result<Option<Admission>> {
        let Admit {
            params,
            id,
            sizes,
            index,
            compiled,
        } = *what;
        let _planning = relock(&self.planning);
        let mut table = relock(&self.resident);
        // With nothing but resident bases allocated, free + reserved is
        // what this process may use now. While another partition holds its
        // grant the reading would count what it reserved but has not
        // allocated yet, so the budget stays as it is.
        if self.budget.transient() == 0 {
            let free = self.free_keeping_pool(slot)?;
            self.budget.refresh(free);
        }
        let mut own = table.get(id);
        if own.as_ref().is_some_and(|b| !b.holds(params)) {
            // The id names other parameters now (regenerated or reloaded):
            // the stale set goes (when its partitions are done).
            own = None;
            drop(table.remove(id));
        }
        let own_bytes = own.as_ref().map_or(0, |b| b.reservation.bytes());
        let capacity = self.budget.capacity();
        // What this partition can count on once the partitions in flight
        // are done and unused sets are evicted: all but the sets that
        // other partitions are using.
        let attainable = capacity.saturating_sub(table.pinned_bytes(Some(id)));
        let plan_err = |source| GpuError::Plan {
            device: self.label.clone(),
            index,
            source,
        };
        let mut plan = match (compiled, self.config.force_plan) {
            (Some(_), _) => StagingPlan {
                h: HStaging::AllResident,
                bases: BaseStaging::Resident,
            },
            (None, Some(p)) => p,
            (None, None) => plan::plan(sizes, attainable.saturating_sub(own_bytes), own_bytes)
                // Fits only once other partitions stop using their sets.
                .or_else(|_| plan::plan(sizes, capacity.saturating_sub(own_bytes), own_bytes))
                .map_err(plan_err)?,
        };
        let params_fit_cap = table.cap().is_none_or(|cap| sizes.params_bytes() <= cap);
        if plan.bases == BaseStaging::Resident
            && own.is_none()
            && (!self.config.keep_params_resident || !params_fit_cap)
            && self.config.force_plan.is_none()
            && compiled.is_none()
        {
            // PerMsm's peak is below Resident's (one vector's bases at a
            // time instead of all five), so the plan still fits.
            plan.bases = BaseStaging::PerMsm;
        }
        if plan.bases != BaseStaging::Resident {
            // Not used: the set stays resident, evictable like any other.
            own = None;
        }
        let working = compiled.map_or_else(|| plan.working_bytes(sizes), |c| c.working);
        // A system to make resident here, unless it is by now (then this
        // partition's clone keeps it until the partition is done).
        let (system, held_system) = match compiled.and_then(|c| c.system) {
            Some((cc, shape)) => match self.held_compiled(cc) {
                Some(dc) => (None, Some(dc)),
                None => (Some((cc, shape)), None),
            },
            None => (None, None),
        };
        // The system stays at its bytes; its upload's transient comes
        // before the working set is granted, so the peak is the larger.
        let (system_bytes, system_scratch) =
            system.map_or((0, 0), |(_, shape)| (shape.bytes(), shape.scratch()));
        let upload = if plan.bases == BaseStaging::Resident && own.is_none() {
            sizes.params_bytes()
        } else {
            0
        };
        let need = working.max(system_scratch) + upload + system_bytes;
        last_need.set(need);
        if need > capacity {
            // Only a forced plan gets here (a chosen one fits by
            // construction).
            return Err(GpuError::Budget(BudgetError::Exhausted {
                device: self.label.clone(),
                what: "a partition's working set (forced plan)",
                bytes: need,
                available: self.budget.available(),
                capacity,
                reserved: self.budget.reserved(),
            }));
        }
        let available = self.budget.available();
        let victims = if upload > 0 {
            table.admit(
                id,
                upload,
                available.saturating_sub(working.max(system_scratch) + system_bytes),
                capacity,
            )
        } else {
            let keep = own.is_some().then_some(id);
            table.victims(need.saturating_sub(available), keep).ok_or(
                crate::residency::ResidencyError::NoRoomNow {
                    id: id.to_owned(),
                    needed: need,
                    available,
                    evictable: 0,
                    pinned: 0,
                },
            )
        };
        let victims = match victims {
            Ok(v) => v,
            // Partitions in flight hold the rest: wait for them, with the
            // room of an unused compiled system given back meanwhile.
            Err(crate::residency::ResidencyError::NoRoomNow { .. }) => {
                self.drop_unused_compiled();
                return Ok(None);
            }
            Err(source) => {
                return Err(GpuError::Residency {
                    device: self.label.clone(),
                    source,
                })
            }
        };
        self.evict_locked(&mut table, &victims)?;
        if self.budget.available() < need {
            // Evicted sets still in use by a partition that just took
            // them: wait for it.
            return Ok(None);
        }
        if upload > 0 {
            drop(table.remove(id));
        }
        // Uploading takes a while (tens of GB for Filecoin's largest sets,
        // ~12 GB for a 2^27 system): the table stays readable meanwhile,
        // and the planning lock keeps every other change of residency out.
        drop(table);
        if upload > 0 {
            let clock = Instant::now();
            let bases = Arc::new(self.upload_bases(slot, params)?);
            t.end(Phase::Upload, clock);
            relock(&self.resident).insert(id, bases.reservation.bytes(), bases.clone());
            own = Some(bases);
        }
        let compiled = match system {
            Some((cc, shape)) => Some(self.upload_compiled(slot, cc, shape)?),
            None => held_system,
        };
        // After the uploads: the planning lock keeps other admissions out
        // meanwhile, so the room counted above is still there.
        let grant = self.budget.grant(working, "a partition's working set")?;
        Ok(Some(Admission {
            plan,
            bases: own,
            grant,
            compiled,
        }))
    }

    /// One partition on a worker slot.
    fn prove_partition(
        &self,
        params: &Parameters,
        pa: &ProvingAssignment,
        index: usize,
    ) -> Result<(MsmResults, PartitionReport)> {
        // The scope joins the host-preparation thread on every path (an
        // early error, a panic) before the borrowed assignment goes away.
        std::thread::scope(|scope| self.prove_partition_in(scope, params, pa, index))
    }

    fn prove_partition_in<'s, 'e>(
        &'s self,
        scope: &'s std::thread::Scope<'s, 'e>,
        params: &'s Parameters,
        pa: &'s ProvingAssignment,
        index: usize,
    ) -> Result<(MsmResults, PartitionReport)> {
        let start = Instant::now();
        let mut t = PhaseTimings::default();
        let log = log_domain_size(pa.a.len());
        let sizes = PartitionSizes {
            domain: 1usize << log,
            ..PartitionSizes::of_params(params)
        };
        // 1. Host preparation on its own thread (it overlaps the wait for
        //    a slot, H and the H MSM, which need none of it).
        let prep_thread = self.spawn_host_prep(scope, pa)?;
        // 2. A slot, and the partition's plan and grant.
        let slot = self.acquire_slot();
        t.at(
            SpanOn::Caller {
                stream: Some(slot.index),
            },
            index,
        );
        let _in_flight = self.budget.enter_partition();
        let admitted = self.admit(&slot, params, &sizes, index, None, &mut t)?;
        let plan = admitted.plan;
        let w = Worker {
            b: self,
            dev: &slot.dev,
            stream: &slot.stream,
            grant: admitted.grant.budget(),
        };
        let _ = self.pool_high_and_reset()?;
        // 3. Where each query's points come from.
        let mirror = self.mirror_for(params, &plan, &mut t);
        let q = QueryBases {
            params,
            mirror: mirror.as_deref(),
            resident: admitted.bases.as_deref(),
        };
        // 4. H, and the H MSM over its coefficients.
        let (h_coeffs, pinned) = w.compute_h(pa, log, plan.h, &mut t)?;
        let h_coeffs = w.h_coeffs_for_msm(h_coeffs, &plan, &sizes, &mut t)?;
        let h = w.msm_h(&q, h_coeffs, &sizes, &plan, &mut t)?;
        // 5. The host preparation's selections and 0/1 splits.
        let (prep, prep_wait, host_prep) = join_host_prep(prep_thread, &mut t);
        // 6. The other four MSMs, mostly 0/1 scalars.
        let l = w.msm_query(
            &q,
            G1Query::L,
            &pa.aux_assignment,
            &prep.l_split,
            &plan,
            &mut t,
        )?;
        let a_g1 = w.msm_query(
            &q,
            G1Query::A,
            &prep.a_scalars,
            &prep.a_split,
            &plan,
            &mut t,
        )?;
        let b_g1 = w.msm_query(
            &q,
            G1Query::BG1,
            &prep.b_scalars,
            &prep.b_split,
            &plan,
            &mut t,
        )?;
        let b_g2 = w.msm_b_g2(&q, &prep.b_scalars, &prep.b_split, &plan, &mut t)?;
        if self.config.reuse_host_buffers {
            // At most one set per partition in flight (one per worker).
            relock(&self.prep_pool).push(prep);
        }

        let pool_high = self.pool_high_and_reset()?;
        t.total = start.elapsed();
        let report = PartitionReport {
            index,
            plan,
            timings: t,
            peak_reserved: q.resident.map_or(0, |b| b.reservation.bytes()) + w.grant.peak(),
            pool_high,
            host_prep_ms: host_prep.as_secs_f64() * 1e3,
            prep_wait_ms: prep_wait.as_secs_f64() * 1e3,
            pinned,
            abc_on_device: false,
            abc_row_blocks: 0,
            h_msm_parts: 1,
            upload_bytes: 0,
            upload_copy_ms: 0.0,
            upload_wait_ms: 0.0,
            upload_alloc_ms: 0.0,
            upload_sent_bytes: 0,
        };
        Ok((
            MsmResults {
                a_g1,
                b_g1,
                b_g2,
                l,
                h,
            },
            report,
        ))
    }

    /// The host path's preparation of `pa` (density selections, the 0/1
    /// splits of A, B and L) on a thread of `scope`, into a reused set of
    /// buffers: joined by [`join_host_prep`] before the MSMs that read it.
    fn spawn_host_prep<'s, 'e>(
        &'s self,
        scope: &'s std::thread::Scope<'s, 'e>,
        pa: &'s ProvingAssignment,
    ) -> Result<HostPrepThread<'s>> {
        let mut prep_buffers = relock(&self.prep_pool).pop().unwrap_or_default();
        std::thread::Builder::new()
            .name("cuzk-gpu-prep".into())
            .spawn_scoped(scope, move || {
                let clock = Instant::now();
                host_prep(pa, &mut prep_buffers);
                (prep_buffers, clock, clock.elapsed())
            })
            .map_err(|source| GpuError::Thread {
                device: self.label.clone(),
                source,
            })
    }

    /// The pinned mirror of `params` when `plan` streams the bases (None
    /// when they are resident), its lookup timed as upload.
    fn mirror_for(
        &self,
        params: &Parameters,
        plan: &StagingPlan,
        t: &mut PhaseTimings,
    ) -> Option<Arc<PinnedMirror>> {
        match plan.bases {
            BaseStaging::Resident => None,
            _ => {
                let clock = Instant::now();
                let m = self.mirror_of(params);
                t.end(Phase::Upload, clock);
                m
            }
        }
    }
}

/// The host preparation's thread: its buffers, when it started and how
/// long it took.
type HostPrepThread<'s> =
    std::thread::ScopedJoinHandle<'s, (HostPrep, Instant, std::time::Duration)>;

/// Waits for the host preparation: its buffers, how long this thread
/// waited and how long the preparation took (a span of its own in `t`).
fn join_host_prep(
    thread: HostPrepThread<'_>,
    t: &mut PhaseTimings,
) -> (HostPrep, std::time::Duration, std::time::Duration) {
    let clock = Instant::now();
    let (prep, prep_start, took) = thread
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
    t.add_span(Phase::HostPrep, prep_start, took);
    (prep, clock.elapsed(), took)
}

impl Worker<'_> {
    fn drv(&self, op: &'static str, e: DriverError) -> GpuError {
        self.b.drv(op, e)
    }

    /// One step's reservation, from the partition's grant (never waits:
    /// the plan that sized the grant bounds what the steps hold at once).
    fn reserve(&self, bytes: u64, what: &'static str) -> Result<Reservation> {
        Ok(self.grant.reserve(bytes, what)?)
    }

    /// [`Self::reserve`] beside `held`, a reservation of this partition's
    /// own that the grant already counts.
    fn reserve_beside(
        &self,
        bytes: u64,
        what: &'static str,
        _held: Option<&Reservation>,
    ) -> Result<Reservation> {
        self.reserve(bytes, what)
    }

    // ------------------------------------------------------------------ H

    /// A zeroed device buffer of `n` Fr holding `v` (v.len() <= n), on our
    /// stream, which is synchronised before the buffer is handed on.
    fn stage(&self, v: &[Scalar], n: usize) -> Result<Staged<'_>> {
        let bytes = n * plan::FR as usize;
        let buf = self
            .stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(|e| self.drv("alloc_zeros (a/b/c staging)", e))?;
        let mut staged = Staged {
            buf: Some(buf),
            dev: self.dev,
            stream: self.stream,
        };
        if !v.is_empty() {
            let src = scalars_as_bytes(v);
            self.stream
                .memcpy_htod(src, &mut staged.get().slice_mut(0..src.len()))
                .map_err(|e| self.drv("copy to device (a/b/c staging)", e))?;
        }
        self.stream
            .synchronize()
            .map_err(|e| self.drv("synchronize", e))?;
        Ok(staged)
    }

    /// A zeroed device buffer of `n` Fr on our stream, synchronised (the
    /// upload stream writes it next).
    fn zeroed(&self, n: usize) -> Result<Staged<'_>> {
        let buf = self
            .stream
            .alloc_zeros::<u8>((n * plan::FR as usize).max(1))
            .map_err(|e| self.drv("alloc_zeros (a/b/c staging)", e))?;
        let staged = Staged {
            buf: Some(buf),
            dev: self.dev,
            stream: self.stream,
        };
        self.stream
            .synchronize()
            .map_err(|e| self.drv("synchronize", e))?;
        Ok(staged)
    }

    /// H with a, b and c resident: a thread uploads them one after the
    /// other on our stream (through the pinned ring where there is one, see
    /// [`crate::upload`]), and each vector's transform is launched on
    /// cuzk-cuda's stream behind an event as soon as it has arrived, so the
    /// copies of b and c overlap the transforms of a and b. Returns the
    /// coefficients on the device and whether the ring was pinned.
    fn h_all_resident(
        &self,
        pa: &ProvingAssignment,
        log: u32,
        mut reservation: Reservation,
        t: &mut PhaseTimings,
    ) -> Result<(HCoeffs<'_>, bool)> {
        use std::sync::atomic::AtomicBool;
        let n = 1usize << log;
        let clock = Instant::now();
        let mut bufs = [self.zeroed(n)?, self.zeroed(n)?, self.zeroed(n)?];
        let ring = if self.b.config.pinned_staging {
            // No pinned memory (the host is short of locked pages): the
            // pageable copies still work, only slower.
            crate::upload::Ring::take(
                &self.b.pinned,
                crate::upload::RING_SLOTS,
                crate::upload::RING_SLOT_BYTES,
            )
        } else {
            None
        };
        let pinned = ring.is_some();
        let dsts = bufs.each_mut().map(|b| {
            let buf = b.get();
            let (ptr, _) = cudarc::driver::DevicePtr::device_ptr(&*buf, self.stream);
            crate::upload::DeviceDst {
                ptr,
                len: buf.len(),
            }
        });
        let srcs = [
            scalars_as_bytes(&pa.a),
            scalars_as_bytes(&pa.b),
            scalars_as_bytes(&pa.c),
        ];
        let cancel = AtomicBool::new(false);
        let (tx, rx) = std::sync::mpsc::channel();
        let uploaded = std::thread::scope(|scope| {
            let uploader = std::thread::Builder::new()
                .name("cuzk-gpu-upload".into())
                .spawn_scoped(scope, || {
                    let tx = tx;
                    crate::upload::upload_all(self.stream, ring, &srcs, &dsts, None, &cancel, &tx)
                        .time
                })
                .map_err(|source| GpuError::Thread {
                    device: self.b.label.clone(),
                    source,
                })?;
            // Each vector to coset evaluations as it arrives (both
            // directions read the one cached twiddle table).
            let launched = (|| -> Result<()> {
                for (k, buf) in bufs.iter_mut().enumerate() {
                    let ev = match rx.recv() {
                        Ok(Ok((_, ev))) => ev,
                        Ok(Err(e)) => return Err(self.b.upload_err("copy to device (a/b/c)", e)),
                        // The uploader ended without reporting this vector:
                        // a panic (passed on by the join below) or a bug.
                        Err(_) => {
                            return Err(GpuError::Driver {
                                op: "copy to device (a/b/c)",
                                device: self.b.label.clone(),
                                source: format!("upload thread stopped before vector {k}").into(),
                            })
                        }
                    };
                    self.dev.wait_event(&ev)?;
                    // a and b to the coset, c to its coefficients over Z
                    // (cuzk-cuda's six-transform H).
                    if k < 2 {
                        self.dev.evals_to_coset_device(buf.get(), log)?;
                    } else {
                        self.dev.h_c_coeffs_device(buf.get(), log)?;
                    }
                }
                Ok(())
            })();
            if launched.is_err() {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            let took = uploader
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            launched.map(|()| took)
        })?;
        let [mut ha, mut hb, mut hc] = bufs;
        self.dev
            .h_finish_device(ha.get(), hb.get(), hc.get(), log)?;
        drop((hb, hc));
        self.dev.synchronize()?;
        self.dev.release_ntt_tables();
        // The host time of the uploads; H's remaining wall time is what
        // the transforms added after them.
        t.add_span(Phase::Upload, clock, uploaded);
        t.add_span(
            Phase::HNtt,
            clock + uploaded,
            clock.elapsed().saturating_sub(uploaded),
        );
        reservation.shrink_to(n as u64 * plan::FR, "H coefficients (for the H MSM)");
        Ok((
            HCoeffs::Device {
                buf: ha,
                _held: reservation,
            },
            pinned,
        ))
    }

    /// Reads `n` Fr back, after cuzk-cuda's stream has finished with `buf`.
    fn read_back(&self, buf: &mut Staged<'_>, n: usize) -> Result<Vec<Scalar>> {
        self.dev.synchronize()?;
        let mut out = vec![Scalar::ZERO; n];
        self.stream
            .memcpy_dtoh(
                &buf.get().slice(0..n * plan::FR as usize),
                scalars_as_bytes_mut(&mut out),
            )
            .map_err(|e| self.drv("copy to host (H)", e))?;
        self.stream
            .synchronize()
            .map_err(|e| self.drv("synchronize", e))?;
        Ok(out)
    }

    /// H's coefficients (the domain's n; the H MSM takes the first n − 1)
    /// and whether a/b/c went up through pinned memory.
    fn compute_h(
        &self,
        pa: &ProvingAssignment,
        log: u32,
        how: HStaging,
        t: &mut PhaseTimings,
    ) -> Result<(HCoeffs<'_>, bool)> {
        let n = 1usize << log;
        // cuzk-cuda caches a twiddle table (4 GiB at 2^28) outside any
        // budget: it must go whichever way this function returns.
        let _tables = ReleaseTables(self.dev);
        let sizes = PartitionSizes {
            domain: n,
            a: 0,
            b: 0,
            l: 0,
            h: 0,
        };
        match how {
            HStaging::Host => {
                let clock = Instant::now();
                let h = cuzk_core::domain::compute_h_from_slices(&pa.a, &pa.b, &pa.c)?;
                t.end(Phase::HNtt, clock);
                Ok((HCoeffs::Host(h), false))
            }
            HStaging::AllResident => {
                let r = self.reserve(sizes.h_bytes(how), "H (a, b, c resident)")?;
                self.h_all_resident(pa, log, r, t)
            }
            HStaging::OneAtATime => {
                let _r = self.reserve(sizes.h_bytes(how), "H (one vector at a time)")?;
                let mut evals = Vec::with_capacity(3);
                for v in [&pa.a, &pa.b, &pa.c] {
                    let clock = Instant::now();
                    let mut buf = self.stage(v, n)?;
                    t.end(Phase::Upload, clock);
                    let clock = Instant::now();
                    self.dev.evals_to_coset_device(buf.get(), log)?;
                    self.dev.synchronize()?;
                    t.end(Phase::HNtt, clock);
                    let clock = Instant::now();
                    evals.push(self.read_back(&mut buf, n)?);
                    t.end(Phase::Readback, clock);
                }
                let clock = Instant::now();
                let c = evals.pop().expect("three vectors");
                let b = evals.pop().expect("three vectors");
                let mut a = evals.pop().expect("three vectors");
                let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([n as u64]) - Scalar::ONE;
                let z_inv = Option::<Scalar>::from(z.invert())
                    .expect("g^n != 1: g is not a root of unity of this order");
                a.par_iter_mut()
                    .zip(b.par_iter().zip(c.par_iter()))
                    .for_each(|(a, (b, c))| *a = (*a * b - c) * z_inv);
                drop((b, c));
                let mut buf = self.stage(&a, n)?;
                self.dev.ntt_device(buf.get(), log, NttKind::CosetInverse)?;
                self.dev.synchronize()?;
                self.dev.release_ntt_tables();
                t.end(Phase::HNtt, clock);
                let clock = Instant::now();
                let h = self.read_back(&mut buf, n)?;
                t.end(Phase::Readback, clock);
                Ok((HCoeffs::Host(h), false))
            }
        }
    }

    // ---------------------------------------------------------------- MSM

    /// Σ scalars_i · points_i in G1 under the plan: over the resident
    /// points, or uploading them whole or in chunks. `split` (the 0/1 split
    /// of `scalars`) sends the 0/1 scalars down the 0/1 path; H passes None.
    // The bases come three ways (host vectors, their pinned mirror, resident
    // points); bundling them would only rename the arguments.
    #[allow(clippy::too_many_arguments)]
    fn msm_g1(
        &self,
        host: &[G1Affine],
        pinned: Option<&[u8]>,
        resident: Option<&DevicePoints>,
        scalars: &[Scalar],
        split: Option<&ZeroOneSplit>,
        plan: &StagingPlan,
        t: &mut PhaseTimings,
    ) -> Result<G1Projective> {
        let m = scalars.len();
        if m == 0 {
            return Ok(G1Projective::identity());
        }
        let run = |points: &DevicePoints, s: &[Scalar], sp: Option<&ZeroOneSplit>| match sp {
            Some(sp) => self.split_g1(points, sp),
            None => {
                let ds = self.dev.upload_scalars(s)?;
                Ok(self.dev.msm_g1_device(points, &ds, None)?)
            }
        };
        if let Some(points) = resident {
            let _scratch = self.reserve(plan::msm_scratch(m, false), "G1 MSM scratch")?;
            return run(points, scalars, split);
        }
        let chunk = match plan.bases {
            BaseStaging::Chunked { g1_points, .. } => g1_points.max(1),
            _ => m,
        };
        let src = pinned.unwrap_or_else(|| g1_as_bytes(&host[..m]));
        self.streamed(false, src, m, chunk, None, t, |points, lo, hi| {
            if hi - lo == m {
                return run(points, scalars, split);
            }
            // A chunk's split is cut out of the MSM's (whole mask words);
            // recomputed only if the chunk is not word-aligned.
            let sp = split.map(|sp| {
                crate::split::split_range(sp, lo, hi)
                    .unwrap_or_else(|| split_zero_one_par(&scalars[lo..hi]))
            });
            run(points, &scalars[lo..hi], sp.as_ref())
        })
    }

    /// One MSM over bases streamed from host memory in chunks of `chunk`
    /// points (`src` holds the raw affine points; pinned where there is a
    /// mirror, so the copies are asynchronous): chunk k+1 goes up on our
    /// stream into the second of two device buffers while cuzk-cuda's
    /// stream sums chunk k, whose MSM waits for its own copy by event. One
    /// reservation covers the scratch and both buffers
    /// ([`plan::streamed_bytes`]); `held` is the reservation of H's
    /// coefficients when the scalars are those (then not in the scratch).
    /// `run(points, lo, hi)` is the MSM of points `lo..hi`, which lie at
    /// the start of `points`.
    #[allow(clippy::too_many_arguments)]
    fn streamed<G: Group>(
        &self,
        g2: bool,
        src: &[u8],
        m: usize,
        chunk: usize,
        held: Option<&Reservation>,
        t: &mut PhaseTimings,
        mut run: impl FnMut(&DevicePoints, usize, usize) -> Result<G>,
    ) -> Result<G> {
        let scalars_on_device = held.is_some();
        let chunk = chunk.clamp(1, m.max(1));
        let point = if g2 { G2 } else { G1 } as usize;
        let what = match (g2, scalars_on_device) {
            (true, _) => "G2 bases and MSM scratch (streamed)",
            (false, false) => "G1 bases and MSM scratch (streamed)",
            (false, true) => "H bases and MSM scratch (streamed)",
        };
        let _step = self.reserve_beside(
            plan::streamed_bytes(m, chunk, g2, scalars_on_device),
            what,
            held,
        )?;
        let clock = Instant::now();
        let mut bufs = vec![self.dev.alloc_points(g2, chunk)?];
        if chunk < m {
            bufs.push(self.dev.alloc_points(g2, chunk)?);
        }
        // Dropped before the buffers (declared after them): no copy into
        // a buffer is still running when it is freed, whichever way this
        // function returns.
        let _quiesce = SyncOnDrop(self.stream);
        let upload = |buf: &DevicePoints, lo: usize, hi: usize| -> Result<CudaEvent> {
            let bytes = &src[lo * point..hi * point];
            // SAFETY: `buf` holds `chunk` >= hi - lo points and stays
            // allocated until `_quiesce` has waited for this copy; nothing
            // else writes it until cuzk-cuda's stream has waited for the
            // event below and summed it (the MSM calls return only after
            // their kernels are done).
            unsafe {
                cudarc::driver::result::memcpy_htod_async(
                    self.dev.points_address(buf),
                    bytes,
                    self.stream.cu_stream(),
                )
            }
            .map_err(|e| self.drv("copy to device (streamed bases)", e))?;
            self.stream
                .record_event(None)
                .map_err(|e| self.drv("event (streamed bases)", e))
        };
        let mut arrived = upload(&bufs[0], 0, chunk)?;
        t.end(Phase::Upload, clock);
        let mut acc = G::identity();
        for (k, lo) in (0..m).step_by(chunk).enumerate() {
            let hi = (lo + chunk).min(m);
            // The other buffer's MSM (chunk k−1) has finished: fill it
            // with chunk k+1 while chunk k is summed.
            let clock = Instant::now();
            let next = if hi < m {
                Some(upload(&bufs[(k + 1) % 2], hi, (hi + chunk).min(m))?)
            } else {
                None
            };
            t.end(Phase::Upload, clock);
            self.dev.wait_event(&arrived)?;
            let points = &mut bufs[k % 2];
            let sized = points.set_len(hi - lo);
            debug_assert!(sized, "a chunk fits its buffer");
            acc += run(points, lo, hi)?;
            if let Some(next) = next {
                arrived = next;
            }
        }
        Ok(acc)
    }

    /// The H MSM over coefficients the NTTs left on the device (`coeffs`,
    /// Montgomery form; the first `m` are used): over the resident points,
    /// or streaming the points as [`Self::msm_g1`] does, in the plan's H
    /// chunks. The scalars are neither read back nor uploaded again, so
    /// the scratch reserved here is the MSM's without them (the
    /// coefficients hold their own reservation).
    #[allow(clippy::too_many_arguments)]
    fn msm_h_on_device(
        &self,
        host: &[G1Affine],
        points: usize,
        pinned: Option<&[u8]>,
        resident: Option<&DevicePoints>,
        coeffs: &Staged<'_>,
        held: &Reservation,
        m: usize,
        plan: &StagingPlan,
        t: &mut PhaseTimings,
    ) -> Result<G1Projective> {
        let m = m.min(points);
        if m == 0 {
            return Ok(G1Projective::identity());
        }
        let buf = coeffs.slice();
        if let Some(points) = resident {
            let scratch = plan::msm_scratch(m, false).saturating_sub(m as u64 * plan::FR);
            let _scratch =
                self.reserve_beside(scratch, "H MSM scratch (scalars on the device)", Some(held))?;
            return Ok(self.dev.msm_g1_scalars_on_device(points, buf, 0, m)?);
        }
        let chunk = match plan.bases {
            BaseStaging::Chunked { h_points, .. } => h_points.max(1),
            _ => m,
        };
        let src = pinned.unwrap_or_else(|| g1_as_bytes(&host[..m]));
        self.streamed(false, src, m, chunk, Some(held), t, |points, lo, hi| {
            Ok(self
                .dev
                .msm_g1_scalars_on_device(points, buf, lo, hi - lo)?)
        })
    }

    fn split_g1(&self, points: &DevicePoints, sp: &ZeroOneSplit) -> Result<G1Projective> {
        let mut acc = G1Projective::identity();
        if sp.ones_count > 0 {
            acc += self.dev.sum_selected_g1(points, &sp.ones)?;
        }
        if !sp.rest_ids.is_empty() {
            let s = self.dev.upload_scalars(&sp.rest_scalars)?;
            acc += self.dev.msm_g1_device(points, &s, Some(&sp.rest_ids))?;
        }
        Ok(acc)
    }

    fn split_g2(&self, points: &DevicePoints, sp: &ZeroOneSplit) -> Result<G2Projective> {
        let mut acc = G2Projective::identity();
        if sp.ones_count > 0 {
            acc += self.dev.sum_selected_g2(points, &sp.ones)?;
        }
        if !sp.rest_ids.is_empty() {
            let s = self.dev.upload_scalars(&sp.rest_scalars)?;
            acc += self.dev.msm_g2_device(points, &s, Some(&sp.rest_ids))?;
        }
        Ok(acc)
    }

    // The bases come three ways (host vectors, their pinned mirror, resident
    // points); bundling them would only rename the arguments.
    #[allow(clippy::too_many_arguments)]
    fn msm_g2(
        &self,
        host: &[G2Affine],
        pinned: Option<&[u8]>,
        resident: Option<&DevicePoints>,
        scalars: &[Scalar],
        split: &ZeroOneSplit,
        plan: &StagingPlan,
        t: &mut PhaseTimings,
    ) -> Result<G2Projective> {
        let m = scalars.len();
        if m == 0 {
            return Ok(G2Projective::identity());
        }
        if let Some(points) = resident {
            let _scratch = self.reserve(plan::msm_scratch(m, true), "G2 MSM scratch")?;
            return self.split_g2(points, split);
        }
        let chunk = match plan.bases {
            BaseStaging::Chunked { g2_points, .. } => g2_points.max(1),
            _ => m,
        };
        let src = pinned.unwrap_or_else(|| g2_as_bytes(&host[..m]));
        self.streamed(true, src, m, chunk, None, t, |points, lo, hi| {
            if hi - lo == m {
                return self.split_g2(points, split);
            }
            let sp = crate::split::split_range(split, lo, hi)
                .unwrap_or_else(|| split_zero_one_par(&scalars[lo..hi]));
            self.split_g2(points, &sp)
        })
    }
}

/// Synchronises a stream when dropped.
struct SyncOnDrop<'a>(&'a Arc<CudaStream>);

impl Drop for SyncOnDrop<'_> {
    fn drop(&mut self) {
        // A failed synchronisation means the context is broken; the frees
        // that follow fail with it and nothing more can be done here.
        let _ = self.0.synchronize();
    }
}

impl crate::PartitionReports for CudaBackend {
    fn take_reports_json(&self) -> serde_json::Value {
        serde_json::to_value(self.take_reports()).unwrap_or(serde_json::Value::Null)
    }
}

impl ProverBackend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn keeps_parameters_resident(&self) -> bool {
        self.config.keep_params_resident
    }

    fn wants_zero_one(&self) -> bool {
        self.uses_zero_one_form()
    }

    fn compute(
        &self,
        params: &Parameters,
        assignments: &[ProvingAssignment],
    ) -> cuzk_core::Result<(Vec<MsmResults>, PhaseTimings)> {
        let start = Instant::now();
        let mut sum = PhaseTimings::default();
        let mut out = Vec::with_capacity(assignments.len());
        for (index, pa) in assignments.iter().enumerate() {
            check_shape(params, pa, index)?;
            // A panic inside a partition unwinds through its scope, whose
            // reservations and buffers are released on the way; it becomes
            // this call's error and the device stays usable.
            let r = catch_unwind(AssertUnwindSafe(|| self.prove_partition(params, pa, index)));
            let (msm, report) = match r {
                Ok(r) => r.map_err(GpuError::into_core)?,
                Err(p) => {
                    return Err(GpuError::Panicked {
                        device: self.label.clone(),
                        index,
                        message: panic_message(&*p),
                    }
                    .into_core())
                }
            };
            sum.add(&report.timings);
            relock(&self.reports).push(report);
            out.push(msm);
        }
        sum.total = start.elapsed();
        Ok((out, sum))
    }

    /// Each witness on the device path ([`compiled`]: z up once, a/b/c,
    /// selections and splits on the GPU) where it fits, else assigned on
    /// the CPU's cores and proved like any assignment.
    fn compute_compiled(
        &self,
        params: &Parameters,
        cc: &cuzk_core::compiled::CompiledCircuit,
        witnesses: Vec<cuzk_core::compiled::Witness>,
    ) -> cuzk_core::Result<(Vec<MsmResults>, PhaseTimings)> {
        let start = Instant::now();
        let mut sum = PhaseTimings::default();
        let mut out = Vec::with_capacity(witnesses.len());
        let panicked = |index: usize, p: Box<dyn std::any::Any + Send>| {
            GpuError::Panicked {
                device: self.label.clone(),
                index,
                message: panic_message(&*p),
            }
            .into_core()
        };
        for (index, w) in witnesses.into_iter().enumerate() {
            let r = catch_unwind(AssertUnwindSafe(|| {
                self.prove_witness(params, cc, &w, index)
            }));
            let done = match r {
                Ok(r) => r.map_err(GpuError::into_core)?,
                Err(p) => return Err(panicked(index, p)),
            };
            let (msm, report) = match done {
                Some(d) => {
                    drop_apart(w);
                    d
                }
                None => {
                    // a/b/c on the host's cores: booked in the partition's
                    // own report (its a/b/c phase and total), where the
                    // device path books its a/b/c too.
                    let mut assign = PhaseTimings::default();
                    assign.at(SpanOn::default(), index);
                    let clock = Instant::now();
                    let pa = cc.assign(w)?;
                    let took = assign.end(Phase::Abc, clock);
                    check_shape(params, &pa, index)?;
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        self.prove_partition(params, &pa, index)
                    }));
                    let (msm, mut report) = match r {
                        Ok(r) => r.map_err(GpuError::into_core)?,
                        Err(p) => return Err(panicked(index, p)),
                    };
                    report.timings.add(&assign);
                    report.timings.total += took;
                    (msm, report)
                }
            };
            sum.add(&report.timings);
            relock(&self.reports).push(report);
            out.push(msm);
        }
        sum.total = start.elapsed();
        Ok((out, sum))
    }
}

/// Drops `value` on a thread of its own, so that the caller goes on to its
/// next partition at once. A witness is gigabytes of host memory: a 2^27
/// one (4.3 GB, in 4 KiB pages when it was cloned rather than synthesized
/// into huge pages) is a million pages to hand back to the system, on the
/// GPU worker's thread between two partitions: a porep-like 2^27 proof's
/// wall time past its phases (H200, 2026-12-04: 1834.0 ms against 1583 ms
/// of phases in call 44; dropped apart 1542.6 ms in call 45). Where no
/// thread can be started the refused closure, and `value` with it, is
/// dropped here.
fn drop_apart<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("cuzk-drop".into())
        .spawn(move || drop(value));
}
