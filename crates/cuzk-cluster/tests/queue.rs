//! The queue against a real PostgreSQL: several simulated nodes (tasks with
//! connections of their own) claiming, renewing, failing and completing
//! partitions.

mod common;

use common::{fake_proof, Server, TestDb};
use cuzk_cluster::*;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn job(kind: &str, priority: Priority, partitions: u32, rid: Option<&str>) -> NewJob {
    NewJob {
        request_id: rid.map(str::to_owned),
        kind: kind.to_owned(),
        priority,
        client: "test".to_owned(),
        input: JobInput::Inline(format!("input of {rid:?}").into_bytes()),
        partitions,
    }
}

fn claim_req(kinds: &[&str], resident: &[&str], max: u32) -> ClaimRequest {
    ClaimRequest {
        kinds: kinds.iter().map(|s| s.to_string()).collect(),
        resident: resident.iter().map(|s| s.to_string()).collect(),
        max,
        free_vram_bytes: 0,
    }
}

fn result_for(lease: &Lease, salt: u8) -> PartitionResult {
    PartitionResult {
        proof: fake_proof(lease.job_id, lease.partition, salt),
        public_inputs: vec![lease.partition as u8; 32],
        synthesis: Duration::from_millis(3),
        prove: Duration::from_millis(5),
    }
}

/// Completes `lease` with a result made of `salt`: the queue's answer.
async fn complete(c: &ClusterClient, lease: &Lease, salt: u8) -> Completion {
    c.complete(&lease.key(), &result_for(lease, salt))
        .await
        .unwrap()
}

/// Completes `lease`, the last partition of job `id`: the queue answers that
/// it completed the job, and `front` sees the job completed.
async fn complete_job(
    c: &ClusterClient,
    lease: &Lease,
    salt: u8,
    front: &ClusterClient,
    id: JobId,
) {
    assert_eq!(complete(c, lease, salt).await, JOB_DONE);
    assert_eq!(front.job(id).await.unwrap().state, JobState::Completed);
}

/// The answer to the result that completes its job.
const JOB_DONE: Completion = Completion::Accepted {
    job_completed: true,
};

