//! Workers per GPU: a stand-in for two GPUs (the CPU prover behind a
//! `DeviceBackend` that says it has devices, counting the calls in flight
//! per device) shows that the engine runs `gpu_workers_per_device`
//! workers on each device at once and never more, and that the proofs
//! they make verify. Parameters the daemon generates go through the
//! backend's fixed-base engine. The stand-in keeps its own residency table
//! per device, as the GPU backend does, and status reports what it holds.

mod common;

use common::*;
use cuzk_core::compiled::{CompiledCircuit, Witness};
use cuzk_core::generator::{CpuFixedBase, FixedBaseEngine, FixedBaseTable};
use cuzk_core::params::Parameters;
use cuzk_core::prover::{CpuBackend, MsmResults, ProverBackend};
use cuzk_core::zero_one::ZeroOneForm;
use cuzk_core::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cuzk_core::{PhaseTimings, ProvingAssignment};
use cuzk_daemon::devices::{DeviceBackend, DeviceError, DeviceInfo, ResidentParams};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Default)]
struct Counts {
    active: AtomicUsize,
    max: AtomicUsize,
    calls: AtomicUsize,
    /// Calls whose parameters were left in their mapped file.
    mapped_calls: AtomicUsize,
}

/// The CPU prover, held long enough that calls overlap, counting them.
struct CountingProver {
    counts: Arc<Counts>,
}

impl ProverBackend for CountingProver {
    fn name(&self) -> &'static str {
        "fake-gpu"
    }
    fn compute(
        &self,
        params: &Parameters,
        assignments: &[ProvingAssignment],
    ) -> cuzk_core::Result<(Vec<MsmResults>, PhaseTimings)> {
        let now = self.counts.active.fetch_add(1, Ordering::SeqCst) + 1;
        self.counts.max.fetch_max(now, Ordering::SeqCst);
        self.counts.calls.fetch_add(1, Ordering::SeqCst);
        if params.is_mapped() {
            self.counts.mapped_calls.fetch_add(1, Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_millis(250));
        let r = CpuBackend.compute(params, assignments);
        self.counts.active.fetch_sub(1, Ordering::SeqCst);
        r
    }
}

/// The CPU engine, counting the multiplications it is asked for.
#[derive(Default)]
struct CountingEngine {
    points: AtomicUsize,
}

impl FixedBaseEngine for CountingEngine {
    fn name(&self) -> String {
        "fake-gpu-engine".into()
    }
    fn mul_g1(
        &self,
        t: &FixedBaseTable<G1Projective>,
        s: &[Scalar],
    ) -> cuzk_core::Result<Vec<G1Affine>> {
        self.points.fetch_add(s.len(), Ordering::SeqCst);
        CpuFixedBase.mul_g1(t, s)
    }
    fn mul_g2(
        &self,
        t: &FixedBaseTable<G2Projective>,
        s: &[Scalar],
    ) -> cuzk_core::Result<Vec<G2Affine>> {
        self.points.fetch_add(s.len(), Ordering::SeqCst);
        CpuFixedBase.mul_g2(t, s)
    }
}

struct FakeGpus {
    counts: Vec<Arc<Counts>>,
    provers_made: AtomicUsize,
    engine: Arc<CountingEngine>,
    /// Per device: resident parameter id -> bytes (the backend's table).
    resident: Vec<FakeResident>,
    /// Whether it says its provers keep parameters resident (then the
    /// daemon hands them parameters left in their mapped file).
    keeps_resident: bool,
}

impl FakeGpus {
    fn new(devices: usize, keeps_resident: bool) -> Self {
        FakeGpus {
            counts: (0..devices).map(|_| Arc::default()).collect(),
            provers_made: AtomicUsize::new(0),
            engine: Arc::default(),
            resident: (0..devices).map(|_| FakeResident::default()).collect(),
            keeps_resident,
        }
    }
}

impl DeviceBackend for FakeGpus {
    fn name(&self) -> &'static str {
        "fake-gpu"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        (0..self.counts.len() as u32)
            .map(|index| DeviceInfo {
                index,
                name: format!("fake {index}"),
                vram_total_bytes: 8 << 30,
                vram_free_bytes: 8 << 30,
                ..Default::default()
            })
            .collect()
    }
    fn prover(&self, device: Option<u32>) -> Arc<dyn ProverBackend> {
        self.provers_made.fetch_add(1, Ordering::SeqCst);
        let d = device.expect("GPU workers are bound to a device") as usize;
        Arc::new(CountingProver {
            counts: self.counts[d].clone(),
        })
    }
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError> {
        Ok(self.resident[device as usize].upload(id, params))
    }
    fn release_params(&self, device: u32, id: &str) {
        self.resident[device as usize].release(id);
    }
    fn keeps_parameters_resident(&self) -> bool {
        self.keeps_resident
    }
    fn resident_params(&self, device: u32) -> Vec<ResidentParams> {
        self.resident[device as usize].list()
    }
    fn fixed_base_engine(&self) -> Option<Arc<dyn FixedBaseEngine + Send + Sync>> {
        Some(self.engine.clone())
    }
}

