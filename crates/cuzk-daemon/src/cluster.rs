//! Cluster mode (`[cluster] database_url`): this daemon takes its work from
//! a queue shared with other daemons in a PostgreSQL-protocol database
//! (crate `cuzk-cluster`, whose DESIGN.md describes the queue), instead of
//! its own in-memory one.
//!
//! - **Front end** ([`ClusterProofService`]): `SubmitProof` decodes the
//!   input with the kind registry (a malformed request fails at once, and
//!   the kind says how many partitions) and inserts the job into the
//!   database; `AwaitProof`, `CancelProof` and `Prove` act on the stored
//!   job, so any daemon answers for any job. Job ids are the database's;
//!   request ids are idempotent across the cluster (the queue's rule).
//! - **Feeder**: claims partitions (priority, then kinds whose parameters
//!   are resident here, then age; `FOR UPDATE SKIP LOCKED`) while this
//!   daemon has fewer than `max_claimed` in hand (leaving a young
//!   partition for `placement_grace_s` to another alive daemon that holds
//!   its parameters resident when this one does not), and proves each as a
//!   one-partition job of the local [`Engine`]
//!   ([`Engine::submit_partitions`]) through the usual pipeline (synthesis,
//!   proving, verification against the verifying key). A [`LeaseKeeper`]
//!   on a connection of its own renews the leases meanwhile; a renewal
//!   answering "cancelled", "job failed" or "lost" cancels the local job.
//!   The partition's proof, public inputs and timings (or its error) are
//!   stored under the lease's fencing token; the queue assembles the job
//!   when its last partition arrives.
//!   A job's input is fetched and decoded once per daemon, shared by the
//!   partitions of it claimed here (a per-job cell in a small cache).
//! - **Heartbeat**: kinds supported and resident, free VRAM, partitions
//!   claimed and proved, capacity (`max_claimed`), its address and
//!   interval, every `heartbeat_interval_s`.
//! - **Metrics**: this daemon's claims, results, leases, held reports and
//!   the database's reachability ([`ClusterNode::metrics`]), appended to
//!   its `/metrics` and `GetMetrics`.
//! - **Retention**: every daemon deletes jobs finished more than
//!   `retain_finished_s` ago, and forgets nodes silent that long, every
//!   quarter of it (at most 10 minutes); concurrent sweeps split the rows.
//! - **Database outage**: partitions in hand are still proved; their
//!   results are held and their reports retried with backoff until the
//!   database answers, and nothing new is claimed while any is held. Back
//!   from an outage, the daemon does not reap expired leases for one
//!   `lease_ttl_s`: the other daemons' renewals, stalled by the same
//!   outage, get that long to catch up. `cuzk status` says since when the
//!   database has not answered ([`ClusterNode::status`]).
//!
//! This module owns no queue state: the database does. It must not reach
//! into the engine's internals; the engine sees ordinary local jobs.

// tonic::Status is large, but it is what every handler returns.
#![allow(clippy::result_large_err)]

use crate::config::{ClusterSettings, ServerConfig};
use crate::engine::{Engine, EngineError, JobState};
use crate::kinds::KindError;
use crate::proto;
use crate::service::{status_of, ProofServiceImpl};
use cuzk_cluster::{
    ClaimRequest, ClusterClient, ClusterConfig, ClusterError, Completion, FailMode, FailOutcome,
    JobId, JobInput, JobRecord, Lease, LeaseKeeper, NewJob, NodeReport, PartitionResult,
    StopReason, Unreachable,
};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::{JoinHandle, JoinSet};
use tonic::{Request, Response, Status};

/// The queue's types that other services of the daemon (Curio's) name.
pub use cuzk_cluster::{ClusterError as DbError, JobId as DbJobId, JobState as DbJobState};

/// Decoded inputs kept per node so that a job's partitions claimed here
/// fetch and decode it once: a 32 GiB PoRep's C1 output is tens of
/// megabytes. Four covers the jobs a node works on at once with
/// `max_claimed` of a few partitions.
const INPUT_CACHE: usize = 4;

/// A job's input as this node proves from it: fetched once, decoded by
/// the kind once (the bytes dropped after), shared by every partition of
/// the job claimed here.
#[derive(Clone)]
struct Decoded {
    input: crate::kinds::JobInput,
    partitions: usize,
}

/// Why a job's input is not at hand.
enum InputError {
    /// Report the partition failed.
    Failed(String, FailMode),
    /// The job ended meanwhile (cancelled, failed, or completed by others)
    /// and its input went with it: the lease's renewal says why.
    Ended,
}

/// One job's entry in the input cache: partitions of the job claimed at
/// the same moment wait for the first one's fetch instead of each
/// fetching the input.
type InputCell = Arc<tokio::sync::OnceCell<Decoded>>;

/// The database connected and migrated, before the engine starts: a
/// database that cannot be reached fails the daemon's start, not its
/// first submission.
pub struct ClusterConnection {
    settings: ClusterSettings,
    cfg: ClusterConfig,
    front: Arc<ClusterClient>,
    address: String,
}

/// How long status reads and retention sweeps retry an unanswering
/// database: status must answer promptly, and a sweep runs again later.
const ADMIN_RECONNECT_FOR: Duration = Duration::from_secs(3);

/// Rows a retention sweep deletes per statement (jobs; their partitions
/// and failure rows go with them).
const PURGE_BATCH: i64 = 500;

/// The longest wait between two reports of a result the database did not
/// take.
const REPORT_BACKOFF_MAX: Duration = Duration::from_secs(10);

