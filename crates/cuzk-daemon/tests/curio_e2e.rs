//! Curio's service end to end at 2 KiB sectors: the daemon with the
//! Filecoin kinds and Curio's `cuzk.v1` service, driven by a client
//! generated from Curio's schema, proving for a sector filecoin-proofs
//! sealed (the fixture of cuzk-filecoin's end-to-end tests), the proofs
//! judged by filecoin-proofs' verifiers.
//!
//! Parameters are generated once per run into a fresh directory; set
//! `CUZK_FIL_TEST_PARAMS=DIR` to keep and reuse them between runs.

#[path = "../../cuzk-filecoin/tests/fixture/mod.rs"]
mod fixture;

use cuzk_daemon::curio::pb;
use cuzk_filecoin::filecoin_proofs_api::{
    post, PublicReplicaInfo, RegisteredPoStProof, RegisteredSealProof, SectorId,
};
use cuzk_filecoin::CircuitId;
use fixture::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;

type CurioClient =
    cuzk_daemon::curio::pb::proving_engine_client::ProvingEngineClient<tonic::transport::Channel>;

/// A daemon with the Filecoin kinds at the fixture's sector size and
/// Curio's service (messages up to `max_message` bytes) on loopback TCP,
/// its configuration then changed by `edit`, and a Curio client of it.
async fn curio_daemon(
    f: &Fixture,
    max_message: usize,
    edit: impl FnOnce(&mut cuzk_daemon::DaemonConfig),
) -> (cuzk_daemon::RunningDaemon, CurioClient) {
    let mut cfg = cuzk_daemon::DaemonConfig::default();
    cfg.server.unix_socket = None;
    cfg.server.tcp_listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.params.dir = f.params.dir().to_path_buf();
    cfg.kinds.porep_like_log_sizes = vec![];
    cfg.engine.max_batch_wait_ms = 20;
    cfg.engine.host_memory_budget = Some(cuzk_daemon::config::ByteSize(4 << 30));
    edit(&mut cfg);
    let mut builder = cuzk_daemon::DaemonBuilder::new(cfg)
        .add_service(cuzk_daemon::curio::service_hook(max_message));
    for kind in
        cuzk_daemon::filecoin::FilecoinKind::all(&[SECTOR_BYTES], false, f.params.dir()).unwrap()
    {
        builder = builder.register_kind(kind);
    }
    let daemon = builder.start().await.unwrap();
    let client = CurioClient::connect(format!("http://{}", daemon.tcp_addr.unwrap()))
        .await
        .unwrap();
    (daemon, client)
}

/// Proves `submit` through Curio's one-call `Prove`: its result.
async fn prove(client: &mut CurioClient, submit: pb::SubmitProofRequest) -> pb::AwaitProofResponse {
    client
        .prove(pb::ProveRequest {
            submit: Some(submit),
        })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap()
}

/// Curio's PoRep submission of `c1` for the fixture's sector, as Curio
/// sends it: the C1 output inside Curio's wrapper, miner 1000.
fn curio_porep(
    s: &Sector,
    c1: &cuzk_filecoin::filecoin_proofs_api::seal::SealCommitPhase1Output,
    request_id: String,
) -> cuzk_daemon::curio::pb::SubmitProofRequest {
    use base64::Engine as _;
    let api_json = serde_json::to_vec(c1).unwrap();
    cuzk_daemon::curio::pb::SubmitProofRequest {
        request_id,
        proof_kind: cuzk_daemon::curio::pb::ProofKind::PorepSealCommit as i32,
        sector_size: SECTOR_BYTES,
        registered_proof: SEAL_PROOF as u64,
        vanilla_proof: serde_json::to_vec(&serde_json::json!({
            "SectorNum": u64::from(s.sector_id),
            "Phase1Out": base64::engine::general_purpose::STANDARD.encode(&api_json),
            "SectorSize": SECTOR_BYTES,
        }))
        .unwrap(),
        sector_number: u64::from(s.sector_id),
        miner_id: 1000,
        ..Default::default()
    }
}

