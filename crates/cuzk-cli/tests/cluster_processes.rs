//! Cluster mode with daemons as separate processes (`cuzk daemon`, each
//! with its own config file) on one real PostgreSQL database
//! (as in tests/cluster.rs): jobs submitted to one are proved by all and
//! verify; one killed with SIGKILL while it holds partitions has them
//! re-run by the others after its leases expire, and the job completes.

#[path = "../../cuzk-daemon/tests/common/mod.rs"]
mod common;
#[path = "../../cuzk-cluster/tests/common/mod.rs"]
mod pg;

use common::{await_done, check_proofs, eventually, req};
use cuzk_cluster::{JobState as DbJobState, PartitionState};
use cuzk_core::params::MappedParameters;
use cuzk_core::verifier::prepare_verifying_key;
use cuzk_daemon::client::{connect, ConnectOptions, DaemonClient};
use cuzk_daemon::proto;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cuzk");
/// Partitions of porep-like-12 take long enough on the CPU (a second or
/// so here) that a daemon is killed holding one, not between two.
const LOG: u32 = 12;
/// The load test's kind: small, so that hundreds of jobs take seconds.
const SMALL: u32 = 6;

/// A daemon process; killed if the test ends without stopping it.
struct Proc {
    child: Child,
    sock: PathBuf,
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn spawn(dir: &Path, name: &str, url: &str, params: &Path) -> Proc {
    let sock = dir.join(format!("{name}.sock"));
    let cfg = dir.join(format!("{name}.toml"));
    std::fs::write(
        &cfg,
        format!(
            "[server]\nunix_socket = {sock:?}\n\
             [engine]\nhost_memory_budget = \"1GiB\"\nmax_batch_wait_ms = 10\nsynthesis_concurrency = 1\n\
             [params]\ndir = {params:?}\n\
             [kinds]\nporep_like_log_sizes = [{SMALL}, {LOG}]\n\
             [cluster]\ndatabase_url = {url:?}\nnode_id = {name:?}\nlease_ttl_s = 3\n\
             poll_interval_ms = 50\nheartbeat_interval_s = 1\nmax_claimed = 1\n\
             placement_grace_s = 0\nreconnect_for_s = 60\n"
        ),
    )
    .unwrap();
    let mut child = Command::new(BIN)
        .args(["daemon", "--config"])
        .arg(&cfg)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !sock.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{name} did not start"
        );
        assert!(child.try_wait().unwrap().is_none(), "{name} exited early");
        std::thread::sleep(Duration::from_millis(20));
    }
    Proc { child, sock }
}

async fn preload(c: &mut DaemonClient) {
    c.preload_params(proto::PreloadParamsRequest {
        kinds: vec![format!("porep-like-{SMALL}"), format!("porep-like-{LOG}")],
    })
    .await
    .unwrap();
}

fn pvk_of(params: &Path, log: u32) -> cuzk_core::verifier::PreparedVerifyingKey {
    let m = MappedParameters::open(&params.join(format!(
        "{}.params",
        cuzk_core::circuits::porep_like::params_id(log)
    )))
    .unwrap();
    prepare_verifying_key(&m.vk)
}

/// `cuzk status --cluster` (`--json`: the object) run against `p`.
fn cluster_status(p: &Proc, json: bool) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args(["status", "--cluster", "--daemon"])
        .arg(format!("unix:{}", p.sock.display()));
    if json {
        cmd.arg("--json");
    }
    let out = cmd.stderr(Stdio::inherit()).output().unwrap();
    assert!(out.status.success(), "cuzk status --cluster failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn cluster_json(p: &Proc) -> serde_json::Value {
    serde_json::from_str(&cluster_status(p, true)).unwrap()
}

/// The daemons' own counts of results the queue accepted, summed (from
/// their heartbeats, a second behind).
async fn partitions_proved(watch: &cuzk_cluster::ClusterClient) -> u64 {
    watch
        .nodes()
        .await
        .unwrap()
        .iter()
        .filter(|n| n.node_id.starts_with("node-"))
        .map(|n| n.report.partitions_proved)
        .sum()
}

/// Daemons node-a, node-b and node-c. The first makes the parameter file
/// before the others start and read it (a job's partitions proved on two
/// daemons verify against one key only if they hold the same file).
async fn three(dir: &Path, url: &str, params: &Path) -> [Proc; 3] {
    let a = spawn(dir, "node-a", url, params);
    preload(&mut client(&a).await).await;
    let b = spawn(dir, "node-b", url, params);
    let c = spawn(dir, "node-c", url, params);
    [a, b, c]
}