fn default_node_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "cuzk".to_owned())
}

/// `advertise_address`, else where this daemon listens: the host name with
/// the TCP port, else its Unix socket.
fn default_address(server: &ServerConfig) -> String {
    // Port 0 (a port the system picks) says nothing to a reader.
    match (
        server.tcp_listen.filter(|a| a.port() != 0),
        &server.unix_socket,
    ) {
        (Some(a), _) if !a.ip().is_unspecified() => a.to_string(),
        (Some(a), _) => format!("{}:{}", default_node_id(), a.port()),
        (None, Some(p)) => format!("unix:{}", p.display()),
        (None, None) => String::new(),
    }
}

impl ClusterConnection {
    pub async fn open(
        settings: &ClusterSettings,
        server: &ServerConfig,
    ) -> Result<Self, ClusterError> {
        let url = settings
            .database_url
            .clone()
            .ok_or(ClusterError::InvalidConfig(
                "cluster.database_url is not set",
            ))?;
        let node = settings.node_id.clone().unwrap_or_else(default_node_id);
        let mut cfg = ClusterConfig::new(url, node);
        cfg.lease_ttl = Duration::from_secs(settings.lease_ttl_s);
        cfg.max_failures = settings.max_failures;
        cfg.placement_max_wait = Duration::from_secs(settings.placement_max_wait_s);
        cfg.placement_grace = Duration::from_secs(settings.placement_grace_s);
        cfg.reconnect_for = Duration::from_secs(settings.reconnect_for_s);
        let front = Arc::new(ClusterClient::new(cfg.clone())?);
        let applied = front.migrate().await?;
        tracing::info!(
            database = front.target(),
            node = front.node_id(),
            ?applied,
            "cluster mode: connected to the shared queue"
        );
        Ok(Self {
            settings: settings.clone(),
            cfg,
            front,
            address: settings
                .advertise_address
                .clone()
                .unwrap_or_else(|| default_address(server)),
        })
    }

    /// Start the feeder, the lease keeper and the heartbeat on `engine`.
    pub fn start(self, engine: Engine) -> Result<Arc<ClusterNode>, ClusterError> {
        // Each on a client of its own: a renewal must not wait behind a
        // claim or a result upload, nor a claim behind a client's submit.
        let work = Arc::new(ClusterClient::new(self.cfg.clone())?);
        let mut admin_cfg = self.cfg.clone();
        admin_cfg.reconnect_for = admin_cfg.reconnect_for.min(ADMIN_RECONNECT_FOR);
        let admin = Arc::new(ClusterClient::new(admin_cfg)?);
        let keeper = Arc::new(LeaseKeeper::start(Arc::new(ClusterClient::new(
            self.cfg.clone(),
        )?)));
        let st = engine.status();
        let max_claimed = self
            .settings
            .max_claimed
            .unwrap_or(st.workers + st.synthesis_concurrency)
            .max(1);
        let inner = Arc::new(NodeInner {
            engine,
            front: self.front,
            work,
            admin,
            keeper,
            address: self.address,
            lease_ttl: self.cfg.lease_ttl,
            retain: Duration::from_secs(self.settings.retain_finished_s),
            reports_waiting: AtomicUsize::new(0),
            poll: Duration::from_millis(self.settings.poll_interval_ms),
            heartbeat: Duration::from_secs(self.settings.heartbeat_interval_s),
            slots: Arc::new(Semaphore::new(max_claimed)),
            leased: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
            wake: tokio::sync::Notify::new(),
            proved: AtomicU64::new(0),
            inputs: Mutex::new(Vec::new()),
            counts: Counts::default(),
            max_claimed,
        });
        let feeder = tokio::spawn(feeder(inner.clone()));
        let heartbeat = tokio::spawn(heartbeat(inner.clone()));
        let retention = (!inner.retain.is_zero()).then(|| tokio::spawn(retention(inner.clone())));
        Ok(Arc::new(ClusterNode {
            inner,
            feeder: Mutex::new(Some(feeder)),
            heartbeat: Mutex::new(Some(heartbeat)),
            retention: Mutex::new(retention),
        }))
    }
}

struct NodeInner {
    engine: Engine,
    /// Submits, reads and cancels from the gRPC handlers.
    front: Arc<ClusterClient>,
    /// Claims and results.
    work: Arc<ClusterClient>,
    /// Status reads and retention sweeps (short retries).
    admin: Arc<ClusterClient>,
    keeper: Arc<LeaseKeeper>,
    /// Shown in the heartbeat.
    address: String,
    lease_ttl: Duration,
    /// `retain_finished_s` (zero: keep).
    retain: Duration,
    /// Results (or failures) proved here that the database has not taken
    /// yet: while any is held, nothing new is claimed.
    reports_waiting: AtomicUsize,
    poll: Duration,
    heartbeat: Duration,
    /// One permit per partition claimed or being claimed, not yet reported.
    slots: Arc<Semaphore>,
    /// The slots' number.
    max_claimed: usize,
    /// Leases in hand (claimed, not yet reported or given up).
    leased: AtomicUsize,
    stopping: AtomicBool,
    /// Wakes the feeder from its idle sleep (stopping).
    wake: tokio::sync::Notify,
    proved: AtomicU64,
    inputs: Mutex<Vec<(JobId, InputCell)>>,
    counts: Counts,
}

/// This node's running counts, for its Prometheus metrics
/// ([`ClusterNode::metrics`]).
#[derive(Default)]
struct Counts {
    claimed: AtomicU64,
    refused: AtomicU64,
    failures: AtomicU64,
    stopped: AtomicU64,
    released: AtomicU64,
    inputs_fetched: AtomicU64,
    claim_errors: AtomicU64,
}

