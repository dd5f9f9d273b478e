//! Cluster mode end to end: daemons in this process sharing one real
//! PostgreSQL database (started by scripts/pg-test-server.sh, or the one
//! `CUZK_TEST_DATABASE_URL` names; a database of its own per test, dropped
//! after; no server fails the test, as in cuzk-cluster's tests), clients
//! on their gRPC sockets, proofs checked against the verifying key read
//! from the parameter file the daemons share.

mod common;
#[path = "../../cuzk-cluster/tests/common/mod.rs"]
mod pg;

use common::{await_done, check_proofs, eventually, TestDaemon};
use cuzk_cluster::{JobState as DbJobState, PartitionState};
use cuzk_core::params::MappedParameters;
use cuzk_core::verifier::prepare_verifying_key;
use cuzk_daemon::client::DaemonClient;
use cuzk_daemon::config::DaemonConfig;
use cuzk_daemon::kinds::{CircuitKind, JobInput, KindError, PorepLikeInput, PorepLikeKind};
use cuzk_daemon::proto;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const LOG: u32 = 8;

/// porep-like-8 whose every partition's synthesis takes `delay` longer, so
/// that a partition is still in hand when the test acts (claims spread
/// over daemons, a daemon killed mid-job, a cancel arriving mid-job).
struct Slow(PorepLikeKind, Duration);

impl CircuitKind for Slow {
    fn name(&self) -> &str {
        "slow-8"
    }
    fn params_id(&self) -> &str {
        self.0.params_id()
    }
    fn batchable(&self) -> bool {
        false
    }
    fn decode_input(&self, input: &[u8]) -> Result<(JobInput, usize), KindError> {
        self.0.decode_input(input)
    }
    fn synthesize(
        &self,
        parts: &[(JobInput, usize)],
    ) -> Result<Vec<cuzk_core::synthesis::ProvingAssignment>, KindError> {
        std::thread::sleep(self.1);
        self.0.synthesize(parts)
    }
    fn synthesize_parts(
        &self,
        parts: &[(JobInput, usize)],
    ) -> Result<Vec<cuzk_core::prover::Synthesized>, KindError> {
        std::thread::sleep(self.1);
        self.0.synthesize_parts(parts)
    }
    fn host_bytes_per_partition(&self) -> u64 {
        self.0.host_bytes_per_partition()
    }
    fn generates_params(&self) -> bool {
        true
    }
    fn generate_params(&self) -> Option<Result<cuzk_core::Parameters, KindError>> {
        self.0.generate_params()
    }
}

/// A daemon of the cluster on `db`, its parameters in `params` (shared by
/// the test's daemons: porep-like parameters are random, and a job's
/// partitions proved on two daemons verify against one key only if the
/// daemons hold the same file).
async fn node(
    db: &pg::TestDb,
    name: &str,
    params: &Path,
    delay: Duration,
    edit: impl FnOnce(&mut DaemonConfig),
) -> TestDaemon {
    let url = db.url.clone();
    let name = name.to_owned();
    let params = params.to_owned();
    TestDaemon::start_with(
        move |cfg| {
            cfg.params.dir = params;
            cfg.kinds.porep_like_log_sizes = vec![LOG];
            cfg.engine.synthesis_concurrency = 1;
            cfg.cluster.database_url = Some(url);
            cfg.cluster.node_id = Some(name);
            // Short, so that an expired lease is re-run within the test
            // (renewed every second).
            cfg.cluster.lease_ttl_s = 3;
            cfg.cluster.poll_interval_ms = 50;
            cfg.cluster.heartbeat_interval_s = 1;
            cfg.cluster.max_claimed = Some(1);
            cfg.cluster.reconnect_for_s = 60;
            edit(cfg);
        },
        move |b| b.register_kind(Arc::new(Slow(PorepLikeKind::new(LOG, 16), delay))),
    )
    .await
}

fn submit(seed: u64, partitions: u32, request_id: &str) -> proto::SubmitProofRequest {
    proto::SubmitProofRequest {
        request_id: request_id.into(),
        kind: "slow-8".into(),
        input: PorepLikeInput { seed, partitions }.encode(),
        priority: proto::Priority::Normal as i32,
        client_id: String::new(),
    }
}

async fn submit_to(c: &mut DaemonClient, r: proto::SubmitProofRequest) -> (u64, bool) {
    let s = c.submit_proof(r).await.unwrap().into_inner();
    (s.job_id, s.deduplicated)
}

fn pvk(params: &Path) -> cuzk_core::verifier::PreparedVerifyingKey {
    let m = MappedParameters::open(&params.join(format!("porep-like-{LOG}.params"))).unwrap();
    prepare_verifying_key(&m.vk)
}