/// The daemon with the Filecoin kinds and Curio's service, driven by a
/// client generated from Curio's schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curio_client_proves_through_the_daemon() {
    let f = fixture();
    let s = &f.sector;
    let winning = RegisteredPoStProof::StackedDrgWinning2KiBV1;
    let window = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
    ensure_params(f, CircuitId::PoSt(winning));
    ensure_params(f, CircuitId::PoSt(window));

    // A small message limit, to send requests just under and over it.
    const LIMIT: usize = 8 << 20;
    let (daemon, mut client) = curio_daemon(f, LIMIT, |cfg| cfg.server.http_listen = None).await;

    // WinningPoSt: one bincode vanilla proof, the prover id from miner_id.
    let rand = randomness(&mut ChaCha20Rng::seed_from_u64(21));
    let challenges =
        post::generate_fallback_sector_challenges(winning, &rand, &[s.sector_id], s.prover_id)
            .unwrap();
    let vanilla = post::generate_single_vanilla_proof(
        winning,
        s.sector_id,
        &replica(s, winning),
        &challenges[&s.sector_id],
    )
    .unwrap();
    let submit = pb::SubmitProofRequest {
        request_id: "winning-1".into(),
        proof_kind: pb::ProofKind::WinningPost as i32,
        sector_size: SECTOR_BYTES,
        registered_proof: winning as u64,
        vanilla_proof: vanilla,
        sector_number: u64::from(s.sector_id),
        miner_id: 1000,
        randomness: rand.to_vec(),
        ..Default::default()
    };
    let res = prove(&mut client, submit.clone()).await;
    assert_eq!(
        res.status,
        pb::await_proof_response::Status::Completed as i32,
        "{}",
        res.error_message
    );
    // The request id is the job id, as in Curio's own daemon.
    assert_eq!(res.job_id, "winning-1");
    let replicas = BTreeMap::from([(s.sector_id, PublicReplicaInfo::new(winning, s.comm_r))]);
    assert!(post::verify_winning_post(&rand, &res.proof, &replicas, s.prover_id).unwrap());
    // Proving the same request again returns the completed job's proof.
    let again = prove(&mut client, submit.clone()).await;
    assert_eq!(again.proof, res.proof);

    // Randomness other than the vanilla proof's: PoSt's vanilla proofs are
    // checked against their challenges at submission (a PoRep C1 output's
    // are not; see curio_porep_with_an_altered_seed_fails_verification).
    let mut altered = submit.clone();
    altered.request_id = "winning-2".into();
    altered.randomness[0] ^= 1;
    let err = client
        .prove(pb::ProveRequest {
            submit: Some(altered),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err}");
    // The refused request left its id free: the right one runs.
    let mut fixed = submit.clone();
    fixed.request_id = "winning-2".into();
    let good = prove(&mut client, fixed).await;
    assert_eq!(
        good.status,
        pb::await_proof_response::Status::Completed as i32,
        "{}",
        good.error_message
    );
    assert!(post::verify_winning_post(&rand, &good.proof, &replicas, s.prover_id).unwrap());

    // WindowPoSt partitions 0 and 1 of two (sectors 5 and 6, then 7),
    // through SubmitProof and AwaitProof.
    let ids: Vec<SectorId> = [5u64, 6, 7].map(SectorId::from).to_vec();
    let rand = randomness(&mut ChaCha20Rng::seed_from_u64(22));
    let ch = post::generate_fallback_sector_challenges(window, &rand, &ids, s.prover_id).unwrap();
    use base64::Engine as _;
    let list: Vec<String> = ids
        .iter()
        .map(|id| {
            let v = post::generate_single_vanilla_proof(window, *id, &replica(s, window), &ch[id])
                .unwrap();
            base64::engine::general_purpose::STANDARD.encode(v)
        })
        .collect();
    // Partition 0 in the older schema's form (a JSON list in
    // vanilla_proof), partition 1 in the newer one (repeated
    // vanilla_proofs, raw bytes).
    let window_submit = |vanilla: &[String], partition_index| pb::SubmitProofRequest {
        proof_kind: pb::ProofKind::WindowPostPartition as i32,
        registered_proof: window as u64,
        vanilla_proof: if partition_index == 0 {
            serde_json::to_vec(vanilla).unwrap()
        } else {
            Vec::new()
        },
        vanilla_proofs: if partition_index == 0 {
            Vec::new()
        } else {
            vanilla
                .iter()
                .map(|v| base64::engine::general_purpose::STANDARD.decode(v).unwrap())
                .collect()
        },
        miner_id: 1000,
        randomness: rand.to_vec(),
        partition_index,
        ..Default::default()
    };
    let mut parts = Vec::new();
    for (k, vanilla) in [(0u32, &list[..2]), (1, &list[2..])] {
        let job = client
            .submit_proof(window_submit(vanilla, k))
            .await
            .unwrap()
            .into_inner();
        let res = client
            .await_proof(pb::AwaitProofRequest {
                job_id: job.job_id,
                timeout_ms: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            res.status,
            pb::await_proof_response::Status::Completed as i32
        );
        parts.push(res.proof);
    }
    let replicas: BTreeMap<_, _> = ids
        .iter()
        .map(|id| (*id, PublicReplicaInfo::new(window, s.comm_r)))
        .collect();
    let merged = parts.concat();
    assert!(post::verify_window_post(&rand, &[(window, &merged)], &replicas, s.prover_id).unwrap());

    // Bad requests are refused with gRPC status codes, not crashes.
    let mut bad = submit.clone();
    bad.request_id.clear();
    bad.randomness = vec![0; 5];
    let err = client.submit_proof(bad).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    let mut bad = submit.clone();
    bad.request_id.clear();
    bad.vanilla_proof = vec![1, 2, 3];
    let err = client.submit_proof(bad).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err}");
    // An unknown job id is cancelled with nothing running, as Curio's own
    // daemon answers.
    let cancelled = client
        .cancel_proof(pb::CancelProofRequest {
            job_id: "999999".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!cancelled.was_running);

    // Requests just under and over the message limit: the first reaches
    // the service (and is refused as the junk it is), the second is
    // refused at the transport with the limit named.
    let mut junk = submit.clone();
    junk.request_id.clear();
    junk.vanilla_proof = vec![7; LIMIT - 4096];
    let err = client.submit_proof(junk.clone()).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err}");
    junk.vanilla_proof = vec![7; LIMIT + 1];
    let err = client.submit_proof(junk).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::OutOfRange, "{err}");
    assert!(err.message().contains(&LIMIT.to_string()), "{err}");

    // PoRep: registered_proof, sector_size, sector_number and miner_id are
    // checked against the C1 output (no parameters are needed to refuse).
    let porep = curio_porep(s, &s.c1, "porep-1000-42".into());
    type Edit = fn(&mut pb::SubmitProofRequest);
    let edits: [(&str, Edit); 4] = [
        ("registered_proof", |r| {
            r.registered_proof = RegisteredSealProof::StackedDrg32GiBV1_1 as u64
        }),
        ("sector_size", |r| r.sector_size = 32 << 30),
        ("sector_number", |r| r.sector_number = 43),
        ("miner_id", |r| r.miner_id = 1001),
    ];
    for (what, edit) in edits {
        let mut r = porep.clone();
        edit(&mut r);
        let err = client.submit_proof(r).await.unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{what}: {err}");
        assert!(err.message().contains(what), "{what}: {err}");
    }
    // The C1 output without Curio's wrapper, sector and miner from the
    // request alone, is checked the same way.
    let mut bare = porep.clone();
    bare.vanilla_proof = serde_json::to_vec(&s.c1).unwrap();
    bare.sector_number = 43;
    let err = client.submit_proof(bare).await.unwrap_err();
    assert!(err.message().contains("replica id"), "{err}");

    // Status, metrics and the parameter tiers.
    let status = client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.total_proofs_completed, 4);
    assert_eq!(status.total_proofs_failed, 0);
    assert!(status
        .loaded_srs
        .iter()
        .any(|p| p.circuit_id == "winning-2k"));
    let metrics = client
        .get_metrics(pb::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(!metrics.prometheus_text.is_empty());
    let evicted = client
        .evict_srs(pb::EvictSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(evicted.was_loaded && evicted.freed_bytes > 0);
    // Evicted parameters are no longer listed as loaded.
    let status = client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(
        !status
            .loaded_srs
            .iter()
            .any(|p| p.circuit_id == "winning-2k"),
        "{:?}",
        status.loaded_srs
    );
    let loaded = client
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!loaded.already_loaded);
    let err = client
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "porep-3g".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::NotFound);

    daemon.shutdown().await;
}