/// This daemon's membership of the cluster.
pub struct ClusterNode {
    inner: Arc<NodeInner>,
    feeder: Mutex<Option<JoinHandle<()>>>,
    heartbeat: Mutex<Option<JoinHandle<()>>>,
    retention: Mutex<Option<JoinHandle<()>>>,
}

/// This node's counts and gauges as `/metrics` shows them
/// (`metrics::render_cluster`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterMetrics {
    pub node_id: String,
    /// host:port/dbname, without credentials.
    pub database: String,
    /// None while the database answers this daemon.
    pub unreachable_for: Option<Duration>,
    pub leases_held: u64,
    pub max_claimed: u64,
    pub reports_waiting: u64,
    pub claimed: u64,
    pub claim_errors: u64,
    /// Results the queue stored, and refused.
    pub stored: u64,
    pub refused: u64,
    /// Partitions ended without a result: failure reported, stopped by
    /// the queue, released at shutdown.
    pub failed: u64,
    pub stopped: u64,
    pub released: u64,
    pub inputs_fetched: u64,
}

/// A submission refused before or by the queue.
#[derive(Debug, thiserror::Error)]
pub enum ClusterModeError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Each guarded value is replaced whole; a panicking holder leaves it
    // consistent.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ClusterNode {
    pub fn node_id(&self) -> &str {
        self.inner.front.node_id()
    }

    /// The front end's client (reads for status and tests).
    pub fn client(&self) -> &Arc<ClusterClient> {
        &self.inner.front
    }

    /// Leases in hand: partitions claimed here and not yet reported.
    pub fn claimed(&self) -> usize {
        self.inner.leased.load(Ordering::SeqCst)
    }

    /// Partitions proved here and accepted by the queue.
    pub fn partitions_proved(&self) -> u64 {
        self.inner.proved.load(Ordering::Relaxed)
    }

    /// Results held here for a database that has not taken them.
    pub fn reports_waiting(&self) -> usize {
        self.inner.reports_waiting.load(Ordering::SeqCst)
    }

    /// Inputs this node fetched (and decoded): one per job it proved
    /// partitions of, however many.
    pub fn inputs_fetched(&self) -> u64 {
        self.inner.counts.inputs_fetched.load(Ordering::Relaxed)
    }

    /// What `/metrics` shows of this node.
    pub fn metrics(&self) -> ClusterMetrics {
        let c = &self.inner.counts;
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ClusterMetrics {
            node_id: self.node_id().to_owned(),
            database: self.inner.front.target().to_owned(),
            unreachable_for: self
                .database_unreachable()
                .map(|u| u.since.elapsed().unwrap_or_default()),
            leases_held: self.claimed() as u64,
            max_claimed: self.inner.max_claimed as u64,
            reports_waiting: self.reports_waiting() as u64,
            claimed: n(&c.claimed),
            claim_errors: n(&c.claim_errors),
            stored: self.partitions_proved(),
            refused: n(&c.refused),
            failed: n(&c.failures),
            stopped: n(&c.stopped),
            released: n(&c.released),
            inputs_fetched: n(&c.inputs_fetched),
        }
    }

    /// Whether the database answers this daemon: since when and why not.
    /// The clients that speak to it steadily decide (the front end's, used
    /// by the heartbeat, and the feeder's); the earlier outage wins.
    pub fn database_unreachable(&self) -> Option<Unreachable> {
        [
            self.inner.front.unreachable(),
            self.inner.work.unreachable(),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|u| u.since)
    }

    /// This daemon's part of `GetStatus` in cluster mode; with `view`, the
    /// queue's too (skipped while the database does not answer, so that
    /// status never waits on it).
    pub async fn status(&self, view: bool) -> proto::ClusterStatus {
        let down = self.database_unreachable();
        let unix = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64())
        };
        let mut st = proto::ClusterStatus {
            node_id: self.node_id().to_owned(),
            database: self.inner.front.target().to_owned(),
            database_unreachable_since_unix_s: down.as_ref().map(|u| unix(u.since)),
            database_error: down.as_ref().map(|u| u.cause.clone()).unwrap_or_default(),
            claimed: self.claimed() as u32,
            reports_waiting: self.reports_waiting() as u32,
            partitions_proved: self.partitions_proved(),
            retain_finished_s: self.inner.retain.as_secs_f64(),
            view: None,
            view_error: String::new(),
        };
        if !view {
            return st;
        }
        if down.is_some() {
            st.view_error = "the database does not answer this daemon".into();
            return st;
        }
        match self.view().await {
            Ok(v) => st.view = Some(v),
            Err(e) => st.view_error = e.to_string(),
        }
        st
    }

    async fn view(&self) -> Result<proto::ClusterView, ClusterError> {
        let db = &self.inner.admin;
        let nodes = db.nodes().await?;
        let overview = db.overview().await?;
        let depth = db.queue_depth().await?;
        Ok(proto::ClusterView {
            nodes: nodes
                .iter()
                .map(|n| proto::ClusterNode {
                    node_id: n.node_id.clone(),
                    address: n.report.address.clone(),
                    last_seen_s: n.last_seen_ago.as_secs_f64(),
                    alive: n.alive(),
                    heartbeat_interval_s: n.report.heartbeat_interval.as_secs_f64(),
                    up_s: n.up_for.as_secs_f64(),
                    kinds_supported: n.report.kinds_supported.clone(),
                    kinds_resident: n.report.kinds_resident.clone(),
                    free_vram_bytes: n.report.free_vram_bytes,
                    leases: n.leases,
                    partitions_proved: n.report.partitions_proved,
                })
                .collect(),
            jobs: overview
                .jobs
                .iter()
                .map(|(s, n)| proto::StateCount {
                    state: s.as_str().into(),
                    count: *n,
                })
                .collect(),
            partitions: overview
                .partitions
                .iter()
                .map(|(s, n)| proto::StateCount {
                    state: s.as_str().into(),
                    count: *n,
                })
                .collect(),
            oldest_pending_s: overview.oldest_pending.map(|d| d.as_secs_f64()),
            queues: depth
                .iter()
                .map(|q| proto::ClusterQueue {
                    kind: q.kind.clone(),
                    priority: crate::service::priority_to_proto(q.priority) as i32,
                    pending: q.pending,
                    leased: q.leased,
                })
                .collect(),
        })
    }

    /// Insert a job into the shared queue (or find the one its request id
    /// names). The kind decodes the input here, so a malformed request is
    /// refused at once and never stored.
    pub async fn submit(
        &self,
        req: crate::engine::SubmitRequest,
    ) -> Result<cuzk_cluster::Submitted, ClusterModeError> {
        let kind = self
            .inner
            .engine
            .registry()
            .get(&req.kind)
            .map_err(EngineError::from)?;
        let (_, partitions) = kind.decode_input(&req.input).map_err(EngineError::from)?;
        self.submit_decoded(req, partitions).await
    }

    /// [`ClusterNode::submit`] of an input its front end has decoded and
    /// checked already (Curio's service), of `partitions` partitions as
    /// the kind's `decode_input` counts them: not decoded again here.
    pub async fn submit_decoded(
        &self,
        req: crate::engine::SubmitRequest,
        partitions: usize,
    ) -> Result<cuzk_cluster::Submitted, ClusterModeError> {
        self.inner
            .engine
            .registry()
            .get(&req.kind)
            .map_err(EngineError::from)?;
        let partitions = u32::try_from(partitions).map_err(|_| {
            EngineError::Kind(KindError::MalformedInput {
                kind: req.kind.clone(),
                source: format!("{partitions} partitions").into(),
            })
        })?;
        let s = self
            .inner
            .front
            .submit(&NewJob {
                request_id: req.request_id,
                kind: req.kind,
                priority: req.priority,
                client: req.client,
                input: JobInput::Inline(req.input),
                partitions,
            })
            .await?;
        Ok(s)
    }

    /// The stored job once final, or as it is when `timeout` passes (None:
    /// no limit). Polls every `poll_interval_ms`.
    pub async fn await_job(
        &self,
        id: JobId,
        timeout: Option<Duration>,
    ) -> Result<JobRecord, ClusterError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let j = self.inner.front.job(id).await?;
            if j.state.is_final() {
                return Ok(j);
            }
            let mut nap = self.inner.poll;
            if let Some(d) = deadline {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(j);
                }
                nap = nap.min(left);
            }
            tokio::time::sleep(nap).await;
        }
    }

    /// Cancel a job of the cluster: its partitions stop being claimed, and
    /// the daemons proving them learn it at their next lease renewal.
    pub async fn cancel(&self, id: JobId) -> Result<(JobState, bool), ClusterError> {
        let (s, cancelled) = self.inner.front.cancel(id).await?;
        Ok((s, cancelled))
    }

    /// Stop claiming new partitions (shutdown); those claimed are proved
    /// or, when the engine cancels them, released.
    pub fn stop_claiming(&self) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        self.inner.wake.notify_waiters();
    }

    /// After [`ClusterNode::stop_claiming`] and the engine's shutdown: wait
    /// (at most `timeout`) for the claimed partitions to be reported, then
    /// stop the heartbeat and the renewals.
    pub async fn finish(&self, timeout: Duration) {
        self.stop_claiming();
        let feeder = lock(&self.feeder).take();
        if let Some(f) = feeder {
            let abort = f.abort_handle();
            if tokio::time::timeout(timeout, f).await.is_err() {
                tracing::warn!(
                    "cluster: partitions still unreported at shutdown; their leases will expire"
                );
                abort.abort();
            }
        }
        self.stop_tasks();
    }

    fn stop_tasks(&self) {
        if let Some(h) = lock(&self.heartbeat).take() {
            h.abort();
        }
        if let Some(h) = lock(&self.retention).take() {
            h.abort();
        }
        self.inner.keeper.stop();
    }

    /// Stop every cluster task at once, reporting and releasing nothing:
    /// what the queue sees of a daemon that was killed (its leases expire
    /// and other daemons re-run its partitions). For tests and for giving
    /// up on a database; the engine goes on with what it holds.
    pub fn kill(&self) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        if let Some(f) = lock(&self.feeder).take() {
            // The feeder owns the partition tasks' JoinSet: aborting it
            // aborts them.
            f.abort();
        }
        self.stop_tasks();
    }
}

