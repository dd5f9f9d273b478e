//! Cluster mode end to end: daemons in this process sharing one real
//! PostgreSQL database (started by scripts/pg-test-server.sh, or the one
//! `CUZK_TEST_DATABASE_URL` names; a database of its own per test, dropped
//! after; no server fails the test, as in cuzk-cluster's tests), clients
//! on their gRPC sockets, proofs checked against the verifying key read
//! from the parameter file the daemons share.

mod common;
#[path = "../../cuzk-cluster/tests/common/mod.rs"]
mod pg;

use common::{await_done, check_proofs, eventually, status, TestDaemon, Variant};
use cuzk_cluster::{ClusterError, JobState as DbJobState, PartitionState};
use cuzk_core::params::MappedParameters;
use cuzk_core::verifier::prepare_verifying_key;
use cuzk_daemon::client::DaemonClient;
use cuzk_daemon::config::DaemonConfig;
use cuzk_daemon::kinds::{CircuitKind, JobInput, KindError, PorepLikeInput, PorepLikeKind};
use cuzk_daemon::proto;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const LOG: u32 = 8;

/// porep-like-8 whose every partition's synthesis takes `delay` longer, so
/// that a partition is still in hand when the test acts (claims spread
/// over daemons, a daemon killed mid-job, a cancel arriving mid-job).
fn slow(delay: Duration) -> Variant {
    Variant::new(PorepLikeKind::new(LOG, 16), "slow-8")
        .single()
        .before_synthesis(move || std::thread::sleep(delay))
}

/// Padding after a big-8 input's porep-like bytes: a 32 GiB PoRep's C1
/// output is about 67 MB.
const BIG_PAD: usize = 70 << 20;

/// slow-8 ([`slow`]) whose input carries `BIG_PAD` bytes after its
/// porep-like bytes, as large as a 32 GiB PoRep's C1 output; counts its
/// decodes.
struct Big(Variant, Arc<AtomicUsize>);

impl CircuitKind for Big {
    fn name(&self) -> &str {
        "big-8"
    }
    fn params_id(&self) -> &str {
        self.0.params_id()
    }
    fn batchable(&self) -> bool {
        false
    }
    fn decode_input(&self, input: &[u8]) -> Result<(JobInput, usize), KindError> {
        self.1.fetch_add(1, Ordering::SeqCst);
        let head = input
            .len()
            .checked_sub(BIG_PAD)
            .ok_or_else(|| KindError::MalformedInput {
                kind: "big-8".into(),
                source: format!("{} bytes, fewer than the padding", input.len()).into(),
            })?;
        self.0.decode_input(&input[..head])
    }
    fn synthesize(
        &self,
        parts: &[(JobInput, usize)],
    ) -> Result<Vec<cuzk_core::synthesis::ProvingAssignment>, KindError> {
        self.0.synthesize(parts)
    }
    fn synthesize_parts(
        &self,
        parts: &[(JobInput, usize)],
    ) -> Result<Vec<cuzk_core::prover::Synthesized>, KindError> {
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
    node_with(db, name, params, delay, edit, None).await
}

/// [`node`] with big-8 too, its decodes counted in `big`.
async fn node_with(
    db: &pg::TestDb,
    name: &str,
    params: &Path,
    delay: Duration,
    edit: impl FnOnce(&mut DaemonConfig),
    big: Option<Arc<AtomicUsize>>,
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
            // Residency does not hold partitions back unless a test asks.
            cfg.cluster.placement_grace_s = 0;
            edit(cfg);
        },
        move |b| {
            let b = b.register_kind(Arc::new(slow(delay)));
            match big {
                Some(n) => b.register_kind(Arc::new(Big(slow(delay), n))),
                None => b,
            }
        },
    )
    .await
}

/// A sample's value in a daemon's `/metrics` text (`series`: the name with
/// its labels as printed), or None.
fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let (name, v) = l.rsplit_once(' ')?;
        (name == series).then(|| v.parse().ok())?
    })
}

