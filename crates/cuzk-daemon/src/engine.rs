//! The proving engine: job records, the pipeline that turns queued
//! batches into synthesized chunks, and the workers that prove them.
//!
//! Flow: `submit` refuses a job whose partitions fit no plan on any GPU
//! ([`crate::fit`]), decodes the input and queues the job in the
//! [`Scheduler`]. One dispatcher task pops batches in priority order,
//! leases their parameters and splits them into chunks of up to
//! `max_batch_size` partitions (one backend call each); it *opens* the
//! highest-priority chunk by taking a pipeline slot and reserving its host
//! memory, waiting while either is spent (the backpressure: a long queue
//! waits, it never exhausts RAM). `synthesis_concurrency` synthesis tasks
//! take single partitions from the open chunks, highest priority first,
//! and synthesize them on blocking threads, so one job's partitions and
//! different jobs' chunks are synthesized side by side. A chunk whose
//! partitions are all synthesized joins the ready queue (priority, then
//! age); workers (`gpu_workers_per_device` per GPU, or `cpu_workers`) take
//! from it whenever they are free (a GPU's workers passing over chunks
//! that fit only another GPU in service), prove, and (with `verify_proofs`) have
//! the proofs checked against the verifying key before the job completes.
//!
//! Slots = workers + `synthesis_concurrency` + `synthesis_lookahead` bound
//! the chunks in flight. A higher-priority batch arriving while the
//! dispatcher waits for a slot or memory for a lower one is opened first.
//! Partitions are the cancellation boundary: a cancelled job's parts are
//! dropped (and their memory released) before each synthesis, when a chunk
//! is complete, and before each proving call.
//!
//! A GPU whose prover call fails with an error its backend calls a lost
//! device ([`DeviceBackend::is_device_lost`]) is taken out of service: its workers take no more chunks, and
//! the chunk's partitions go back to the dispatcher as a pending chunk, to
//! be synthesized again and proved on another GPU (at most
//! `partition_retries` times each). They are synthesized again rather than
//! kept because the prover consumes the assignments (the witness vectors
//! are moved into the proving call, and a copy of each, gigabytes for a
//! 32 GiB PoRep partition, would be held for every chunk in flight for a
//! failure that is rare). A job fails only when a partition runs out of
//! retries or no GPU is left in service; its error names the GPUs and
//! their errors. Status lists each GPU's health ([`DeviceHealth`]). Every
//! `device_probe_interval_s` a GPU out of service is probed
//! ([`DeviceBackend::probe`]) and returned to service when it passes.
//!
//! Every phase is recorded in a [`Timeline`] (`cuzk trace`, `/trace`, the
//! busy fractions of `/status`).
//!
//! [`Engine`] is a cheap handle (clone it) that any front end (this crate's
//! gRPC service, a second service) wraps.