impl Drop for ClusterNode {
    fn drop(&mut self) {
        self.kill();
    }
}

impl NodeInner {
    /// Kinds whose parameters are in memory here (VRAM or decoded in host
    /// RAM): the parameter manager owns that fact; asked at each claim.
    fn resident_kinds(&self) -> Vec<String> {
        let (params, _) = self.engine.params().status();
        let ids: std::collections::HashSet<String> = params
            .into_iter()
            .filter(|p| matches!(p.tier, "vram" | "pinned"))
            .map(|p| p.id)
            .collect();
        let reg = self.engine.registry();
        reg.names()
            .into_iter()
            .filter(|n| reg.get(n).is_ok_and(|k| ids.contains(k.params_id())))
            .collect()
    }

    /// The job's input, decoded: from the cache, or fetched (its bytes
    /// from the database, or read from the path a `Reference` names) and
    /// decoded by the kind once for all the partitions of the job claimed
    /// here, however many are claimed at once.
    /// Free VRAM over this daemon's devices now, as the heartbeat reports
    /// it and a claim weighs it (0 on the CPU backend).
    fn free_vram(&self) -> u64 {
        self.engine
            .status()
            .devices
            .iter()
            .map(|d| d.vram_free_bytes)
            .sum()
    }

    async fn input(&self, lease: &Lease) -> Result<Decoded, InputError> {
        let cell = {
            let mut cache = lock(&self.inputs);
            match cache.iter().find(|(j, _)| *j == lease.job_id) {
                Some((_, c)) => c.clone(),
                None => {
                    if cache.len() >= INPUT_CACHE {
                        // A task still using it keeps its own handle.
                        cache.remove(0);
                    }
                    let c = InputCell::default();
                    cache.push((lease.job_id, c.clone()));
                    c
                }
            }
        };
        cell.get_or_try_init(|| self.fetch_input(lease.job_id, &lease.kind))
            .await
            .cloned()
    }