async fn metrics_of(d: &TestDaemon) -> String {
    let (code, body) = common::http_get(
        d.daemon().http_addr.unwrap(),
        "/metrics",
        Some(common::TOKEN),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    body
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
    let m = MappedParameters::open(&params.join(format!(
        "{}.params",
        cuzk_core::circuits::porep_like::params_id(LOG)
    )))
    .unwrap();
    prepare_verifying_key(&m.vk)
}

/// The first daemon makes the parameter file; the others start after it
/// exists.
/// Nodes a and b, plain, over one parameter directory whose file a made.
async fn two_nodes(db: &pg::TestDb, params: &Path, delay: Duration) -> (TestDaemon, TestDaemon) {
    let a = node(db, "node-a", params, delay, |_| {}).await;
    make_params(&a).await;
    let b = node(db, "node-b", params, delay, |_| {}).await;
    (a, b)
}

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

/// Partitions the queue accepted from these nodes, once their counters
/// settle: a node counts a result just after the database took it, so a
/// job can read as completed a moment before the last count. Waits for
/// `want`, then checks that no more arrive (a duplicate counted would).
async fn assert_proved(nodes: &[&TestDaemon], want: u64) {
    let sum = || {
        nodes
            .iter()
            .map(|d| cluster(d).partitions_proved())
            .sum::<u64>()
    };
    eventually(Duration::from_secs(10), || {
        let now = sum();
        async move { now >= want }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sum(), want, "partitions accepted from these nodes");
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
    let (a, b) = two_nodes(&db, params.path(), delay).await;
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
    assert_proved(&[&a, &b], u64::from(parts)).await;
    // Each daemon's metrics carry its part: results stored, claims, the
    // input fetched once for its partitions, the database up.
    let stored = "cuzk_cluster_results_total{outcome=\"stored\"}";
    let mut sum = 0.0;
    for d in [&a, &b] {
        let m = metrics_of(d).await;
        let v = |series: &str| metric(&m, series).unwrap_or_else(|| panic!("{series}: {m}"));
        sum += v(stored);
        assert_eq!(v(stored), cluster(d).partitions_proved() as f64, "{m}");
        assert!(
            v("cuzk_cluster_partitions_claimed_total") >= v(stored),
            "{m}"
        );
        assert_eq!(v("cuzk_cluster_inputs_fetched_total"), 1.0, "{m}");
        assert_eq!(v("cuzk_cluster_database_up"), 1.0, "{m}");
        assert_eq!(v("cuzk_cluster_reports_waiting"), 0.0, "{m}");
        assert_eq!(v("cuzk_cluster_max_claimed"), 1.0, "{m}");
        let info = format!(
            "cuzk_cluster_node_info{{node=\"{}\",database=\"{}\"}}",
            cluster(d).node_id(),
            cluster(d).client().target()
        );
        assert_eq!(v(&info), 1.0, "{m}");
        // Leases go back just after the result is counted.
        assert!(
            eventually(Duration::from_secs(10), || async {
                metric(&metrics_of(d).await, "cuzk_cluster_leases_held") == Some(0.0)
            })
            .await,
            "leases still held"
        );
    }
    assert_eq!(sum, f64::from(parts));
    // GetMetrics has them too.
    let text = ca
        .get_metrics(proto::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .text;
    assert!(
        text.contains("cuzk_cluster_node_info{node=\"node-a\""),
        "{text}"
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
    assert_proved(&[&b], u64::from(parts)).await;
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_id_names_one_job_across_the_cluster() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(500);
    let (a, b) = two_nodes(&db, params.path(), delay).await;
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
    assert_proved(&[&a, &b], 2).await;
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_on_one_daemon_stops_the_daemon_proving_the_job() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_secs(4);
    let (a, b) = two_nodes(&db, params.path(), delay).await;
    let (mut ca, mut cb) = (a.unix().await, b.unix().await);

    let (id, _) = submit_to(&mut ca, submit(9, 4, "")).await;
    // Each daemon proving one: claimed, and in its engine (a lease is in
    // hand before the input is fetched, and a job's input is gone once
    // the job is cancelled: cancelled before the fetch, a partition never
    // reaches the engine).
    assert!(
        eventually(Duration::from_secs(30), || async {
            [&a, &b]
                .iter()
                .all(|d| cluster(d).claimed() == 1 && d.daemon().engine.status().running == 1)
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

async fn cluster_status(c: &mut DaemonClient) -> proto::ClusterStatus {
    c.get_cluster_status(proto::GetClusterStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cluster_status_lists_the_nodes_jobs_and_partitions() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(300);
    let a = node(&db, "node-a", params.path(), delay, |c| {
        c.cluster.advertise_address = Some("10.1.2.3:9000".into())
    })
    .await;
    make_params(&a).await;
    let b = node(&db, "node-b", params.path(), delay, |_| {}).await;
    let (mut ca, mut cb) = (a.unix().await, b.unix().await);
    let parts = 3;
    let (id, _) = submit_to(&mut ca, submit(21, parts, "")).await;
    await_done(&mut cb, id).await;
    // A job no daemon can prove stays pending.
    let other = db.node("submitter").await;
    other
        .submit(&cuzk_cluster::NewJob {
            request_id: None,
            kind: "nobody-proves-this".into(),
            priority: cuzk_cluster::Priority::High,
            client: "test".into(),
            input: cuzk_cluster::JobInput::Inline(vec![1]),
            partitions: 2,
        })
        .await
        .unwrap();

    // Both heartbeats in (every second), with their partitions counted.
    let mut st = cluster_status(&mut cb).await;
    assert!(
        eventually(Duration::from_secs(10), || {
            let mut cb = cb.clone();
            async move {
                let s = cluster_status(&mut cb).await;
                s.view.as_ref().is_some_and(|v| {
                    v.nodes.len() == 2
                        && v.nodes.iter().map(|n| n.partitions_proved).sum::<u64>()
                            == u64::from(parts)
                })
            }
        })
        .await,
        "heartbeats: {st:?}"
    );
    st = cluster_status(&mut cb).await;
    assert_eq!(st.node_id, "node-b");
    assert!(st.database_unreachable_since_unix_s.is_none(), "{st:?}");
    assert!(st.view_error.is_empty(), "{st:?}");
    let v = st.view.clone().unwrap();
    let na = &v.nodes[0];
    assert_eq!(
        (na.node_id.as_str(), na.address.as_str()),
        ("node-a", "10.1.2.3:9000")
    );
    assert!(na.alive && v.nodes[1].alive, "{v:?}");
    assert_eq!(na.heartbeat_interval_s, 1.0);
    assert!(na.kinds_supported.contains(&"slow-8".to_owned()), "{na:?}");
    // node-b listens on its Unix socket only.
    assert!(v.nodes[1].address.starts_with("unix:"), "{v:?}");
    let count =
        |xs: &[proto::StateCount], s: &str| xs.iter().find(|x| x.state == s).map_or(0, |x| x.count);
    assert_eq!(count(&v.jobs, "completed"), 1, "{v:?}");
    assert_eq!(count(&v.jobs, "queued"), 1, "{v:?}");
    assert_eq!(count(&v.partitions, "done"), u64::from(parts), "{v:?}");
    assert_eq!(count(&v.partitions, "pending"), 2, "{v:?}");
    assert!(v.oldest_pending_s.is_some(), "{v:?}");
    assert_eq!(v.queues.len(), 1, "{v:?}");
    assert_eq!(
        (v.queues[0].kind.as_str(), v.queues[0].pending),
        ("nobody-proves-this", 2)
    );
    assert_eq!(v.queues[0].priority, proto::Priority::High as i32);

    // What `cuzk status --cluster` prints of it.
    let j = cuzk_daemon::report::cluster_json(&st);
    assert_eq!(j["view"]["jobs"]["completed"], 1);
    assert_eq!(j["view"]["jobs"]["failed"], 0);
    assert_eq!(j["view"]["queues"][0]["priority"], "high");
    let t = cuzk_daemon::report::cluster_text(&j);
    assert!(t.starts_with("cluster   node node-b on "), "{t}");
    assert!(t.contains("1 completed"), "{t}");
    assert!(t.contains("2 pending"), "{t}");
    let row = t
        .lines()
        .find(|l| l.trim_start().starts_with("node-a"))
        .unwrap();
    assert!(
        row.contains("10.1.2.3:9000") && row.contains("alive"),
        "{t}"
    );
    // HTTP /status has the same cluster section.
    let (code, body) = common::http_get(
        b.daemon().http_addr.unwrap(),
        "/status",
        Some(common::TOKEN),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(h["cluster"]["node_id"], "node-b", "{h}");
    assert_eq!(h["cluster"]["view"]["jobs"]["completed"], 1, "{h}");
    assert_eq!(
        h["cluster"]["view"]["nodes"].as_array().map(Vec::len),
        Some(2),
        "{h}"
    );
    // Plain `cuzk status` carries this daemon's part, not the view.
    let s = status(&mut ca).await;
    let c = s.cluster.clone().expect("cluster part in GetStatus");
    assert_eq!((c.node_id.as_str(), c.view.is_none()), ("node-a", true));
    let line = cuzk_daemon::report::status_text(&cuzk_daemon::report::status_json(&s));
    assert!(line.contains("cluster   node node-a on "), "{line}");

    // A daemon that stopped is dead after three of its heartbeats.
    cluster(&a).kill();
    assert!(
        eventually(Duration::from_secs(15), || {
            let mut cb = cb.clone();
            async move {
                let v = cluster_status(&mut cb).await.view.unwrap();
                v.nodes.iter().any(|n| n.node_id == "node-a" && !n.alive)
                    && v.nodes.iter().any(|n| n.node_id == "node-b" && n.alive)
            }
        })
        .await,
        "node-a never shown dead"
    );
    stop(a).await;
    stop(b).await;

    // Without cluster mode the call is refused, naming the setting.
    let local = TestDaemon::start(|_| {}).await;
    let e = local
        .unix()
        .await
        .get_cluster_status(proto::GetClusterStatusRequest {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e}");
    assert!(e.message().contains("database_url"), "{e}");
    assert!(status(&mut local.unix().await).await.cluster.is_none());
    let (_, body) = common::http_get(
        local.daemon().http_addr.unwrap(),
        "/status",
        Some(common::TOKEN),
    )
    .await;
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(h.get("cluster").is_none(), "{h}");
    local.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn finished_jobs_and_silent_nodes_are_purged_after_retain_finished_s() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let other = db.node("submitter").await;
    // Unfinished: never purged, however old.
    let queued = other
        .submit(&cuzk_cluster::NewJob {
            request_id: None,
            kind: "nobody-proves-this".into(),
            priority: cuzk_cluster::Priority::Normal,
            client: "test".into(),
            input: cuzk_cluster::JobInput::Inline(vec![1]),
            partitions: 1,
        })
        .await
        .unwrap()
        .job_id;
    other
        .heartbeat(&cuzk_cluster::NodeReport::default())
        .await
        .unwrap();
    let a = node(&db, "node-a", params.path(), Duration::ZERO, |c| {
        c.cluster.retain_finished_s = 2
    })
    .await;
    make_params(&a).await;
    let mut ca = a.unix().await;
    let (id, _) = submit_to(&mut ca, submit(3, 2, "kept-a-while")).await;
    let r = await_done(&mut ca, id).await;
    check_proofs(&pvk(params.path()), LOG, 3, 2, &r);
    let client = cluster(&a).client().clone();
    assert!(
        eventually(Duration::from_secs(20), || {
            let c = client.clone();
            async move { matches!(c.job(id as i64).await, Err(ClusterError::UnknownJob(_))) }
        })
        .await,
        "the finished job was never purged"
    );
    // Its partitions and its request id went with it.
    assert!(client.partitions(id as i64).await.unwrap().is_empty());
    assert_eq!(client.job_of_request("kept-a-while").await.unwrap(), None);
    let e = ca
        .await_proof(proto::AwaitProofRequest {
            job_id: id,
            timeout_ms: 10,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);
    // The unfinished job, older than the retention by now, stays.
    assert_eq!(client.job(queued).await.unwrap().state, DbJobState::Queued);
    // The silent node is forgotten, the live one kept.
    assert!(
        eventually(Duration::from_secs(20), || {
            let c = client.clone();
            async move {
                let n = c.nodes().await.unwrap();
                n.len() == 1 && n[0].node_id == "node-a"
            }
        })
        .await,
        "the silent node was never forgotten"
    );
    stop(a).await;
}

/// A TCP relay between the daemon and the database that can be cut: while
/// down it closes every relayed connection and refuses new ones (accepts
/// and drops them, as a dead server's host would reset them).
struct Relay {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    cut: tokio::sync::watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(target: SocketAddr) -> Relay {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let up = Arc::new(AtomicBool::new(true));
        let (cut, cut_rx) = tokio::sync::watch::channel(0u64);
        let up2 = up.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = l.accept().await else {
                    return;
                };
                if !up2.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let mut cut = cut_rx.clone();
                cut.mark_unchanged();
                tokio::spawn(async move {
                    let Ok(mut out) = tokio::net::TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut out) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Relay {
            addr,
            up,
            cut,
            task,
        }
    }

    fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.cut.send_modify(|g| *g += 1);
    }

    fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }

    /// `url` with its host and port replaced by the relay's.
    fn url(&self, url: &str) -> String {
        let (scheme, rest) = url.split_at(url.find("://").unwrap() + 3);
        let end = rest.find('/').unwrap_or(rest.len());
        let authority = &rest[..end];
        let user = authority.rfind('@').map_or("", |i| &authority[..=i]);
        format!("{scheme}{user}{}{}", self.addr, &rest[end..])
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
        self.down();
    }
}

/// Host and port of a postgres:// URL.
async fn db_addr(url: &str) -> SocketAddr {
    let rest = &url[url.find("://").unwrap() + 3..];
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let hostport = authority.rsplit('@').next().unwrap();
    let hp = if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:5432")
    };
    tokio::net::lookup_host(hp).await.unwrap().next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_outage_is_ridden_out_and_the_job_completes_after() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let relay = Relay::start(db_addr(&db.url).await).await;
    let url = relay.url(&db.url);
    let a = node(&db, "node-a", params.path(), Duration::from_secs(4), |c| {
        c.cluster.database_url = Some(url);
        // Operations give up on the database quickly, so that the daemon's
        // own holding and retrying is what rides the outage out.
        c.cluster.reconnect_for_s = 2;
    })
    .await;
    make_params(&a).await;
    let mut ca = a.unix().await;
    let parts = 2;
    let (id, _) = submit_to(&mut ca, submit(13, parts, "outage")).await;
    // Cut once the partition is in the engine (its input fetched).
    assert!(
        eventually(Duration::from_secs(20), || async {
            cluster(&a).claimed() == 1 && a.daemon().engine.status().running == 1
        })
        .await,
        "node-a never started a partition"
    );
    relay.down();
    // Status says so, without waiting on the database.
    assert!(
        eventually(Duration::from_secs(20), || {
            let mut ca = ca.clone();
            async move {
                status(&mut ca)
                    .await
                    .cluster
                    .is_some_and(|c| c.database_unreachable_since_unix_s.is_some())
            }
        })
        .await,
        "the outage never showed in status"
    );
    let s = status(&mut ca).await;
    let text = cuzk_daemon::report::status_text(&cuzk_daemon::report::status_json(&s));
    assert!(text.contains("database unreachable since "), "{text}");
    let cs = cluster_status(&mut ca).await;
    assert!(cs.view.is_none() && !cs.view_error.is_empty(), "{cs:?}");
    // The partition in hand is proved meanwhile, its result held; nothing
    // more is claimed. Its lease (3 s) expires by the database's clock
    // while the database is away.
    assert!(
        eventually(Duration::from_secs(30), || async {
            cluster(&a).reports_waiting() == 1
        })
        .await,
        "the proved partition's result was not held"
    );
    assert_eq!(a.daemon().engine.status().counters.completed, 1);
    assert_eq!(cluster(&a).claimed(), 1);
    assert_eq!(cluster(&a).partitions_proved(), 0);
    // And so do its metrics, served without the database.
    let m = metrics_of(&a).await;
    assert_eq!(metric(&m, "cuzk_cluster_database_up"), Some(0.0), "{m}");
    assert!(
        metric(&m, "cuzk_cluster_database_unreachable_seconds").is_some_and(|s| s > 0.0),
        "{m}"
    );
    assert_eq!(metric(&m, "cuzk_cluster_reports_waiting"), Some(1.0), "{m}");
    assert_eq!(metric(&m, "cuzk_cluster_leases_held"), Some(1.0), "{m}");

    relay.up();
    let r = await_done(&mut ca, id).await;
    check_proofs(&pvk(params.path()), LOG, 13, parts, &r);
    // The held result was taken under its first claim: nothing was reaped
    // or run twice.
    let job = cluster(&a).client().job(id as i64).await.unwrap();
    assert_eq!(job.state, DbJobState::Completed);
    assert!(job.failures.is_empty(), "{:?}", job.failures);
    let rows = cluster(&a).client().partitions(id as i64).await.unwrap();
    for p in &rows {
        assert_eq!(
            (p.state, p.claims, p.node.as_deref()),
            (PartitionState::Done, 1, Some("node-a")),
            "{rows:?}"
        );
    }
    assert_proved(&[&a], u64::from(parts)).await;
    assert_eq!(cluster(&a).reports_waiting(), 0);
    assert!(
        eventually(Duration::from_secs(20), || {
            let mut ca = ca.clone();
            async move {
                status(&mut ca)
                    .await
                    .cluster
                    .is_some_and(|c| c.database_unreachable_since_unix_s.is_none())
            }
        })
        .await,
        "status still says the database is unreachable"
    );
    stop(a).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_daemon_without_the_parameters_leaves_young_partitions_to_one_holding_them_with_room() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_secs(1);
    let a = node(&db, "node-a", params.path(), delay, |c| {
        c.cluster.placement_grace_s = 60;
        c.cluster.max_claimed = Some(4);
    })
    .await;
    make_params(&a).await;
    let b = node(&db, "node-b", params.path(), delay, |c| {
        c.cluster.placement_grace_s = 60
    })
    .await;
    let (mut ca, mut cb) = (a.unix().await, b.unix().await);
    // Both heartbeats in: A's names the kind resident and its room for 4,
    // B's no kind resident.
    let client = cluster(&b).client().clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let c = client.clone();
            async move {
                let n = c.nodes().await.unwrap();
                n.len() == 2
                    && n[0].report.kinds_resident.contains(&"slow-8".to_owned())
                    && n[0].report.capacity == 4
                    && n[1].report.kinds_resident.is_empty()
            }
        })
        .await,
        "heartbeats"
    );
    // A has room for all four: B, idle throughout, leaves every one to it
    // (A proves them one at a time, a second each, within the grace).
    let parts = 4;
    let (id, _) = submit_to(&mut cb, submit(31, parts, "")).await;
    let r = await_done(&mut cb, id).await;
    check_proofs(&pvk(params.path()), LOG, 31, parts, &r);
    let rows = client.partitions(id as i64).await.unwrap();
    assert!(
        rows.iter().all(|p| p.node.as_deref() == Some("node-a")),
        "{rows:?}"
    );
    assert_eq!(cluster(&b).partitions_proved(), 0);

    // Six partitions: A takes four and is full, and a full holder holds
    // nothing back: B proves some of the other two at once.
    let (id2, _) = submit_to(&mut ca, submit(32, 6, "")).await;
    let r = await_done(&mut cb, id2).await;
    check_proofs(&pvk(params.path()), LOG, 32, 6, &r);
    let rows = client.partitions(id2 as i64).await.unwrap();
    let by = |n: &str| rows.iter().filter(|p| p.node.as_deref() == Some(n)).count();
    assert!(by("node-b") >= 1 && by("node-a") >= 4, "{rows:?}");
    stop(a).await;
    stop(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_restart_mid_job_loses_and_duplicates_nothing() {
    // A server of its own to restart (dropped last, after the database).
    let server = tokio::task::spawn_blocking(pg::Server::start)
        .await
        .unwrap()
        .expect("a PostgreSQL server for this test");
    let db = pg::TestDb::on(&server.url).await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(800);
    let (a, b) = two_nodes(&db, params.path(), delay).await;
    let (mut ca, mut cb) = (a.unix().await, b.unix().await);
    let parts = 6;
    let (id, _) = submit_to(&mut ca, submit(57, parts, "restart")).await;
    assert!(
        eventually(Duration::from_secs(20), || async {
            cluster(&a).claimed() + cluster(&b).claimed() == 2
        })
        .await,
        "the partitions were not claimed"
    );
    let opened = cluster(&a).client().connections_opened();
    // Every connection dropped; the server back within about a second.
    tokio::task::block_in_place(|| server.restart());

    let r = await_done(&mut cb, id).await;
    check_proofs(&pvk(params.path()), LOG, 57, parts, &r);
    let rows = cluster(&a).client().partitions(id as i64).await.unwrap();
    assert!(
        rows.iter().all(|p| p.state == PartitionState::Done),
        "{rows:?}"
    );
    // Each partition's result taken once: a late duplicate (a lease that
    // expired during the restart and ran again) is refused, not counted.
    assert_proved(&[&a, &b], u64::from(parts)).await;
    // A's front-end client reconnects at its next heartbeat after the
    // restart, which need not have come before the job completed.
    assert!(
        eventually(Duration::from_secs(30), || async {
            cluster(&a).client().connections_opened() > opened
        })
        .await,
        "node-a's front end never reconnected"
    );
    // A job after the restart runs as usual.
    let (id2, _) = submit_to(&mut cb, submit(58, 2, "")).await;
    let r = await_done(&mut ca, id2).await;
    check_proofs(&pvk(params.path()), LOG, 58, 2, &r);
    stop(a).await;
    stop(b).await;
    drop(db);
    drop(server);
}

/// A 70 MB input (a 32 GiB PoRep's C1 output is about 67 MB) goes through
/// gRPC into the job row once, each daemon proving partitions of the job
/// fetches and decodes it once, however many of them it claims at a time,
/// and the row drops it when the job ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_large_input_is_stored_once_and_fetched_once_per_daemon() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(700);
    let (da, db_) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let two = |c: &mut DaemonConfig| c.cluster.max_claimed = Some(2);
    let a = node_with(&db, "node-a", params.path(), delay, two, Some(da.clone())).await;
    make_params(&a).await;
    let b = node_with(&db, "node-b", params.path(), delay, two, Some(db_.clone())).await;
    let (mut ca, mut cb) = (a.unix().await, b.unix().await);

    let parts = 6;
    let mut input = PorepLikeInput {
        seed: 70,
        partitions: parts,
    }
    .encode();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    input.extend((0..BIG_PAD).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    }));
    let digest = {
        use sha2::Digest;
        sha2::Sha256::digest(&input).to_vec()
    };
    let req = proto::SubmitProofRequest {
        request_id: "big".into(),
        kind: "big-8".into(),
        input,
        priority: proto::Priority::Normal as i32,
        client_id: String::new(),
    };
    let (id, _) = submit_to(&mut ca, req.clone()).await;
    // The same request on B: the same job, compared by digest.
    assert_eq!(submit_to(&mut cb, req).await, (id, true));
    let r = await_done(&mut cb, id).await;
    check_proofs(&pvk(params.path()), LOG, 70, parts, &r);
    assert_eq!(r.kind, "big-8");

    let rows = cluster(&a).client().partitions(id as i64).await.unwrap();
    let mut fetched = 0;
    for (d, decodes, front) in [(&a, &da, 1), (&b, &db_, 1)] {
        let n = cluster(d).node_id().to_owned();
        let proved = rows
            .iter()
            .filter(|p| p.node.as_deref() == Some(&n))
            .count();
        let f = cluster(d).inputs_fetched();
        // Once if it proved any of the six, however many.
        assert_eq!(f, u64::from(proved > 0), "{n}: {rows:?}");
        // Decoded at the submission it took (each daemon took one), and
        // once for its partitions.
        assert_eq!(decodes.load(Ordering::SeqCst), front + f as usize, "{n}");
        fetched += f;
    }
    assert!(fetched >= 1);
    // One row, its input dropped now that the job has ended, its digest
    // (what was sent) kept for the request id.
    let raw = db.raw().await;
    let rows = raw
        .query("SELECT input IS NULL, input_digest FROM cuzk_jobs", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].get::<_, bool>(0), "the input outlived its job");
    assert_eq!(rows[0].get::<_, Option<Vec<u8>>>(1), Some(digest));
    stop(a).await;
    stop(b).await;
}

/// Rows that did not come through a daemon's front end (written by another
/// program, or damaged) are refused at the first claim, not proved and not
/// retried: an input the kind cannot decode, and a row whose partition
/// count is not its input's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_rows_are_refused_not_proved() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let a = node(&db, "node-a", params.path(), Duration::ZERO, |_| {}).await;
    make_params(&a).await;
    let other = db.node("writer").await;
    let insert = |input: Vec<u8>, partitions: u32| {
        let other = &other;
        async move {
            other
                .submit(&cuzk_cluster::NewJob {
                    request_id: None,
                    kind: "slow-8".into(),
                    priority: cuzk_cluster::Priority::Normal,
                    client: "test".into(),
                    input: cuzk_cluster::JobInput::Inline(input),
                    partitions,
                })
                .await
                .unwrap()
                .job_id
        }
    };
    let garbage = insert(vec![1, 2, 3], 2).await;
    let miscounted = insert(
        PorepLikeInput {
            seed: 4,
            partitions: 2,
        }
        .encode(),
        3,
    )
    .await;
    for (id, says) in [
        (garbage, "malformed"),
        (
            miscounted,
            "the job's row says 3 partitions, its input has 2",
        ),
    ] {
        let j = tokio::time::timeout(
            Duration::from_secs(60),
            other.wait_final(id, Duration::from_millis(50)),
        )
        .await
        .expect("the bad row's job never ended")
        .unwrap();
        assert_eq!(j.state, DbJobState::Failed, "{j:?}");
        let error = j.error.clone().unwrap_or_default();
        assert!(error.contains(says), "{error}");
        // Failed at its first claim: one reason, not max_failures of them.
        assert_eq!(j.failures.len(), 1, "{:?}", j.failures);
        assert!(!j.failures[0].lease_expired);
    }
    // Nothing was proved; the next good job is.
    assert_eq!(cluster(&a).partitions_proved(), 0);
    assert_eq!(a.daemon().engine.status().counters.completed, 0);
    let mut ca = a.unix().await;
    let (id, _) = submit_to(&mut ca, submit(5, 2, "")).await;
    let r = await_done(&mut ca, id).await;
    check_proofs(&pvk(params.path()), LOG, 5, 2, &r);
    stop(a).await;
}

/// A daemon whose database cannot be reached at start-up does not start:
/// its error names the database (host, port and database, never the
/// password) and why, after `reconnect_for_s` of trying.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_down_at_start_up_fails_the_start_naming_it() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::base_config(dir.path());
    cfg.cluster.database_url = Some(format!(
        "postgres://cuzk:s3cret-pw@127.0.0.1:{port}/cuzk_queue"
    ));
    cfg.cluster.node_id = Some("node-a".into());
    cfg.cluster.reconnect_for_s = 1;
    let t = std::time::Instant::now();
    let e = match cuzk_daemon::DaemonBuilder::new(cfg).start().await {
        Ok(_) => panic!("started without its database"),
        Err(e) => e.to_string(),
    };
    assert!(t.elapsed() >= Duration::from_secs(1), "{e}");
    assert!(
        e.contains(&format!("127.0.0.1:{port}/cuzk_queue")),
        "the database is not named: {e}"
    );
    assert!(
        e.contains("cluster mode") && e.contains("unavailable") && e.contains("connect"),
        "{e}"
    );
    assert!(!e.contains("s3cret"), "the password leaked: {e}");
    assert!(!dir.path().join("cuzk.sock").exists());
}

/// One daemon cut off from the database (the network, not the database,
/// fails) while it proves a partition: the others, connected throughout,
/// reap its lease once it expires and prove the partition; back, the cut
/// daemon's late result is refused, so the job holds each partition's
/// proof once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_daemon_cut_off_alone_loses_its_lease_and_its_late_result_is_refused() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let relay = Relay::start(db_addr(&db.url).await).await;
    let url = relay.url(&db.url);
    let delay = Duration::from_secs(3);
    let a = node(&db, "node-a", params.path(), delay, |c| {
        c.cluster.database_url = Some(url);
        c.cluster.reconnect_for_s = 2;
    })
    .await;
    make_params(&a).await;
    let b = node(&db, "node-b", params.path(), delay, |_| {}).await;
    let mut cb = b.unix().await;
    let parts = 2;
    let (id, _) = submit_to(&mut cb, submit(17, parts, "cut")).await;
    assert!(
        eventually(Duration::from_secs(30), || async {
            cluster(&a).claimed() == 1
                && a.daemon().engine.status().running == 1
                && cluster(&b).claimed() == 1
        })
        .await,
        "each daemon should hold a partition"
    );
    let held = cluster(&b)
        .client()
        .partitions(id as i64)
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.node.as_deref() == Some("node-a"))
        .expect("node-a's partition")
        .partition;
    relay.down();
    // B proves its partition, then reaps A's expired lease and proves
    // that one too.
    let r = await_done(&mut cb, id).await;
    check_proofs(&pvk(params.path()), LOG, 17, parts, &r);
    let client = cluster(&b).client().clone();
    let job = client.job(id as i64).await.unwrap();
    assert_eq!(job.state, DbJobState::Completed);
    assert_eq!(job.failures.len(), 1, "{:?}", job.failures);
    let f = &job.failures[0];
    assert_eq!(
        (f.partition, f.node.as_str(), f.lease_expired),
        (held, "node-a", true)
    );
    for p in client.partitions(id as i64).await.unwrap() {
        assert_eq!(p.state, PartitionState::Done);
        assert_eq!(p.node.as_deref(), Some("node-b"), "{p:?}");
        assert_eq!(p.claims, if p.partition == held { 2 } else { 1 });
    }
    // A proved its partition meanwhile and holds the result.
    assert!(
        eventually(Duration::from_secs(30), || async {
            cluster(&a).reports_waiting() == 1
        })
        .await,
        "node-a's result was not held"
    );
    relay.up();
    // Back: its report is refused (the partition is B's), nothing stored.
    assert!(
        eventually(Duration::from_secs(30), || async {
            cluster(&a).metrics().refused == 1 && cluster(&a).reports_waiting() == 0
        })
        .await,
        "node-a's late result: {:?}",
        cluster(&a).metrics()
    );
    assert_eq!(cluster(&a).partitions_proved(), 0);
    assert_proved(&[&b], u64::from(parts)).await;
    let again = client.job(id as i64).await.unwrap();
    assert_eq!(
        (again.proof, again.public_inputs),
        (job.proof, job.public_inputs)
    );
    stop(a).await;
    stop(b).await;
}