/// The first daemon makes the parameter file; the others start after it
/// exists.
async fn make_params(d: &TestDaemon) {
    d.daemon()
        .engine
        .preload(&[format!("porep-like-{LOG}")])
        .await
        .unwrap();
}

fn cluster(d: &TestDaemon) -> &Arc<cuzk_daemon::cluster::ClusterNode> {
    d.daemon().cluster.as_ref().expect("cluster mode")
}

async fn stop(d: TestDaemon) {
    let mut d = d;
    if let Some(r) = d.d.take() {
        r.shutdown_with(
            cuzk_daemon::config::ShutdownMode::Cancel,
            Duration::from_secs(10),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_submitted_to_one_daemon_is_proved_by_both_and_awaited_on_the_other() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(700);
    let a = node(&db, "node-a", params.path(), delay, |_| {}).await;
    make_params(&a).await;
    let b = node(&db, "node-b", params.path(), delay, |_| {}).await;
    let (mut ca, mut cb) = (a.unix().await, b.unix().await);

    let parts = 6;
    let (id, dedup) = submit_to(&mut ca, submit(41, parts, "")).await;
    assert!(!dedup);
    let r = await_done(&mut cb, id).await;
    check_proofs(&pvk(params.path()), LOG, 41, parts, &r);
    assert_eq!(r.kind, "slow-8");
    // The same answer from the daemon it was submitted to.
    let ra = await_done(&mut ca, id).await;
    assert_eq!((ra.proof, ra.public_inputs), (r.proof, r.public_inputs));

    let rows = cluster(&a).client().partitions(id as i64).await.unwrap();
    assert_eq!(rows.len(), parts as usize);
    assert!(
        rows.iter().all(|p| p.state == PartitionState::Done),
        "{rows:?}"
    );
    let provers: BTreeSet<_> = rows.iter().filter_map(|p| p.node.clone()).collect();
    // Each daemon holds one partition at a time and each takes 700 ms:
    // both get some of the six.
    assert_eq!(
        provers,
        BTreeSet::from(["node-a".to_owned(), "node-b".to_owned()]),
        "{rows:?}"
    );
    assert_eq!(
        cluster(&a).partitions_proved() + cluster(&b).partitions_proved(),
        u64::from(parts)
    );
    // Heartbeats name both daemons and what they prove.
    assert!(
        eventually(Duration::from_secs(10), || async {
            let n = cluster(&b).client().nodes().await.unwrap();
            n.len() == 2
                && n.iter().all(|x| {
                    x.report.kinds_supported.contains(&"slow-8".to_owned())
                        && x.report.partitions_proved > 0
                })
        })
        .await,
        "heartbeats"
    );
    // A job id the queue does not know.
    let e = cb
        .await_proof(proto::AwaitProofRequest {
            job_id: 999_999,
            timeout_ms: 10,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_daemons_partitions_are_rerun_by_another_after_its_leases_expire() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    // Long enough that the first daemon finishes nothing before it is
    // killed.
    let delay = Duration::from_secs(3);
    let a = node(&db, "node-a", params.path(), delay, |c| {
        c.cluster.max_claimed = Some(2)
    })
    .await;
    make_params(&a).await;
    let mut ca = a.unix().await;
    let parts = 3;
    let (id, _) = submit_to(&mut ca, submit(77, parts, "killed")).await;
    assert!(
        eventually(Duration::from_secs(20), || async {
            cluster(&a).claimed() == 2
        })
        .await,
        "node-a never claimed"
    );
    // Killed: no result, no failure, no release reaches the queue.
    cluster(&a).kill();
    assert_eq!(cluster(&a).partitions_proved(), 0);

    let b = node(
        &db,
        "node-b",
        params.path(),
        Duration::from_millis(100),
        |_| {},
    )
    .await;
    let mut cb = b.unix().await;
    let r = await_done(&mut cb, id).await;
    check_proofs(&pvk(params.path()), LOG, 77, parts, &r);

    let job = cluster(&b).client().job(id as i64).await.unwrap();
    assert_eq!(job.state, DbJobState::Completed);
    let expired: Vec<_> = job
        .failures
        .iter()
        .filter(|f| f.lease_expired && f.node == "node-a")
        .collect();
    assert_eq!(expired.len(), 2, "{:?}", job.failures);
    assert_eq!(job.failures.len(), 2, "{:?}", job.failures);
    let rows = cluster(&b).client().partitions(id as i64).await.unwrap();
    for p in &rows {
        assert_eq!(p.state, PartitionState::Done);
        assert_eq!(p.node.as_deref(), Some("node-b"), "{rows:?}");
    }
    // The partitions node-a held were claimed twice, the other once.
    let claims: Vec<i32> = rows.iter().map(|p| p.claims).collect();
    assert_eq!(claims.iter().sum::<i32>(), 5, "{rows:?}");
    assert_eq!(cluster(&b).partitions_proved(), u64::from(parts));
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_id_names_one_job_across_the_cluster() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(500);
    let a = node(&db, "node-a", params.path(), delay, |_| {}).await;
    make_params(&a).await;
    let b = node(&db, "node-b", params.path(), delay, |_| {}).await;
    let (mut ca, mut cb) = (a.unix().await, b.unix().await);

    let (id, dedup) = submit_to(&mut ca, submit(5, 2, "req-1")).await;
    assert!(!dedup);
    let (id_b, dedup_b) = submit_to(&mut cb, submit(5, 2, "req-1")).await;
    assert_eq!((id_b, dedup_b), (id, true));
    // The same id for another input while the first is unfinished.
    let e = cb.submit_proof(submit(6, 2, "req-1")).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::AlreadyExists, "{e}");
    let r = await_done(&mut cb, id).await;
    check_proofs(&pvk(params.path()), LOG, 5, 2, &r);
    // Completed: the same request returns it, without proving again.
    let (again, d) = submit_to(&mut cb, submit(5, 2, "req-1")).await;
    assert_eq!((again, d), (id, true));
    // A malformed input is refused at submission, never stored.
    let mut bad = submit(5, 2, "req-bad");
    bad.input.truncate(3);
    let e = ca.submit_proof(bad).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    assert_eq!(
        cluster(&a)
            .client()
            .job_of_request("req-bad")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        cluster(&a).partitions_proved() + cluster(&b).partitions_proved(),
        2
    );
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_on_one_daemon_stops_the_daemon_proving_the_job() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_secs(4);
    let a = node(&db, "node-a", params.path(), delay, |_| {}).await;
    make_params(&a).await;
    let b = node(&db, "node-b", params.path(), delay, |_| {}).await;
    let (mut ca, mut cb) = (a.unix().await, b.unix().await);

    let (id, _) = submit_to(&mut ca, submit(9, 4, "")).await;
    assert!(
        eventually(Duration::from_secs(20), || async {
            cluster(&a).claimed() + cluster(&b).claimed() == 2
        })
        .await,
        "the partitions were not claimed"
    );
    let c = cb
        .cancel_proof(proto::CancelProofRequest { job_id: id })
        .await
        .unwrap()
        .into_inner();
    assert!(c.cancelled);
    assert_eq!(c.state, proto::JobState::Cancelled as i32);
    let r = await_done(&mut ca, id).await;
    assert_eq!(r.state, proto::JobState::Cancelled as i32);
    assert!(r.proof.is_empty());
    // Each daemon learns it at its next renewal (every second) and cancels
    // its local job, well before the partition's synthesis would end.
    for d in [&a, &b] {
        assert!(
            eventually(Duration::from_secs(20), || async {
                d.daemon().engine.status().counters.cancelled == 1 && cluster(d).claimed() == 0
            })
            .await,
            "the cancel did not reach {}",
            cluster(d).node_id()
        );
        assert_eq!(cluster(d).partitions_proved(), 0);
    }
    let rows = cluster(&a).client().partitions(id as i64).await.unwrap();
    assert!(
        rows.iter().all(|p| p.state == PartitionState::Cancelled),
        "{rows:?}"
    );
    stop(a).await;
    stop(b).await;
}

#[test]
fn cluster_settings_parse_and_are_checked() {
    let cfg: DaemonConfig = toml::from_str("").unwrap();
    assert!(cfg.cluster.database_url.is_none());
    assert_eq!(cfg.cluster.lease_ttl_s, 30);
    let cfg: DaemonConfig = toml::from_str(
        "[cluster]\ndatabase_url = \"postgres://u@h/db\"\nnode_id = \"n1\"\nlease_ttl_s = 5\n\
         max_failures = 2\nmax_claimed = 3\n",
    )
    .unwrap();
    cfg.validate().unwrap();
    assert_eq!(cfg.cluster.max_claimed, Some(3));
    for bad in [
        "lease_ttl_s = 0",
        "max_failures = 0",
        "max_claimed = 0",
        "database_url = \"\"",
        "node_id = \"\"",
    ] {
        let cfg: DaemonConfig = toml::from_str(&format!("[cluster]\n{bad}\n")).unwrap();
        let e = cfg.validate().unwrap_err();
        assert!(e.to_string().contains("cluster."), "{bad}: {e}");
    }
    assert!(toml::from_str::<DaemonConfig>("[cluster]\nbogus = 1\n").is_err());
}