/// A C1 output whose seed was changed after commit phase 1, as Curio sends
/// it: its circuit is satisfied by the vanilla proofs' paths, so it proves,
/// but the proof does not verify against the challenges filecoin-proofs'
/// verifier derives from the seed. The job fails with that reason instead
/// of returning a proof the chain would reject. The request's other fields
/// (miner 1000, sector 42) match the C1 output, so this also checks that a
/// right request passes the replica-id check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curio_porep_with_an_altered_seed_fails_verification() {
    let f = fixture();
    let s = &f.sector;
    ensure_params(f, CircuitId::PoRep(SEAL_PROOF));
    let max_message = cuzk_daemon::DaemonConfig::default()
        .server
        .max_message_bytes
        .0 as usize;
    let (daemon, mut client) = curio_daemon(f, max_message, |cfg| {
        // The subgroup checks of the 1.1 GB file take minutes on CI's two
        // cores; the daemon's parameter tests cover them.
        cfg.params.check_points = false;
    })
    .await;

    let mut c1 = s.c1.clone();
    c1.seed[0] ^= 1;
    let submit = curio_porep(s, &c1, format!("porep-1000-{}", u64::from(s.sector_id)));
    let res = prove(&mut client, submit).await;
    assert_eq!(
        res.status,
        pb::await_proof_response::Status::Failed as i32,
        "{res:?}"
    );
    assert!(res.proof.is_empty());
    assert!(
        res.error_message.contains("does not verify"),
        "{}",
        res.error_message
    );
    let metrics = client
        .get_metrics(pb::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .prometheus_text;
    let failures: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("cuzk_proof_verification_failures_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no verification failure count in {metrics}"));
    assert!(failures >= 1.0, "{metrics}");
    daemon.shutdown().await;
}