async fn client(p: &Proc) -> DaemonClient {
    connect(&ConnectOptions {
        target: format!("unix:{}", p.sock.display()),
        ..Default::default()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_daemon_processes_share_the_work_and_survive_a_sigkill() {
    let db = pg::TestDb::new().await;
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params");
    let url = db.url.clone();
    let [a, b, c] = three(dir.path(), &url, &params).await;
    let mut ca = client(&a).await;
    let (mut cb, mut cc) = (client(&b).await, client(&c).await);
    let m = MappedParameters::open(&params.join(format!(
        "{}.params",
        cuzk_core::circuits::porep_like::params_id(LOG)
    )))
    .unwrap();
    let pvk = prepare_verifying_key(&m.vk);
    let watch = db.node("test-watcher").await;

    // Jobs submitted to one daemon, awaited on another, proved by all.
    let mut ids = Vec::new();
    for seed in 0..3u64 {
        let s = ca
            .submit_proof(req(LOG, 100 + seed, 3, proto::Priority::Normal))
            .await
            .unwrap()
            .into_inner();
        ids.push((s.job_id, 100 + seed));
    }
    let mut provers = BTreeSet::new();
    for &(id, seed) in &ids {
        let r = await_done(&mut cb, id).await;
        check_proofs(&pvk, LOG, seed, 3, &r);
        for p in watch.partitions(id as i64).await.unwrap() {
            provers.extend(p.node);
        }
    }
    assert_eq!(
        provers,
        BTreeSet::from(["node-a", "node-b", "node-c"].map(String::from)),
        "nine partitions, one at a time per daemon"
    );
    // The cluster as `cuzk status --cluster` shows it, from any daemon.
    let v = cluster_json(&b);
    assert_eq!(v["node_id"], "node-b");
    assert_eq!(v["view"]["jobs"]["completed"], 3, "{v}");
    assert_eq!(v["view"]["partitions"]["done"], 9, "{v}");
    let nodes: Vec<&str> = v["view"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["node_id"].as_str())
        .collect();
    assert_eq!(nodes, ["node-a", "node-b", "node-c"], "{v}");
    let text = cluster_status(&a, false);
    assert!(text.starts_with("cluster   node node-a on "), "{text}");
    assert!(text.contains("3 completed"), "{text}");

    // node-c killed (SIGKILL) while it holds a partition.
    let s = cc
        .submit_proof(req(LOG, 200, 6, proto::Priority::Normal))
        .await
        .unwrap()
        .into_inner();
    let id = s.job_id as i64;
    let held_by_c = || async {
        watch
            .partitions(id)
            .await
            .unwrap()
            .into_iter()
            .filter(|p| p.state == PartitionState::Leased && p.node.as_deref() == Some("node-c"))
            .map(|p| p.partition)
            .collect::<Vec<_>>()
    };
    assert!(
        eventually(Duration::from_secs(60), || async {
            !held_by_c().await.is_empty()
        })
        .await,
        "node-c never claimed a partition"
    );
    let mut c = c;
    c.child.kill().unwrap();
    c.child.wait().unwrap();
    // What it held when it died: it reports nothing any more.
    let held = held_by_c().await;
    assert!(
        !held.is_empty(),
        "node-c finished its partition before the kill"
    );

    let r = await_done(&mut ca, s.job_id).await;
    check_proofs(&pvk, LOG, 200, 6, &r);
    let job = watch.job(id).await.unwrap();
    assert_eq!(job.state, DbJobState::Completed);
    let expired: BTreeSet<u32> = job
        .failures
        .iter()
        .filter(|f| f.lease_expired && f.node == "node-c")
        .map(|f| f.partition)
        .collect();
    assert_eq!(
        expired,
        held.iter().copied().collect(),
        "{:?}",
        job.failures
    );
    for p in watch.partitions(id).await.unwrap() {
        assert_eq!(p.state, PartitionState::Done);
        if held.contains(&p.partition) {
            assert_ne!(p.node.as_deref(), Some("node-c"));
            assert_eq!(p.claims, 2);
        }
    }
    // node-c is shown dead once three of its heartbeats are missed.
    let dead = || {
        cluster_json(&a)["view"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["node_id"] == "node-c" && n["alive"] == false)
    };
    assert!(
        eventually(Duration::from_secs(20), || async { dead() }).await,
        "node-c still shown alive"
    );
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hundreds_of_jobs_from_several_clients_across_three_daemons_none_lost_or_duplicated() {
    let db = pg::TestDb::new().await;
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params");
    let url = db.url.clone();
    let [a, b, c] = three(dir.path(), &url, &params).await;
    let daemons = [&a, &b, &c];
    const CLIENTS: u64 = 4;
    const PER_CLIENT: u64 = 75;
    // Each client submits to the daemons in turn and awaits each job on
    // the next daemon; every request id is also submitted a second time,
    // to yet another daemon, and must name the same job.
    let mut tasks = Vec::new();
    for k in 0..CLIENTS {
        let mut conns = Vec::new();
        for d in daemons {
            conns.push(client(d).await);
        }
        tasks.push(tokio::spawn(async move {
            let mut jobs = Vec::new();
            for i in 0..PER_CLIENT {
                let seed = k * 1000 + i;
                let mut r = req(SMALL, seed, 1, proto::Priority::Normal);
                r.request_id = format!("load-{k}-{i}");
                let n = (k + i) as usize;
                let first = conns[n % 3]
                    .submit_proof(r.clone())
                    .await
                    .unwrap()
                    .into_inner();
                let again = conns[(n + 1) % 3]
                    .submit_proof(r)
                    .await
                    .unwrap()
                    .into_inner();
                assert_eq!(again.job_id, first.job_id, "request id load-{k}-{i}");
                assert!(again.deduplicated);
                jobs.push((first.job_id, seed, n));
            }
            let mut done = Vec::new();
            for (id, seed, n) in jobs {
                done.push((await_done(&mut conns[(n + 2) % 3], id).await, seed));
            }
            done
        }));
    }
    let pvk = pvk_of(&params, SMALL);
    let mut ids = BTreeSet::new();
    for t in tasks {
        for (r, seed) in t.await.unwrap() {
            check_proofs(&pvk, SMALL, seed, 1, &r);
            assert!(ids.insert(r.job_id), "job {} returned twice", r.job_id);
        }
    }
    let total = CLIENTS * PER_CLIENT;
    assert_eq!(ids.len() as u64, total, "lost jobs");
    // The database holds exactly those jobs, each partition proved once,
    // and all three daemons took part.
    let watch = db.node("test-watcher").await;
    let raw = db.raw().await;
    let n: i64 = raw
        .query_one(
            "SELECT count(*) FROM cuzk_jobs WHERE state = 'completed'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n as u64, total);
    let n: i64 = raw
        .query_one("SELECT count(*) FROM cuzk_jobs", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n as u64, total, "duplicated jobs");
    let mut provers = BTreeSet::new();
    let mut claims = 0;
    for id in &ids {
        for p in watch.partitions(*id as i64).await.unwrap() {
            assert_eq!(p.state, PartitionState::Done);
            claims += p.claims;
            provers.extend(p.node);
        }
    }
    assert_eq!(claims as u64, total, "a partition claimed twice");
    assert_eq!(provers.len(), 3, "{provers:?}");
    // The daemons' own counts of results the queue accepted (from their
    // heartbeats, a second behind): exactly one per partition.
    let proved = || partitions_proved(&watch);
    assert!(
        eventually(Duration::from_secs(10), || async {
            proved().await == total
        })
        .await,
        "{} results accepted for {total} partitions",
        proved().await
    );
    drop((a, b, c));
}

/// The daemon's metrics text (`GetMetrics`; in cluster mode with its
/// `cuzk_cluster_*`).
async fn metrics(c: &mut DaemonClient) -> String {
    c.get_metrics(proto::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .text
}

/// A sample's value in a metrics text (`series`: the name with its labels
/// as printed).
fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            let (name, v) = l.rsplit_once(' ')?;
            (name == series).then(|| v.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no {series} in {text}"))
}

async fn engine_status(c: &mut DaemonClient) -> proto::GetStatusResponse {
    c.get_status(proto::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

/// The other two scenarios on three processes: the database
/// server restarted while the daemons hold partitions (they reconnect,
/// the job completes and verifies, each partition's result accepted
/// once), and a cancel sent to one daemon stopping another that is
/// proving the job.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_daemon_processes_ride_a_database_restart_and_take_a_cancel_from_another() {
    // A server of its own to restart.
    let server = tokio::task::spawn_blocking(pg::Server::start)
        .await
        .unwrap()
        .expect("a PostgreSQL server for this test");
    let db = pg::TestDb::on(&server.url).await;
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params");
    let url = db.url.clone();
    let [a, b, c] = three(dir.path(), &url, &params).await;
    let mut ca = client(&a).await;
    let (mut cb, mut cc) = (client(&b).await, client(&c).await);
    let pvk = pvk_of(&params, LOG);
    let watch = db.node("test-watcher").await;
    let leased_by = |id: i64| {
        let watch = &watch;
        async move {
            watch
                .partitions(id)
                .await
                .unwrap()
                .into_iter()
                .filter(|p| p.state == PartitionState::Leased)
                .filter_map(|p| p.node)
                .collect::<BTreeSet<String>>()
        }
    };

    // The server restarted while partitions are held.
    let s = ca
        .submit_proof(req(LOG, 300, 6, proto::Priority::Normal))
        .await
        .unwrap()
        .into_inner();
    let id = s.job_id as i64;
    assert!(
        eventually(Duration::from_secs(60), || async {
            leased_by(id).await.len() >= 2
        })
        .await,
        "the partitions were not claimed"
    );
    tokio::task::block_in_place(|| server.restart());
    let r = await_done(&mut cb, s.job_id).await;
    check_proofs(&pvk, LOG, 300, 6, &r);
    for p in watch.partitions(id).await.unwrap() {
        assert_eq!(p.state, PartitionState::Done);
    }
    // Each partition's result accepted once (the daemons' own counts, in
    // their heartbeats a second behind).
    let proved = || partitions_proved(&watch);
    assert!(
        eventually(Duration::from_secs(20), || async { proved().await == 6 }).await,
        "{} results accepted for 6 partitions",
        proved().await
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(proved().await, 6, "a result accepted twice");

    // A job submitted to C, cancelled on B while A proves a partition of
    // it (in A's engine, not only leased): the cancel reaches A, which
    // stops at its next renewal (every second) or, if its partition ends
    // first, has its result refused. A partition takes about as long as a
    // renewal interval here, so A may even have stored it just before the
    // cancel: then the test tries another job (at most five).
    let reached = |m: &str| {
        metric(m, "cuzk_cluster_partitions_ended_total{how=\"stopped\"}")
            + metric(m, "cuzk_cluster_results_total{outcome=\"refused\"}")
    };
    let mut seen = false;
    for attempt in 0..5u64 {
        let before = reached(&metrics(&mut ca).await);
        let s = cc
            .submit_proof(req(LOG, 400 + attempt, 6, proto::Priority::Normal))
            .await
            .unwrap()
            .into_inner();
        let id = s.job_id as i64;
        assert!(
            eventually(Duration::from_secs(60), || {
                let mut ca = ca.clone();
                async move {
                    leased_by(id).await.contains("node-a")
                        && engine_status(&mut ca).await.running == 1
                }
            })
            .await,
            "node-a never started a partition of the job"
        );
        let x = cb
            .cancel_proof(proto::CancelProofRequest { job_id: s.job_id })
            .await
            .unwrap()
            .into_inner();
        assert!(x.cancelled);
        let r = await_done(&mut cc, s.job_id).await;
        assert_eq!(r.state, proto::JobState::Cancelled as i32);
        for p in watch.partitions(id).await.unwrap() {
            assert!(
                matches!(p.state, PartitionState::Cancelled | PartitionState::Done),
                "{p:?}"
            );
        }
        assert_eq!(watch.job(id).await.unwrap().state, DbJobState::Cancelled);
        // A's partition ends one way or the other within a renewal or a
        // partition's time; then A holds nothing.
        let mut ca2 = ca.clone();
        assert!(
            eventually(Duration::from_secs(30), || {
                let mut ca = ca2.clone();
                async move { metric(&metrics(&mut ca).await, "cuzk_cluster_leases_held") == 0.0 }
            })
            .await,
            "node-a still holds a lease of a cancelled job"
        );
        if reached(&metrics(&mut ca2).await) > before {
            eprintln!("the cancel reached node-a with job {}", attempt + 1);
            seen = true;
            break;
        }
    }
    assert!(seen, "the cancel never reached node-a in five jobs");
    drop((a, b, c));
    drop(watch);
    drop(db);
    drop(server);
}