async fn run(workers_per_device: usize, jobs: u64) -> Arc<FakeGpus> {
    run_with(workers_per_device, jobs, false).await
}

async fn run_with(workers_per_device: usize, jobs: u64, keeps_resident: bool) -> Arc<FakeGpus> {
    let gpus = Arc::new(FakeGpus::new(2, keeps_resident));
    let g = gpus.clone();
    let t = TestDaemon::start_with(
        |c| {
            c.engine.gpu_workers_per_device = workers_per_device;
            c.engine.max_batch_size = 1;
            c.engine.synthesis_lookahead = 4;
        },
        move |b| b.device_backend(g),
    )
    .await;
    let mut c = t.unix().await;
    prove_seeds(&t, &mut c, 6, jobs, 1).await;
    let st = status(&mut c).await;
    assert_eq!(st.workers as usize, 2 * workers_per_device);
    // Status lists what the backend holds: porep-like-6 on each device
    // that proved (its workers made it resident before their proofs).
    let holding: Vec<u32> = (0..2u32)
        .filter(|&d| !gpus.resident_params(d).is_empty())
        .collect();
    assert!(!holding.is_empty());
    let p6 = st
        .params
        .iter()
        .find(|p| p.id == cuzk_core::circuits::porep_like::params_id(6))
        .expect("porep-like-6 in status");
    assert_eq!(p6.tier, "vram");
    assert_eq!(p6.devices, holding);
    let per_device = gpus.resident_params(holding[0])[0].bytes;
    assert_eq!(p6.bytes, per_device * holding.len() as u64);
    // The backend evicts it on one device (for another kind's room):
    // status follows the backend, not what the daemon once uploaded.
    gpus.release_params(holding[0], &cuzk_core::circuits::porep_like::params_id(6));
    let st = status(&mut c).await;
    let p6 = st
        .params
        .iter()
        .find(|p| p.id == cuzk_core::circuits::porep_like::params_id(6))
        .unwrap();
    assert_eq!(p6.devices, holding[1..].to_vec());
    if holding.len() == 1 {
        // Decoded in host RAM, or (GPUs that upload from the file) only
        // mapped: nothing decoded.
        let host_tier = if keeps_resident { "mapped" } else { "pinned" };
        assert_eq!(p6.tier, host_tier);
    }
    let pinned = st.tiers.iter().find(|t| t.tier == "pinned").unwrap();
    assert_eq!(pinned.used_bytes == 0, keeps_resident, "{pinned:?}");
    t.stop().await;
    gpus
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_workers_per_device_overlap_and_never_exceed_two() {
    let gpus = run(2, 12).await;
    assert_eq!(gpus.provers_made.load(Ordering::SeqCst), 4);
    // The porep-like-6 parameters were generated through the engine (and
    // the proofs above verified under the key they made).
    assert!(gpus.engine.points.load(Ordering::SeqCst) > 64);
    let calls: usize = gpus
        .counts
        .iter()
        .map(|c| c.calls.load(Ordering::SeqCst))
        .sum();
    assert_eq!(calls, 12);
    for (d, c) in gpus.counts.iter().enumerate() {
        let max = c.max.load(Ordering::SeqCst);
        assert!(max <= 2, "device {d}: {max} calls at once");
        assert_eq!(c.active.load(Ordering::SeqCst), 0);
    }
    // With 12 jobs of 250 ms queued at once, some device ran two together.
    assert!(
        gpus.counts
            .iter()
            .any(|c| c.max.load(Ordering::SeqCst) == 2),
        "no device ever ran two partitions at once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_worker_per_device_is_one_at_a_time() {
    let gpus = run(1, 6).await;
    assert_eq!(gpus.provers_made.load(Ordering::SeqCst), 2);
    for (d, c) in gpus.counts.iter().enumerate() {
        assert_eq!(c.max.load(Ordering::SeqCst), 1, "device {d}");
    }
}

/// GPUs that keep parameters resident get them left in their mapped file:
/// every call's parameters are mapped, the pinned tier holds nothing, and
/// the proofs (the CPU prover decoding each vector as it reads it) verify.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parameters_stay_in_their_file_for_gpus_that_keep_them_resident() {
    let gpus = run_with(1, 4, true).await;
    let (calls, mapped) = gpus.counts.iter().fold((0, 0), |(c, m), x| {
        (
            c + x.calls.load(Ordering::SeqCst),
            m + x.mapped_calls.load(Ordering::SeqCst),
        )
    });
    assert_eq!((calls, mapped), (4, 4));
}

/// What the stand-in prover saw of one witness handed to `compute_compiled`.
#[derive(Clone, Copy, Debug)]
struct SeenWitness {
    /// It arrived with a 0/1 form.
    has_form: bool,
    /// That form matches its aux vector (false without one).
    form_matches: bool,
    /// Its aux vector is one whose form pays (`ZeroOneForm::of` is Some).
    form_pays: bool,
}

/// The CPU prover, recording whether each compiled witness it is handed
/// comes with its aux vector's 0/1 form.
struct ZeroOneProver {
    wants: bool,
    seen: Arc<std::sync::Mutex<Vec<SeenWitness>>>,
    /// Calls to `compute` (full synthesis's assignments), none expected.
    assignment_calls: Arc<AtomicUsize>,
}

impl ProverBackend for ZeroOneProver {
    fn name(&self) -> &'static str {
        "fake-gpu"
    }
    fn wants_zero_one(&self) -> bool {
        self.wants
    }
    fn compute(
        &self,
        params: &Parameters,
        assignments: &[ProvingAssignment],
    ) -> cuzk_core::Result<(Vec<MsmResults>, PhaseTimings)> {
        self.assignment_calls.fetch_add(1, Ordering::SeqCst);
        CpuBackend.compute(params, assignments)
    }
    fn compute_compiled(
        &self,
        params: &Parameters,
        compiled: &CompiledCircuit,
        witnesses: Vec<Witness>,
    ) -> cuzk_core::Result<(Vec<MsmResults>, PhaseTimings)> {
        self.seen
            .lock()
            .unwrap()
            .extend(witnesses.iter().map(|w| SeenWitness {
                has_form: w.aux_zero_one.is_some(),
                form_matches: w.aux_zero_one.as_ref().is_some_and(|f| f.matches(&w.aux)),
                form_pays: ZeroOneForm::of(&w.aux).is_some(),
            }));
        CpuBackend.compute_compiled(params, compiled, witnesses)
    }
}

