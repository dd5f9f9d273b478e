//! The job queue: jobs and their partitions as rows, claims as leases.
//!
//! A job is submitted once (its request id is unique) with one row per
//! partition. A node claims pending partitions with `FOR UPDATE SKIP
//! LOCKED` (so claimers never wait for each other) in priority order, then
//! residency of the kind on the claiming node, then age. A claim is a lease
//! (node, expiry by the database's clock) renewed while the node works; a
//! lease left to expire is reaped: the partition counts a failure and goes
//! back to pending, or fails its job after `max_failures`. Each claim bumps
//! the partition's claim number, the lease's fencing token: a result or a
//! failure is accepted only from the node holding the lease under the
//! current number, so a node whose lease was reaped and taken cannot put
//! its late result into the job. The last partition's result assembles the
//! job's proof. Cancelling a job cancels its partitions; the holder sees it
//! when it renews or reports.
//!
//! Lock order, everywhere: partition rows, then the job row. Cancel and
//! job failure touch several partitions of a job and can deadlock with a
//! completion in a rare race; PostgreSQL breaks it and `db_op!` runs the
//! loser again.

use crate::client::{db_op, ClusterClient};
use crate::error::{bad_row, ClusterError, OpError};
use std::time::Duration;
use tokio_postgres::{GenericClient, Row};

pub type JobId = i64;

/// A job's class, lowest first: the daemon's scheduler and the queue's
/// rows use these (its `i16` in the database), serialized by
/// [`Priority::name`]'s names, the one set every output uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Low = 0,
    Normal = 1,
    High = 2,
    Critical = 3,
}

impl Priority {
    /// Every class, highest first.
    pub const ALL: [Priority; 4] = [
        Priority::Critical,
        Priority::High,
        Priority::Normal,
        Priority::Low,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }
    pub fn as_i16(self) -> i16 {
        self as i16
    }
    pub fn from_i16(v: i16) -> Option<Self> {
        Some(match v {
            0 => Priority::Low,
            1 => Priority::Normal,
            2 => Priority::High,
            3 => Priority::Critical,
            _ => return None,
        })
    }
}

/// Where a job is: in the daemon's engine and in the queue's rows (by
/// [`JobState::as_str`]'s names, which serde uses too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Completed => "completed",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "completed" => JobState::Completed,
            "failed" => JobState::Failed,
            "cancelled" => JobState::Cancelled,
            _ => return None,
        })
    }
    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Completed | JobState::Failed | JobState::Cancelled
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartitionState {
    Pending,
    Leased,
    Done,
    Failed,
    Cancelled,
}

impl PartitionState {
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionState::Pending => "pending",
            PartitionState::Leased => "leased",
            PartitionState::Done => "done",
            PartitionState::Failed => "failed",
            PartitionState::Cancelled => "cancelled",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => PartitionState::Pending,
            "leased" => PartitionState::Leased,
            "done" => PartitionState::Done,
            "failed" => PartitionState::Failed,
            "cancelled" => PartitionState::Cancelled,
            _ => return None,
        })
    }
}

/// What a job proves from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobInput {
    /// The request's bytes, stored in the database.
    Inline(Vec<u8>),
    /// A name every node can resolve (a path on shared storage), for inputs
    /// too large to copy through the database.
    Reference(String),
}

#[derive(Clone, Debug)]
pub struct NewJob {
    /// Empty or absent: one is generated, so that a submit retried after a
    /// lost connection still adds one job.
    pub request_id: Option<String>,
    pub kind: String,
    pub priority: Priority,
    pub client: String,
    pub input: JobInput,
    /// The daemon's kind decodes the input and says how many; the cluster
    /// does not interpret inputs.
    pub partitions: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    pub job_id: JobId,
    pub request_id: String,
    /// The request id was already known: this is the earlier job.
    pub deduplicated: bool,
}

/// What a node asks for when it has room.
#[derive(Clone, Debug)]
pub struct ClaimRequest {
    /// Kinds this node can prove; others are never claimed.
    pub kinds: Vec<String>,
    /// Kinds whose parameters it holds resident now: preferred within a
    /// priority class.
    pub resident: Vec<String>,
    /// Partitions to claim at most (a batch).
    pub max: u32,
    /// This node's free VRAM now (its heartbeat's figure): a partition of
    /// a kind not resident here, which no alive holder with room takes, is
    /// left for its first `placement_grace` to another alive node with
    /// room that proves the kind and has more free VRAM, so parameters are
    /// loaded where they fit best. 0 everywhere (CPU nodes): no effect.
    pub free_vram_bytes: u64,
}

/// One claimed partition. `claim` is the fencing token: every report about
/// this partition names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub job_id: JobId,
    pub partition: u32,
    pub claim: i32,
    pub kind: String,
    pub priority: Priority,
    /// The job's partition count.
    pub partitions: u32,
    /// Failures of this partition before this claim.
    pub failures: u32,
    pub max_failures: u32,
    pub lease_ttl: Duration,
}

