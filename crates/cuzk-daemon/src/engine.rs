//! The proving engine: job records, the dispatcher that turns queued
//! batches into synthesized chunks, and the workers that prove them.
//!
//! Flow: `submit` decodes the input and queues the job in the
//! [`Scheduler`]; one dispatcher task pops batches in priority order,
//! leases the parameters, and synthesizes the batch's partitions in chunks
//! of up to `max_batch_size` circuits on a blocking thread, each chunk
//! after reserving its host memory and a pipeline slot. Workers
//! (`gpu_workers_per_device` per GPU, or `cpu_workers`) take ready chunks and prove them while the
//! dispatcher synthesizes the next: slots = workers + `synthesis_lookahead`
//! bound how far synthesis runs ahead. Partitions are the cancellation
//! boundary: a cancelled job's parts are dropped (and their memory
//! released) before each synthesis and before each proving call.
//!
//! [`Engine`] is a cheap handle (clone it) that any front end (this crate's
//! gRPC service, a second service) wraps.

use crate::budget::{HostBudget, HostReservation};
use crate::config::{EngineConfig, ShutdownMode};
use crate::devices::{DeviceBackend, DeviceInfo};
use crate::kinds::{CircuitKind, JobInput, KindError, KindRegistry};
use crate::params::{ParamManager, ParamsError, ParamsLease, ParamsStatus, TierUsage};
use crate::scheduler::{pick_for_worker, Batch, JobId, Priority, QueuedJob, Scheduler};
use cuzk_core::prover::ProverBackend;
use cuzk_core::synthesis::ProvingAssignment;
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
    #[error("request id {0:?} was already used for a different kind or input")]
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl JobState {
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Completed | JobState::Failed | JobState::Cancelled
        )
    }
}

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
    pub error: Option<String>,
    pub timings: JobTimings,
    pub batch_size: u32,
    pub completion_seq: u64,
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

#[derive(Clone, Debug, serde::Serialize)]
pub struct EngineStatus {
    pub backend: &'static str,
    pub gpu_backend_present: bool,
    /// Why the device list is empty, when it is.
    pub note: Option<&'static str>,
    pub devices: Vec<DeviceInfo>,
    pub params: Vec<ParamsStatus>,
    pub tiers: Vec<TierUsage>,
    pub queues: Vec<(Priority, usize)>,
    pub collecting: usize,
    pub running: usize,
    /// Chunks synthesized and waiting for a worker.
    pub ready_chunks: usize,
    pub counters: Counters,
    pub phase_sums: PhaseSums,
    pub host_reserved_bytes: u64,
    pub host_budget_bytes: u64,
    pub kinds: Vec<String>,
    pub workers: usize,
    pub shutting_down: bool,
}

struct Job {
    kind: Arc<dyn CircuitKind>,
    input: JobInput,
    client: String,
    request_id: Option<String>,
    fingerprint: (String, Vec<u8>),
    partitions: usize,
    state: JobState,
    submitted: Instant,
    dispatched: Option<Instant>,
    proofs: Vec<Option<[u8; cuzk_core::proof::PROOF_BYTES]>>,
    publics: Vec<Vec<u8>>,
    done_parts: usize,
    timings: JobTimings,
    batch_size: u32,
    error: Option<String>,
    completion_seq: u64,
    done_tx: watch::Sender<bool>,
}

struct State {
    jobs: HashMap<JobId, Job>,
    request_ids: HashMap<String, JobId>,
    sched: Scheduler,
    outstanding: HashMap<String, usize>,
    next_id: JobId,
    next_seq: u64,
    completion_seq: u64,
    finished: VecDeque<(JobId, Instant)>,
    running: usize,
    counters: Counters,
    sums: PhaseSums,
    ready: VecDeque<Chunk>,
    shutting_down: bool,
    dispatcher_done: bool,
}

/// Synthesized partitions waiting for (or in) a worker. Dropping it
/// releases its host memory, pipeline slot and parameter lease.
struct Chunk {
    priority: Priority,
    params_id: String,
    parts: Vec<(JobId, usize)>,
    assignments: Vec<ProvingAssignment>,
    lease: Arc<ParamsLease>,
    reservation: HostReservation,
    per_part_bytes: u64,
    synthesis: Duration,
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
    /// Signalled whenever a job finishes.
    job_done: Notify,
    workers: usize,
}