/// One stand-in GPU whose prover says whether it wants witnesses in their
/// 0/1 form.
struct ZeroOneGpu {
    wants: bool,
    seen: Arc<std::sync::Mutex<Vec<SeenWitness>>>,
    assignment_calls: Arc<AtomicUsize>,
    resident: FakeResident,
}

impl DeviceBackend for ZeroOneGpu {
    fn name(&self) -> &'static str {
        "fake-gpu"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        vec![DeviceInfo {
            index: 0,
            name: "fake 0".into(),
            vram_total_bytes: 8 << 30,
            vram_free_bytes: 8 << 30,
            ..Default::default()
        }]
    }
    fn prover(&self, device: Option<u32>) -> Arc<dyn ProverBackend> {
        assert_eq!(device, Some(0), "GPU workers are bound to the device");
        Arc::new(ZeroOneProver {
            wants: self.wants,
            seen: self.seen.clone(),
            assignment_calls: self.assignment_calls.clone(),
        })
    }
    fn upload_params(
        &self,
        _device: u32,
        id: &str,
        params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError> {
        Ok(self.resident.upload(id, params))
    }
    fn release_params(&self, _device: u32, id: &str) {
        self.resident.release(id);
    }
    fn resident_params(&self, _device: u32) -> Vec<ResidentParams> {
        self.resident.list()
    }
    fn wants_zero_one(&self) -> bool {
        self.wants
    }
}

/// Porep-like-12 (4096 constraints, mostly 0/1 witnesses, compiled
/// synthesis: the default) jobs through a daemon whose one stand-in GPU
/// wants or does not want the 0/1 form; what its prover saw of each
/// witness, after checking that every proof verifies.
async fn zero_one_run(wants: bool) -> Vec<SeenWitness> {
    const LOG: u32 = 12;
    const JOBS: u64 = 2;
    const PARTITIONS: u32 = 2;
    let gpu = Arc::new(ZeroOneGpu {
        wants,
        seen: Arc::default(),
        assignment_calls: Arc::default(),
        resident: FakeResident::default(),
    });
    let g = gpu.clone();
    let t = TestDaemon::start_with(
        |c| {
            c.kinds.porep_like_log_sizes = vec![LOG];
            c.engine.gpu_workers_per_device = 1;
        },
        move |b| b.device_backend(g),
    )
    .await;
    let mut c = t.unix().await;
    prove_seeds(&t, &mut c, LOG, JOBS, PARTITIONS).await;
    t.stop().await;
    // Every partition went through the compiled path, none as an
    // assignment.
    assert_eq!(gpu.assignment_calls.load(Ordering::SeqCst), 0);
    let seen = gpu.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), (JOBS * PARTITIONS as u64) as usize, "{seen:?}");
    // The witnesses are ones whose form pays, so the test tells the cases
    // apart.
    assert!(seen.iter().all(|s| s.form_pays), "{seen:?}");
    seen
}

/// A backend that wants the 0/1 form gets every witness with it, made on
/// the synthesis side and matching the witness's aux vector; the proofs
/// verify.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn witnesses_arrive_with_their_zero_one_form_when_the_backend_wants_it() {
    let seen = zero_one_run(true).await;
    assert!(
        seen.iter().all(|s| s.has_form && s.form_matches),
        "{seen:?}"
    );
}

/// A backend that does not want it gets no witness with one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn witnesses_arrive_without_a_zero_one_form_when_the_backend_does_not_want_it() {
    let seen = zero_one_run(false).await;
    assert!(seen.iter().all(|s| !s.has_form), "{seen:?}");
}
