//! Curio's service in cluster mode: two daemons on one real PostgreSQL
//! database (started by scripts/pg-test-server.sh, or the one
//! `CUZK_TEST_DATABASE_URL` names; a database of its own, dropped after),
//! driven by a client generated from Curio's schema. A request submitted
//! through `cuzk.v1` on one daemon is a job of the shared queue that the
//! other awaits, reports, cancels and resubmits by Curio's id, and whose
//! result (here a failure: the 2 KiB parameters are not generated, which
//! would take minutes) comes back through `cuzk.v1` on either daemon.

#[path = "../../cuzk-cluster/tests/common/mod.rs"]
mod pg;

use cuzk_daemon::curio::pb;
use cuzk_daemon::{DaemonBuilder, DaemonConfig, RunningDaemon};
use cuzk_filecoin::filecoin_proofs_api::RegisteredSealProof;
use cuzk_filecoin::synth_c1::{self, SynthSpec};
use pb::await_proof_response::Status as S;
use pb::proving_engine_client::ProvingEngineClient;
use std::path::Path;

type Client = ProvingEngineClient<tonic::transport::Channel>;

async fn daemon(db: &pg::TestDb, name: &str, params: &Path) -> RunningDaemon {
    let mut cfg = DaemonConfig::default();
    cfg.server.unix_socket = None;
    cfg.server.tcp_listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.server.http_listen = None;
    cfg.params.dir = params.to_path_buf();
    cfg.kinds.porep_like_log_sizes = vec![];
    cfg.engine.host_memory_budget = Some(cuzk_daemon::config::ByteSize(4 << 30));
    cfg.cluster.database_url = Some(db.url.clone());
    cfg.cluster.node_id = Some(name.into());
    cfg.cluster.poll_interval_ms = 50;
    cfg.cluster.heartbeat_interval_s = 1;
    cfg.cluster.placement_grace_s = 0;
    let mut b = DaemonBuilder::new(cfg).add_service(cuzk_daemon::curio::service_hook(64 << 20));
    // No parameter generation: the files are absent, so a claimed
    // partition fails (with the file named) instead of taking minutes.
    for kind in cuzk_daemon::filecoin::FilecoinKind::all(&[2048], false, params).unwrap() {
        b = b.register_kind(kind);
    }
    b.start().await.unwrap()
}

async fn client(d: &RunningDaemon) -> Client {
    ProvingEngineClient::connect(format!("http://{}", d.tcp_addr.unwrap()))
        .await
        .unwrap()
}

async fn await_proof(c: &mut Client, id: &str, timeout_ms: u64) -> pb::AwaitProofResponse {
    c.await_proof(pb::AwaitProofRequest {
        job_id: id.into(),
        timeout_ms,
    })
    .await
    .unwrap()
    .into_inner()
}