/// Claim until something comes (another node's lease has to expire first);
/// a bound on the wait so a bug fails the test instead of hanging it.
async fn claim_until(c: &ClusterClient, req: &ClaimRequest, want: usize) -> Vec<Lease> {
    let start = Instant::now();
    let mut got = Vec::new();
    while got.len() < want {
        got.extend(c.claim(req).await.expect("claim"));
        if got.len() < want {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "only {} of {want} partitions claimable after 60 s",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    got
}

async fn count(db: &tokio_postgres::Client, sql: &str) -> i64 {
    db.query_one(sql, &[]).await.expect(sql).get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migrations_run_concurrently_give_one_schema() {
    let db = TestDb::new().await;
    let clients: Vec<_> = (0..8)
        .map(|i| Arc::new(db.client(&format!("n{i}"))))
        .collect();
    let tasks: Vec<_> = clients
        .iter()
        .map(|c| {
            let c = c.clone();
            tokio::spawn(async move { c.migrate().await })
        })
        .collect();
    let mut applied = Vec::new();
    for t in tasks {
        applied.extend(t.await.expect("task").expect("migrate"));
    }
    applied.sort_unstable();
    assert_eq!(
        applied,
        (1..=SCHEMA_VERSION).collect::<Vec<_>>(),
        "each migration applied by exactly one daemon"
    );
    assert_eq!(clients[0].schema_version().await.unwrap(), SCHEMA_VERSION);
    let raw = db.raw().await;
    assert_eq!(
        count(&raw, "SELECT count(*) FROM cuzk_schema_version").await,
        i64::from(SCHEMA_VERSION)
    );
    // A later start applies nothing and the schema works.
    assert!(clients[3].migrate().await.unwrap().is_empty());
    let s = clients[1]
        .submit(&job("k", Priority::Normal, 2, None))
        .await
        .unwrap();
    assert!(!s.deduplicated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_database_is_a_typed_error() {
    let mut cfg = ClusterConfig::new("postgres://cuzk@127.0.0.1:1/none", "n");
    cfg.reconnect_for = Duration::from_millis(300);
    let c = ClusterClient::new(cfg).unwrap();
    match c.migrate().await {
        Err(ClusterError::Unavailable {
            cause: Unavailable::Connect(_),
            target,
            ..
        }) => assert_eq!(target, "127.0.0.1:1/none"),
        other => panic!("expected Unavailable(Connect), got {other:?}"),
    }
    // Status's view of it: unreachable, with the connect error.
    let u = c.unreachable().expect("marked unreachable");
    assert!(u.cause.contains("cannot connect"), "{u:?}");
    assert!(matches!(
        ClusterClient::new(ClusterConfig::new("postgres://[bad", "n")),
        Err(ClusterError::InvalidUrl(_))
    ));
    assert!(matches!(
        ClusterClient::new(ClusterConfig::new("postgres://localhost/x", "")),
        Err(ClusterError::InvalidConfig(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn duplicate_request_id_returns_the_same_job() {
    let db = TestDb::new().await;
    let a = db.node("a").await;
    let b = db.node("b").await;
    let first = a
        .submit(&job("k", Priority::Normal, 3, Some("r1")))
        .await
        .unwrap();
    assert!(!first.deduplicated);
    let again = b
        .submit(&job("k", Priority::Normal, 3, Some("r1")))
        .await
        .unwrap();
    assert_eq!(again.job_id, first.job_id);
    assert!(again.deduplicated);
    let mut other_input = job("k", Priority::Normal, 3, Some("r1"));
    other_input.input = JobInput::Inline(b"different".to_vec());
    assert!(matches!(
        b.submit(&other_input).await,
        Err(ClusterError::RequestIdConflict(r)) if r == "r1"
    ));
    assert!(matches!(
        b.submit(&job("other-kind", Priority::Normal, 3, Some("r1")))
            .await,
        Err(ClusterError::RequestIdConflict(_))
    ));
    assert!(matches!(
        b.submit(&job("k", Priority::Normal, 3, Some(&"x".repeat(129))))
            .await,
        Err(ClusterError::RequestIdTooLong(129))
    ));
    assert!(matches!(
        b.submit(&job("k", Priority::Normal, 0, Some("r0"))).await,
        Err(ClusterError::InvalidJob(_))
    ));

    assert_eq!(b.job_of_request("r1").await.unwrap(), Some(first.job_id));
    assert_eq!(b.job_of_request("nope").await.unwrap(), None);

    // Many daemons submitting the same new request id at once: one job.
    let clients: Vec<_> = (0..6)
        .map(|i| Arc::new(db.client(&format!("s{i}"))))
        .collect();
    let tasks: Vec<_> = clients
        .iter()
        .map(|c| {
            let c = c.clone();
            tokio::spawn(async move { c.submit(&job("k", Priority::High, 2, Some("r2"))).await })
        })
        .collect();
    let mut ids = Vec::new();
    let mut fresh = 0;
    for t in tasks {
        let s = t.await.unwrap().unwrap();
        ids.push(s.job_id);
        fresh += usize::from(!s.deduplicated);
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "one job for one request id");
    assert_eq!(fresh, 1);
    let raw = db.raw().await;
    assert_eq!(count(&raw, "SELECT count(*) FROM cuzk_jobs").await, 2);
    assert_eq!(count(&raw, "SELECT count(*) FROM cuzk_partitions").await, 5);
    // The input is there for the nodes, once.
    assert_eq!(
        a.job_input(first.job_id).await.unwrap(),
        JobInput::Inline(b"input of Some(\"r1\")".to_vec())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_follow_priority_then_age() {
    let db = TestDb::new().await;
    let c = db.node("n").await;
    let mut ids = HashMap::new();
    for (name, p) in [
        ("low", Priority::Low),
        ("normal1", Priority::Normal),
        ("critical", Priority::Critical),
        ("high", Priority::High),
        ("normal2", Priority::Normal),
    ] {
        let s = c.submit(&job("k", p, 1, Some(name))).await.unwrap();
        ids.insert(s.job_id, name);
    }
    let mut order = Vec::new();
    for _ in 0..5 {
        let l = c.claim(&claim_req(&["k"], &[], 1)).await.unwrap();
        assert_eq!(l.len(), 1);
        order.push(ids[&l[0].job_id]);
    }
    assert_eq!(order, ["critical", "high", "normal1", "normal2", "low"]);
    assert!(c
        .claim(&claim_req(&["k"], &[], 1))
        .await
        .unwrap()
        .is_empty());

    // A batch claim comes back in the same order, partitions in order.
    let db2 = TestDb::new().await;
    let c = db2.node("n").await;
    let low = c
        .submit(&job("k", Priority::Low, 2, Some("l")))
        .await
        .unwrap();
    let crit = c
        .submit(&job("k", Priority::Critical, 2, Some("c")))
        .await
        .unwrap();
    let got: Vec<_> = c
        .claim(&claim_req(&["k"], &[], 10))
        .await
        .unwrap()
        .iter()
        .map(|l| (l.job_id, l.partition, l.priority))
        .collect();
    assert_eq!(
        got,
        [
            (crit.job_id, 0, Priority::Critical),
            (crit.job_id, 1, Priority::Critical),
            (low.job_id, 0, Priority::Low),
            (low.job_id, 1, Priority::Low)
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_prefer_resident_kinds() {
    let db = TestDb::new().await;
    let n = db.node("n").await;
    let a = n
        .submit(&job("a", Priority::Normal, 1, Some("a")))
        .await
        .unwrap();
    let b = n
        .submit(&job("b", Priority::Normal, 1, Some("b")))
        .await
        .unwrap();
    let crit = n
        .submit(&job("a", Priority::High, 1, Some("a-high")))
        .await
        .unwrap();
    // Priority still comes first: the high job of a non-resident kind.
    let l = n.claim(&claim_req(&["a", "b"], &["b"], 1)).await.unwrap();
    assert_eq!(l[0].job_id, crit.job_id);
    // Within a class, the kind held resident wins over the older job.
    let l = n.claim(&claim_req(&["a", "b"], &["b"], 1)).await.unwrap();
    assert_eq!(l[0].job_id, b.job_id, "resident kind b before older a");
    let l = n.claim(&claim_req(&["a", "b"], &["b"], 1)).await.unwrap();
    assert_eq!(l[0].job_id, a.job_id);

    // A node that cannot prove a kind never claims it.
    let db = TestDb::new().await;
    let n = db.node("n").await;
    n.submit(&job("a", Priority::Critical, 1, Some("a")))
        .await
        .unwrap();
    assert!(n
        .claim(&claim_req(&["b"], &["b"], 5))
        .await
        .unwrap()
        .is_empty());

    // Past placement_max_wait, residency no longer delays a partition.
    let db = TestDb::new().await;
    let mut cfg = db.config("n");
    cfg.placement_max_wait = Duration::from_millis(200);
    let n = ClusterClient::new(cfg).unwrap();
    n.migrate().await.unwrap();
    let a = n
        .submit(&job("a", Priority::Normal, 1, Some("a")))
        .await
        .unwrap();
    let _b = n
        .submit(&job("b", Priority::Normal, 1, Some("b")))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let l = n.claim(&claim_req(&["a", "b"], &["b"], 1)).await.unwrap();
    assert_eq!(
        l[0].job_id, a.job_id,
        "the older job after both waited past the limit"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expired_lease_is_reclaimed_and_the_late_result_refused() {
    let db = TestDb::new().await;
    let mut cfg = db.config("dead");
    cfg.lease_ttl = Duration::from_secs(1);
    let dead = ClusterClient::new(cfg).unwrap();
    dead.migrate().await.unwrap();
    let live = db.node("live").await;
    let s = live
        .submit(&job("k", Priority::Normal, 3, Some("j")))
        .await
        .unwrap();
    let req = claim_req(&["k"], &["k"], 10);
    let old = dead.claim(&req).await.unwrap();
    assert_eq!(old.len(), 3);
    assert!(old.iter().all(|l| l.claim == 1));
    // The live node takes them over once they expire (the dead node never
    // renews).
    let new = claim_until(&live, &req, 3).await;
    assert!(new.iter().all(|l| l.claim == 2 && l.failures == 1));

    // The dead node comes back: its renewal and its result are refused.
    let keys: Vec<_> = old.iter().map(Lease::key).collect();
    let st = dead.renew(&keys).await.unwrap();
    let lost = LeaseStatus::Stop(StopReason::Lost {
        held_by: Some("live".to_owned()),
    });
    assert_eq!(st, vec![lost.clone(), lost.clone(), lost]);
    let r = complete(&dead, &old[0], 1).await;
    assert_eq!(
        r,
        Completion::Refused(StopReason::Lost {
            held_by: Some("live".to_owned())
        })
    );
    assert!(matches!(
        dead.fail(&old[1].key(), "late", FailMode::Retry)
            .await
            .unwrap(),
        FailOutcome::Refused(StopReason::Lost { .. })
    ));

    for (i, l) in new.iter().enumerate() {
        let r = complete(&live, l, 2).await;
        assert_eq!(
            r,
            Completion::Accepted {
                job_completed: i == 2
            }
        );
        // Reporting again (as after a lost answer) is accepted, not recorded twice.
        let again = complete(&live, l, 2).await;
        assert_eq!(
            again,
            Completion::Accepted {
                job_completed: i == 2
            }
        );
    }
    // After completion, the dead node's late result is still refused.
    let r = complete(&dead, &old[2], 1).await;
    assert_eq!(r, Completion::Refused(StopReason::AlreadyDone));

    let j = live.job(s.job_id).await.unwrap();
    assert_eq!(j.state, JobState::Completed);
    assert_eq!(j.done_partitions, 3);
    let want: Vec<u8> = (0..3).flat_map(|i| fake_proof(s.job_id, i, 2)).collect();
    assert_eq!(
        j.proof.as_deref(),
        Some(&want[..]),
        "the live node's proofs, in order"
    );
    assert_eq!(j.failures.len(), 3);
    assert!(j
        .failures
        .iter()
        .all(|f| f.node == "dead" && f.claim == 1 && f.lease_expired));
    assert_eq!(j.timings.prove, Duration::from_millis(15));

    // A lease that expired but that nobody took is still the node's: its
    // result counts (nothing was lost by waiting).
    let s2 = live
        .submit(&job("k", Priority::Normal, 1, Some("j2")))
        .await
        .unwrap();
    let l = dead.claim(&req).await.unwrap();
    assert_eq!(l.len(), 1);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        dead.renew(&[l[0].key()]).await.unwrap(),
        vec![LeaseStatus::Held]
    );
    complete_job(&dead, &l[0], 1, &live, s2.job_id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn retries_are_bounded_then_the_job_fails_with_reasons() {
    let db = TestDb::new().await;
    let mut cfg = db.config("n");
    cfg.lease_ttl = Duration::from_millis(500);
    cfg.max_failures = 3;
    let n = ClusterClient::new(cfg).unwrap();
    n.migrate().await.unwrap();
    let s = n
        .submit(&job("k", Priority::Normal, 2, Some("j")))
        .await
        .unwrap();
    let req = claim_req(&["k"], &[], 1);

    // Another node holds partition 0 (and renews it); this one works on
    // partition 1. Failure 1: its lease expires.
    let other = db.node("other").await;
    let o = other.claim(&req).await.unwrap();
    assert_eq!(o[0].partition, 0);
    let l = n.claim(&req).await.unwrap();
    assert_eq!((l[0].partition, l[0].failures), (1, 0));
    let l = claim_until(&n, &req, 1).await;
    assert_eq!((l[0].partition, l[0].claim, l[0].failures), (1, 2, 1));
    assert_eq!(
        other.renew(&[o[0].key()]).await.unwrap(),
        vec![LeaseStatus::Held]
    );
    // Failures 2 and 3: errors reported by the node.
    let out = n
        .fail(&l[0].key(), "boom two", FailMode::Retry)
        .await
        .unwrap();
    assert_eq!(
        out,
        FailOutcome::Requeued {
            failures: 2,
            max_failures: 3
        }
    );
    // Repeated after a lost answer: the same outcome, not a second failure.
    assert_eq!(
        n.fail(&l[0].key(), "boom two", FailMode::Retry)
            .await
            .unwrap(),
        FailOutcome::Requeued {
            failures: 2,
            max_failures: 3
        }
    );
    let l = n.claim(&req).await.unwrap();
    assert_eq!((l[0].partition, l[0].claim), (1, 3));
    let out = n
        .fail(&l[0].key(), "boom three", FailMode::Retry)
        .await
        .unwrap();
    assert_eq!(out, FailOutcome::JobFailed);
    // The report repeated after a lost answer gives the same outcome.
    assert_eq!(
        n.fail(&l[0].key(), "boom three", FailMode::Retry)
            .await
            .unwrap(),
        FailOutcome::JobFailed
    );

    let j = n.job(s.job_id).await.unwrap();
    assert_eq!(j.state, JobState::Failed);
    let err = j.error.expect("an error");
    for want in [
        "partition 1 failed 3 time(s)",
        "lease expired",
        "boom two",
        "boom three",
    ] {
        assert!(err.contains(want), "{err:?} lacks {want:?}");
    }
    assert_eq!(
        j.failures
            .iter()
            .map(|f| (f.claim, f.lease_expired))
            .collect::<Vec<_>>(),
        [(1, true), (2, false), (3, false)]
    );
    // Nothing left to claim, and the other node is told to stop.
    assert!(n.claim(&req).await.unwrap().is_empty());
    assert_eq!(
        other.renew(&[o[0].key()]).await.unwrap(),
        vec![LeaseStatus::Stop(StopReason::JobFailed)]
    );
    assert_eq!(
        complete(&other, &o[0], 0).await,
        Completion::Refused(StopReason::JobFailed)
    );

    // A permanent failure (invalid input) fails the job at once.
    let s = n
        .submit(&job("k", Priority::Normal, 1, Some("bad")))
        .await
        .unwrap();
    let l = n.claim(&req).await.unwrap();
    assert_eq!(
        n.fail(&l[0].key(), "invalid input", FailMode::Permanent)
            .await
            .unwrap(),
        FailOutcome::JobFailed
    );
    assert_eq!(n.job(s.job_id).await.unwrap().state, JobState::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_reaches_the_lease_holder() {
    let db = TestDb::new().await;
    let worker = db.node("worker").await;
    let front = db.node("front").await;
    let s = front
        .submit(&job("k", Priority::Normal, 3, Some("j")))
        .await
        .unwrap();
    let l = worker.claim(&claim_req(&["k"], &[], 1)).await.unwrap();
    assert_eq!(
        worker.renew(&[l[0].key()]).await.unwrap(),
        vec![LeaseStatus::Held]
    );
    assert_eq!(
        front.cancel(s.job_id).await.unwrap(),
        (JobState::Cancelled, true)
    );
    assert_eq!(
        worker.renew(&[l[0].key()]).await.unwrap(),
        vec![LeaseStatus::Stop(StopReason::Cancelled)]
    );
    assert_eq!(
        complete(&worker, &l[0], 0).await,
        Completion::Refused(StopReason::Cancelled)
    );
    assert!(worker
        .claim(&claim_req(&["k"], &[], 5))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        front.cancel(s.job_id).await.unwrap(),
        (JobState::Cancelled, false)
    );
    assert_eq!(
        front.job(s.job_id).await.unwrap().state,
        JobState::Cancelled
    );
    assert!(matches!(
        front.cancel(999_999).await,
        Err(ClusterError::UnknownJob(999_999))
    ));

    // A completed job stays completed.
    let s = front
        .submit(&job("k", Priority::Normal, 1, Some("done")))
        .await
        .unwrap();
    let l = worker.claim(&claim_req(&["k"], &[], 1)).await.unwrap();
    complete(&worker, &l[0], 0).await;
    assert_eq!(
        front.cancel(s.job_id).await.unwrap(),
        (JobState::Completed, false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn heartbeats_list_nodes_and_their_leases() {
    let db = TestDb::new().await;
    let a = db.node("a").await;
    let b = db.node("b").await;
    a.submit(&job("k", Priority::Normal, 3, Some("j")))
        .await
        .unwrap();
    a.claim(&claim_req(&["k"], &[], 2)).await.unwrap();
    a.heartbeat(&NodeReport {
        kinds_supported: vec!["k".into(), "q".into()],
        kinds_resident: vec!["k".into()],
        free_vram_bytes: 80 << 30,
        queue_len: 2,
        capacity: 4,
        partitions_proved: 7,
        address: "10.0.0.5:9000".into(),
        heartbeat_interval: Duration::from_secs(10),
    })
    .await
    .unwrap();
    b.heartbeat(&NodeReport::default()).await.unwrap();
    b.heartbeat(&NodeReport {
        queue_len: 1,
        ..NodeReport::default()
    })
    .await
    .unwrap();
    let nodes = b.nodes().await.unwrap();
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0].node_id, "a");
    assert_eq!(nodes[0].report.kinds_resident, ["k"]);
    assert_eq!(nodes[0].report.free_vram_bytes, 80 << 30);
    assert_eq!(nodes[0].report.partitions_proved, 7);
    assert_eq!(nodes[0].leases, 2);
    assert_eq!(nodes[0].report.address, "10.0.0.5:9000");
    assert_eq!(nodes[0].report.heartbeat_interval, Duration::from_secs(10));
    assert_eq!(nodes[0].report.capacity, 4);
    assert!(nodes[0].alive() && nodes[1].alive());
    assert_eq!((nodes[1].report.queue_len, nodes[1].leases), (1, 0));
    let depth = b.queue_depth().await.unwrap();
    assert_eq!(
        depth,
        [QueueDepth {
            kind: "k".into(),
            priority: Priority::Normal,
            pending: 1,
            leased: 2
        }]
    );
}

/// What the simulated nodes saw.
#[derive(Default)]
struct Tally {
    /// Accepted results per partition.
    accepted: Mutex<HashMap<(JobId, u32), u32>>,
    injected_failures: AtomicU64,
    refused: AtomicU64,
    errors: AtomicU64,
    /// While set, nodes claim nothing new (they finish what they hold).
    paused: AtomicBool,
}

/// A node: claims batches, sometimes fails a partition once (to exercise
/// retries), renews, and reports, until `stop`.
async fn run_node(c: Arc<ClusterClient>, seed: u64, tally: Arc<Tally>, stop: Arc<AtomicBool>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let req = claim_req(&["k1", "k2"], &["k1"], 0);
    while !stop.load(Ordering::Relaxed) {
        if tally.paused.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(2)).await;
            continue;
        }
        let req = ClaimRequest {
            max: rng.gen_range(1..=4),
            ..req.clone()
        };
        let leases = match c.claim(&req).await {
            Ok(l) => l,
            Err(e) => {
                tally.errors.fetch_add(1, Ordering::Relaxed);
                eprintln!("{}: claim: {e}", c.node_id());
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if leases.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        if rng.gen_bool(0.3) {
            let keys: Vec<_> = leases.iter().map(Lease::key).collect();
            // A lease reaped meanwhile (a slow machine) is refused at
            // completion; the run's checks hold either way.
            let _ = c.renew(&keys).await;
        }
        for l in &leases {
            // One partition in ten fails on its first claim.
            let fail_first = (l.job_id as u64 * 31 + u64::from(l.partition)).is_multiple_of(10);
            let r = if fail_first && l.failures == 0 {
                match c.fail(&l.key(), "injected", FailMode::Retry).await {
                    Ok(FailOutcome::Requeued { .. }) => {
                        tally.injected_failures.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    }
                    Ok(o) => panic!("unexpected {o:?}"),
                    Err(e) => Err(e),
                }
            } else {
                match c.complete(&l.key(), &result_for(l, 0)).await {
                    Ok(Completion::Accepted { .. }) => {
                        *tally
                            .accepted
                            .lock()
                            .unwrap()
                            .entry((l.job_id, l.partition))
                            .or_default() += 1;
                        Ok(())
                    }
                    Ok(Completion::Refused(_)) => {
                        tally.refused.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            };
            if let Err(e) = r {
                tally.errors.fetch_add(1, Ordering::Relaxed);
                eprintln!("{}: report: {e}", c.node_id());
            }
        }
    }
}

async fn wait_all_final(raw: &ClusterClient, jobs: &[JobId]) -> Vec<JobRecord> {
    let mut out = Vec::new();
    for &id in jobs {
        out.push(
            tokio::time::timeout(
                Duration::from_secs(120),
                raw.wait_final(id, Duration::from_millis(20)),
            )
            .await
            .unwrap_or_else(|_| panic!("job {id} not final after 120 s"))
            .expect("job"),
        );
    }
    out
}

fn check_exactly_once(records: &[JobRecord], tally: &Tally) {
    let accepted = tally.accepted.lock().unwrap();
    let mut partitions = 0;
    for j in records {
        assert_eq!(j.state, JobState::Completed, "job {} {:?}", j.id, j.error);
        let want: Vec<u8> = (0..j.partitions)
            .flat_map(|i| fake_proof(j.id, i, 0))
            .collect();
        assert_eq!(j.proof.as_deref(), Some(&want[..]), "job {} proof", j.id);
        for i in 0..j.partitions {
            assert_eq!(
                accepted.get(&(j.id, i)),
                Some(&1),
                "job {} partition {i}",
                j.id
            );
        }
        partitions += j.partitions as usize;
    }
    assert_eq!(
        accepted.len(),
        partitions,
        "no result for a partition of no job"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn many_nodes_many_jobs_every_partition_once() {
    let db = TestDb::new().await;
    let admin = Arc::new(db.node("admin").await);
    const JOBS: usize = 300;
    const NODES: usize = 6;
    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let nodes: Vec<_> = (0..NODES)
        .map(|i| {
            let c = Arc::new(db.client(&format!("node{i}")));
            tokio::spawn(run_node(c, i as u64, tally.clone(), stop.clone()))
        })
        .collect();
    // Three front ends submit at once; every job is also submitted again by
    // another front end (a client retrying elsewhere).
    let fronts: Vec<_> = (0..3)
        .map(|f| {
            tokio::spawn({
                let c = Arc::new(db.client(&format!("front{f}")));
                async move {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(100 + f as u64);
                    let mut ids = Vec::new();
                    for i in (f..JOBS).step_by(3) {
                        let mut j = job(
                            if i % 2 == 0 { "k1" } else { "k2" },
                            Priority::from_i16(rng.gen_range(0..4)).unwrap(),
                            rng.gen_range(1..=10),
                            Some(&format!("job-{i}")),
                        );
                        j.input = JobInput::Inline(vec![i as u8; 64]);
                        let s = c.submit(&j).await.expect("submit");
                        assert!(!s.deduplicated);
                        ids.push((i, j, s.job_id));
                    }
                    ids
                }
            })
        })
        .collect();
    let mut jobs = Vec::new();
    for f in fronts {
        jobs.extend(f.await.unwrap());
    }
    for (_, j, id) in &jobs {
        let s = admin.submit(j).await.unwrap();
        assert_eq!((s.job_id, s.deduplicated), (*id, true));
    }
    let ids: Vec<_> = jobs.iter().map(|(_, _, id)| *id).collect();
    let records = wait_all_final(&admin, &ids).await;
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    for n in nodes {
        n.await.unwrap();
    }
    check_exactly_once(&records, &tally);
    let raw = db.raw().await;
    let parts = count(&raw, "SELECT count(*) FROM cuzk_partitions").await;
    assert_eq!(
        count(
            &raw,
            "SELECT count(*) FROM cuzk_partitions WHERE state = 'done'"
        )
        .await,
        parts
    );
    assert_eq!(
        count(&raw, "SELECT count(*) FROM cuzk_partition_failures").await as u64,
        tally.injected_failures.load(Ordering::Relaxed)
    );
    assert!(tally.injected_failures.load(Ordering::Relaxed) > 0);
    assert_eq!(tally.errors.load(Ordering::Relaxed), 0);
    eprintln!(
        "load: {JOBS} jobs, {parts} partitions, {NODES} nodes, {} injected failures, in {:.2} s ({:.0} partitions/s)",
        tally.injected_failures.load(Ordering::Relaxed),
        elapsed.as_secs_f64(),
        parts as f64 / elapsed.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn database_restart_mid_run_loses_nothing() {
    // A server of its own: restarting the shared one would cut the other
    // tests' connections.
    let server = Server::start().unwrap_or_else(|e| panic!("no PostgreSQL for this test: {e}"));
    let db = TestDb::on(&server.url).await;
    let admin = Arc::new(db.node("admin").await);
    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    // Short leases: a claim whose answer the restart lost is retried by
    // the reaper after this long.
    let clients: Vec<_> = (0..4)
        .map(|i| {
            let mut cfg = db.config(&format!("node{i}"));
            cfg.lease_ttl = Duration::from_secs(3);
            Arc::new(ClusterClient::new(cfg).unwrap())
        })
        .collect();
    let nodes: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| {
            tokio::spawn(run_node(
                c.clone(),
                50 + i as u64,
                tally.clone(),
                stop.clone(),
            ))
        })
        .collect();
    let mut ids = Vec::new();
    let mut total = 0;
    for i in 0..120u32 {
        let p = 1 + i % 8;
        total += p;
        ids.push(
            admin
                .submit(&job("k1", Priority::Normal, p, Some(&format!("j{i}"))))
                .await
                .unwrap()
                .job_id,
        );
    }
    // Restart once some but not all of the work is done.
    let start = Instant::now();
    while (tally.accepted.lock().unwrap().len() as u32) < total / 4 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no progress before the restart"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Claims pause while the server stops (on a loaded machine the nodes
    // could otherwise finish the whole batch before a slow shutdown takes
    // effect) and resume once it refuses connections, so that the nodes
    // claim and report against a database that is restarting.
    tally.paused.store(true, Ordering::Relaxed);
    let server = Arc::new(server);
    let restarting = {
        let s = server.clone();
        tokio::task::spawn_blocking(move || s.restart())
    };
    let down = Instant::now();
    while !restarting.is_finished()
        && down.elapsed() < Duration::from_secs(60)
        && tokio_postgres::connect(&server.url, tokio_postgres::NoTls)
            .await
            .is_ok()
    {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // Read as the server went down: the first batch was still being
    // worked on.
    let after_restart = tally.accepted.lock().unwrap().len() as u32;
    tally.paused.store(false, Ordering::Relaxed);
    restarting.await.unwrap();
    let first_batch = total;
    // Submits after the restart reconnect too.
    for i in 120..140u32 {
        ids.push(
            admin
                .submit(&job("k2", Priority::High, 2, Some(&format!("j{i}"))))
                .await
                .unwrap()
                .job_id,
        );
    }
    let records = wait_all_final(&admin, &ids).await;
    stop.store(true, Ordering::Relaxed);
    for n in nodes {
        n.await.unwrap();
    }
    assert!(
        after_restart < first_batch,
        "all {first_batch} partitions were done before the restart"
    );
    check_exactly_once(&records, &tally);
    assert!(
        clients.iter().any(|c| c.connections_opened() > 1) && admin.connections_opened() > 1,
        "the clients reconnected"
    );
    // An answer lost in the restart can leave a claim unworked until its
    // lease expires; none is lost, which check_exactly_once showed.
    drop(db);
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_that_makes_no_sense_is_refused() {
    let db = TestDb::new().await;
    let n = db.node("n").await;
    let s = n
        .submit(&job("k", Priority::Normal, 2, Some("j")))
        .await
        .unwrap();
    let raw = db.raw().await;
    // More partitions done than the job has: reported, not believed.
    raw.execute(
        "UPDATE cuzk_jobs SET done_parts = 5 WHERE id = $1",
        &[&s.job_id],
    )
    .await
    .unwrap();
    match n.job(s.job_id).await {
        Err(ClusterError::BadRow { table, key, .. }) => {
            assert_eq!((table, key), ("cuzk_jobs", s.job_id.to_string()))
        }
        other => panic!("expected BadRow, got {other:?}"),
    }
    // The schema refuses what it can.
    assert!(raw
        .execute("UPDATE cuzk_partitions SET priority = 9", &[])
        .await
        .is_err());
    assert!(raw
        .execute("UPDATE cuzk_jobs SET state = 'proving'", &[])
        .await
        .is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_keeper_renews_and_reports_stops() {
    let db = TestDb::new().await;
    let mut cfg = db.config("worker");
    cfg.lease_ttl = Duration::from_millis(600);
    let worker = ClusterClient::new(cfg.clone()).unwrap();
    worker.migrate().await.unwrap();
    let keeper = LeaseKeeper::start(Arc::new(ClusterClient::new(cfg).unwrap()));
    let front = db.node("front").await;
    let s = front
        .submit(&job("k", Priority::Normal, 2, Some("j")))
        .await
        .unwrap();
    let leases = worker.claim(&claim_req(&["k"], &[], 2)).await.unwrap();
    let mut held: Vec<_> = leases.iter().map(|l| keeper.hold(l)).collect();
    let raw = db.raw().await;
    let expiry = |idx: i32| {
        let raw = &raw;
        let id = s.job_id;
        async move {
            raw.query_one(
                "SELECT EXTRACT(EPOCH FROM lease_expires)::float8 FROM cuzk_partitions \
                 WHERE job_id = $1 AND idx = $2",
                &[&id, &idx],
            )
            .await
            .unwrap()
            .get::<_, f64>(0)
        }
    };
    let first = expiry(0).await;
    let start = Instant::now();
    while keeper.renewals() < 3 {
        assert!(start.elapsed() < Duration::from_secs(30), "no renewals");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(expiry(0).await > first, "renewals moved the expiry");
    assert!(held.iter().all(|h| h.stop().is_none()));

    // Cancelled from another node: the keeper tells the worker.
    front.cancel(s.job_id).await.unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(30), held[0].stopped())
        .await
        .expect("a stop within 30 s");
    assert_eq!(reason, StopReason::Cancelled);
    // The other partition's stop may come a renewal round later.
    let reason = tokio::time::timeout(Duration::from_secs(30), held[1].stopped())
        .await
        .expect("a stop within 30 s");
    assert_eq!(reason, StopReason::Cancelled);
    assert_eq!(keeper.held(), 0);

    // Dropping a handle stops renewing it.
    let s = front
        .submit(&job("k", Priority::Normal, 1, Some("j2")))
        .await
        .unwrap();
    let l = worker.claim(&claim_req(&["k"], &[], 1)).await.unwrap();
    let h = keeper.hold(&l[0]);
    assert_eq!(keeper.held(), 1);
    drop(h);
    assert_eq!(keeper.held(), 0);
    held.clear();
    complete_job(&worker, &l[0], 0, &front, s.job_id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_id_names_its_latest_attempt() {
    let db = TestDb::new().await;
    let a = db.node("a").await;
    let b = db.node("b").await;
    let req = claim_req(&["k"], &[], 10);
    let mut other = job("k", Priority::Normal, 1, Some("r"));
    other.input = JobInput::Inline(b"other input".to_vec());

    // Cancelled: the same request id on another daemon is a new attempt.
    let first = a
        .submit(&job("k", Priority::Normal, 1, Some("r")))
        .await
        .unwrap();
    a.cancel(first.job_id).await.unwrap();
    let second = b
        .submit(&job("k", Priority::Normal, 1, Some("r")))
        .await
        .unwrap();
    assert!(!second.deduplicated);
    assert_ne!(second.job_id, first.job_id);
    assert_eq!(a.job_of_request("r").await.unwrap(), Some(second.job_id));

    // Completed: returned for the same input, replaced for another.
    let l = a.claim(&req).await.unwrap();
    complete(&a, &l[0], 0).await;
    let again = b
        .submit(&job("k", Priority::Normal, 1, Some("r")))
        .await
        .unwrap();
    assert_eq!((again.job_id, again.deduplicated), (second.job_id, true));
    let third = b.submit(&other).await.unwrap();
    assert!(!third.deduplicated);
    assert_ne!(third.job_id, second.job_id);

    // Failed: a new attempt. The earlier attempts stay readable.
    let l = a.claim(&req).await.unwrap();
    assert_eq!(l[0].job_id, third.job_id);
    a.fail(&l[0].key(), "bad", FailMode::Permanent)
        .await
        .unwrap();
    let fourth = a.submit(&other).await.unwrap();
    assert!(!fourth.deduplicated);
    assert_eq!(b.job_of_request("r").await.unwrap(), Some(fourth.job_id));
    assert_eq!(
        b.job(first.job_id).await.unwrap().state,
        JobState::Cancelled
    );
    assert_eq!(
        b.job(second.job_id).await.unwrap().state,
        JobState::Completed
    );
    assert_eq!(b.job(third.job_id).await.unwrap().state, JobState::Failed);
    assert_eq!(b.job(fourth.job_id).await.unwrap().request_id, "r");

    // Several daemons retrying a failed request at once: one new attempt.
    let l = a.claim(&req).await.unwrap();
    a.fail(&l[0].key(), "bad", FailMode::Permanent)
        .await
        .unwrap();
    let clients: Vec<_> = (0..6)
        .map(|i| Arc::new(db.client(&format!("s{i}"))))
        .collect();
    let tasks: Vec<_> = clients
        .iter()
        .map(|c| {
            let (c, j) = (c.clone(), other.clone());
            tokio::spawn(async move { c.submit(&j).await })
        })
        .collect();
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.unwrap().unwrap());
    }
    assert_eq!(ids.iter().filter(|s| !s.deduplicated).count(), 1);
    assert!(ids.iter().all(|s| s.job_id == ids[0].job_id));
    let raw = db.raw().await;
    assert_eq!(count(&raw, "SELECT count(*) FROM cuzk_jobs").await, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn young_partitions_wait_for_an_alive_holder_with_room() {
    let db = TestDb::new().await;
    let grace = |name: &str, g: Duration| {
        let mut cfg = db.config(name);
        cfg.placement_grace = g;
        ClusterClient::new(cfg).unwrap()
    };
    let holder = grace("holder", Duration::from_secs(300));
    let cold = grace("cold", Duration::from_secs(300));
    cold.migrate().await.unwrap();
    let holds = |capacity: u32| NodeReport {
        kinds_supported: vec!["k".into()],
        kinds_resident: vec!["k".into()],
        capacity,
        heartbeat_interval: Duration::from_secs(10),
        ..NodeReport::default()
    };
    holder.heartbeat(&holds(2)).await.unwrap();
    let j1 = cold
        .submit(&job("k", Priority::Normal, 3, Some("j1")))
        .await
        .unwrap()
        .job_id;
    // The holder is alive with room (no lease of its 2): left to it.
    assert!(cold
        .claim(&claim_req(&["k"], &[], 3))
        .await
        .unwrap()
        .is_empty());
    // It takes its capacity's worth: full, it holds the third back no
    // longer.
    let h = holder.claim(&claim_req(&["k"], &["k"], 2)).await.unwrap();
    assert_eq!(h.len(), 2);
    let c = cold.claim(&claim_req(&["k"], &[], 3)).await.unwrap();
    assert_eq!(
        c.iter()
            .map(|l| (l.job_id, l.partition))
            .collect::<Vec<_>>(),
        [(j1, 2)]
    );
    // A node that does not say its capacity (schema version 2) counts as
    // having room, as before.
    holder.heartbeat(&holds(0)).await.unwrap();
    let j2 = cold
        .submit(&job("k", Priority::Normal, 1, Some("j2")))
        .await
        .unwrap()
        .job_id;
    assert!(cold
        .claim(&claim_req(&["k"], &[], 3))
        .await
        .unwrap()
        .is_empty());
    // Room again after a result, with the capacity said.
    complete(&holder, &h[0], 1).await;
    holder.heartbeat(&holds(2)).await.unwrap();
    assert!(cold
        .claim(&claim_req(&["k"], &[], 3))
        .await
        .unwrap()
        .is_empty());
    // A holder silent for three of its heartbeat intervals is dead and
    // holds nothing back.
    let raw = db.raw().await;
    raw.execute(
        "UPDATE cuzk_nodes SET last_seen = now() - interval '31 seconds' \
         WHERE node_id = 'holder'",
        &[],
    )
    .await
    .unwrap();
    let c = cold.claim(&claim_req(&["k"], &[], 3)).await.unwrap();
    assert_eq!(
        c.iter()
            .map(|l| (l.job_id, l.partition))
            .collect::<Vec<_>>(),
        [(j2, 0)]
    );
    // Past the grace, an alive holder with room holds nothing back either.
    holder.heartbeat(&holds(2)).await.unwrap();
    let short = grace("short", Duration::from_secs(2));
    let j3 = short
        .submit(&job("k", Priority::Normal, 1, Some("j3")))
        .await
        .unwrap()
        .job_id;
    assert!(short
        .claim(&claim_req(&["k"], &[], 3))
        .await
        .unwrap()
        .is_empty());
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let c = short.claim(&claim_req(&["k"], &[], 3)).await.unwrap();
    assert_eq!(
        c.iter()
            .map(|l| (l.job_id, l.partition))
            .collect::<Vec<_>>(),
        [(j3, 0)]
    );
}

/// A 32 GiB PoRep's C1 output is about 67 MB: a 70 MB input goes into the
/// job row once, a repeated request id is compared by digest (without
/// sending the input again), and the input comes back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_large_input_is_stored_once_and_its_request_id_compared_by_digest() {
    let db = TestDb::new().await;
    let n = db.node("n").await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(70);
    let mut big = vec![0u8; 70 << 20];
    rng.fill(&mut big[..]);
    let mut new_job = job("porep-32g", Priority::Normal, 10, Some("big"));
    new_job.input = JobInput::Inline(big.clone());
    let t = Instant::now();
    let s = n.submit(&new_job).await.unwrap();
    eprintln!("70 MB submit: {:?}", t.elapsed());
    assert!(!s.deduplicated);
    let t = Instant::now();
    let again = n.submit(&new_job).await.unwrap();
    eprintln!("70 MB resubmit (digest only): {:?}", t.elapsed());
    assert_eq!((again.job_id, again.deduplicated), (s.job_id, true));
    // One byte different, the job unfinished: another input under the id.
    let mut other = new_job.clone();
    if let JobInput::Inline(b) = &mut other.input {
        b[12345] ^= 1;
    }
    assert!(matches!(
        n.submit(&other).await,
        Err(ClusterError::RequestIdConflict(_))
    ));
    let raw = db.raw().await;
    let row = raw
        .query_one(
            "SELECT octet_length(input), input_digest = sha256(input), \
               (SELECT count(*) FROM cuzk_jobs) FROM cuzk_jobs WHERE id = $1",
            &[&s.job_id],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), 70 << 20);
    assert!(row.get::<_, bool>(1), "the stored digest is the input's");
    assert_eq!(row.get::<_, i64>(2), 1);
    // A row of schema version 2 has no digest: the database hashes its
    // input for the comparison.
    raw.execute(
        "UPDATE cuzk_jobs SET input_digest = NULL WHERE id = $1",
        &[&s.job_id],
    )
    .await
    .unwrap();
    let again = n.submit(&new_job).await.unwrap();
    assert_eq!((again.job_id, again.deduplicated), (s.job_id, true));
    let t = Instant::now();
    let input = n.job_input(s.job_id).await.unwrap();
    eprintln!("70 MB fetch: {:?}", t.elapsed());
    assert!(input == JobInput::Inline(big), "the input came back whole");

    // Ended (here cancelled), the job keeps its digest but not its input.
    n.cancel(s.job_id).await.unwrap();
    let row = raw
        .query_one(
            "SELECT input IS NULL, input_digest IS NOT NULL FROM cuzk_jobs WHERE id = $1",
            &[&s.job_id],
        )
        .await
        .unwrap();
    assert_eq!((row.get::<_, bool>(0), row.get::<_, bool>(1)), (true, true));
    assert!(matches!(
        n.job_input(s.job_id).await,
        Err(ClusterError::InputDropped(id)) if id == s.job_id
    ));
    // Cancelled: the same request is a new attempt.
    let retry = n.submit(&new_job).await.unwrap();
    assert!(!retry.deduplicated && retry.job_id != s.job_id);
    n.cancel(retry.job_id).await.unwrap();

    // Completed: the same input is that job (by its kept digest), another
    // input a new attempt. A row from schema version 2 (no digest) gets
    // one as its input is dropped.
    let small = job("k", Priority::Normal, 1, Some("small"));
    let done = n.submit(&small).await.unwrap().job_id;
    raw.execute(
        "UPDATE cuzk_jobs SET input_digest = NULL WHERE id = $1",
        &[&done],
    )
    .await
    .unwrap();
    let l = n.claim(&claim_req(&["k"], &[], 1)).await.unwrap();
    assert_eq!(l[0].job_id, done);
    assert_eq!(complete(&n, &l[0], 1).await, JOB_DONE);
    let again = n.submit(&small).await.unwrap();
    assert_eq!((again.job_id, again.deduplicated), (done, true));
    let mut changed = small.clone();
    changed.input = JobInput::Inline(b"another input".to_vec());
    assert!(!n.submit(&changed).await.unwrap().deduplicated);
    // The schema refuses a row without input while unfinished.
    assert!(raw
        .execute(
            "UPDATE cuzk_jobs SET input = NULL WHERE state = 'queued'",
            &[]
        )
        .await
        .is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn young_partitions_no_holder_takes_wait_for_a_node_with_more_free_vram() {
    let db = TestDb::new().await;
    let grace = |name: &str| {
        let mut cfg = db.config(name);
        cfg.placement_grace = Duration::from_secs(300);
        ClusterClient::new(cfg).unwrap()
    };
    let (big, small) = (grace("big"), grace("small"));
    small.migrate().await.unwrap();
    let report = |kinds: &[&str], vram: u64, capacity: u32| NodeReport {
        kinds_supported: kinds.iter().map(|k| k.to_string()).collect(),
        free_vram_bytes: vram,
        capacity,
        heartbeat_interval: Duration::from_secs(10),
        ..NodeReport::default()
    };
    let req = |vram: u64, max: u32| ClaimRequest {
        free_vram_bytes: vram,
        ..claim_req(&["k"], &[], max)
    };
    let parts = |l: &[Lease]| {
        l.iter()
            .map(|l| (l.job_id, l.partition))
            .collect::<Vec<_>>()
    };
    big.heartbeat(&report(&["k"], 80 << 30, 1)).await.unwrap();
    let j1 = small
        .submit(&job("k", Priority::Normal, 2, Some("j1")))
        .await
        .unwrap()
        .job_id;
    // Resident nowhere; an alive node with room and more free VRAM proves
    // it: left to that node.
    assert!(small.claim(&req(24 << 30, 2)).await.unwrap().is_empty());
    // That node, from its side, sees none roomier and takes one: full
    // (capacity 1), it holds the other back no longer.
    assert_eq!(
        parts(&big.claim(&req(80 << 30, 1)).await.unwrap()),
        [(j1, 0)]
    );
    assert_eq!(
        parts(&small.claim(&req(24 << 30, 2)).await.unwrap()),
        [(j1, 1)]
    );
    // A roomier node that does not prove the kind, or one with as much
    // free VRAM (CPU nodes: 0 each), holds nothing back.
    for (kinds, vram) in [(&["other"][..], 80 << 30), (&["k"][..], 24 << 30)] {
        big.heartbeat(&report(kinds, vram, 4)).await.unwrap();
        let j = small
            .submit(&job("k", Priority::Normal, 1, None))
            .await
            .unwrap()
            .job_id;
        assert_eq!(
            parts(&small.claim(&req(24 << 30, 2)).await.unwrap()),
            [(j, 0)]
        );
    }
}