use crate::budget::{HostBudget, HostReservation};
use crate::config::{EngineConfig, ShutdownMode};
use crate::devices::{DeviceBackend, DeviceInfo, PartitionSizes};
use crate::failure::{DeviceFailure, GpuLastError, JobFailure};
use crate::kinds::{CircuitKind, JobInput, KindError, KindRegistry};
use crate::params::{ParamManager, ParamsError, ParamsLease, ParamsStatus, TierUsage};
use crate::scheduler::{pick_for_worker, Batch, JobId, Priority, QueuedJob, Scheduler};
use crate::trace::{Busy, Lane, Timeline, TraceEvent};
use cuzk_core::params::Parameters;
use cuzk_core::proof::Proof;
use cuzk_core::prover::ProverBackend;
use cuzk_core::prover::Synthesized;
use cuzk_core::verifier::PreparedVerifyingKey;
use cuzk_core::{Scalar, SpanOn};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Kind(#[from] KindError),
    #[error("request id {0:?} names an unfinished job of a different kind or input")]
    RequestIdConflict(String),
    #[error("request id is {0} bytes; at most 128 allowed")]
    RequestIdTooLong(usize),
    #[error("client {client:?} already has {limit} unfinished jobs")]
    ClientLimit { client: String, limit: usize },
    #[error("the daemon is shutting down")]
    ShuttingDown,
    #[error("no job {0}")]
    UnknownJob(JobId),
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// Its partitions fit no plan on any GPU in service.
    #[error(transparent)]
    NoGpuFits(#[from] crate::fit::NoGpuFits),
}

/// The states are cluster mode's queue's too: one type for both.
pub use cuzk_cluster::JobState;

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct JobTimings {
    pub queue_wait: Duration,
    pub param_load: Duration,
    pub synthesis: Duration,
    pub gpu: Duration,
    pub total: Duration,
}

/// What `await_job` reports: the final outcome, or the state so far.
#[derive(Clone, Debug)]
pub struct JobView {
    pub id: JobId,
    pub kind: String,
    pub state: JobState,
    /// One 192-byte proof per partition, concatenated.
    pub proof: Vec<u8>,
    /// Per partition, its public inputs as 32-byte little-endian scalars.
    pub public_inputs: Vec<u8>,
    /// Why a failed or cancelled job did not complete.
    pub error: Option<JobFailure>,
    pub timings: JobTimings,
    pub batch_size: u32,
    pub completion_seq: u64,
}

/// A job as the status page lists it: what it is, where it stands and
/// the time each phase took so far.
#[derive(Clone, Debug)]
pub struct JobSummary {
    pub id: JobId,
    pub kind: String,
    pub priority: Priority,
    pub state: JobState,
    pub partitions: usize,
    pub partitions_done: usize,
    pub submitted_unix_ms: u64,
    /// Submission to the end (a finished job), or to now.
    pub elapsed: Duration,
    pub timings: JobTimings,
    pub batch_size: u32,
    pub error: Option<JobFailure>,
}

#[derive(Clone, Debug)]
pub struct SubmitRequest {
    pub request_id: Option<String>,
    pub kind: String,
    pub input: Vec<u8>,
    pub priority: Priority,
    pub client: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Submitted {
    pub job_id: JobId,
    pub deduplicated: bool,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Counters {
    pub submitted: u64,
    pub deduplicated: u64,
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub rejected: u64,
    pub batches: u64,
    pub circuits_proved: u64,
    /// Proofs checked against their verifying key and found valid.
    pub proofs_verified: u64,
    /// Proofs that did not verify (each failed its job).
    pub verification_failures: u64,
}

/// Sums over completed jobs, for the metrics' averages.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PhaseSums {
    pub jobs: u64,
    pub queue_wait_s: f64,
    pub param_load_s: f64,
    pub synthesis_s: f64,
    pub gpu_s: f64,
    pub total_s: f64,
}

/// Unfinished jobs of one kind and priority.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct JobCounts {
    pub kind: String,
    pub priority: Priority,
    /// Waiting in the queue or in the kind's batch collector.
    pub queued: usize,
    pub running: usize,
}

/// What one proving worker is proving now.
#[derive(Clone, Debug, serde::Serialize)]
pub struct WorkerNow {
    pub worker: u32,
    /// The GPU it proves on (None: a CPU worker).
    pub device: Option<u32>,
    pub kind: String,
    /// The jobs of its chunk, with their request ids where they have one.
    pub jobs: Vec<(JobId, Option<String>)>,
}

/// A GPU as the engine sees it: in service or not, and what it proved.
/// The engine owns these facts (the backend's [`DeviceInfo`] owns memory).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DeviceHealth {
    pub index: u32,
    /// False once a proving call on it failed with an error its backend
    /// calls a lost device: its workers take no more chunks until a probe
    /// passes (`engine.device_probe_interval_s`) or the daemon restarts.
    pub healthy: bool,
    /// Partitions proved on it (proofs returned by its prover).
    pub partitions_proved: u64,
    /// Proving calls on it that failed as a lost device.
    pub failures: u64,
    /// The last such error.
    pub last_error: Option<String>,
    /// When it was last taken out of service (ms since the Unix epoch);
    /// None while in service.
    pub out_since_unix_ms: Option<u64>,
    /// Probes of it while out of service ([`DeviceBackend::probe`]), the
    /// last one's time and its error (None: it passed, or none yet).
    pub probes: u64,
    pub last_probe_unix_ms: Option<u64>,
    pub last_probe_error: Option<String>,
    /// Times a probe returned it to service.
    pub returned: u64,
    /// Seconds in which at least one of its workers was inside a prover
    /// call, since the engine started (calls in flight counted to now),
    /// and that over the engine's age. The last minute's fraction is
    /// `EngineStatus::busy`'s.
    pub busy_s: f64,
    pub busy_fraction: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct EngineStatus {
    pub backend: &'static str,
    pub gpu_backend_present: bool,
    /// Why the device list is empty, when it is.
    pub note: Option<&'static str>,
    pub devices: Vec<DeviceInfo>,
    /// Each GPU's health, in the order of `devices` (empty without GPUs).
    pub device_health: Vec<DeviceHealth>,
    pub params: Vec<ParamsStatus>,
    pub tiers: Vec<TierUsage>,
    pub queues: Vec<(Priority, usize)>,
    pub collecting: usize,
    pub running: usize,
    /// Unfinished jobs by kind and priority (queued ones counted whether
    /// in a priority queue or a batch collector), in (kind, priority) order.
    pub jobs: Vec<JobCounts>,
    /// The workers proving now.
    pub proving: Vec<WorkerNow>,
    /// Chunks synthesized and waiting for a worker.
    pub ready_chunks: usize,
    /// Chunks holding memory whose partitions are being synthesized.
    pub open_chunks: usize,
    /// Partitions being synthesized now, and the most at once.
    pub synthesizing: usize,
    pub synthesis_concurrency: usize,
    /// Busy fractions over the last minute (or since start).
    pub busy: Busy,
    pub counters: Counters,
    pub phase_sums: PhaseSums,
    pub host_reserved_bytes: u64,
    pub host_budget_bytes: u64,
    /// Of the budget, bytes held for the kinds' compiled systems and
    /// shapes ([`CircuitKind::resident_host_bytes`]).
    pub host_resident_bytes: u64,
    pub kinds: Vec<String>,
    pub workers: usize,
    pub shutting_down: bool,
}

struct Job {
    kind: Arc<dyn CircuitKind>,
    priority: Priority,
    /// The decoded input (a Filecoin job's built circuits, megabytes),
    /// until the job ends: its result is kept for `result_retention_s`,
    /// its input is not (partitions still in flight hold their own
    /// handles).
    input: Option<JobInput>,
    client: String,
    request_id: Option<String>,
    /// The kind and a digest of the input (not the input itself: a PoRep
    /// C1 output is tens of megabytes, and the decoded input is kept).
    fingerprint: Fingerprint,
    /// The partitions this job proves: all of its input's, or those a
    /// cluster node claimed (`submit_partitions`); `proofs` and `publics`
    /// are indexed by partition.
    parts: Vec<usize>,
    state: JobState,
    submitted: Instant,
    dispatched: Option<Instant>,
    /// First synthesis start and last synthesis end of its partitions.
    synth_span: Option<(Instant, Instant)>,
    proofs: Vec<Option<[u8; cuzk_core::proof::PROOF_BYTES]>>,
    publics: Vec<Vec<u8>>,
    done_parts: usize,
    /// Proving calls that failed on a GPU: (partition, device, error).
    device_failures: Vec<(usize, u32, String)>,
    timings: JobTimings,
    batch_size: u32,
    error: Option<JobFailure>,
    completion_seq: u64,
    done_tx: watch::Sender<bool>,
}

/// What makes two submissions the same request: the kind and the SHA-256
/// of the input bytes.
type Fingerprint = (String, [u8; 32]);

fn fingerprint(kind: &str, input: &[u8]) -> Fingerprint {
    use sha2::Digest;
    (kind.to_owned(), sha2::Sha256::digest(input).into())
}

struct State {
    jobs: HashMap<JobId, Job>,
    /// Each request id's latest attempt.
    request_ids: HashMap<String, JobId>,
    sched: Scheduler,
    outstanding: HashMap<String, usize>,
    next_id: JobId,
    next_seq: u64,
    completion_seq: u64,
    finished: VecDeque<(JobId, Instant)>,
    running: usize,
    /// Per worker, what it is proving now.
    proving: Vec<Option<WorkerNow>>,
    /// Per GPU, in device order.
    health: Vec<DeviceHealth>,
    /// GPUs out of service, with when each is probed next.
    next_probe: HashMap<u32, Instant>,
    /// Per GPU, its workers' time in prover calls (`DeviceHealth::busy_s`).
    device_busy: HashMap<u32, BusyClock>,
    started: Instant,
    counters: Counters,
    sums: PhaseSums,
    /// Chunks popped and leased, not yet holding a slot and memory; in
    /// (priority, age) order.
    pending: Vec<PendingChunk>,
    /// Chunks holding a slot and memory whose partitions are synthesizing.
    open: Vec<OpenChunk>,
    /// Synthesized chunks in (priority, age) order.
    ready: Vec<Chunk>,
    next_chunk: u64,
    timeline: Timeline,
    shutting_down: bool,
    dispatcher_done: bool,
}

impl State {
    /// Whether GPU `d` is in service.
    fn healthy(&self, d: u32) -> bool {
        self.health.iter().any(|h| h.index == d && h.healthy)
    }

    /// True when the engine proves on GPUs and none is in service.
    fn no_device_left(&self) -> bool {
        !self.health.is_empty() && self.health.iter().all(|h| !h.healthy)
    }

    /// A job's error when no GPU is left: each GPU with its last error.
    fn no_device_error(&self) -> JobFailure {
        JobFailure::NoGpuInService {
            gpus: self
                .health
                .iter()
                .map(|h| GpuLastError {
                    device: h.index,
                    error: h.last_error.clone(),
                })
                .collect(),
        }
    }
}

/// Queue order of chunks: higher priority first, then older (the batch's
/// arrival order, then the chunk's place in its batch).
type Order = (std::cmp::Reverse<Priority>, u64, u64);

fn order(p: Priority, seq: u64, sub: u64) -> Order {
    (std::cmp::Reverse(p), seq, sub)
}

/// Where `o` goes in a list kept in [`Order`].
fn position<T>(v: &[T], o: Order, key: impl Fn(&T) -> Order) -> usize {
    v.iter().position(|x| key(x) > o).unwrap_or(v.len())
}

type Part = (JobId, usize, JobInput);

struct PendingChunk {
    order: Order,
    priority: Priority,
    kind: Arc<dyn CircuitKind>,
    lease: Arc<ParamsLease>,
    parts: Vec<Part>,
}

enum PartState {
    Waiting,
    Synthesizing,
    Done(Synthesized),
    Dropped,
}

struct OpenPart {
    job: JobId,
    part: usize,
    input: JobInput,
    state: PartState,
}

struct OpenChunk {
    id: u64,
    order: Order,
    priority: Priority,
    kind: Arc<dyn CircuitKind>,
    lease: Arc<ParamsLease>,
    reservation: HostReservation,
    per_part_bytes: u64,
    slot: OwnedSemaphorePermit,
    parts: Vec<OpenPart>,
}

/// Synthesized partitions waiting for (or in) a worker. Dropping it
/// releases its host memory, pipeline slot and parameter lease.
struct Chunk {
    order: Order,
    priority: Priority,
    params_id: String,
    kind: Arc<dyn CircuitKind>,
    parts: Vec<(JobId, usize)>,
    /// Each part's job input (for its verifier's public inputs).
    inputs: Vec<JobInput>,
    assignments: Vec<Synthesized>,
    lease: Arc<ParamsLease>,
    reservation: HostReservation,
    per_part_bytes: u64,
    _slot: OwnedSemaphorePermit,
}

struct Inner {
    cfg: EngineConfig,
    max_queued_per_client: usize,
    registry: KindRegistry,
    params: Arc<ParamManager>,
    devices: Arc<dyn DeviceBackend>,
    host: Arc<HostBudget>,
    slots: Arc<Semaphore>,
    state: Mutex<State>,
    /// Wakes the dispatcher (new job, shutdown).
    dispatch_wake: Notify,
    /// Wakes workers (chunk ready, shutdown).
    worker_wake: Notify,
    /// Wakes synthesis tasks (chunk opened, cancellation, shutdown).
    synth_wake: Notify,
    /// Prepared verifying keys by parameter id, with the address of the
    /// parameters they came from (a reloaded set is prepared again).
    pvks: Mutex<HashMap<String, (usize, Arc<PreparedVerifyingKey>)>>,
    /// Signalled whenever a job finishes.
    job_done: Notify,
    workers: usize,
    /// Partition sizes read from parameter files' headers, to refuse at
    /// submission what fits on no GPU.
    sizes: crate::fit::SizesByFile,
}

/// A handle on the running engine.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

/// Holds the served kinds' resident host memory (compiled constraint
/// systems, porep-like's recorded shapes: [`CircuitKind::resident_host_bytes`])
/// against the host budget for the engine's life, so that the partitions
/// the budget lets into flight fit beside them. It always leaves room for
/// one partition of the largest kind: a budget too small for both is
/// logged, and then partitions can overrun it by what it could not hold.
fn hold_resident(registry: &KindRegistry, host: &HostBudget) {
    let kinds: Vec<_> = registry
        .names()
        .iter()
        .filter_map(|n| registry.get(n).ok())
        .collect();
    let want: u64 = kinds.iter().map(|k| k.resident_host_bytes()).sum();
    if want == 0 {
        return;
    }
    let largest = kinds
        .iter()
        .map(|k| k.host_bytes_per_partition())
        .max()
        .unwrap_or(0);
    let held = want.min(host.budget().saturating_sub(largest));
    if held < want {
        tracing::warn!(
            resident_bytes = want,
            held_bytes = held,
            budget_bytes = host.budget(),
            "the kinds' compiled systems and shapes need {want} bytes of host memory; \
             the host budget ({} bytes) holds {held} of them and leaves one partition's room; \
             raise host_memory_budget or serve fewer kinds",
            host.budget()
        );
    } else {
        tracing::info!(
            resident_bytes = want,
            "host budget: {want} bytes held for the kinds' compiled systems and shapes"
        );
    }
    host.hold_resident(held);
}

impl Engine {
    /// Start the dispatcher and workers on the current tokio runtime.
    pub fn start(
        cfg: EngineConfig,
        max_queued_per_client: usize,
        registry: KindRegistry,
        params: Arc<ParamManager>,
        devices: Arc<dyn DeviceBackend>,
        host: Arc<HostBudget>,
    ) -> Self {
        let worker_devices: Vec<Option<u32>> = if devices.gpu_present() {
            // Interleaved (0, 1, .., 0, 1, ..) so that a first chunk finds
            // every device's first worker before any device's second.
            let ids: Vec<u32> = devices.devices().iter().map(|d| d.index).collect();
            (0..cfg.gpu_workers_per_device.max(1))
                .flat_map(|_| ids.iter().map(|&d| Some(d)))
                .collect()
        } else {
            vec![None; cfg.cpu_workers.max(1)]
        };
        let workers = worker_devices.len().max(1);
        let health = if devices.gpu_present() {
            devices
                .devices()
                .iter()
                .map(|d| DeviceHealth {
                    index: d.index,
                    healthy: true,
                    partitions_proved: 0,
                    failures: 0,
                    last_error: None,
                    out_since_unix_ms: None,
                    probes: 0,
                    last_probe_unix_ms: None,
                    last_probe_error: None,
                    returned: 0,
                    busy_s: 0.0,
                    busy_fraction: 0.0,
                })
                .collect()
        } else {
            Vec::new()
        };
        if !cfg.verify_proofs {
            tracing::warn!(
                "engine.verify_proofs = false: proofs are returned without being checked"
            );
        }
        let synthesis = cfg.synthesis_concurrency.max(1);
        let slots = Arc::new(Semaphore::new(
            workers + synthesis + cfg.synthesis_lookahead,
        ));
        let timeline = Timeline::new(
            Instant::now(),
            cfg.trace_events,
            synthesis,
            worker_devices.clone(),
        );
        hold_resident(&registry, &host);
        let inner = Arc::new(Inner {
            max_queued_per_client,
            registry,
            params,
            devices: devices.clone(),
            host,
            slots,
            state: Mutex::new(State {
                jobs: HashMap::new(),
                request_ids: HashMap::new(),
                sched: Scheduler::new(cfg.max_batch_size, cfg.max_batch_wait()),
                outstanding: HashMap::new(),
                next_id: 1,
                next_seq: 0,
                completion_seq: 0,
                finished: VecDeque::new(),
                running: 0,
                proving: vec![None; workers],
                health,
                next_probe: HashMap::new(),
                device_busy: HashMap::new(),
                started: Instant::now(),
                counters: Counters::default(),
                sums: PhaseSums::default(),
                pending: Vec::new(),
                open: Vec::new(),
                ready: Vec::new(),
                next_chunk: 0,
                timeline,
                shutting_down: false,
                dispatcher_done: false,
            }),
            dispatch_wake: Notify::new(),
            worker_wake: Notify::new(),
            synth_wake: Notify::new(),
            pvks: Mutex::new(HashMap::new()),
            job_done: Notify::new(),
            workers,
            sizes: crate::fit::SizesByFile::default(),
            cfg,
        });
        let mut tasks = vec![tokio::spawn(dispatcher(inner.clone()))];
        for slot in 0..synthesis {
            tasks.push(tokio::spawn(synthesizer(inner.clone(), slot)));
        }
        for (i, dev) in worker_devices.into_iter().enumerate() {
            let prover = devices.prover(dev);
            let rng = match inner.cfg.rng_seed {
                Some(s) => ChaCha20Rng::seed_from_u64(s.wrapping_add(i as u64)),
                None => ChaCha20Rng::from_entropy(),
            };
            tasks.push(tokio::spawn(worker(inner.clone(), i, dev, prover, rng)));
        }
        if devices.gpu_present() && inner.cfg.device_probe_interval_s > 0 {
            // Not among `tasks`: shutdown need not wait for it; it ends
            // with the engine.
            let interval = Duration::from_secs(inner.cfg.device_probe_interval_s);
            tokio::spawn(prober(Arc::downgrade(&inner), interval));
        }
        Engine {
            inner,
            tasks: Arc::new(Mutex::new(tasks)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock()
    }

    pub fn registry(&self) -> &KindRegistry {
        &self.inner.registry
    }
    pub fn params(&self) -> &Arc<ParamManager> {
        &self.inner.params
    }

    /// Queue a job; returns at once.
    pub fn submit(&self, req: SubmitRequest) -> Result<Submitted, EngineError> {
        let r = self.submit_inner(req, None, None);
        if r.is_err() {
            self.lock().counters.rejected += 1;
        }
        r
    }

    /// [`Engine::submit`] of an input its front end has decoded already
    /// (Curio's service decodes a request to check it): `decoded` must be
    /// what the kind's `decode_input` gives for `req.input`, whose bytes
    /// still name the job (request id deduplication), so the input is not
    /// decoded a second time.
    pub fn submit_decoded(
        &self,
        req: SubmitRequest,
        decoded: (JobInput, usize),
    ) -> Result<Submitted, EngineError> {
        let r = self.submit_inner(req, None, Some(decoded));
        if r.is_err() {
            self.lock().counters.rejected += 1;
        }
        r
    }

    /// Count a submission a front end refused before it reached `submit`
    /// (for example an unknown priority value).
    pub fn note_rejected(&self) {
        self.lock().counters.rejected += 1;
    }

    /// Queue a job that proves only `parts` of its input's partitions
    /// (cluster mode: the partitions this node claimed). Its view's proof
    /// and public inputs are those partitions', in partition order. An
    /// empty or out-of-range list is refused as a malformed input.
    /// `decoded`, when given, is the kind's `decode_input` of the job's
    /// bytes, decoded once for all the partitions a node proves of it (a
    /// 32 GiB PoRep's C1 output is tens of MB); `req.input` may then be
    /// empty, as long as `req.request_id` is None (the bytes only name a
    /// job for request-id deduplication).
    pub fn submit_partitions(
        &self,
        req: SubmitRequest,
        decoded: Option<(JobInput, usize)>,
        parts: &[usize],
    ) -> Result<Submitted, EngineError> {
        let r = self.submit_inner(req, Some(parts), decoded);
        if r.is_err() {
            self.lock().counters.rejected += 1;
        }
        r
    }

    fn submit_inner(
        &self,
        req: SubmitRequest,
        only: Option<&[usize]>,
        decoded: Option<(JobInput, usize)>,
    ) -> Result<Submitted, EngineError> {
        let request_id = req.request_id.filter(|r| !r.is_empty());
        if let Some(r) = &request_id {
            if r.len() > 128 {
                return Err(EngineError::RequestIdTooLong(r.len()));
            }
        }
        let kind = self.inner.registry.get(&req.kind)?;
        if only.is_none() {
            // Before decoding (tens of MB for a PoRep): what fits no GPU
            // is refused whatever its input. (A cluster node's claimed
            // partitions are checked when their parameters are leased: the
            // job was accepted for the whole cluster.)
            self.inner.refuse_unfit_kind(&*kind)?;
        }
        let fingerprint = fingerprint(&req.kind, &req.input);
        let (input, partitions) = match decoded {
            Some(d) => d,
            None => kind.decode_input(&req.input)?,
        };
        // The bytes go now; the job keeps the decoded input.
        drop(req.input);
        let parts: Vec<usize> = match only {
            None => (0..partitions).collect(),
            Some(list) => {
                let mut v = list.to_vec();
                v.sort_unstable();
                v.dedup();
                if v.is_empty() || v.last().is_some_and(|&p| p >= partitions) {
                    return Err(EngineError::Kind(KindError::MalformedInput {
                        kind: req.kind.clone(),
                        source: format!("partitions {list:?} of a job of {partitions}").into(),
                    }));
                }
                v
            }
        };
        let now = Instant::now();
        let mut st = self.lock();
        self.inner.prune(&mut st, now);
        if st.shutting_down {
            return Err(EngineError::ShuttingDown);
        }
        // A request id names its latest attempt: an unfinished one is
        // joined (same input) or refused (different input); a completed one
        // is returned (same input) or replaced (different input); a failed
        // or cancelled one is replaced by a new attempt.
        if let Some(r) = &request_id {
            let latest = st.request_ids.get(r).and_then(|jid| {
                let j = st.jobs.get(jid)?;
                Some((*jid, j.state, j.fingerprint == fingerprint))
            });
            match latest {
                Some((jid, JobState::Queued | JobState::Running | JobState::Completed, true)) => {
                    st.counters.deduplicated += 1;
                    return Ok(Submitted {
                        job_id: jid,
                        deduplicated: true,
                    });
                }
                Some((_, JobState::Queued | JobState::Running, false)) => {
                    return Err(EngineError::RequestIdConflict(r.clone()));
                }
                _ => {}
            }
        }
        let out = st.outstanding.get(&req.client).copied().unwrap_or(0);
        if out >= self.inner.max_queued_per_client {
            return Err(EngineError::ClientLimit {
                client: req.client.chars().take(64).collect(),
                limit: self.inner.max_queued_per_client,
            });
        }
        let id = st.next_id;
        st.next_id += 1;
        let seq = st.next_seq;
        st.next_seq += 1;
        *st.outstanding.entry(req.client.clone()).or_default() += 1;
        if let Some(r) = &request_id {
            st.request_ids.insert(r.clone(), id);
        }
        st.sched.push(
            QueuedJob {
                id,
                kind: kind.name().to_owned(),
                priority: req.priority,
                seq,
                circuits: parts.len(),
                batchable: kind.batchable(),
            },
            now,
        );
        let (done_tx, _) = watch::channel(false);
        st.jobs.insert(
            id,
            Job {
                kind,
                priority: req.priority,
                input: Some(input),
                client: req.client,
                request_id,
                fingerprint,
                parts,
                state: JobState::Queued,
                submitted: now,
                dispatched: None,
                synth_span: None,
                proofs: vec![None; partitions],
                publics: vec![Vec::new(); partitions],
                done_parts: 0,
                device_failures: Vec::new(),
                timings: JobTimings::default(),
                batch_size: 0,
                error: None,
                completion_seq: 0,
                done_tx,
            },
        );
        st.counters.submitted += 1;
        drop(st);
        self.inner.dispatch_wake.notify_one();
        Ok(Submitted {
            job_id: id,
            deduplicated: false,
        })
    }

    /// The latest attempt of a request id, while it is retained.
    pub fn job_of_request(&self, request_id: &str) -> Option<JobId> {
        self.lock().request_ids.get(request_id).copied()
    }

    /// The job's state now.
    pub fn job(&self, id: JobId) -> Result<JobView, EngineError> {
        let st = self.lock();
        st.jobs
            .get(&id)
            .map(|j| view(id, j))
            .ok_or(EngineError::UnknownJob(id))
    }

    /// Wait until the job finishes or `timeout` passes (None: no limit);
    /// returns its state either way.
    pub async fn await_job(
        &self,
        id: JobId,
        timeout: Option<Duration>,
    ) -> Result<JobView, EngineError> {
        let mut rx = {
            let st = self.lock();
            st.jobs
                .get(&id)
                .ok_or(EngineError::UnknownJob(id))?
                .done_tx
                .subscribe()
        };
        let wait = rx.wait_for(|d| *d);
        match timeout {
            Some(t) => {
                let _ = tokio::time::timeout(t, wait).await;
            }
            None => {
                let _ = wait.await;
            }
        }
        self.job(id)
    }

    /// Submit and wait for the outcome.
    pub async fn prove(&self, req: SubmitRequest) -> Result<JobView, EngineError> {
        let s = self.submit(req)?;
        self.await_job(s.job_id, None).await
    }

    /// Cancel a job. Returns its state afterwards and whether this call
    /// cancelled it.
    pub fn cancel(&self, id: JobId) -> Result<(JobState, bool), EngineError> {
        let mut st = self.lock();
        let state = st.jobs.get(&id).ok_or(EngineError::UnknownJob(id))?.state;
        match state {
            JobState::Queued => {
                st.sched.remove(id);
            }
            JobState::Running => {}
            s => return Ok((s, false)),
        }
        // A running job's chunks see the final state at their next
        // partition boundary and drop its parts.
        self.inner.finish(
            &mut st,
            id,
            JobState::Cancelled,
            Some(JobFailure::Cancelled),
        );
        drop(st);
        self.inner.wake_all();
        Ok((JobState::Cancelled, true))
    }

    pub async fn preload(&self, kinds: &[String]) -> Result<Vec<ParamsStatus>, EngineError> {
        let mut ids = Vec::new();
        for k in kinds {
            let kind = self.inner.registry.get(k)?;
            let lease = self.inner.params.acquire(&kind).await?;
            ids.push(lease.id().to_owned());
        }
        let (all, _) = self.inner.params.status();
        Ok(all.into_iter().filter(|p| ids.contains(&p.id)).collect())
    }

    pub fn evict(&self, kinds: &[String]) -> Result<(Vec<String>, Vec<String>), EngineError> {
        let mut ids = Vec::new();
        for k in kinds {
            ids.push(self.inner.registry.get(k)?.params_id().to_owned());
        }
        Ok(self.inner.params.evict(&ids))
    }

    pub fn status(&self) -> EngineStatus {
        let (params, tiers) = self.inner.params.status();
        let devices = self.inner.devices.devices();
        let gpu = self.inner.devices.gpu_present();
        let st = self.lock();
        let (queues, collecting) = st.sched.depths();
        let busy = st.timeline.busy(Instant::now(), BUSY_WINDOW);
        let mut counts: std::collections::BTreeMap<
            (String, std::cmp::Reverse<Priority>),
            (usize, usize),
        > = Default::default();
        for j in st.jobs.values() {
            let c = match j.state {
                JobState::Queued | JobState::Running => counts
                    .entry((j.kind.name().to_owned(), std::cmp::Reverse(j.priority)))
                    .or_default(),
                _ => continue,
            };
            if j.state == JobState::Queued {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
        let jobs = counts
            .into_iter()
            .map(|((kind, p), (queued, running))| JobCounts {
                kind,
                priority: p.0,
                queued,
                running,
            })
            .collect();
        let proving = st.proving.iter().flatten().cloned().collect();
        let now = Instant::now();
        let age = now.saturating_duration_since(st.started).as_secs_f64();
        let mut device_health = st.health.clone();
        for h in &mut device_health {
            let busy = st
                .device_busy
                .get(&h.index)
                .map_or(0.0, |c| c.busy(now).as_secs_f64());
            h.busy_s = busy;
            h.busy_fraction = if age > 0.0 {
                (busy / age).min(1.0)
            } else {
                0.0
            };
        }
        EngineStatus {
            backend: self.inner.devices.name(),
            gpu_backend_present: gpu,
            note: (!gpu)
                .then_some("no GPU backend is present: proving on the CPU, VRAM tier unused"),
            devices,
            device_health,
            params,
            tiers,
            queues: queues.to_vec(),
            collecting,
            running: st.running,
            jobs,
            proving,
            ready_chunks: st.ready.len(),
            open_chunks: st.open.len(),
            synthesizing: st.timeline.synthesizing(),
            synthesis_concurrency: self.inner.cfg.synthesis_concurrency.max(1),
            busy,
            counters: st.counters.clone(),
            phase_sums: st.sums.clone(),
            host_reserved_bytes: self.inner.host.used(),
            host_budget_bytes: self.inner.host.budget(),
            host_resident_bytes: self.inner.host.resident(),
            kinds: self.inner.registry.names(),
            workers: self.inner.workers,
            shutting_down: st.shutting_down,
        }
    }

    /// The busy fractions over the last `window` (or since start), work in
    /// progress included.
    pub fn busy(&self, window: Duration) -> Busy {
        self.lock().timeline.busy(Instant::now(), window)
    }

    /// The `limit` newest jobs the engine still holds (unfinished, or
    /// finished within their retention), newest first.
    pub fn recent_jobs(&self, limit: usize) -> Vec<JobSummary> {
        let st = self.lock();
        let now = Instant::now();
        let unix_now = unix_ms();
        // The newest ids without sorting every retained job.
        let mut newest: std::collections::BinaryHeap<std::cmp::Reverse<JobId>> = Default::default();
        for &id in st.jobs.keys() {
            newest.push(std::cmp::Reverse(id));
            if newest.len() > limit {
                newest.pop();
            }
        }
        let mut ids: Vec<JobId> = newest.into_iter().map(|r| r.0).collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.into_iter()
            .filter_map(|id| {
                let j = st.jobs.get(&id)?;
                let age = now.saturating_duration_since(j.submitted);
                Some(JobSummary {
                    id,
                    kind: j.kind.name().to_owned(),
                    priority: j.priority,
                    state: j.state,
                    partitions: j.parts.len(),
                    partitions_done: j.done_parts,
                    submitted_unix_ms: unix_now.saturating_sub(age.as_millis() as u64),
                    elapsed: if j.state.is_final() {
                        j.timings.total
                    } else {
                        age
                    },
                    timings: j.timings.clone(),
                    batch_size: j.batch_size,
                    error: j.error.clone(),
                })
            })
            .collect()
    }

    /// The timeline of the last `window` as a Chrome trace, and the busy
    /// fractions over that window.
    pub fn trace(&self, window: Duration) -> (serde_json::Value, Busy) {
        let st = self.lock();
        let now = Instant::now();
        (
            st.timeline.chrome_trace(now, window),
            st.timeline.busy(now, window),
        )
    }

    /// Stop accepting jobs, finish or cancel the rest as `mode` says (after
    /// `timeout`, whatever is left is cancelled), and stop the tasks.
    pub async fn shutdown(&self, mode: ShutdownMode, timeout: Duration) {
        {
            let mut st = self.lock();
            st.shutting_down = true;
            st.sched.flush_all();
        }
        if mode == ShutdownMode::Cancel {
            self.cancel_all();
        }
        self.inner.dispatch_wake.notify_one();
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.inner.job_done.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.unfinished() == 0 {
                break;
            }
            if Instant::now() >= deadline {
                tracing::warn!("shutdown timeout: cancelling the remaining jobs");
                self.cancel_all();
                break;
            }
            let _ = tokio::time::timeout_at(deadline.into(), notified).await;
        }
        tracing::debug!("engine: jobs settled, stopping the dispatcher and workers");
        self.inner.wake_all();
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        for (i, t) in tasks.into_iter().enumerate() {
            let _ = t.await;
            tracing::debug!(task = i, "engine task stopped");
        }
    }

    fn cancel_all(&self) {
        let ids: Vec<JobId> = {
            let st = self.lock();
            st.jobs
                .iter()
                .filter(|(_, j)| !j.state.is_final())
                .map(|(&id, _)| id)
                .collect()
        };
        for id in ids {
            let _ = self.cancel(id);
        }
    }

    fn unfinished(&self) -> usize {
        self.lock()
            .jobs
            .values()
            .filter(|j| !j.state.is_final())
            .count()
    }
}

fn view(id: JobId, j: &Job) -> JobView {
    let complete = j.state == JobState::Completed;
    JobView {
        id,
        kind: j.kind.name().to_owned(),
        state: j.state,
        proof: if complete {
            j.proofs
                .iter()
                .flatten()
                .flat_map(|p| p.iter().copied())
                .collect()
        } else {
            Vec::new()
        },
        public_inputs: if complete {
            j.publics.concat()
        } else {
            Vec::new()
        },
        error: j.error.clone(),
        timings: j.timings.clone(),
        batch_size: j.batch_size,
        completion_seq: j.completion_seq,
    }
}

/// The window of `/status`'s busy fractions.
pub const BUSY_WINDOW: Duration = Duration::from_secs(60);

impl Inner {
    fn wake_all(&self) {
        self.dispatch_wake.notify_one();
        self.synth_wake.notify_waiters();
        self.worker_wake.notify_waiters();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_running(&self, st: &State, id: JobId) -> bool {
        st.jobs
            .get(&id)
            .is_some_and(|j| j.state == JobState::Running)
    }

    /// Move a job to a final state and wake its waiters.
    fn finish(&self, st: &mut State, id: JobId, state: JobState, error: Option<JobFailure>) {
        let now = Instant::now();
        match st.jobs.get(&id) {
            Some(j) if !j.state.is_final() => {}
            _ => return,
        }
        st.completion_seq += 1;
        let seq = st.completion_seq;
        let Some(job) = st.jobs.get_mut(&id) else {
            return;
        };
        let was_running = job.state == JobState::Running;
        // Logged here, once per job, however many of its partitions failed.
        if let (JobState::Failed, Some(e)) = (state, &error) {
            tracing::warn!(job = id, kind = job.kind.name(), error = %e, "job failed");
        }
        job.state = state;
        job.error = error;
        job.input = None;
        job.completion_seq = seq;
        job.timings.total = now - job.submitted;
        if job.dispatched.is_none() {
            job.timings.queue_wait = job.timings.total;
        }
        if state != JobState::Completed {
            job.proofs.clear();
            job.publics.clear();
        }
        // send_replace: `send` would not store the value while nobody is
        // subscribed, and later awaiters would wait forever.
        job.done_tx.send_replace(true);
        let client = job.client.clone();
        let t = job.timings.clone();
        if was_running {
            st.running -= 1;
        }
        if let Some(n) = st.outstanding.get_mut(&client) {
            *n -= 1;
            if *n == 0 {
                st.outstanding.remove(&client);
            }
        }
        match state {
            JobState::Completed => {
                st.counters.completed += 1;
                let s = &mut st.sums;
                s.jobs += 1;
                s.queue_wait_s += t.queue_wait.as_secs_f64();
                s.param_load_s += t.param_load.as_secs_f64();
                s.synthesis_s += t.synthesis.as_secs_f64();
                s.gpu_s += t.gpu.as_secs_f64();
                s.total_s += t.total.as_secs_f64();
            }
            JobState::Failed => st.counters.failed += 1,
            JobState::Cancelled => st.counters.cancelled += 1,
            _ => {}
        }
        st.finished.push_back((id, now));
        self.job_done.notify_waiters();
    }

    /// Whether GPU `d`'s workers take `chunk`: its partitions fit a plan
    /// there, or they fit on no other GPU in service (then this one
    /// proves or fails them, as it would without the check). Asked of the
    /// backend's planner at each pick (arithmetic, no allocation), so a
    /// budget that changed is seen.
    fn provable_on(&self, st: &State, chunk: &Chunk, d: u32) -> bool {
        let sizes = PartitionSizes::of_params(&chunk.lease.params);
        self.devices.check_fits(d, &sizes).is_ok()
            || !st.health.iter().any(|h| {
                h.healthy && h.index != d && self.devices.check_fits(h.index, &sizes).is_ok()
            })
    }

    /// GPUs in service now (empty without GPUs).
    fn in_service(&self) -> Vec<u32> {
        let st = self.lock();
        st.health
            .iter()
            .filter(|h| h.healthy)
            .map(|h| h.index)
            .collect()
    }

    /// Refuses a kind whose partitions fit no plan on any GPU in service,
    /// when its parameter file exists to say their sizes (see
    /// [`crate::fit`]); Ok otherwise.
    fn refuse_unfit_kind(&self, kind: &dyn CircuitKind) -> Result<(), crate::fit::NoGpuFits> {
        if !self.devices.gpu_present() {
            return Ok(());
        }
        let Some(sizes) = self
            .params
            .path_of(kind.params_id())
            .ok()
            .and_then(|path| self.sizes.of(&path))
        else {
            return Ok(());
        };
        crate::fit::check(&*self.devices, &self.in_service(), kind.name(), &sizes)
    }

    fn fail_jobs(&self, ids: &[JobId], error: JobFailure) {
        let mut st = self.lock();
        for &id in ids {
            self.finish(&mut st, id, JobState::Failed, Some(error.clone()));
        }
    }

    /// GPU `device` failed a proving call with `error`: take it out of
    /// service and send the chunk's partitions back to the dispatcher, to
    /// be synthesized again and proved on another GPU, unless one has run
    /// out of retries or no GPU is left (then its job fails, naming the
    /// GPUs and their errors). The chunk's memory and slot go back here.
    fn device_failed(&self, device: u32, chunk: Chunk, error: &str) {
        let mut st = self.lock();
        let mut taken_out = false;
        if let Some(h) = st.health.iter_mut().find(|h| h.index == device) {
            h.failures += 1;
            h.last_error = Some(error.to_owned());
            if h.healthy {
                h.healthy = false;
                h.out_since_unix_ms = Some(unix_ms());
                taken_out = true;
                tracing::error!(device, error, "GPU taken out of service");
            }
        }
        if taken_out {
            let at = Instant::now() + Duration::from_secs(self.cfg.device_probe_interval_s);
            st.next_probe.insert(device, at);
        }
        let none_left = st.no_device_left();
        let Chunk {
            order,
            priority,
            kind,
            lease,
            parts,
            inputs,
            ..
        } = chunk;
        let mut retry: Vec<Part> = Vec::new();
        for ((job, part), input) in parts.into_iter().zip(inputs) {
            let Some(j) = st.jobs.get_mut(&job) else {
                continue;
            };
            if j.state != JobState::Running {
                continue;
            }
            j.device_failures.push((part, device, error.to_owned()));
            let tries: Vec<DeviceFailure> = j
                .device_failures
                .iter()
                .filter(|f| f.0 == part)
                .map(|f| DeviceFailure {
                    device: f.1,
                    error: f.2.clone(),
                })
                .collect();
            let why = if none_left {
                Some(st.no_device_error())
            } else if tries.len() as u64 > u64::from(self.cfg.partition_retries) {
                Some(JobFailure::RetriesExhausted {
                    partition: part,
                    allowed: u64::from(self.cfg.partition_retries) + 1,
                    tries,
                })
            } else if st.dispatcher_done {
                // Nothing opens a pending chunk once the dispatcher stopped.
                Some(JobFailure::FailedAtShutdown {
                    partition: part,
                    device,
                    error: error.to_owned(),
                })
            } else {
                None
            };
            match why {
                Some(e) => self.finish(&mut st, job, JobState::Failed, Some(e)),
                None => retry.push((job, part, input)),
            }
        }
        if !retry.is_empty() {
            tracing::warn!(
                device,
                partitions = retry.len(),
                "partitions sent to another GPU"
            );
            let pc = PendingChunk {
                order,
                priority,
                kind,
                lease,
                parts: retry,
            };
            let pos = position(&st.pending, pc.order, |x| x.order);
            st.pending.insert(pos, pc);
        }
        drop(st);
        self.dispatch_wake.notify_one();
        // Workers wait in take_chunk for chunks they may take: with no GPU
        // left, those of GPUs out of service take what is left to fail it;
        // otherwise a GPU in service may now be the only one left that a
        // ready chunk fits (see `provable_on`).
        self.worker_wake.notify_waiters();
    }

    /// Probe GPU `device`, out of service; return it to service when the
    /// backend says it works (its workers take chunks again), else probe
    /// it again after `device_probe_interval_s`.
    async fn probe_device(&self, device: u32) {
        let devices = self.devices.clone();
        let r =
            tokio::task::spawn_blocking(move || devices.probe(device).map_err(|e| e.to_string()))
                .await
                .unwrap_or_else(|e| Err(format!("the probe stopped: {e}")));
        let mut st = self.lock();
        let Some(h) = st
            .health
            .iter_mut()
            .find(|h| h.index == device && !h.healthy)
        else {
            st.next_probe.remove(&device);
            return;
        };
        h.probes += 1;
        h.last_probe_unix_ms = Some(unix_ms());
        match r {
            Ok(()) => {
                h.healthy = true;
                h.out_since_unix_ms = None;
                h.last_probe_error = None;
                h.returned += 1;
                st.next_probe.remove(&device);
                tracing::warn!(device, "GPU passed its probe: back in service");
                drop(st);
                self.worker_wake.notify_waiters();
            }
            Err(e) => {
                tracing::debug!(device, error = %e, "GPU still out of service");
                h.last_probe_error = Some(e);
                let at = Instant::now() + Duration::from_secs(self.cfg.device_probe_interval_s);
                st.next_probe.insert(device, at);
            }
        }
    }

    /// Forget finished jobs past their retention, oldest first.
    fn prune(&self, st: &mut State, now: Instant) {
        let keep = Duration::from_secs(self.cfg.result_retention_s);
        while let Some(&(id, at)) = st.finished.front() {
            if now.saturating_duration_since(at) < keep
                && st.finished.len() <= self.cfg.max_retained_results
            {
                break;
            }
            st.finished.pop_front();
            if let Some(job) = st.jobs.remove(&id) {
                if let Some(r) = job.request_id {
                    // A later attempt may hold the id by now.
                    if st.request_ids.get(&r) == Some(&id) {
                        st.request_ids.remove(&r);
                    }
                }
            }
        }
    }
}

async fn dispatcher(inner: Arc<Inner>) {
    enum Step {
        Batch(Batch),
        Open(PendingChunk),
        Wait(Option<Instant>),
        Done,
    }
    loop {
        let notified = inner.dispatch_wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let step = {
            let mut st = inner.lock();
            let now = Instant::now();
            let head = st.sched.peek_priority(now);
            let pending = st.pending.first().map(|c| c.priority);
            // A queued batch goes before the pending chunks only when it is
            // of a higher class; within a class the pending ones are older.
            let take = head.is_some_and(|h| pending.is_none_or(|p| h > p));
            match take.then(|| st.sched.pop(now)).flatten() {
                Some(b) => {
                    for id in &b.jobs {
                        if let Some(j) = st.jobs.get_mut(id) {
                            if j.state == JobState::Queued {
                                j.state = JobState::Running;
                                j.dispatched = Some(now);
                                j.timings.queue_wait = now - j.submitted;
                                st.running += 1;
                            }
                        }
                    }
                    st.counters.batches += 1;
                    tracing::debug!(kind = %b.kind, jobs = ?b.jobs, priority = ?b.priority, "dispatching batch");
                    Step::Batch(b)
                }
                None if !st.pending.is_empty() => Step::Open(st.pending.remove(0)),
                None if st.shutting_down && st.sched.is_empty() => Step::Done,
                None => Step::Wait(st.sched.next_deadline()),
            }
        };
        match step {
            Step::Batch(b) => split_batch(&inner, b).await,
            Step::Open(c) => open_chunk(&inner, c).await,
            Step::Wait(Some(d)) => {
                let _ = tokio::time::timeout_at(d.into(), notified).await;
            }
            Step::Wait(None) => notified.await,
            Step::Done => break,
        }
    }
    inner.lock().dispatcher_done = true;
    inner.wake_all();
}

/// Lease a batch's parameters and queue its chunks as pending.
async fn split_batch(inner: &Arc<Inner>, batch: Batch) {
    let kind = match inner.registry.get(&batch.kind) {
        Ok(k) => k,
        Err(e) => return inner.fail_jobs(&batch.jobs, JobFailure::Kind(Arc::new(e))),
    };
    let gone = {
        let st = inner.lock();
        st.no_device_left().then(|| st.no_device_error())
    };
    if let Some(e) = gone {
        return inner.fail_jobs(&batch.jobs, e);
    }
    let lease = match inner.params.acquire(&kind).await {
        Ok(l) => Arc::new(l),
        Err(e) => return inner.fail_jobs(&batch.jobs, JobFailure::Params(Arc::new(e))),
    };
    // Parameters generated since submission (or claimed from the cluster's
    // queue) are checked here, before anything is synthesized.
    if inner.devices.gpu_present() {
        let sizes = PartitionSizes::of_params(&lease.params);
        let fit = crate::fit::check(&*inner.devices, &inner.in_service(), kind.name(), &sizes);
        if let Err(e) = fit {
            return inner.fail_jobs(&batch.jobs, JobFailure::NoGpuFits(Arc::new(e)));
        }
    }
    let per_part = kind.host_bytes_per_partition().max(1);
    // A chunk never asks for more than the whole budget when fewer
    // partitions would fit: one partition that does not fit is refused
    // (with its size), several that fit only apart are proved apart.
    let fit = (inner.host.available() / per_part).max(1);
    let size = (inner.cfg.max_batch_size.max(1) as u64).min(fit) as usize;
    let mut st = inner.lock();
    let mut parts: Vec<Part> = Vec::new();
    for id in &batch.jobs {
        if let Some(j) = st.jobs.get_mut(id) {
            if let (JobState::Running, Some(input)) = (j.state, &j.input) {
                j.timings.param_load = lease.load_time;
                parts.extend(j.parts.iter().map(|&p| (*id, p, input.clone())));
            }
        }
    }
    for (i, c) in parts.chunks(size).enumerate() {
        let pc = PendingChunk {
            order: order(batch.priority, batch.seq, i as u64),
            priority: batch.priority,
            kind: kind.clone(),
            lease: lease.clone(),
            parts: c.to_vec(),
        };
        let pos = position(&st.pending, pc.order, |x| x.order);
        st.pending.insert(pos, pc);
    }
}

/// Await `fut` unless, meanwhile, a batch of a class above `p` is queued
/// (None: the caller puts its chunk back and opens that one first) or
/// every job of `parts` ends.
async fn unless_preempted<F: std::future::Future>(
    inner: &Inner,
    p: Priority,
    parts: &[Part],
    fut: F,
) -> Option<F::Output> {
    tokio::pin!(fut);
    loop {
        let notified = inner.dispatch_wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let deadline = {
            let mut st = inner.lock();
            if st
                .sched
                .peek_priority(Instant::now())
                .is_some_and(|h| h > p)
            {
                return None;
            }
            if !parts.iter().any(|(id, ..)| inner.is_running(&st, *id)) {
                return None;
            }
            st.sched.next_deadline()
        };
        let due = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            r = &mut fut => return Some(r),
            _ = &mut notified => {}
            _ = due => {}
        }
    }
}

/// Take a pipeline slot and the chunk's host memory, then hand its
/// partitions to the synthesis tasks.
async fn open_chunk(inner: &Arc<Inner>, mut c: PendingChunk) {
    {
        let st = inner.lock();
        c.parts.retain(|(id, ..)| inner.is_running(&st, *id));
    }
    if c.parts.is_empty() {
        return;
    }
    let per_part = c.kind.host_bytes_per_partition().max(1);
    let slot = match unless_preempted(
        inner,
        c.priority,
        &c.parts,
        inner.slots.clone().acquire_owned(),
    )
    .await
    {
        Some(Ok(s)) => s,
        // The semaphore is never closed.
        Some(Err(_)) => return,
        None => return inner.put_back(c),
    };
    let what = format!("a chunk of {} {} partitions", c.parts.len(), c.kind.name());
    let bytes = per_part * c.parts.len() as u64;
    let reserve = inner.host.reserve(bytes, &what);
    let mut reservation = match unless_preempted(inner, c.priority, &c.parts, reserve).await {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            let ids: Vec<JobId> = c.parts.iter().map(|p| p.0).collect();
            return inner.fail_jobs(&ids, JobFailure::HostBudget(Arc::new(e)));
        }
        None => {
            drop(slot);
            return inner.put_back(c);
        }
    };
    let mut st = inner.lock();
    // Partition boundary: drop parts of jobs cancelled while waiting.
    let before = c.parts.len();
    c.parts.retain(|(id, ..)| inner.is_running(&st, *id));
    reservation.release_part(per_part * (before - c.parts.len()) as u64);
    if c.parts.is_empty() {
        return;
    }
    let id = st.next_chunk;
    st.next_chunk += 1;
    let oc = OpenChunk {
        id,
        order: c.order,
        priority: c.priority,
        kind: c.kind,
        lease: c.lease,
        reservation,
        per_part_bytes: per_part,
        slot,
        parts: c
            .parts
            .into_iter()
            .map(|(job, part, input)| OpenPart {
                job,
                part,
                input,
                state: PartState::Waiting,
            })
            .collect(),
    };
    let pos = position(&st.open, oc.order, |x| x.order);
    st.open.insert(pos, oc);
    drop(st);
    inner.synth_wake.notify_waiters();
}

/// A partition a synthesis task took.
struct Picked {
    chunk: u64,
    index: usize,
    kind: Arc<dyn CircuitKind>,
    job: JobId,
    part: usize,
    input: JobInput,
    submitted: Instant,
    start: Instant,
}

enum Pick {
    Part(Picked),
    Idle,
    Done,
}

impl Inner {
    /// A chunk that waited for a slot or memory goes back to the pending
    /// list (its place kept) while a higher class is opened.
    fn put_back(&self, mut c: PendingChunk) {
        let mut st = self.lock();
        c.parts.retain(|(id, ..)| self.is_running(&st, *id));
        if c.parts.is_empty() {
            return;
        }
        let pos = position(&st.pending, c.order, |x| x.order);
        st.pending.insert(pos, c);
    }

    /// The next partition to synthesize: the first waiting one of the
    /// open chunks in (priority, age) order; parts of ended jobs are
    /// dropped on the way.
    fn next_part(&self, st: &mut State, slot: usize) -> Pick {
        loop {
            let found = st.open.iter().enumerate().find_map(|(ci, c)| {
                c.parts
                    .iter()
                    .position(|p| matches!(p.state, PartState::Waiting))
                    .map(|pi| (ci, pi))
            });
            let Some((ci, pi)) = found else {
                return if st.dispatcher_done {
                    Pick::Done
                } else {
                    Pick::Idle
                };
            };
            let job = st.open[ci].parts[pi].job;
            let submitted = match st.jobs.get(&job) {
                Some(j) if j.state == JobState::Running => Some(j.submitted),
                _ => None,
            };
            let Some(submitted) = submitted else {
                let c = &mut st.open[ci];
                c.parts[pi].state = PartState::Dropped;
                let b = c.per_part_bytes;
                c.reservation.release_part(b);
                self.settle(st, ci);
                continue;
            };
            let now = Instant::now();
            st.timeline.synthesis_started(slot, now);
            let c = &mut st.open[ci];
            let p = &mut c.parts[pi];
            p.state = PartState::Synthesizing;
            return Pick::Part(Picked {
                chunk: c.id,
                index: pi,
                kind: c.kind.clone(),
                job,
                part: p.part,
                input: p.input.clone(),
                submitted,
                start: now,
            });
        }
    }

    /// Move open chunk `ci` to the ready queue once none of its partitions
    /// is waiting or synthesizing (parts of ended jobs dropped, their
    /// memory released; a chunk left empty releases everything).
    fn settle(&self, st: &mut State, ci: usize) {
        let busy = st.open[ci]
            .parts
            .iter()
            .any(|p| matches!(p.state, PartState::Waiting | PartState::Synthesizing));
        if busy {
            return;
        }
        let c = st.open.remove(ci);
        let mut parts = Vec::new();
        let mut inputs = Vec::new();
        let mut assignments = Vec::new();
        let mut dropped = 0u64;
        for p in c.parts {
            if let PartState::Done(a) = p.state {
                if self.is_running(st, p.job) {
                    parts.push((p.job, p.part));
                    inputs.push(p.input);
                    assignments.push(a);
                } else {
                    dropped += 1;
                }
            }
        }
        let mut reservation = c.reservation;
        reservation.release_part(c.per_part_bytes * dropped);
        if !parts.is_empty() {
            let chunk = Chunk {
                order: c.order,
                priority: c.priority,
                params_id: c.kind.params_id().to_owned(),
                kind: c.kind,
                parts,
                inputs,
                assignments,
                lease: c.lease,
                reservation,
                per_part_bytes: c.per_part_bytes,
                _slot: c.slot,
            };
            let pos = position(&st.ready, chunk.order, |x| x.order);
            st.ready.insert(pos, chunk);
        }
        // Also when nothing was left: workers waiting to stop re-check.
        self.worker_wake.notify_waiters();
    }

    /// The prepared verifying key of `params` (prepared once per loaded set).
    fn pvk(&self, id: &str, params: &Arc<Parameters>) -> Arc<PreparedVerifyingKey> {
        let addr = Arc::as_ptr(params) as usize;
        let mut m = self.pvks.lock().unwrap_or_else(|e| e.into_inner());
        match m.get(id) {
            Some((a, p)) if *a == addr => p.clone(),
            _ => {
                let p = Arc::new(cuzk_core::verifier::prepare_verifying_key(&params.vk));
                m.insert(id.to_owned(), (addr, p.clone()));
                p
            }
        }
    }
}

async fn synthesizer(inner: Arc<Inner>, slot: usize) {
    loop {
        let notified = inner.synth_wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let pick = {
            let mut st = inner.lock();
            inner.next_part(&mut st, slot)
        };
        match pick {
            Pick::Part(p) => synthesize_part(&inner, slot, p).await,
            Pick::Idle => notified.await,
            Pick::Done => break,
        }
    }
}

async fn synthesize_part(inner: &Arc<Inner>, slot: usize, p: Picked) {
    let k = p.kind.clone();
    let input = p.input.clone();
    let part = p.part;
    // A backend that sends witnesses in their 0/1 form gets it made here,
    // beside synthesis, instead of on its own time while it uploads.
    let zero_one = inner.devices.wants_zero_one();
    let res = tokio::task::spawn_blocking(move || {
        let mut parts = k.synthesize_parts(&[(input, part)])?;
        if zero_one {
            parts.iter_mut().for_each(Synthesized::prepare_zero_one);
        }
        Ok(parts)
    })
    .await;
    let end = Instant::now();
    let broken = |what: String| JobFailure::SynthesisBroken {
        kind: p.kind.name().to_owned(),
        partition: part,
        what,
    };
    let outcome = match res {
        Ok(Ok(mut v)) if v.len() == 1 => v.pop().ok_or_else(|| broken(String::new())),
        Ok(Ok(v)) => Err(broken(format!(
            "kind {} synthesized {} circuits for 1 partition",
            p.kind.name(),
            v.len()
        ))),
        Ok(Err(e)) => Err(JobFailure::Synthesis {
            partition: part,
            source: Arc::new(e),
        }),
        Err(e) => Err(broken(format!(
            "synthesis of {} stopped: {e}",
            p.kind.name()
        ))),
    };
    let mut st = inner.lock();
    st.timeline.synthesis_ended(slot);
    let args = serde_json::json!({"job": p.job, "partition": p.part, "kind": p.kind.name()});
    st.timeline.push(TraceEvent {
        name: "queued",
        lane: Lane::Queue { job: p.job },
        start: p.submitted,
        dur: p.start.saturating_duration_since(p.submitted),
        args: args.clone(),
    });
    st.timeline.push(TraceEvent {
        name: "synthesis",
        lane: Lane::Synthesis { slot: slot as u32 },
        start: p.start,
        dur: end - p.start,
        args,
    });
    if let Some(j) = st.jobs.get_mut(&p.job) {
        if j.state == JobState::Running {
            let (s, e) = j.synth_span.unwrap_or((p.start, end));
            let span = (s.min(p.start), e.max(end));
            j.synth_span = Some(span);
            j.timings.synthesis = span.1 - span.0;
        }
    }
    let Some(ci) = st.open.iter().position(|c| c.id == p.chunk) else {
        return;
    };
    match outcome {
        Ok(a) => st.open[ci].parts[p.index].state = PartState::Done(a),
        Err(e) => {
            let c = &mut st.open[ci];
            c.parts[p.index].state = PartState::Dropped;
            let b = c.per_part_bytes;
            c.reservation.release_part(b);
            inner.finish(&mut st, p.job, JobState::Failed, Some(e));
        }
    }
    inner.settle(&mut st, ci);
}

/// Probes the GPUs out of service when they are due ([`Inner::probe_device`]).
/// Holds the engine weakly, so it ends with it, and ends at shutdown.
async fn prober(inner: std::sync::Weak<Inner>, interval: Duration) {
    let tick = interval.min(Duration::from_secs(1));
    loop {
        tokio::time::sleep(tick).await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let due: Vec<u32> = {
            let st = inner.lock();
            if st.shutting_down {
                return;
            }
            let now = Instant::now();
            st.next_probe
                .iter()
                .filter(|(_, at)| **at <= now)
                .map(|(d, _)| *d)
                .collect()
        };
        for d in due {
            inner.probe_device(d).await;
        }
    }
}

/// A device's time with at least one prover call in flight.
#[derive(Default)]
struct BusyClock {
    in_flight: u32,
    /// When the calls now in flight began to overlap (the first started).
    since: Option<Instant>,
    done: Duration,
}

impl BusyClock {
    fn start(&mut self, at: Instant) {
        if self.in_flight == 0 {
            self.since = Some(at);
        }
        self.in_flight += 1;
    }
    fn end(&mut self, at: Instant) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.in_flight == 0 {
            if let Some(s) = self.since.take() {
                self.done += at.saturating_duration_since(s);
            }
        }
    }
    fn busy(&self, now: Instant) -> Duration {
        self.done
            + self
                .since
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Take the chunk this worker should prove next; None when shutting down
/// with nothing left.
async fn take_chunk(inner: &Arc<Inner>, device: Option<u32>) -> Option<Chunk> {
    loop {
        let notified = inner.worker_wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        // A GPU out of service takes no chunks while another serves; when
        // none does, its workers take them to fail their jobs.
        {
            let mut st = inner.lock();
            if device.is_none_or(|d| st.healthy(d)) || st.no_device_left() {
                let params = &inner.params;
                let pick = pick_for_worker(
                    st.ready.iter().map(|c| (c.priority, c.params_id.as_str())),
                    device,
                    |id, d| params.is_resident(id, d),
                    |i| device.is_none_or(|d| inner.provable_on(&st, &st.ready[i], d)),
                );
                if let Some(i) = pick {
                    return Some(st.ready.remove(i));
                }
            }
            if st.dispatcher_done && st.open.is_empty() && st.ready.is_empty() {
                return None;
            }
        }
        notified.await;
    }
}

/// Each proof checked against the verifying key with its public inputs:
/// all at once (random linear combination), one by one only to find which
/// failed.
fn verify_chunk(
    pvk: &PreparedVerifyingKey,
    proofs: &[Proof],
    publics: &[Vec<Scalar>],
) -> Vec<bool> {
    use cuzk_core::verifier::{verify_proof, verify_proofs_batch};
    if proofs.len() > 1 {
        let mut rng = ChaCha20Rng::from_entropy();
        if let Ok(true) = verify_proofs_batch(pvk, proofs, publics, &mut rng) {
            return vec![true; proofs.len()];
        }
    }
    proofs
        .iter()
        .zip(publics)
        .map(|(p, x)| verify_proof(pvk, p, x).unwrap_or(false))
        .collect()
}

/// What a proving call produced, on its way to the jobs.
struct Proved {
    parts: Vec<(JobId, usize)>,
    proofs: Vec<Proof>,
    publics: Vec<Vec<Scalar>>,
    params_id: String,
    gpu: Duration,
}

async fn worker(
    inner: Arc<Inner>,
    index: usize,
    device: Option<u32>,
    prover: Arc<dyn ProverBackend>,
    mut rng: ChaCha20Rng,
) {
    while let Some(mut chunk) = take_chunk(&inner, device).await {
        if let Some(d) = device {
            let mut st = inner.lock();
            if !st.healthy(d) {
                // Taken only when no GPU is in service (take_chunk).
                let e = st.no_device_error();
                for &(id, _) in &chunk.parts {
                    inner.finish(&mut st, id, JobState::Failed, Some(e.clone()));
                }
                continue;
            }
        }
        // Partition boundary: drop cancelled jobs' parts and their memory.
        {
            let st = inner.lock();
            let keep: Vec<bool> = chunk
                .parts
                .iter()
                .map(|(id, _)| inner.is_running(&st, *id))
                .collect();
            drop(st);
            let dropped = keep.iter().filter(|k| !**k).count();
            if dropped > 0 {
                let mut it = keep.iter();
                chunk.parts.retain(|_| *it.next().unwrap_or(&false));
                let mut it = keep.iter();
                chunk.assignments.retain(|_| *it.next().unwrap_or(&false));
                let mut it = keep.iter();
                chunk.inputs.retain(|_| *it.next().unwrap_or(&false));
                chunk
                    .reservation
                    .release_part(chunk.per_part_bytes * dropped as u64);
            }
        }
        if chunk.parts.is_empty() {
            continue;
        }
        if let Some(d) = device {
            let params = inner.params.clone();
            let lease = chunk.lease.clone();
            let _ = tokio::task::spawn_blocking(move || params.ensure_resident(&lease, d)).await;
        }
        // The inputs each proof is checked against (and reported with):
        // what the verifier derives from the request where the kind knows
        // it, else the circuit's own.
        let publics: Vec<Vec<Scalar>> = chunk
            .assignments
            .iter()
            .zip(&chunk.parts)
            .zip(&chunk.inputs)
            .map(|((a, (_, part)), input)| {
                chunk
                    .kind
                    .verifier_inputs(input, *part)
                    .unwrap_or_else(|| a.public_inputs().to_vec())
            })
            .collect();
        let assignments = std::mem::take(&mut chunk.assignments);
        let lease = chunk.lease.clone();
        let p = prover.clone();
        let t = Instant::now();
        {
            let mut st = inner.lock();
            st.timeline.proving_started(index, t);
            if let Some(d) = device {
                st.device_busy.entry(d).or_default().start(t);
            }
            let mut ids: Vec<JobId> = chunk.parts.iter().map(|p| p.0).collect();
            ids.dedup();
            let jobs = ids
                .into_iter()
                .map(|id| (id, st.jobs.get(&id).and_then(|j| j.request_id.clone())))
                .collect();
            st.proving[index] = Some(WorkerNow {
                worker: index as u32,
                device,
                kind: chunk.kind.name().to_owned(),
                jobs,
            });
        }
        let res = tokio::task::spawn_blocking(move || {
            let r = cuzk_core::prover::prove_synthesized(&*p, &lease.params, assignments, &mut rng);
            (r, rng)
        })
        .await;
        let gpu = t.elapsed();
        let ids: Vec<JobId> = chunk.parts.iter().map(|c| c.0).collect();
        let lane = Lane::Worker {
            worker: index as u32,
            device,
        };
        let mut args = serde_json::json!({
            "params": chunk.params_id,
            "partitions": chunk.parts.iter().map(|(j, p)| serde_json::json!([j, p])).collect::<Vec<_>>(),
        });
        let mut phases = None;
        let outcome = match res {
            Ok((r, back)) => {
                rng = back;
                match r {
                    Ok((proofs, timings)) if proofs.len() == chunk.parts.len() => {
                        phases = Some(timings);
                        Ok(proofs)
                    }
                    Ok((proofs, _)) => Err((
                        JobFailure::ProverBroken {
                            backend: prover.name().to_owned(),
                            device,
                            what: format!(
                                "backend {} returned {} proofs for {} circuits",
                                prover.name(),
                                proofs.len(),
                                ids.len()
                            ),
                        },
                        false,
                    )),
                    // Only the backend can tell a lost device from an error
                    // that any device would return for this partition.
                    Err(e) => {
                        let lost = device.is_some_and(|d| inner.devices.is_device_lost(d, &e));
                        let failure = JobFailure::Prover {
                            backend: prover.name().to_owned(),
                            device,
                            source: Arc::new(e),
                        };
                        Err((failure, lost))
                    }
                }
            }
            Err(e) => {
                // The rng moved into the failed task; start a fresh one.
                rng = ChaCha20Rng::from_entropy();
                let failure = JobFailure::ProverBroken {
                    backend: prover.name().to_owned(),
                    device,
                    what: format!("backend {} stopped: {e}", prover.name()),
                };
                Err((failure, false))
            }
        };
        {
            let mut st = inner.lock();
            st.timeline.proving_ended(index);
            if let Some(c) = device.and_then(|d| st.device_busy.get_mut(&d)) {
                c.end(Instant::now());
            }
            st.proving[index] = None;
            if let (Some(d), Ok(p)) = (device, &outcome) {
                if let Some(h) = st.health.iter_mut().find(|h| h.index == d) {
                    h.partitions_proved += p.len() as u64;
                }
            }
            if let Some(ph) = &phases {
                args["phases_ms"] = serde_json::to_value(ph).unwrap_or_default();
            }
            st.timeline.push(TraceEvent {
                name: "prove",
                lane,
                start: t,
                dur: gpu,
                args,
            });
            // Each partition's phases as the backend timed them: on the
            // worker's row (the stream the call used, under the call) and
            // the host preparation on the row beside it.
            if let Some(ph) = &phases {
                for sp in &ph.spans {
                    let (lane, stream) = match sp.on {
                        SpanOn::Caller { stream } => (lane, stream),
                        SpanOn::Beside { stream } => (
                            Lane::Prep {
                                worker: index as u32,
                                device,
                            },
                            stream,
                        ),
                    };
                    let (job, part) = chunk.parts.get(sp.partition).copied().unzip();
                    st.timeline.push(TraceEvent {
                        name: sp.phase.name(),
                        lane,
                        start: sp.start,
                        dur: sp.dur,
                        args: serde_json::json!({
                            "job": job,
                            "partition": part,
                            "stream": stream,
                        }),
                    });
                }
            }
        }
        let proofs = match (outcome, device) {
            (Ok(p), _) => p,
            (Err((e, true)), Some(d)) => {
                inner.device_failed(d, chunk, &e.to_string());
                continue;
            }
            (Err((e, _)), _) => {
                inner.fail_jobs(&ids, e);
                continue;
            }
        };
        tracing::debug!(jobs = ?ids, ?gpu, "chunk proved");
        let proved = Proved {
            parts: std::mem::take(&mut chunk.parts),
            proofs,
            publics,
            params_id: chunk.params_id.clone(),
            gpu,
        };
        if inner.cfg.verify_proofs {
            let params = chunk.lease.params.clone();
            // The memory, slot and lease go back now; the worker takes the
            // next chunk while this one's proofs are checked.
            drop(chunk);
            let inner = inner.clone();
            tokio::spawn(async move {
                let inner2 = inner.clone();
                let t = Instant::now();
                let checked = tokio::task::spawn_blocking(move || {
                    let pvk = inner2.pvk(&proved.params_id, &params);
                    let ok = verify_chunk(&pvk, &proved.proofs, &proved.publics);
                    (proved, ok)
                })
                .await;
                match checked {
                    Ok((proved, ok)) => {
                        {
                            let mut st = inner.lock();
                            st.timeline.push(TraceEvent {
                                name: "verify",
                                lane: Lane::Verify {
                                    worker: index as u32,
                                },
                                start: t,
                                dur: t.elapsed(),
                                args: serde_json::json!({"proofs": ok.len(), "valid": ok.iter().filter(|v| **v).count()}),
                            });
                        }
                        record(&inner, proved, Some(ok));
                    }
                    Err(e) => {
                        // The proofs were moved into the task that stopped.
                        tracing::error!(error = %e, "verification stopped");
                    }
                }
            });
        } else {
            drop(chunk);
            record(&inner, proved, None);
        }
    }
}

/// Give proved partitions to their jobs; a partition whose proof did not
/// verify fails its job.
fn record(inner: &Inner, p: Proved, verified: Option<Vec<bool>>) {
    let n = p.parts.len() as u32;
    let mut st = inner.lock();
    st.counters.circuits_proved += n as u64;
    if let Some(v) = &verified {
        let good = v.iter().filter(|x| **x).count() as u64;
        st.counters.proofs_verified += good;
        st.counters.verification_failures += v.len() as u64 - good;
    }
    let mut seen = HashSet::new();
    let mut completed = Vec::new();
    for (i, ((id, part), proof)) in p.parts.iter().zip(&p.proofs).enumerate() {
        let Some(j) = st.jobs.get_mut(id) else {
            continue;
        };
        if j.state != JobState::Running {
            continue;
        }
        if verified
            .as_ref()
            .is_some_and(|v| !v.get(i).copied().unwrap_or(false))
        {
            let e = JobFailure::NotVerified {
                partition: *part,
                params_id: p.params_id.clone(),
            };
            inner.finish(&mut st, *id, JobState::Failed, Some(e));
            continue;
        }
        if seen.insert(*id) {
            j.timings.gpu += p.gpu;
            j.batch_size = j.batch_size.max(n);
        }
        if j.proofs[*part].is_none() {
            j.proofs[*part] = Some(proof.to_bytes());
            j.publics[*part] = p.publics[i].iter().flat_map(|s| s.to_bytes_le()).collect();
            j.done_parts += 1;
        }
        if j.done_parts == j.parts.len() {
            completed.push(*id);
        }
    }
    for id in completed {
        inner.finish(&mut st, id, JobState::Completed, None);
    }
}