fn queue<'a>(s: &'a pb::GetStatusResponse, name: &str) -> Option<&'a pb::QueueStatus> {
    s.queues.iter().find(|q| q.proof_kind == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curio_requests_go_to_the_cluster_queue() {
    let db = pg::TestDb::new().await;
    let params = tempfile::tempdir().unwrap();
    let a = daemon(&db, "a", params.path()).await;
    let b = daemon(&db, "b", params.path()).await;
    // Neither claims: the job stays queued while the test looks at it.
    for d in [&a, &b] {
        d.cluster.as_ref().expect("cluster mode").stop_claiming();
    }
    let (mut ca, mut cb) = (client(&a).await, client(&b).await);

    let c1 =
        synth_c1::synthesize(&SynthSpec::new(RegisteredSealProof::StackedDrg2KiBV1_1, 3)).unwrap();
    let submit = pb::SubmitProofRequest {
        request_id: "porep-1000-1".into(),
        proof_kind: pb::ProofKind::PorepSealCommit as i32,
        sector_size: 2048,
        registered_proof: 5, // StackedDrg2KiBV1_1
        vanilla_proof: serde_json::to_vec(&c1.output).unwrap(),
        sector_number: 1,
        ..Default::default()
    };
    let decodes = cuzk_filecoin::porep::c1_decodes();
    let s = ca.submit_proof(submit.clone()).await.unwrap().into_inner();
    assert_eq!(s.job_id, "porep-1000-1");
    // Decoded once to check it; the queue takes the bytes and the
    // partition count without decoding them again. (Nothing else decodes
    // a C1 in this process meanwhile: no daemon claims.)
    assert_eq!(cuzk_filecoin::porep::c1_decodes() - decodes, 1);
    assert_eq!(s.queue_position, 1, "one job queued in the cluster");

    // In the shared queue, not in daemon A's engine.
    let front = b.cluster.as_ref().unwrap().client();
    let id = front
        .job_of_request("porep-1000-1")
        .await
        .unwrap()
        .expect("the request id is in the database");
    let j = front.job(id).await.unwrap();
    assert_eq!((j.kind.as_str(), j.partitions), ("porep-2k", 1));
    assert_eq!(j.state, cuzk_cluster::JobState::Queued);
    assert_eq!(a.engine.job_of_request("porep-1000-1"), None);

    // Daemon B answers for it by Curio's id.
    let r = await_proof(&mut cb, "porep-1000-1", 200).await;
    assert_eq!(
        (r.job_id.as_str(), r.status),
        ("porep-1000-1", S::Timeout as i32)
    );
    let st = cb
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    for name in ["porep-c2", "priority-normal", "all"] {
        let q = queue(&st, name).unwrap_or_else(|| panic!("no queue {name}: {:?}", st.queues));
        assert_eq!((q.pending, q.in_progress), (1, 0), "{name}");
    }

    // Cancelled from B, seen cancelled on A.
    let c = cb
        .cancel_proof(pb::CancelProofRequest {
            job_id: "porep-1000-1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!c.was_running);
    let r = await_proof(&mut ca, "porep-1000-1", 0).await;
    assert_eq!(r.status, S::Cancelled as i32, "{}", r.error_message);
    assert_eq!(
        front.job(id).await.unwrap().state,
        cuzk_cluster::JobState::Cancelled
    );
    // An unknown id is not an error (as Curio's daemon answers).
    let c = cb
        .cancel_proof(pb::CancelProofRequest {
            job_id: "porep-1000-404".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!c.was_running);

    // Resubmitted on B: a new attempt of the same id, which a claiming
    // daemon runs; its result comes back through cuzk.v1 on A.
    let s = cb.submit_proof(submit.clone()).await.unwrap().into_inner();
    assert_eq!(s.job_id, "porep-1000-1");
    let id2 = front.job_of_request("porep-1000-1").await.unwrap().unwrap();
    assert_ne!(id2, id, "a cancelled job's id starts a new attempt");
    let c = daemon(&db, "c", params.path()).await;
    let r = await_proof(&mut ca, "porep-1000-1", 120_000).await;
    assert_eq!(r.status, S::Failed as i32, "{r:?}");
    assert!(r.proof.is_empty());
    let j = front.job(id2).await.unwrap();
    assert_eq!(j.state, cuzk_cluster::JobState::Failed);
    assert!(
        !j.failures.is_empty() && j.failures.iter().all(|f| f.node == "c"),
        "{:?}",
        j.failures
    );
    assert_eq!(r.error_message, j.error.clone().unwrap_or_default());
    // Daemon C, which ran it, answers the same.
    let r = await_proof(&mut client(&c).await, "porep-1000-1", 0).await;
    assert_eq!(r.status, S::Failed as i32);
    for d in [a, b, c] {
        d.shutdown().await;
    }

    // Without a cluster the engine keeps the input Curio's service decoded.
    let mut cfg = DaemonConfig::default();
    cfg.server.unix_socket = None;
    cfg.server.tcp_listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.server.http_listen = None;
    cfg.params.dir = params.path().to_path_buf();
    cfg.kinds.porep_like_log_sizes = vec![];
    cfg.engine.host_memory_budget = Some(cuzk_daemon::config::ByteSize(4 << 30));
    let mut builder =
        DaemonBuilder::new(cfg).add_service(cuzk_daemon::curio::service_hook(64 << 20));
    for kind in cuzk_daemon::filecoin::FilecoinKind::all(&[2048], false, params.path()).unwrap() {
        builder = builder.register_kind(kind);
    }
    let local = builder.start().await.unwrap();
    let decodes = cuzk_filecoin::porep::c1_decodes();
    let s = client(&local)
        .await
        .submit_proof(submit)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(cuzk_filecoin::porep::c1_decodes() - decodes, 1);
    let id = local.engine.job_of_request(&s.job_id).expect("a local job");
    assert_eq!(local.engine.job(id).unwrap().kind, "porep-2k");
    local.shutdown().await;
}