    async fn fetch_input(&self, job: JobId, kind: &str) -> Result<Decoded, InputError> {
        let failed = |e: String| InputError::Failed(e, FailMode::Retry);
        // A partition in hand waits out an unanswering database for its
        // input rather than failing (which would count against it).
        let what = format!("job {job}'s input");
        let bytes = match until_answered(self, &what, false, || self.work.job_input(job)).await {
            Ok(JobInput::Inline(b)) => b,
            Ok(JobInput::Reference(path)) => tokio::fs::read(&path)
                .await
                .map_err(|e| failed(format!("reading the job's input {path}: {e}")))?,
            Err(ClusterError::InputDropped(_)) => return Err(InputError::Ended),
            Err(e) => return Err(failed(e.to_string())),
        };
        self.counts.inputs_fetched.fetch_add(1, Ordering::Relaxed);
        let kind = self
            .engine
            .registry()
            .get(kind)
            .map_err(|e| failed(e.to_string()))?;
        // Decoding tens of MB is CPU work: off the async threads. The
        // bytes go with the closure, dropped once decoded.
        let decoded = tokio::task::spawn_blocking(move || kind.decode_input(&bytes))
            .await
            .map_err(|e| failed(format!("decoding the input: {e}")))?;
        match decoded {
            Ok((input, partitions)) => Ok(Decoded { input, partitions }),
            // Bad rows are refused, not proved: the input cannot succeed
            // anywhere.
            Err(e @ KindError::MalformedInput { .. }) => Err(InputError::Failed(
                EngineError::from(e).to_string(),
                FailMode::Permanent,
            )),
            Err(e) => Err(failed(EngineError::from(e).to_string())),
        }
    }
}

async fn feeder(node: Arc<NodeInner>) {
    let kinds = node.engine.registry().names();
    let mut work: JoinSet<()> = JoinSet::new();
    let mut idle = node.poll;
    // Whether the database failed us since the last claim that it
    // answered, and until when not to reap after it came back.
    let mut lost = false;
    let mut reap_after = Instant::now();
    while !node.stopping.load(Ordering::SeqCst) {
        while work.try_join_next().is_some() {}
        if node.reports_waiting.load(Ordering::SeqCst) > 0 {
            // Results held for an unanswering database: take nothing new
            // (a partition claimed now could not be reported either).
            let _ = tokio::time::timeout(node.poll, work.join_next()).await;
            continue;
        }
        lost |= node.work.unreachable().is_some();
        // Wait for room for at least one partition, then take what else
        // is free.
        let first = tokio::select! {
            p = node.slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = work.join_next(), if !work.is_empty() => continue,
        };
        let mut permits: Vec<OwnedSemaphorePermit> = vec![first];
        while let Ok(p) = node.slots.clone().try_acquire_owned() {
            permits.push(p);
        }
        let req = ClaimRequest {
            kinds: kinds.clone(),
            resident: node.resident_kinds(),
            max: permits.len() as u32,
            free_vram_bytes: node.free_vram(),
        };
        let claimed = if lost || Instant::now() < reap_after {
            node.work.claim_pending(&req).await
        } else {
            // Expired leases go back to the queue (counting a failure)
            // before the claim.
            match node.work.reap_expired(1000).await {
                Ok(_) => node.work.claim_pending(&req).await,
                Err(e) => Err(e),
            }
        };
        let leases = match claimed {
            Ok(l) => {
                if std::mem::take(&mut lost) {
                    // Back from an outage: the other nodes' renewals were
                    // stalled as ours were; give them a lease's time before
                    // reaping what expired meanwhile.
                    reap_after = Instant::now() + node.lease_ttl;
                    tracing::info!(
                        database = node.work.target(),
                        "cluster: the database answers again; claiming"
                    );
                }
                l
            }
            Err(e) => {
                lost |= matches!(e, ClusterError::Unavailable { .. });
                node.counts.claim_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, "cluster: claiming partitions failed; trying again");
                Vec::new()
            }
        };
        if leases.is_empty() {
            drop(permits);
            let wake = node.wake.notified();
            tokio::pin!(wake);
            wake.as_mut().enable();
            if node.stopping.load(Ordering::SeqCst) {
                break;
            }
            let _ = tokio::time::timeout(idle, wake).await;
            // Empty polls back off to 4x the interval (DESIGN.md: idle
            // nodes' polls are most of the database's statements).
            idle = (idle * 2).min(node.poll * 4);
            continue;
        }
        idle = node.poll;
        node.counts
            .claimed
            .fetch_add(leases.len() as u64, Ordering::Relaxed);
        for lease in leases {
            let Some(permit) = permits.pop() else {
                // More leases than asked for cannot happen; give it back.
                let _ = node.work.release(&lease.key()).await;
                continue;
            };
            if node.stopping.load(Ordering::SeqCst) {
                let _ = node.work.release(&lease.key()).await;
                continue;
            }
            // Counted before the task starts, uncounted when it ends or is
            // aborted (the guard's drop).
            node.leased.fetch_add(1, Ordering::SeqCst);
            let guard = InHand {
                node: node.clone(),
                _slot: permit,
            };
            work.spawn(prove_partition(node.clone(), lease, guard));
        }
    }
    // Claimed partitions are finished (or released when the engine
    // cancels them) before the feeder ends.
    while work.join_next().await.is_some() {}
}