impl Lease {
    pub fn key(&self) -> LeaseKey {
        LeaseKey {
            job_id: self.job_id,
            partition: self.partition,
            claim: self.claim,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeaseKey {
    pub job_id: JobId,
    pub partition: u32,
    pub claim: i32,
}

/// Why a node must stop working on a partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The job was cancelled.
    Cancelled,
    /// The job failed (another partition ran out of retries).
    JobFailed,
    /// The lease expired and was reaped; `held_by` has it now, if anyone.
    Lost { held_by: Option<String> },
    /// The partition was already proved (under another claim).
    AlreadyDone,
    /// The job is no longer in the database (purged).
    JobGone,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaseStatus {
    Held,
    Stop(StopReason),
}

/// One partition's proof, as the node reports it.
#[derive(Clone, Debug)]
pub struct PartitionResult {
    pub proof: Vec<u8>,
    pub public_inputs: Vec<u8>,
    pub synthesis: Duration,
    pub prove: Duration,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completion {
    /// Recorded; `job_completed` when it was the job's last partition.
    Accepted { job_completed: bool },
    /// Not recorded: the lease is no longer this node's.
    Refused(StopReason),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailMode {
    /// Counts against `max_failures`; the partition is run again if any
    /// are left.
    Retry,
    /// The job cannot succeed (its input is invalid): fail it now.
    Permanent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailOutcome {
    Requeued { failures: u32, max_failures: u32 },
    JobFailed,
    Refused(StopReason),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureRecord {
    pub partition: u32,
    pub claim: i32,
    pub node: String,
    /// True when the lease expired; false when the node reported an error.
    pub lease_expired: bool,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobTimings {
    /// Submit to first claim.
    pub queue_wait: Option<Duration>,
    /// Summed over the partitions' accepted results.
    pub synthesis: Duration,
    pub prove: Duration,
    /// Submit to the final state.
    pub total: Option<Duration>,
}

#[derive(Clone, Debug)]
pub struct JobRecord {
    pub id: JobId,
    pub request_id: String,
    pub kind: String,
    pub priority: Priority,
    pub client: String,
    pub state: JobState,
    pub partitions: u32,
    pub done_partitions: u32,
    /// The partitions' proofs in order, once completed.
    pub proof: Option<Vec<u8>>,
    pub public_inputs: Option<Vec<u8>>,
    pub error: Option<String>,
    pub failures: Vec<FailureRecord>,
    pub timings: JobTimings,
}

/// One partition's row, for status and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRecord {
    pub partition: u32,
    pub state: PartitionState,
    /// The holder while leased; who proved it once done.
    pub node: Option<String>,
    /// Claims so far (the current lease's fencing token).
    pub claims: i32,
    pub failures: u32,
}

/// Jobs and partitions by state, for status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueOverview {
    /// States with at least one job, in name order.
    pub jobs: Vec<(JobState, u64)>,
    pub partitions: Vec<(PartitionState, u64)>,
    /// How long the oldest pending partition has waited (None: none
    /// pending).
    pub oldest_pending: Option<Duration>,
}

/// Pending partitions of one kind and class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueDepth {
    pub kind: String,
    pub priority: Priority,
    pub pending: u64,
    pub leased: u64,
}

/// Residency is weighed among the first this-many pending partitions in
/// priority-then-age order, not the whole backlog: sorting the whole top
/// class by residency cost 61 ms per claim with 100,000 pending partitions
/// (25,000 in the top class) on the test server, the window 3 ms, the same
/// at any backlog (DESIGN.md). 512 is about 50 ten-partition jobs, more
/// than the claims of 64 nodes racing for batches of 4.
const PLACEMENT_WINDOW: i64 = 512;

/// SQL: what a job's row keeps of its inline input once the job has ended:
/// its digest (a repeated request id compares it), not the bytes (tens of
/// MB for a 32 GiB PoRep's C1 output, most of the database if kept for
/// the retention period). A row submitted by a schema-2 daemon gets its
/// digest here.
macro_rules! drop_input {
    () => {
        "input_digest = coalesce(input_digest, sha256(input)), input = NULL"
    };
}

const MAX_REQUEST_ID: usize = 128;
const MAX_KIND: usize = 128;

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

fn from_micros(us: Option<i64>) -> Duration {
    Duration::from_micros(us.unwrap_or(0).max(0) as u64)
}

fn from_secs(s: Option<f64>) -> Option<Duration> {
    s.filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

fn new_request_id() -> String {
    format!("auto-{:032x}", rand::random::<u128>())
}

impl ClusterClient {
    /// Add a job, or find the one its request id already names. The
    /// daemon's rule, across the cluster: a request id names its latest
    /// attempt; an unfinished one is joined (same kind and input) or
    /// refused ([`ClusterError::RequestIdConflict`]); a completed one is
    /// returned (same input) or replaced (different input); a failed or
    /// cancelled one is replaced by a new attempt.
    pub async fn submit(&self, job: &NewJob) -> Result<Submitted, ClusterError> {
        let request_id = match job.request_id.as_deref().filter(|r| !r.is_empty()) {
            Some(r) if r.len() > MAX_REQUEST_ID => {
                return Err(ClusterError::RequestIdTooLong(r.len()))
            }
            Some(r) => r.to_owned(),
            None => new_request_id(),
        };
        if job.kind.is_empty() || job.kind.len() > MAX_KIND {
            return Err(ClusterError::InvalidJob("kind must be 1 to 128 bytes"));
        }
        if job.partitions == 0 || job.partitions > 100_000 {
            return Err(ClusterError::InvalidJob("partitions must be 1 to 100000"));
        }
        let partitions = job.partitions as i32;
        let (input, input_ref): (Option<&[u8]>, Option<&str>) = match &job.input {
            JobInput::Inline(b) => (Some(b), None),
            JobInput::Reference(r) => (None, Some(r)),
        };
        // A repeated request id is compared by digest: the input (tens of
        // MB for a PoRep C1 output) crosses to the database once, with the
        // insert, not again with the look-up.
        let digest: Option<Vec<u8>> = input.map(|b| {
            use sha2::Digest;
            sha2::Sha256::digest(b).to_vec()
        });
        let priority = job.priority.as_i16();
        let max_failures = self.config().max_failures as i32;
        db_op!(self, "submit", |c| {
            // A concurrent first submit of the same request id can win the
            // insert into cuzk_requests; the loser starts over and finds it.
            // (Under snapshot isolation a fresh transaction is needed to
            // see it, hence the loop rather than a second look-up.)
            let mut tries = 0u32;
            loop {
                tries += 1;
                let tx = c.transaction().await?;
                let latest = tx
                    .query_opt(
                        // Rows of schema version 2 have no digest: theirs
                        // is computed here.
                        "SELECT j.id, j.state, (j.kind = $2 AND j.partitions = $3 \
                           AND coalesce(j.input_digest, sha256(j.input)) \
                             IS NOT DISTINCT FROM $4::bytea \
                           AND j.input_ref IS NOT DISTINCT FROM $5) \
                         FROM cuzk_requests r JOIN cuzk_jobs j ON j.id = r.job_id \
                         WHERE r.request_id = $1 FOR UPDATE OF r",
                        &[&request_id, &job.kind, &partitions, &digest, &input_ref],
                    )
                    .await?;
                let replaces = match &latest {
                    Some(row) => {
                        let id: i64 = row.get(0);
                        let st: &str = row.get(1);
                        let state = JobState::parse(st)
                            .ok_or_else(|| bad_row("cuzk_jobs", id, format!("state {st:?}")))?;
                        let same: bool = row.get(2);
                        match (state, same) {
                            (JobState::Queued | JobState::Running | JobState::Completed, true) => {
                                tx.rollback().await?;
                                return Ok::<_, OpError>(Submitted {
                                    job_id: id,
                                    request_id: request_id.clone(),
                                    deduplicated: true,
                                });
                            }
                            (JobState::Queued | JobState::Running, false) => {
                                tx.rollback().await?;
                                return Err(
                                    ClusterError::RequestIdConflict(request_id.clone()).into()
                                );
                            }
                            // Failed, cancelled, or completed for another
                            // input: a new attempt.
                            _ => true,
                        }
                    }
                    None => false,
                };
                let id: i64 = tx
                    .query_one(
                        "INSERT INTO cuzk_jobs (request_id, kind, priority, client, input, \
                           input_ref, partitions, max_failures, state, input_digest) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'queued', $9) RETURNING id",
                        &[
                            &request_id,
                            &job.kind,
                            &priority,
                            &job.client,
                            &input,
                            &input_ref,
                            &partitions,
                            &max_failures,
                            &digest,
                        ],
                    )
                    .await?
                    .get(0);
                tx.execute(
                    "INSERT INTO cuzk_partitions (job_id, idx, kind, priority, created_at, state) \
                     SELECT j.id, g, j.kind, j.priority, j.created_at, 'pending' \
                     FROM cuzk_jobs j, generate_series(0, j.partitions - 1) AS g WHERE j.id = $1",
                    &[&id],
                )
                .await?;
                let named = if replaces {
                    tx.execute(
                        "UPDATE cuzk_requests SET job_id = $2 WHERE request_id = $1",
                        &[&request_id, &id],
                    )
                    .await?
                } else {
                    tx.execute(
                        "INSERT INTO cuzk_requests (request_id, job_id) VALUES ($1, $2) \
                         ON CONFLICT (request_id) DO NOTHING",
                        &[&request_id, &id],
                    )
                    .await?
                };
                if named == 1 {
                    tx.commit().await?;
                    return Ok(Submitted {
                        job_id: id,
                        request_id: request_id.clone(),
                        deduplicated: false,
                    });
                }
                tx.rollback().await?;
                if tries >= 5 {
                    return Err(OpError::Domain(ClusterError::Contended {
                        op: "submit",
                        tries,
                    }));
                }
            }
        })
    }

    /// The latest attempt of a request id, while it is retained.
    pub async fn job_of_request(&self, request_id: &str) -> Result<Option<JobId>, ClusterError> {
        db_op!(self, "job of request", |c| {
            Ok::<_, OpError>(
                c.query_opt(
                    "SELECT job_id FROM cuzk_requests WHERE request_id = $1",
                    &[&request_id],
                )
                .await?
                .map(|r| r.get(0)),
            )
        })
    }

    /// The job's input (fetched once per node, not with every claim).
    /// An ended job's inline input is gone ([`ClusterError::InputDropped`]).
    pub async fn job_input(&self, job_id: JobId) -> Result<JobInput, ClusterError> {
        db_op!(self, "job input", |c| {
            let row = c
                .query_opt(
                    "SELECT input, input_ref FROM cuzk_jobs WHERE id = $1",
                    &[&job_id],
                )
                .await?
                .ok_or(ClusterError::UnknownJob(job_id))?;
            let input: Option<Vec<u8>> = row.get(0);
            let input_ref: Option<String> = row.get(1);
            match (input, input_ref) {
                (Some(b), None) => Ok::<_, OpError>(JobInput::Inline(b)),
                (None, Some(r)) => Ok(JobInput::Reference(r)),
                // Dropped when the job ended.
                (None, None) => Err(ClusterError::InputDropped(job_id).into()),
                _ => Err(bad_row(
                    "cuzk_jobs",
                    job_id,
                    "not exactly one of input, input_ref",
                )),
            }
        })
    }

    /// Reap expired leases, then claim up to `req.max` pending partitions:
    /// highest priority first, then kinds resident here (unless a partition
    /// has waited `placement_max_wait`), then oldest. A partition of a kind
    /// not resident here but resident on another node that is alive and
    /// has room (fewer leases than its heartbeat's capacity) is left to
    /// that node for its first `placement_grace`; failing such a holder,
    /// to another alive node with room that proves the kind and has more
    /// free VRAM than this one (`ClaimRequest::free_vram_bytes`). Residency reorders
    /// only within the oldest `PLACEMENT_WINDOW` pending partitions (of
    /// the kinds asked for), which keeps a claim's cost flat in the backlog.
    pub async fn claim(&self, req: &ClaimRequest) -> Result<Vec<Lease>, ClusterError> {
        if req.max == 0 || req.kinds.is_empty() {
            return Ok(Vec::new());
        }
        self.reap_expired(1000).await?;
        self.claim_pending(req).await
    }

    /// [`ClusterClient::claim`] without reaping first: for a node that must
    /// not reap yet (just back from a database outage, while the other
    /// nodes' renewals, stalled by the same outage, catch up).
    pub async fn claim_pending(&self, req: &ClaimRequest) -> Result<Vec<Lease>, ClusterError> {
        if req.max == 0 || req.kinds.is_empty() {
            return Ok(Vec::new());
        }
        let node = self.node_id().to_owned();
        let ttl = secs(self.config().lease_ttl);
        let wait = secs(self.config().placement_max_wait);
        let grace = secs(self.config().placement_grace);
        let missed = f64::from(crate::nodes::MISSED_HEARTBEATS);
        let max = i64::from(req.max);
        let window = (4 * max).max(PLACEMENT_WINDOW);
        let free_vram = i64::try_from(req.free_vram_bytes).unwrap_or(i64::MAX);
        let lease_ttl = self.config().lease_ttl;
        db_op!(self, "claim", |c| {
            let tx = c.transaction().await?;
            let rows = tx
                .query(
                    // The window is read in index order (no sort); only
                    // its rows are sorted by residency and locked.
                    // `hot`: kinds another node holds resident that is
                    // alive (heard within `missed` of its own heartbeat
                    // intervals) and has room (fewer leases now than the
                    // capacity its heartbeat gives; 0: not said, room).
                    // Its leases are counted from the partitions, not its
                    // last report: a holder that just filled up holds
                    // nothing back. `busy` reads the leased rows' partial
                    // index once (nodes x max_claimed rows). `roomier`:
                    // kinds another alive node with room proves that has
                    // more free VRAM than this one ($10): failing a hot
                    // holder, it gets the first chance to load them.
                    "WITH win AS ( \
                       SELECT job_id, idx FROM cuzk_partitions \
                       WHERE state = 'pending' AND kind = ANY($2) \
                       ORDER BY priority DESC, created_at, job_id, idx \
                       LIMIT $7), \
                     busy AS ( \
                       SELECT lease_node, count(*) AS leases FROM cuzk_partitions \
                       WHERE state = 'leased' AND $8::float8 > 0 GROUP BY lease_node), \
                     alive AS ( \
                       SELECT n.node_id, n.kinds_supported, n.kinds_resident, \
                         n.free_vram_bytes, \
                         (n.capacity = 0 OR coalesce(b.leases, 0) < n.capacity) AS room \
                       FROM cuzk_nodes n LEFT JOIN busy b ON b.lease_node = n.node_id \
                       WHERE n.node_id <> $1 AND $8::float8 > 0 \
                         AND n.last_seen > now() - $9::float8 \
                           * greatest(n.heartbeat_ms, 1000) * interval '1 millisecond'), \
                     hot AS ( \
                       SELECT DISTINCT unnest(kinds_resident) AS kind FROM alive WHERE room), \
                     roomier AS ( \
                       SELECT DISTINCT unnest(kinds_supported) AS kind FROM alive \
                       WHERE room AND free_vram_bytes > $10), \
                     picked AS ( \
                       SELECT c.job_id, c.idx FROM cuzk_partitions c \
                       JOIN win ON c.job_id = win.job_id AND c.idx = win.idx \
                       WHERE c.state = 'pending' \
                         AND (c.kind = ANY($3) \
                           OR c.created_at < now() - $8::float8 * interval '1 second' \
                           OR (c.kind NOT IN (SELECT kind FROM hot) \
                             AND c.kind NOT IN (SELECT kind FROM roomier))) \
                       ORDER BY c.priority DESC, \
                         (c.kind = ANY($3) \
                          OR c.created_at < now() - $4::float8 * interval '1 second') DESC, \
                         c.created_at, c.job_id, c.idx \
                       LIMIT $5 \
                       FOR UPDATE OF c SKIP LOCKED) \
                     UPDATE cuzk_partitions p SET state = 'leased', lease_node = $1, \
                       claims = p.claims + 1, \
                       lease_expires = now() + $6::float8 * interval '1 second', \
                       first_claimed_at = coalesce(p.first_claimed_at, now()) \
                     FROM picked WHERE p.job_id = picked.job_id AND p.idx = picked.idx \
                     RETURNING p.job_id, p.idx, p.claims, p.kind, p.priority, p.failures, \
                       EXTRACT(EPOCH FROM p.created_at)::float8",
                    &[
                        &node,
                        &req.kinds,
                        &req.resident,
                        &wait,
                        &max,
                        &ttl,
                        &window,
                        &grace,
                        &missed,
                        &free_vram,
                    ],
                )
                .await?;
            if rows.is_empty() {
                tx.rollback().await?;
                return Ok::<_, OpError>(Vec::new());
            }
            let mut job_ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
            job_ids.sort_unstable();
            job_ids.dedup();
            tx.execute(
                "UPDATE cuzk_jobs SET state = 'running', started_at = now() \
                 WHERE id = ANY($1) AND state = 'queued'",
                &[&job_ids],
            )
            .await?;
            let jobs = tx
                .query(
                    "SELECT id, partitions, max_failures FROM cuzk_jobs WHERE id = ANY($1)",
                    &[&job_ids],
                )
                .await?;
            let meta: std::collections::HashMap<i64, (i32, i32)> = jobs
                .iter()
                .map(|r| (r.get(0), (r.get(1), r.get(2))))
                .collect();
            let mut leases = Vec::with_capacity(rows.len());
            let mut order = Vec::with_capacity(rows.len());
            for r in &rows {
                let job_id: i64 = r.get(0);
                let idx: i32 = r.get(1);
                let prio: i16 = r.get(4);
                let priority = Priority::from_i16(prio).ok_or_else(|| {
                    bad_row("cuzk_partitions", job_id, format!("priority {prio}"))
                })?;
                let &(partitions, max_failures) = meta
                    .get(&job_id)
                    .ok_or_else(|| bad_row("cuzk_jobs", job_id, "partition without its job"))?;
                let created: f64 = r.get(6);
                order.push((std::cmp::Reverse(priority), created, job_id, idx));
                leases.push(Lease {
                    job_id,
                    partition: idx as u32,
                    claim: r.get(2),
                    kind: r.get(3),
                    priority,
                    partitions: partitions.max(0) as u32,
                    failures: r.get::<_, i32>(5).max(0) as u32,
                    max_failures: max_failures.max(0) as u32,
                    lease_ttl,
                });
            }
            // Committed only once every row read back sensibly: a bad row
            // fails the claim without taking anything.
            tx.commit().await?;
            // RETURNING has no order: hand them back by priority, then age.
            let mut both: Vec<_> = order.into_iter().zip(leases).collect();
            both.sort_by(|a, b| {
                a.0 .0
                    .cmp(&b.0 .0)
                    .then(a.0 .1.total_cmp(&b.0 .1))
                    .then(a.0 .2.cmp(&b.0 .2))
                    .then(a.0 .3.cmp(&b.0 .3))
            });
            Ok(both.into_iter().map(|(_, l)| l).collect())
        })
    }

    /// Extend the leases this node still holds; says for each why to stop
    /// when it does not (cancelled, job failed, lost to another node).
    pub async fn renew(&self, leases: &[LeaseKey]) -> Result<Vec<LeaseStatus>, ClusterError> {
        if leases.is_empty() {
            return Ok(Vec::new());
        }
        let node = self.node_id().to_owned();
        let ttl = secs(self.config().lease_ttl);
        let jobs: Vec<i64> = leases.iter().map(|l| l.job_id).collect();
        let idxs: Vec<i32> = leases.iter().map(|l| l.partition as i32).collect();
        let claims: Vec<i32> = leases.iter().map(|l| l.claim).collect();
        db_op!(self, "renew", |c| {
            let held = c
                .query(
                    "UPDATE cuzk_partitions p \
                     SET lease_expires = now() + $5::float8 * interval '1 second' \
                     FROM unnest($2::bigint[], $3::int[], $4::int[]) AS l(job_id, idx, claims) \
                     WHERE p.job_id = l.job_id AND p.idx = l.idx AND p.claims = l.claims \
                       AND p.state = 'leased' AND p.lease_node = $1 \
                     RETURNING p.job_id, p.idx",
                    &[&node, &jobs, &idxs, &claims, &ttl],
                )
                .await?;
            let held: std::collections::HashSet<(i64, i32)> =
                held.iter().map(|r| (r.get(0), r.get(1))).collect();
            let mut out = Vec::with_capacity(leases.len());
            for l in leases {
                if held.contains(&(l.job_id, l.partition as i32)) {
                    out.push(LeaseStatus::Held);
                } else {
                    out.push(LeaseStatus::Stop(stop_reason(&*c, l).await?));
                }
            }
            Ok::<_, OpError>(out)
        })
    }

    /// Record a partition's proof under its lease; the job's last partition
    /// assembles the job's proof and completes it. Refused when the lease
    /// is no longer this node's (reaped and taken, cancelled, job failed).
    /// Safe to call again after a lost answer: the same lease's second
    /// report is accepted without recording twice.
    pub async fn complete(
        &self,
        lease: &LeaseKey,
        result: &PartitionResult,
    ) -> Result<Completion, ClusterError> {
        let node = self.node_id().to_owned();
        let idx = lease.partition as i32;
        let synth = micros(result.synthesis);
        let prove = micros(result.prove);
        db_op!(self, "complete", |c| {
            let tx = c.transaction().await?;
            let n = tx
                .execute(
                    "UPDATE cuzk_partitions SET state = 'done', proof = $4, public_inputs = $5, \
                       synthesis_us = $6, prove_us = $7, done_at = now(), lease_expires = NULL \
                     WHERE job_id = $1 AND idx = $2 AND claims = $3 \
                       AND state = 'leased' AND lease_node = $8",
                    &[
                        &lease.job_id,
                        &idx,
                        &lease.claim,
                        &result.proof,
                        &result.public_inputs,
                        &synth,
                        &prove,
                        &node,
                    ],
                )
                .await?;
            if n == 0 {
                let reason = stop_reason(&tx, lease).await?;
                let outcome =
                    if reason == StopReason::AlreadyDone && done_by(&tx, &node, lease).await? {
                        // Our own earlier report, whose answer was lost.
                        let state = job_state(&tx, lease.job_id).await?;
                        Completion::Accepted {
                            job_completed: state == Some(JobState::Completed),
                        }
                    } else {
                        Completion::Refused(reason)
                    };
                tx.rollback().await?;
                return Ok::<_, OpError>(outcome);
            }
            let row = tx
                .query_opt(
                    "UPDATE cuzk_jobs SET done_parts = done_parts + 1 \
                     WHERE id = $1 AND state = 'running' RETURNING done_parts, partitions",
                    &[&lease.job_id],
                )
                .await?
                .ok_or_else(|| {
                    bad_row(
                        "cuzk_jobs",
                        lease.job_id,
                        "leased partition of a job not running",
                    )
                })?;
            let (done, partitions): (i32, i32) = (row.get(0), row.get(1));
            if done < partitions {
                tx.commit().await?;
                return Ok(Completion::Accepted {
                    job_completed: false,
                });
            }
            let parts = tx
                .query(
                    "SELECT idx, state, proof, public_inputs FROM cuzk_partitions \
                     WHERE job_id = $1 ORDER BY idx",
                    &[&lease.job_id],
                )
                .await?;
            let mut proof = Vec::new();
            let mut publics = Vec::new();
            for (want, p) in parts.iter().enumerate() {
                let idx: i32 = p.get(0);
                let state: &str = p.get(1);
                if idx as usize != want || state != "done" {
                    return Err(bad_row(
                        "cuzk_partitions",
                        format!("{}/{idx}", lease.job_id),
                        format!("job counted complete but partition is {state}"),
                    ));
                }
                proof.extend_from_slice(p.get::<_, Option<&[u8]>>(2).unwrap_or_default());
                publics.extend_from_slice(p.get::<_, Option<&[u8]>>(3).unwrap_or_default());
            }
            if parts.len() != partitions as usize {
                return Err(bad_row(
                    "cuzk_partitions",
                    lease.job_id,
                    format!("{} partition rows for {partitions} partitions", parts.len()),
                ));
            }
            tx.execute(
                concat!(
                    "UPDATE cuzk_jobs SET state = 'completed', proof = $2, public_inputs = $3, \
                     finished_at = now(), ",
                    drop_input!(),
                    " WHERE id = $1"
                ),
                &[&lease.job_id, &proof, &publics],
            )
            .await?;
            tx.commit().await?;
            Ok(Completion::Accepted {
                job_completed: true,
            })
        })
    }

    /// Report that proving a partition failed, with the reason kept for the
    /// job's error. A retryable failure requeues it while failures are left.
    pub async fn fail(
        &self,
        lease: &LeaseKey,
        reason: &str,
        mode: FailMode,
    ) -> Result<FailOutcome, ClusterError> {
        let node = self.node_id().to_owned();
        let idx = lease.partition as i32;
        let permanent = mode == FailMode::Permanent;
        // Reasons come from error messages; keep rows bounded.
        let reason: String = reason.chars().take(2000).collect();
        db_op!(self, "fail", |c| {
            let tx = c.transaction().await?;
            let row = tx
                .query_opt(
                    "UPDATE cuzk_partitions p SET failures = p.failures + 1, lease_expires = NULL, \
                       state = CASE WHEN $5 OR p.failures + 1 >= j.max_failures \
                               THEN 'failed' ELSE 'pending' END \
                     FROM cuzk_jobs j \
                     WHERE j.id = p.job_id AND p.job_id = $1 AND p.idx = $2 AND p.claims = $3 \
                       AND p.state = 'leased' AND p.lease_node = $4 \
                     RETURNING p.state, p.failures, j.max_failures",
                    &[&lease.job_id, &idx, &lease.claim, &node, &permanent],
                )
                .await?;
            let Some(row) = row else {
                // Our own earlier report, whose answer was lost?
                let mine = tx
                    .query_opt(
                        "SELECT 1 FROM cuzk_partition_failures \
                         WHERE job_id = $1 AND idx = $2 AND claim = $3 AND node = $4 \
                         AND source = 'reported'",
                        &[&lease.job_id, &idx, &lease.claim, &node],
                    )
                    .await?
                    .is_some();
                let outcome = if mine {
                    let row = tx
                        .query_one(
                            "SELECT p.failures, j.max_failures, j.state FROM cuzk_partitions p \
                             JOIN cuzk_jobs j ON j.id = p.job_id \
                             WHERE p.job_id = $1 AND p.idx = $2",
                            &[&lease.job_id, &idx],
                        )
                        .await?;
                    if row.get::<_, &str>(2) == "failed" {
                        FailOutcome::JobFailed
                    } else {
                        FailOutcome::Requeued {
                            failures: row.get::<_, i32>(0).max(0) as u32,
                            max_failures: row.get::<_, i32>(1).max(0) as u32,
                        }
                    }
                } else {
                    FailOutcome::Refused(stop_reason(&tx, lease).await?)
                };
                tx.rollback().await?;
                return Ok::<_, OpError>(outcome);
            };
            let state: String = row.get(0);
            let failures: i32 = row.get(1);
            let max_failures: i32 = row.get(2);
            record_failure(&tx, lease.job_id, idx, lease.claim, &node, false, &reason).await?;
            let outcome = if state == "failed" {
                fail_job(&tx, lease.job_id, idx).await?;
                FailOutcome::JobFailed
            } else {
                FailOutcome::Requeued {
                    failures: failures.max(0) as u32,
                    max_failures: max_failures.max(0) as u32,
                }
            };
            tx.commit().await?;
            Ok(outcome)
        })
    }

    /// Give a lease back without counting a failure (a node shutting down
    /// gracefully). False when it was no longer this node's.
    pub async fn release(&self, lease: &LeaseKey) -> Result<bool, ClusterError> {
        let node = self.node_id().to_owned();
        let idx = lease.partition as i32;
        db_op!(self, "release", |c| {
            let n = c
                .execute(
                    "UPDATE cuzk_partitions SET state = 'pending', lease_expires = NULL \
                     WHERE job_id = $1 AND idx = $2 AND claims = $3 \
                       AND state = 'leased' AND lease_node = $4",
                    &[&lease.job_id, &idx, &lease.claim, &node],
                )
                .await?;
            Ok::<_, OpError>(n == 1)
        })
    }

    /// Expired leases (of any node) back to pending, each counted as a
    /// failure of its partition, or failing its job when it has no
    /// failures left. Runs before every claim; returns how many it reaped.
    pub async fn reap_expired(&self, limit: i64) -> Result<u64, ClusterError> {
        db_op!(self, "reap", |c| {
            let tx = c.transaction().await?;
            let rows = tx
                .query(
                    "WITH expired AS ( \
                       SELECT job_id, idx FROM cuzk_partitions \
                       WHERE state = 'leased' AND lease_expires < now() \
                       ORDER BY lease_expires LIMIT $1 \
                       FOR UPDATE SKIP LOCKED) \
                     UPDATE cuzk_partitions p SET failures = p.failures + 1, lease_expires = NULL, \
                       state = CASE WHEN p.failures + 1 >= j.max_failures \
                               THEN 'failed' ELSE 'pending' END \
                     FROM expired, cuzk_jobs j \
                     WHERE p.job_id = expired.job_id AND p.idx = expired.idx AND j.id = p.job_id \
                     RETURNING p.job_id, p.idx, p.claims, p.lease_node, p.state",
                    &[&limit],
                )
                .await?;
            for r in &rows {
                let job_id: i64 = r.get(0);
                let idx: i32 = r.get(1);
                let node: Option<String> = r.get(3);
                record_failure(
                    &tx,
                    job_id,
                    idx,
                    r.get(2),
                    node.as_deref().unwrap_or("?"),
                    true,
                    "lease expired: the node stopped renewing it",
                )
                .await?;
                if r.get::<_, &str>(4) == "failed" {
                    fail_job(&tx, job_id, idx).await?;
                }
            }
            tx.commit().await?;
            if !rows.is_empty() {
                tracing::info!(reaped = rows.len(), "reaped expired cluster leases");
            }
            Ok::<_, OpError>(rows.len() as u64)
        })
    }

    /// Cancel a job from any node: its partitions stop being claimable and
    /// their holders are told when they renew or report. Returns the job's
    /// state after, and whether this call cancelled it.
    pub async fn cancel(&self, job_id: JobId) -> Result<(JobState, bool), ClusterError> {
        db_op!(self, "cancel", |c| {
            let tx = c.transaction().await?;
            tx.execute(
                "UPDATE cuzk_partitions SET state = 'cancelled', lease_expires = NULL \
                 WHERE job_id = $1 AND state IN ('pending', 'leased')",
                &[&job_id],
            )
            .await?;
            let n = tx
                .execute(
                    concat!(
                        "UPDATE cuzk_jobs SET state = 'cancelled', finished_at = now(), ",
                        drop_input!(),
                        " WHERE id = $1 AND state IN ('queued', 'running')"
                    ),
                    &[&job_id],
                )
                .await?;
            let state = job_state(&tx, job_id)
                .await?
                .ok_or(ClusterError::UnknownJob(job_id))?;
            tx.commit().await?;
            Ok::<_, OpError>((state, n == 1))
        })
    }

    /// The job as stored now, with its failure reasons.
    pub async fn job(&self, job_id: JobId) -> Result<JobRecord, ClusterError> {
        db_op!(self, "job", |c| {
            let row = c
                .query_opt(
                    "SELECT id, request_id, kind, priority, client, state, partitions, done_parts, \
                       proof, public_inputs, error, \
                       EXTRACT(EPOCH FROM (started_at - created_at))::float8, \
                       EXTRACT(EPOCH FROM (finished_at - created_at))::float8, \
                       (SELECT sum(synthesis_us)::bigint FROM cuzk_partitions p \
                          WHERE p.job_id = j.id AND p.state = 'done'), \
                       (SELECT sum(prove_us)::bigint FROM cuzk_partitions p \
                          WHERE p.job_id = j.id AND p.state = 'done') \
                     FROM cuzk_jobs j WHERE id = $1",
                    &[&job_id],
                )
                .await?
                .ok_or(ClusterError::UnknownJob(job_id))?;
            let failures = c
                .query(
                    "SELECT idx, claim, node, reason, source FROM cuzk_partition_failures \
                     WHERE job_id = $1 ORDER BY at, idx, claim",
                    &[&job_id],
                )
                .await?
                .iter()
                .map(|r| FailureRecord {
                    partition: r.get::<_, i32>(0).max(0) as u32,
                    claim: r.get(1),
                    node: r.get(2),
                    reason: r.get(3),
                    lease_expired: r.get::<_, &str>(4) == "expired",
                })
                .collect();
            job_record(&row, failures)
        })
    }

    /// The job's partitions as stored now, in order: who holds or proved
    /// each, under which claim, with how many failures.
    pub async fn partitions(&self, job_id: JobId) -> Result<Vec<PartitionRecord>, ClusterError> {
        db_op!(self, "partitions", |c| {
            let rows = c
                .query(
                    "SELECT idx, state, lease_node, claims, failures FROM cuzk_partitions \
                     WHERE job_id = $1 ORDER BY idx",
                    &[&job_id],
                )
                .await?;
            rows.iter()
                .map(|r| {
                    let idx: i32 = r.get(0);
                    let st: &str = r.get(1);
                    let state = PartitionState::parse(st).ok_or_else(|| {
                        bad_row(
                            "cuzk_partitions",
                            format!("{job_id}/{idx}"),
                            format!("state {st:?}"),
                        )
                    })?;
                    Ok(PartitionRecord {
                        partition: idx.max(0) as u32,
                        state,
                        node: r.get(2),
                        claims: r.get(3),
                        failures: r.get::<_, i32>(4).max(0) as u32,
                    })
                })
                .collect::<Result<Vec<_>, OpError>>()
        })
    }

    /// Poll until the job is final. Polling, not LISTEN/NOTIFY, so that it
    /// holds on every PostgreSQL-protocol engine and across reconnections.
    pub async fn wait_final(
        &self,
        job_id: JobId,
        poll: Duration,
    ) -> Result<JobRecord, ClusterError> {
        loop {
            let j = self.job(job_id).await?;
            if j.state.is_final() {
                return Ok(j);
            }
            tokio::time::sleep(poll).await;
        }
    }

    /// Pending and leased partitions by kind and class (`cuzk status
    /// --cluster`).
    pub async fn queue_depth(&self) -> Result<Vec<QueueDepth>, ClusterError> {
        db_op!(self, "queue depth", |c| {
            let rows = c
                .query(
                    "SELECT kind, priority, count(*) FILTER (WHERE state = 'pending'), \
                       count(*) FILTER (WHERE state = 'leased') \
                     FROM cuzk_partitions WHERE state IN ('pending', 'leased') \
                     GROUP BY kind, priority ORDER BY priority DESC, kind",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|r| {
                    let p: i16 = r.get(1);
                    Ok(QueueDepth {
                        kind: r.get(0),
                        priority: Priority::from_i16(p).ok_or_else(|| {
                            bad_row("cuzk_partitions", "depth", format!("priority {p}"))
                        })?,
                        pending: r.get::<_, i64>(2).max(0) as u64,
                        leased: r.get::<_, i64>(3).max(0) as u64,
                    })
                })
                .collect::<Result<Vec<_>, OpError>>()
        })
    }

    /// The whole queue at a glance (`cuzk status --cluster`): jobs and
    /// partitions by state, and how long the oldest pending partition has
    /// waited. Counts every row of the two tables (bounded by retention).
    pub async fn overview(&self) -> Result<QueueOverview, ClusterError> {
        db_op!(self, "overview", |c| {
            let jobs = c
                .query(
                    "SELECT state, count(*) FROM cuzk_jobs GROUP BY state ORDER BY state",
                    &[],
                )
                .await?;
            let parts = c
                .query(
                    "SELECT state, count(*) FROM cuzk_partitions GROUP BY state ORDER BY state",
                    &[],
                )
                .await?;
            let oldest: Option<f64> = c
                .query_one(
                    "SELECT EXTRACT(EPOCH FROM (now() - min(created_at)))::float8 \
                     FROM cuzk_partitions WHERE state = 'pending'",
                    &[],
                )
                .await?
                .get(0);
            let mut o = QueueOverview {
                oldest_pending: from_secs(oldest),
                ..QueueOverview::default()
            };
            for r in &jobs {
                let st: &str = r.get(0);
                let st = JobState::parse(st)
                    .ok_or_else(|| bad_row("cuzk_jobs", "overview", format!("state {st:?}")))?;
                o.jobs.push((st, r.get::<_, i64>(1).max(0) as u64));
            }
            for r in &parts {
                let st: &str = r.get(0);
                let st = PartitionState::parse(st).ok_or_else(|| {
                    bad_row("cuzk_partitions", "overview", format!("state {st:?}"))
                })?;
                o.partitions.push((st, r.get::<_, i64>(1).max(0) as u64));
            }
            Ok::<_, OpError>(o)
        })
    }

    /// Delete jobs final for longer than `older_than`, at most `limit` per
    /// call (a sweep keeps calling while it deletes a full batch). Their
    /// partitions and failure reasons go with them. Several nodes sweeping
    /// at once split the rows between them (`SKIP LOCKED`) instead of
    /// waiting on each other.
    pub async fn purge_finished(
        &self,
        older_than: Duration,
        limit: i64,
    ) -> Result<u64, ClusterError> {
        let age = secs(older_than);
        db_op!(self, "purge", |c| {
            let n = c
                .execute(
                    "DELETE FROM cuzk_jobs WHERE id IN ( \
                       SELECT id FROM cuzk_jobs WHERE finished_at IS NOT NULL \
                         AND finished_at < now() - $1::float8 * interval '1 second' \
                       ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED)",
                    &[&age, &limit],
                )
                .await?;
            Ok::<_, OpError>(n)
        })
    }
}

fn job_record(row: &Row, failures: Vec<FailureRecord>) -> Result<JobRecord, OpError> {
    let id: i64 = row.get(0);
    let prio: i16 = row.get(3);
    let state: &str = row.get(5);
    let partitions: i32 = row.get(6);
    let done: i32 = row.get(7);
    if partitions <= 0 || done < 0 || done > partitions {
        return Err(bad_row(
            "cuzk_jobs",
            id,
            format!("{done} of {partitions} partitions done"),
        ));
    }
    Ok(JobRecord {
        id,
        request_id: row.get(1),
        kind: row.get(2),
        priority: Priority::from_i16(prio)
            .ok_or_else(|| bad_row("cuzk_jobs", id, format!("priority {prio}")))?,
        client: row.get(4),
        state: JobState::parse(state)
            .ok_or_else(|| bad_row("cuzk_jobs", id, format!("state {state:?}")))?,
        partitions: partitions as u32,
        done_partitions: done as u32,
        proof: row.get(8),
        public_inputs: row.get(9),
        error: row.get(10),
        failures,
        timings: JobTimings {
            queue_wait: from_secs(row.get(11)),
            total: from_secs(row.get(12)),
            synthesis: from_micros(row.get(13)),
            prove: from_micros(row.get(14)),
        },
    })
}

async fn job_state<C: GenericClient>(c: &C, job_id: JobId) -> Result<Option<JobState>, OpError> {
    let Some(row) = c
        .query_opt("SELECT state FROM cuzk_jobs WHERE id = $1", &[&job_id])
        .await?
    else {
        return Ok(None);
    };
    let s: &str = row.get(0);
    JobState::parse(s)
        .map(Some)
        .ok_or_else(|| bad_row("cuzk_jobs", job_id, format!("state {s:?}")))
}

/// Why `node` does not hold `lease` (any more).
async fn stop_reason<C: GenericClient>(c: &C, lease: &LeaseKey) -> Result<StopReason, OpError> {
    let row = c
        .query_opt(
            "SELECT p.state, p.lease_node, j.state FROM cuzk_partitions p \
             JOIN cuzk_jobs j ON j.id = p.job_id WHERE p.job_id = $1 AND p.idx = $2",
            &[&lease.job_id, &(lease.partition as i32)],
        )
        .await?;
    let Some(row) = row else {
        return Ok(StopReason::JobGone);
    };
    let key = || format!("{}/{}", lease.job_id, lease.partition);
    let p: &str = row.get(0);
    let p = PartitionState::parse(p)
        .ok_or_else(|| bad_row("cuzk_partitions", key(), format!("state {p:?}")))?;
    let holder: Option<String> = row.get(1);
    let j: &str = row.get(2);
    let j =
        JobState::parse(j).ok_or_else(|| bad_row("cuzk_jobs", key(), format!("state {j:?}")))?;
    Ok(match (j, p) {
        (JobState::Failed, _) | (_, PartitionState::Failed) => StopReason::JobFailed,
        (JobState::Cancelled, _) | (_, PartitionState::Cancelled) => StopReason::Cancelled,
        (_, PartitionState::Done) => StopReason::AlreadyDone,
        // Leased to someone else, or to us under a later claim. (Leased to
        // us under this claim cannot reach here: the caller's update would
        // have matched in the same transaction.)
        (_, PartitionState::Leased) => StopReason::Lost { held_by: holder },
        (_, PartitionState::Pending) => StopReason::Lost { held_by: None },
    })
}

/// Whether the partition's accepted result came from `node` under `lease`'s
/// claim (a report repeated after a lost answer).
async fn done_by<C: GenericClient>(c: &C, node: &str, lease: &LeaseKey) -> Result<bool, OpError> {
    Ok(c.query_opt(
        "SELECT 1 FROM cuzk_partitions WHERE job_id = $1 AND idx = $2 AND claims = $3 \
             AND state = 'done' AND lease_node = $4",
        &[
            &lease.job_id,
            &(lease.partition as i32),
            &lease.claim,
            &node,
        ],
    )
    .await?
    .is_some())
}

async fn record_failure<C: GenericClient>(
    c: &C,
    job_id: JobId,
    idx: i32,
    claim: i32,
    node: &str,
    expired: bool,
    reason: &str,
) -> Result<(), OpError> {
    let source = if expired { "expired" } else { "reported" };
    c.execute(
        "INSERT INTO cuzk_partition_failures (job_id, idx, claim, node, source, reason) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id, idx, claim) DO NOTHING",
        &[&job_id, &idx, &claim, &node, &source, &reason],
    )
    .await?;
    Ok(())
}

/// Fail the job whose partition `idx` ran out of failures: its error lists
/// that partition's reasons, and its other partitions stop.
async fn fail_job<C: GenericClient>(c: &C, job_id: JobId, idx: i32) -> Result<(), OpError> {
    let reasons = c
        .query(
            "SELECT claim, node, reason FROM cuzk_partition_failures \
             WHERE job_id = $1 AND idx = $2 ORDER BY claim",
            &[&job_id, &idx],
        )
        .await?;
    let list: Vec<String> = reasons
        .iter()
        .map(|r| {
            format!(
                "claim {} on {}: {}",
                r.get::<_, i32>(0),
                r.get::<_, &str>(1),
                r.get::<_, &str>(2)
            )
        })
        .collect();
    let error = format!(
        "partition {idx} failed {} time(s): {}",
        list.len(),
        list.join("; ")
    );
    c.execute(
        "UPDATE cuzk_partitions SET state = 'cancelled', lease_expires = NULL \
         WHERE job_id = $1 AND state IN ('pending', 'leased')",
        &[&job_id],
    )
    .await?;
    c.execute(
        concat!(
            "UPDATE cuzk_jobs SET state = 'failed', error = $2, finished_at = now(), ",
            drop_input!(),
            " WHERE id = $1 AND state IN ('queued', 'running')"
        ),
        &[&job_id, &error],
    )
    .await?;
    Ok(())
}