/// A handle on the running engine.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
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
        let slots = Arc::new(Semaphore::new(workers + cfg.synthesis_lookahead));
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
                counters: Counters::default(),
                sums: PhaseSums::default(),
                ready: VecDeque::new(),
                shutting_down: false,
                dispatcher_done: false,
            }),
            dispatch_wake: Notify::new(),
            worker_wake: Notify::new(),
            job_done: Notify::new(),
            workers,
            cfg,
        });
        let mut tasks = vec![tokio::spawn(dispatcher(inner.clone()))];
        for (i, dev) in worker_devices.into_iter().enumerate() {
            let prover = devices.prover(dev);
            let rng = match inner.cfg.rng_seed {
                Some(s) => ChaCha20Rng::seed_from_u64(s.wrapping_add(i as u64)),
                None => ChaCha20Rng::from_entropy(),
            };
            tasks.push(tokio::spawn(worker(inner.clone(), dev, prover, rng)));
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
        let r = self.submit_inner(req);
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

    fn submit_inner(&self, req: SubmitRequest) -> Result<Submitted, EngineError> {
        let request_id = req.request_id.filter(|r| !r.is_empty());
        if let Some(r) = &request_id {
            if r.len() > 128 {
                return Err(EngineError::RequestIdTooLong(r.len()));
            }
        }
        let kind = self.inner.registry.get(&req.kind)?;
        let (input, partitions) = kind.decode_input(&req.input)?;
        let fingerprint = (req.kind.clone(), req.input);
        let now = Instant::now();
        let mut st = self.lock();
        self.inner.prune(&mut st, now);
        if st.shutting_down {
            return Err(EngineError::ShuttingDown);
        }
        if let Some(r) = &request_id {
            if let Some(&jid) = st.request_ids.get(r) {
                if let Some(job) = st.jobs.get(&jid) {
                    if job.fingerprint != fingerprint {
                        return Err(EngineError::RequestIdConflict(r.clone()));
                    }
                    st.counters.deduplicated += 1;
                    return Ok(Submitted {
                        job_id: jid,
                        deduplicated: true,
                    });
                }
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
                circuits: partitions,
                batchable: kind.batchable(),
            },
            now,
        );
        let (done_tx, _) = watch::channel(false);
        st.jobs.insert(
            id,
            Job {
                kind,
                input,
                client: req.client,
                request_id,
                fingerprint,
                partitions,
                state: JobState::Queued,
                submitted: now,
                dispatched: None,
                proofs: vec![None; partitions],
                publics: vec![Vec::new(); partitions],
                done_parts: 0,
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
            Some("cancelled by request".into()),
        );
        drop(st);
        self.inner.worker_wake.notify_waiters();
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
        EngineStatus {
            backend: self.inner.devices.name(),
            gpu_backend_present: gpu,
            note: (!gpu)
                .then_some("no GPU backend is present: proving on the CPU, VRAM tier unused"),
            devices,
            params,
            tiers,
            queues: queues.to_vec(),
            collecting,
            running: st.running,
            ready_chunks: st.ready.len(),
            counters: st.counters.clone(),
            phase_sums: st.sums.clone(),
            host_reserved_bytes: self.inner.host.used(),
            host_budget_bytes: self.inner.host.budget(),
            kinds: self.inner.registry.names(),
            workers: self.inner.workers,
            shutting_down: st.shutting_down,
        }
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
        self.inner.dispatch_wake.notify_one();
        self.inner.worker_wake.notify_waiters();
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

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_running(&self, st: &State, id: JobId) -> bool {
        st.jobs
            .get(&id)
            .is_some_and(|j| j.state == JobState::Running)
    }

    /// Move a job to a final state and wake its waiters.
    fn finish(&self, st: &mut State, id: JobId, state: JobState, error: Option<String>) {
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
        job.state = state;
        job.error = error;
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

    fn fail_jobs(&self, ids: &[JobId], error: &dyn std::fmt::Display) {
        let mut st = self.lock();
        for &id in ids {
            tracing::warn!(job = id, error = %error, "job failed");
            self.finish(&mut st, id, JobState::Failed, Some(error.to_string()));
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
                    st.request_ids.remove(&r);
                }
            }
        }
    }
}

async fn dispatcher(inner: Arc<Inner>) {
    while let Some(batch) = next_batch(&inner).await {
        run_batch(&inner, batch).await;
    }
    inner.lock().dispatcher_done = true;
    inner.worker_wake.notify_waiters();
}

async fn next_batch(inner: &Arc<Inner>) -> Option<Batch> {
    loop {
        let notified = inner.dispatch_wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let deadline = {
            let mut st = inner.lock();
            let now = Instant::now();
            if let Some(b) = st.sched.pop(now) {
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
                return Some(b);
            }
            if st.shutting_down && st.sched.is_empty() {
                return None;
            }
            st.sched.next_deadline()
        };
        match deadline {
            Some(d) => {
                let _ = tokio::time::timeout_at(d.into(), notified).await;
            }
            None => notified.await,
        }
    }
}

async fn run_batch(inner: &Arc<Inner>, batch: Batch) {
    let kind = match inner.registry.get(&batch.kind) {
        Ok(k) => k,
        Err(e) => return inner.fail_jobs(&batch.jobs, &e),
    };
    let lease = match inner.params.acquire(&kind).await {
        Ok(l) => Arc::new(l),
        Err(e) => return inner.fail_jobs(&batch.jobs, &e),
    };
    let parts: Vec<(JobId, usize, JobInput)> = {
        let mut st = inner.lock();
        let mut parts = Vec::new();
        for id in &batch.jobs {
            if let Some(j) = st.jobs.get_mut(id) {
                if j.state == JobState::Running {
                    j.timings.param_load = lease.load_time;
                    parts.extend((0..j.partitions).map(|p| (*id, p, j.input.clone())));
                }
            }
        }
        parts
    };
    let per_part = kind.host_bytes_per_partition();
    for chunk in parts.chunks(inner.cfg.max_batch_size.max(1)) {
        let live = |inner: &Inner| -> Vec<(JobId, usize, JobInput)> {
            let st = inner.lock();
            chunk
                .iter()
                .filter(|(id, ..)| inner.is_running(&st, *id))
                .cloned()
                .collect()
        };
        if live(inner).is_empty() {
            continue;
        }
        let Ok(slot) = inner.slots.clone().acquire_owned().await else {
            return;
        };
        let what = format!("a chunk of {} {} partitions", chunk.len(), kind.name());
        let reservation = match inner
            .host
            .reserve(per_part * chunk.len() as u64, &what)
            .await
        {
            Ok(r) => r,
            Err(e) => {
                let ids: Vec<JobId> = chunk.iter().map(|c| c.0).collect();
                inner.fail_jobs(&ids, &e);
                continue;
            }
        };
        // Partition boundary: drop parts of jobs cancelled while waiting.
        let mut reservation = reservation;
        let now_live = live(inner);
        reservation.release_part(per_part * (chunk.len() - now_live.len()) as u64);
        if now_live.is_empty() {
            continue;
        }
        let inputs: Vec<(JobInput, usize)> =
            now_live.iter().map(|(_, p, i)| (i.clone(), *p)).collect();
        let k = kind.clone();
        let t = Instant::now();
        let res = tokio::task::spawn_blocking(move || k.synthesize(&inputs)).await;
        let synthesis = t.elapsed();
        let ids: Vec<JobId> = now_live.iter().map(|c| c.0).collect();
        match res {
            Ok(Ok(assignments)) if assignments.len() == now_live.len() => {
                let c = Chunk {
                    priority: batch.priority,
                    params_id: kind.params_id().to_owned(),
                    parts: now_live.iter().map(|(id, p, _)| (*id, *p)).collect(),
                    assignments,
                    lease: lease.clone(),
                    reservation,
                    per_part_bytes: per_part,
                    synthesis,
                    _slot: slot,
                };
                tracing::debug!(jobs = ?ids, ?synthesis, "chunk synthesized");
                inner.lock().ready.push_back(c);
                inner.worker_wake.notify_waiters();
            }
            Ok(Ok(a)) => inner.fail_jobs(
                &ids,
                &format!(
                    "kind {} synthesized {} circuits for {} partitions",
                    kind.name(),
                    a.len(),
                    ids.len()
                ),
            ),
            Ok(Err(e)) => inner.fail_jobs(&ids, &e),
            Err(e) => inner.fail_jobs(&ids, &format!("synthesis of {} stopped: {e}", kind.name())),
        }
    }
}

/// Take the chunk this worker should prove next; None when shutting down
/// with nothing left.
async fn take_chunk(inner: &Arc<Inner>, device: Option<u32>) -> Option<Chunk> {
    loop {
        let notified = inner.worker_wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        {
            let mut st = inner.lock();
            let params = &inner.params;
            let pick = pick_for_worker(
                st.ready.iter().map(|c| (c.priority, c.params_id.as_str())),
                device,
                |id, d| params.is_resident(id, d),
            );
            if let Some(i) = pick {
                return st.ready.remove(i);
            }
            if st.dispatcher_done {
                return None;
            }
        }
        notified.await;
    }
}

async fn worker(
    inner: Arc<Inner>,
    device: Option<u32>,
    prover: Arc<dyn ProverBackend>,
    mut rng: ChaCha20Rng,
) {
    while let Some(mut chunk) = take_chunk(&inner, device).await {
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
        let publics: Vec<Vec<u8>> = chunk
            .assignments
            .iter()
            .map(|a| {
                a.public_inputs()
                    .iter()
                    .flat_map(|s| s.to_bytes_le())
                    .collect()
            })
            .collect();
        let assignments = std::mem::take(&mut chunk.assignments);
        let lease = chunk.lease.clone();
        let p = prover.clone();
        let t = Instant::now();
        let res = tokio::task::spawn_blocking(move || {
            let r =
                cuzk_core::prover::prove_assignments(&*p, &lease.params, &assignments, &mut rng);
            (r, rng)
        })
        .await;
        let gpu = t.elapsed();
        let ids: Vec<JobId> = chunk.parts.iter().map(|c| c.0).collect();
        let proofs = match res {
            Ok((r, back)) => {
                rng = back;
                match r {
                    Ok((proofs, _)) if proofs.len() == chunk.parts.len() => proofs,
                    Ok((proofs, _)) => {
                        inner.fail_jobs(
                            &ids,
                            &format!(
                                "backend {} returned {} proofs for {} circuits",
                                prover.name(),
                                proofs.len(),
                                ids.len()
                            ),
                        );
                        continue;
                    }
                    Err(e) => {
                        inner.fail_jobs(&ids, &e);
                        continue;
                    }
                }
            }
            Err(e) => {
                // The rng moved into the failed task; start a fresh one.
                rng = ChaCha20Rng::from_entropy();
                inner.fail_jobs(&ids, &format!("backend {} stopped: {e}", prover.name()));
                continue;
            }
        };
        let n = chunk.parts.len() as u32;
        tracing::debug!(jobs = ?ids, ?gpu, "chunk proved");
        let mut st = inner.lock();
        st.counters.circuits_proved += n as u64;
        let mut seen = HashSet::new();
        let mut completed = Vec::new();
        for (((id, part), proof), public) in chunk.parts.iter().zip(&proofs).zip(publics) {
            let Some(j) = st.jobs.get_mut(id) else {
                continue;
            };
            if j.state != JobState::Running {
                continue;
            }
            if seen.insert(*id) {
                j.timings.synthesis += chunk.synthesis;
                j.timings.gpu += gpu;
                j.batch_size = j.batch_size.max(n);
            }
            if j.proofs[*part].is_none() {
                j.proofs[*part] = Some(proof.to_bytes());
                j.publics[*part] = public;
                j.done_parts += 1;
            }
            if j.done_parts == j.partitions {
                completed.push(*id);
            }
        }
        for id in completed {
            inner.finish(&mut st, id, JobState::Completed, None);
        }
        drop(st);
        drop(chunk);
    }
}