enum Outcome {
    Proved(PartitionResult),
    Failed(String, FailMode),
    /// The queue said stop (cancelled, job failed, lease lost).
    Stopped(StopReason),
    /// Not worked on here after all (the engine is shutting down): back to
    /// the queue without counting a failure.
    Release,
}

/// A lease in hand: its slot and its count, given back on drop.
struct InHand {
    node: Arc<NodeInner>,
    _slot: OwnedSemaphorePermit,
}

impl Drop for InHand {
    fn drop(&mut self) {
        self.node.leased.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn prove_partition(node: Arc<NodeInner>, lease: Lease, _in_hand: InHand) {
    let mut held = node.keeper.hold(&lease);
    let key = lease.key();
    let outcome = work_on(&node, &lease, &mut held).await;
    let what = format!("job {} partition {}", lease.job_id, lease.partition);
    // Whether the job is known here to have ended: its decoded input is
    // then dropped from the cache now, not when four newer jobs push it out.
    let mut ended = false;
    match outcome {
        Outcome::Proved(r) => match report(&node, &what, || node.work.complete(&key, &r)).await {
            Ok(Completion::Accepted { job_completed }) => {
                ended = job_completed;
                node.proved.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(%what, job_completed, "cluster: partition stored");
            }
            Ok(Completion::Refused(reason)) => {
                ended = job_ended(&reason);
                node.counts.refused.fetch_add(1, Ordering::Relaxed);
                tracing::info!(%what, ?reason, "cluster: result refused (the lease is no longer ours)")
            }
            Err(e) => {
                tracing::warn!(%what, error = %e, "cluster: storing the result failed; the lease will expire and the partition run again")
            }
        },
        Outcome::Failed(reason, mode) => {
            node.counts.failures.fetch_add(1, Ordering::Relaxed);
            match report(&node, &what, || node.work.fail(&key, &reason, mode)).await {
                Ok(FailOutcome::JobFailed) => {
                    ended = true;
                    tracing::warn!(%what, %reason, "cluster: job failed")
                }
                Ok(o) => tracing::info!(%what, %reason, outcome = ?o, "cluster: partition failed"),
                Err(e) => tracing::warn!(%what, error = %e, "cluster: reporting a failure failed"),
            }
        }
        Outcome::Stopped(reason) => {
            ended = job_ended(&reason);
            node.counts.stopped.fetch_add(1, Ordering::Relaxed);
            tracing::info!(%what, ?reason, "cluster: stopped working on a partition")
        }
        Outcome::Release => {
            node.counts.released.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = node.work.release(&key).await {
                tracing::warn!(%what, error = %e, "cluster: releasing a lease failed");
            }
        }
    }
    drop(held);
    if ended {
        lock(&node.inputs).retain(|(j, _)| *j != lease.job_id);
    }
}

/// Whether a reason to stop means the job itself has ended (not only that
/// this node lost the partition).
fn job_ended(reason: &StopReason) -> bool {
    matches!(
        reason,
        StopReason::Cancelled | StopReason::JobFailed | StopReason::JobGone
    )
}

/// Run a report (a result, a failure) until the database answers it: an
/// unavailable or contended database is waited out with backoff while the
/// lease is kept (renewals go on; a lease that expired meanwhile but that
/// nobody reaped is still ours, and the queue's fencing refuses the report
/// if it was taken). Counted in `reports_waiting` while it waits.
async fn report<T, F, Fut>(node: &NodeInner, what: &str, op: F) -> Result<T, ClusterError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, ClusterError>>,
{
    until_answered(node, what, true, op).await
}

/// Run `op` until the database answers it (any answer but unavailable or
/// contended), with backoff; `counted`: in `reports_waiting` meanwhile.
async fn until_answered<T, F, Fut>(
    node: &NodeInner,
    what: &str,
    counted: bool,
    op: F,
) -> Result<T, ClusterError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, ClusterError>>,
{
    struct Waiting<'a>(&'a AtomicUsize);
    impl Drop for Waiting<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let mut waiting = None;
    let mut backoff = node.poll;
    loop {
        match op().await {
            Err(e @ (ClusterError::Unavailable { .. } | ClusterError::Contended { .. })) => {
                if waiting.is_none() {
                    waiting = Some(counted.then(|| {
                        node.reports_waiting.fetch_add(1, Ordering::SeqCst);
                        Waiting(&node.reports_waiting)
                    }));
                    tracing::warn!(%what, error = %e, "cluster: the database did not answer; holding on and trying again");
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(REPORT_BACKOFF_MAX);
            }
            other => {
                if waiting.is_some() {
                    tracing::info!(%what, "cluster: the database answered after all");
                }
                return other;
            }
        }
    }
}

async fn work_on(node: &NodeInner, lease: &Lease, held: &mut cuzk_cluster::HeldLease) -> Outcome {
    let input = match node.input(lease).await {
        Ok(d) => d,
        Err(InputError::Failed(e, mode)) => return Outcome::Failed(e, mode),
        // Not ours any more: the next renewal says why.
        Err(InputError::Ended) => return Outcome::Stopped(held.stopped().await),
    };
    // The row and its input must agree on the partitions: a row that says
    // otherwise is refused, not proved.
    if input.partitions != lease.partitions as usize {
        return Outcome::Failed(
            format!(
                "the job's row says {} partitions, its input has {}",
                lease.partitions, input.partitions
            ),
            FailMode::Permanent,
        );
    }
    let req = crate::engine::SubmitRequest {
        request_id: None,
        kind: lease.kind.clone(),
        // Decoded already (below); the engine needs the bytes only to
        // name a job with a request id, and this one has none.
        input: Vec::new(),
        priority: lease.priority,
        client: format!("cluster:{}", node.work.node_id()),
    };
    let local = match node.engine.submit_partitions(
        req,
        Some((input.input, input.partitions)),
        &[lease.partition as usize],
    ) {
        Ok(s) => s.job_id,
        Err(EngineError::ShuttingDown) => return Outcome::Release,
        // Bad rows are refused, not proved: the input cannot succeed
        // anywhere.
        Err(e @ EngineError::Kind(KindError::MalformedInput { .. })) => {
            return Outcome::Failed(e.to_string(), FailMode::Permanent)
        }
        Err(e) => return Outcome::Failed(e.to_string(), FailMode::Retry),
    };
    tokio::select! {
        v = node.engine.await_job(local, None) => match v {
            Ok(v) if v.state == JobState::Completed => Outcome::Proved(PartitionResult {
                proof: v.proof,
                public_inputs: v.public_inputs,
                synthesis: v.timings.synthesis,
                prove: v.timings.gpu,
            }),
            // Only the engine's shutdown cancels a cluster partition's
            // local job (the queue's cancellations arrive below).
            Ok(v) if v.state == JobState::Cancelled => Outcome::Release,
            Ok(v) => Outcome::Failed(
                v.error
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "failed without a reason".into()),
                FailMode::Retry,
            ),
            Err(e) => Outcome::Failed(e.to_string(), FailMode::Retry),
        },
        reason = held.stopped() => {
            let _ = node.engine.cancel(local);
            Outcome::Stopped(reason)
        }
    }
}

async fn heartbeat(node: Arc<NodeInner>) {
    let mut tick = tokio::time::interval(node.heartbeat);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let st = node.engine.status();
        let report = NodeReport {
            kinds_supported: st.kinds.clone(),
            kinds_resident: node.resident_kinds(),
            free_vram_bytes: node.free_vram(),
            queue_len: node.leased.load(Ordering::SeqCst) as u32,
            capacity: u32::try_from(node.max_claimed).unwrap_or(u32::MAX),
            partitions_proved: node.proved.load(Ordering::Relaxed),
            address: node.address.clone(),
            heartbeat_interval: node.heartbeat,
        };
        if let Err(e) = node.front.heartbeat(&report).await {
            tracing::warn!(error = %e, "cluster: heartbeat failed");
        }
    }
}

/// Delete what is older than `retain_finished_s`: finished jobs (in
/// batches, until a batch comes back short) and silent nodes.
async fn retention(node: Arc<NodeInner>) {
    let every = (node.retain / 4).clamp(Duration::from_secs(1), Duration::from_secs(600));
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let mut jobs = 0;
        loop {
            match node.admin.purge_finished(node.retain, PURGE_BATCH).await {
                Ok(n) => {
                    jobs += n;
                    if n < PURGE_BATCH as u64 {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cluster: retention sweep failed; trying again later");
                    break;
                }
            }
        }
        let nodes = match node.admin.forget_nodes(node.retain).await {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "cluster: forgetting silent nodes failed");
                0
            }
        };
        if jobs > 0 || nodes > 0 {
            tracing::info!(
                jobs,
                nodes,
                retain_s = node.retain.as_secs(),
                "cluster: retention sweep"
            );
        }
    }
}

/// gRPC status of a cluster-mode error.
pub fn cluster_status(e: ClusterModeError) -> Status {
    match e {
        ClusterModeError::Engine(e) => status_of(e),
        ClusterModeError::Cluster(e) => {
            let msg = e.to_string();
            match e {
                ClusterError::RequestIdConflict(_) => Status::already_exists(msg),
                ClusterError::RequestIdTooLong(_) | ClusterError::InvalidJob(_) => {
                    Status::invalid_argument(msg)
                }
                ClusterError::UnknownJob(_) => Status::not_found(msg),
                ClusterError::Unavailable { .. } | ClusterError::Contended { .. } => {
                    Status::unavailable(msg)
                }
                _ => Status::internal(msg),
            }
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The stored job as `AwaitProof` reports it.
pub fn record_to_proto(j: JobRecord) -> proto::AwaitProofResponse {
    let state = j.state;
    let done = state == JobState::Completed;
    let error = match (state, j.error) {
        (_, Some(e)) => e,
        (JobState::Cancelled, None) => "cancelled by request".into(),
        _ => String::new(),
    };
    proto::AwaitProofResponse {
        job_id: j.id as u64,
        state: crate::service::state_to_proto(state) as i32,
        proof: if done {
            j.proof.unwrap_or_default()
        } else {
            Vec::new()
        },
        public_inputs: if done {
            j.public_inputs.unwrap_or_default()
        } else {
            Vec::new()
        },
        error,
        timings: Some(proto::Timings {
            queue_wait_ms: j.timings.queue_wait.map(ms).unwrap_or(0.0),
            param_load_ms: 0.0,
            synthesis_ms: ms(j.timings.synthesis),
            gpu_ms: ms(j.timings.prove),
            total_ms: j.timings.total.map(ms).unwrap_or(0.0),
        }),
        kind: j.kind,
        // Partitions are proved one per backend call in cluster mode.
        batch_size: 1,
        // Completion order is a single daemon's notion.
        completion_seq: 0,
    }
}

fn job_id(id: u64) -> Result<JobId, Status> {
    JobId::try_from(id).map_err(|_| Status::not_found(format!("no job {id}")))
}

/// `cuzk.daemon.v1.ProofService` in cluster mode: jobs go to and come
/// from the shared queue; status, metrics, trace and parameter calls are
/// this daemon's own ([`ProofServiceImpl`]'s).
#[derive(Clone)]
pub struct ClusterProofService {
    local: ProofServiceImpl,
    node: Arc<ClusterNode>,
}

impl ClusterProofService {
    pub fn new(engine: Engine, node: Arc<ClusterNode>) -> Self {
        Self {
            local: ProofServiceImpl::new(engine),
            node,
        }
    }

    pub fn into_server(
        self,
        max_message_bytes: usize,
    ) -> proto::proof_service_server::ProofServiceServer<Self> {
        proto::proof_service_server::ProofServiceServer::new(self)
            .max_decoding_message_size(max_message_bytes)
            .max_encoding_message_size(max_message_bytes)
    }
}

use proto::proof_service_server::ProofService;

#[tonic::async_trait]
impl ProofService for ClusterProofService {
    async fn submit_proof(
        &self,
        req: Request<proto::SubmitProofRequest>,
    ) -> Result<Response<proto::SubmitProofResponse>, Status> {
        let s = self
            .node
            .submit(self.local.submit_req(req)?)
            .await
            .map_err(cluster_status)?;
        Ok(Response::new(proto::SubmitProofResponse {
            job_id: s.job_id as u64,
            deduplicated: s.deduplicated,
        }))
    }

    async fn await_proof(
        &self,
        req: Request<proto::AwaitProofRequest>,
    ) -> Result<Response<proto::AwaitProofResponse>, Status> {
        let r = req.into_inner();
        let timeout = (r.timeout_ms > 0).then(|| Duration::from_millis(r.timeout_ms));
        let j = self
            .node
            .await_job(job_id(r.job_id)?, timeout)
            .await
            .map_err(|e| cluster_status(e.into()))?;
        Ok(Response::new(record_to_proto(j)))
    }

    async fn prove(
        &self,
        req: Request<proto::SubmitProofRequest>,
    ) -> Result<Response<proto::AwaitProofResponse>, Status> {
        let s = self
            .node
            .submit(self.local.submit_req(req)?)
            .await
            .map_err(cluster_status)?;
        let j = self
            .node
            .await_job(s.job_id, None)
            .await
            .map_err(|e| cluster_status(e.into()))?;
        Ok(Response::new(record_to_proto(j)))
    }

    async fn cancel_proof(
        &self,
        req: Request<proto::CancelProofRequest>,
    ) -> Result<Response<proto::CancelProofResponse>, Status> {
        let (state, cancelled) = self
            .node
            .cancel(job_id(req.into_inner().job_id)?)
            .await
            .map_err(|e| cluster_status(e.into()))?;
        Ok(Response::new(proto::CancelProofResponse {
            state: crate::service::state_to_proto(state) as i32,
            cancelled,
        }))
    }

    async fn get_status(
        &self,
        req: Request<proto::GetStatusRequest>,
    ) -> Result<Response<proto::GetStatusResponse>, Status> {
        let mut r = self.local.get_status(req).await?;
        r.get_mut().cluster = Some(self.node.status(false).await);
        Ok(r)
    }

    async fn get_cluster_status(
        &self,
        _req: Request<proto::GetClusterStatusRequest>,
    ) -> Result<Response<proto::ClusterStatus>, Status> {
        Ok(Response::new(self.node.status(true).await))
    }

    async fn get_metrics(
        &self,
        req: Request<proto::GetMetricsRequest>,
    ) -> Result<Response<proto::GetMetricsResponse>, Status> {
        let mut r = self.local.get_metrics(req).await?;
        r.get_mut()
            .text
            .push_str(&crate::metrics::render_cluster(&self.node.metrics()));
        Ok(r)
    }

    async fn preload_params(
        &self,
        req: Request<proto::PreloadParamsRequest>,
    ) -> Result<Response<proto::PreloadParamsResponse>, Status> {
        self.local.preload_params(req).await
    }

    async fn evict_params(
        &self,
        req: Request<proto::EvictParamsRequest>,
    ) -> Result<Response<proto::EvictParamsResponse>, Status> {
        self.local.evict_params(req).await
    }

    async fn get_trace(
        &self,
        req: Request<proto::GetTraceRequest>,
    ) -> Result<Response<proto::GetTraceResponse>, Status> {
        self.local.get_trace(req).await
    }
}
