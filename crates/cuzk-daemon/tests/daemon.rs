//! The daemon end to end on the CPU backend, over real sockets on loopback:
//! priority order, batching, cancellation, idempotency, bad requests,
//! access control, status/metrics agreement, a load test, shutdown.

mod common;

use common::*;
use cuzk_daemon::kinds::{CircuitKind, PorepLikeKind};
use cuzk_daemon::proto::{self, Priority as P};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tonic::Code;

const LIMIT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn priorities_complete_in_class_then_fifo_order() {
    let t = TestDaemon::start(|c| {
        c.engine.max_batch_size = 1;
        c.engine.synthesis_lookahead = 1;
        // One synthesis at a time: with more, two jobs of one class may
        // finish in either order (the later one's synthesis can end first);
        // the class order across them is a_critical_job_overtakes_queued_partitions.
        c.engine.synthesis_concurrency = 1;
    })
    .await;
    let mut c = t.unix().await;
    // A blocker with several partitions keeps the pipeline busy while the
    // rest arrive, so their order is the scheduler's, not arrival's.
    let blocker = submit_id(&mut c, req(10, 1000, 6, P::Low)).await;
    assert!(
        eventually(LIMIT, || {
            let mut c = c.clone();
            async move { status(&mut c).await.running == 1 }
        })
        .await
    );
    let mix = [
        P::Low,
        P::Normal,
        P::Critical,
        P::High,
        P::Low,
        P::Critical,
        P::Normal,
        P::High,
        P::Unspecified,
    ];
    let mut jobs = Vec::new();
    for (i, p) in mix.iter().enumerate() {
        let id = submit_id(&mut c, req(6, i as u64, 1, *p)).await;
        jobs.push((id, i as u64, *p));
    }
    let mut results = Vec::new();
    for &(id, seed, p) in &jobs {
        results.push((await_done(&mut c, id).await, seed, p));
    }
    let pvk6 = t.pvk(6);
    let mut done = Vec::new();
    for (r, seed, p) in results {
        check_proofs(&pvk6, 6, seed, 1, &r);
        done.push((r.completion_seq, p, r.job_id));
    }
    let rb = await_done(&mut c, blocker).await;
    check_proofs(&t.pvk(10), 10, 1000, 6, &rb);
    done.sort();
    let rank = |p: P| match p {
        P::Critical => 0,
        P::High => 1,
        P::Normal | P::Unspecified => 2,
        P::Low => 3,
    };
    let got: Vec<(u8, u64)> = done.iter().map(|&(_, p, id)| (rank(p), id)).collect();
    let mut want = got.clone();
    want.sort();
    assert_eq!(
        got, want,
        "completion order must be by class, then submission"
    );
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn batching_fills_flushes_on_timeout_and_non_batching_kinds_bypass() {
    let wait_ms = 1500;
    let t = TestDaemon::start_with(
        |c| {
            c.engine.max_batch_size = 4;
            c.engine.max_batch_wait_ms = wait_ms;
        },
        |b| {
            b.register_kind(Arc::new(
                Variant::new(PorepLikeKind::new(6, 4), "porep-like-6-single").single(),
            ))
        },
    )
    .await;
    let mut c = t.unix().await;
    // Load the parameters first so that timings measure the batching only.
    c.preload_params(proto::PreloadParamsRequest {
        kinds: vec!["porep-like-6".into()],
    })
    .await
    .unwrap();
    let pvk = t.pvk(6);

    // Four jobs fill a batch at once.
    let mut ids = Vec::new();
    for s in 0..4 {
        ids.push(submit_id(&mut c, req(6, s, 1, P::Normal)).await);
    }
    for (s, id) in ids.iter().enumerate() {
        let r = await_done(&mut c, *id).await;
        check_proofs(&pvk, 6, s as u64, 1, &r);
        assert_eq!(r.batch_size, 4);
    }
    // Two jobs wait for the timeout, then go together.
    let a = submit_id(&mut c, req(6, 10, 1, P::Normal)).await;
    let b = submit_id(&mut c, req(6, 11, 1, P::Normal)).await;
    for (id, s) in [(a, 10), (b, 11)] {
        let r = await_done(&mut c, id).await;
        check_proofs(&pvk, 6, s, 1, &r);
        assert_eq!(r.batch_size, 2);
        let qw = r.timings.unwrap().queue_wait_ms;
        assert!(
            qw >= wait_ms as f64 * 0.9,
            "flushed after {qw} ms, before the {wait_ms} ms timeout"
        );
    }
    // A kind that does not batch goes alone and does not wait.
    let mut single = Vec::new();
    for s in 20..23u64 {
        let mut r = req(6, s, 1, P::Normal);
        r.kind = "porep-like-6-single".into();
        single.push((submit_id(&mut c, r).await, s));
    }
    for (id, s) in single {
        let r = await_done(&mut c, id).await;
        check_proofs(&pvk, 6, s, 1, &r);
        assert_eq!(r.batch_size, 1);
        assert!(
            r.timings.unwrap().queue_wait_ms < wait_ms as f64,
            "a non-batching job waited for the collector"
        );
    }
    let s = status(&mut c).await;
    assert_eq!(s.counters.unwrap().batches, 1 + 1 + 3);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_queued_and_running_jobs() {
    let t = TestDaemon::start(|c| {
        c.engine.max_batch_size = 1;
    })
    .await;
    let mut c = t.unix().await;
    let running = submit_id(&mut c, req(10, 1, 12, P::Normal)).await;
    assert!(
        eventually(LIMIT, || {
            let mut c = c.clone();
            async move { status(&mut c).await.running == 1 }
        })
        .await
    );
    let queued = submit_id(&mut c, req(10, 2, 1, P::Normal)).await;
    let r = c
        .cancel_proof(proto::CancelProofRequest { job_id: queued })
        .await
        .unwrap()
        .into_inner();
    assert!(r.cancelled);
    assert_eq!(r.state, proto::JobState::Cancelled as i32);
    let r = c
        .cancel_proof(proto::CancelProofRequest { job_id: running })
        .await
        .unwrap()
        .into_inner();
    assert!(r.cancelled);
    for id in [queued, running] {
        let r = await_done(&mut c, id).await;
        assert_eq!(r.state, proto::JobState::Cancelled as i32);
        assert!(r.proof.is_empty());
    }
    // Cancelling again reports the final state without cancelling.
    let r = c
        .cancel_proof(proto::CancelProofRequest { job_id: queued })
        .await
        .unwrap()
        .into_inner();
    assert!(!r.cancelled);
    let e = c
        .cancel_proof(proto::CancelProofRequest { job_id: 987654 })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    // The daemon goes on proving, and the cancelled job's memory is given
    // back at its partition boundary.
    let id = submit_id(&mut c, req(6, 5, 1, P::Normal)).await;
    let r = await_done(&mut c, id).await;
    check_proofs(&t.pvk(6), 6, 5, 1, &r);
    assert!(
        eventually(LIMIT, || {
            let mut c = c.clone();
            async move {
                let s = status(&mut c).await;
                s.host_reserved_bytes == 0 && s.running == 0
            }
        })
        .await,
        "host memory not released after cancel"
    );
    let s = status(&mut c).await;
    let k = s.counters.unwrap();
    assert_eq!((k.cancelled, k.completed, k.failed), (2, 1, 0));
    assert!(
        k.circuits_proved < 12 + 1,
        "the running job was proved to the end"
    );
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_id_names_its_latest_attempt() {
    let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let g = gate.clone();
    let t = TestDaemon::start_with(
        |c| c.engine.max_batch_size = 1,
        |b| {
            b.register_kind(Arc::new(
                Variant::new(PorepLikeKind::new(6, 4), "gated-6")
                    .single()
                    .before_synthesis(move || {
                        // Synthesis waits until the test opens the gate: a
                        // job stays unfinished for as long as it needs.
                        let (open, cv) = &*g;
                        let mut o = open.lock().unwrap();
                        while !*o {
                            o = cv.wait(o).unwrap();
                        }
                    }),
            ))
        },
    )
    .await;
    let mut c = t.unix().await;
    let mut r = req(8, 42, 2, P::High);
    r.request_id = "req-1".into();
    let a = c.submit_proof(r.clone()).await.unwrap().into_inner();
    let b = c.submit_proof(r.clone()).await.unwrap().into_inner();
    assert!(!a.deduplicated && b.deduplicated);
    assert_eq!(a.job_id, b.job_id);
    // Through Prove too, and after completion: the proof is returned.
    let p = c.prove(r.clone()).await.unwrap().into_inner();
    assert_eq!(p.job_id, a.job_id);
    check_proofs(&t.pvk(8), 8, 42, 2, &p);
    let again = c.submit_proof(r.clone()).await.unwrap().into_inner();
    assert!(again.deduplicated);
    assert_eq!(again.job_id, a.job_id);
    // Same id, other input, after completion: a new job.
    let mut other = r.clone();
    other.input = cuzk_daemon::kinds::PorepLikeInput {
        seed: 43,
        partitions: 2,
    }
    .encode();
    let n = c.submit_proof(other.clone()).await.unwrap().into_inner();
    assert!(!n.deduplicated);
    assert_ne!(n.job_id, a.job_id);
    let done = await_done(&mut c, n.job_id).await;
    check_proofs(&t.pvk(8), 8, 43, 2, &done);
    // The first attempt stays readable by its own id.
    let done = await_done(&mut c, a.job_id).await;
    check_proofs(&t.pvk(8), 8, 42, 2, &done);

    // An unfinished job (held at its synthesis): another input under its
    // id is refused; cancelled, the same request runs again as a new
    // attempt.
    let mut long = req(6, 1, 3, P::Normal);
    long.kind = "gated-6".into();
    long.request_id = "long".into();
    let first = c.submit_proof(long.clone()).await.unwrap().into_inner();
    let mut clash = long.clone();
    clash.input = cuzk_daemon::kinds::PorepLikeInput {
        seed: 2,
        partitions: 3,
    }
    .encode();
    let e = c.submit_proof(clash).await.unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists, "{e}");
    assert!(e.message().contains("unfinished"), "{e}");
    let cancelled = c
        .cancel_proof(proto::CancelProofRequest {
            job_id: first.job_id,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(cancelled.cancelled);
    let retry = c.submit_proof(long.clone()).await.unwrap().into_inner();
    assert!(!retry.deduplicated);
    assert_ne!(retry.job_id, first.job_id);
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    let done = await_done(&mut c, retry.job_id).await;
    check_proofs(&t.pvk(6), 6, 1, 3, &done);
    let old = await_done(&mut c, first.job_id).await;
    assert_eq!(old.state, proto::JobState::Cancelled as i32);
    let k = status(&mut c).await.counters.unwrap();
    assert_eq!(
        (k.submitted, k.deduplicated, k.completed, k.cancelled),
        (4, 3, 3, 1)
    );
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_job_retried_with_its_id_runs_again_once_the_cause_is_gone() {
    let t = TestDaemon::start_with(
        |_| {},
        |b| // Parameters under another id that the daemon must be given (as
            // Filecoin's are): a missing file fails the job.
            b.register_kind(Arc::new(
                Variant::new(PorepLikeKind::new(6, 4), "supplied-6").supplied(),
            )),
    )
    .await;
    let mut c = t.unix().await;
    let mut r = req(6, 9, 2, P::Normal);
    r.kind = "supplied-6".into();
    r.request_id = "retry-1".into();
    let first = c.submit_proof(r.clone()).await.unwrap().into_inner();
    let failed = await_done(&mut c, first.job_id).await;
    assert_eq!(failed.state, proto::JobState::Failed as i32);
    // The error names the missing file and the directory searched.
    assert!(
        failed.error.contains("supplied-6.params"),
        "{}",
        failed.error
    );
    let dir = t.params_path(6).parent().unwrap().display().to_string();
    assert!(failed.error.contains(&dir), "{}", failed.error);
    // The same id while the cause remains: a new attempt, failing again.
    let second = c.submit_proof(r.clone()).await.unwrap().into_inner();
    assert!(!second.deduplicated);
    assert_ne!(second.job_id, first.job_id);
    let failed = await_done(&mut c, second.job_id).await;
    assert_eq!(failed.state, proto::JobState::Failed as i32);
    // The operator puts the file in place (porep-like-6's, generated by
    // proving one of its jobs); the retry succeeds.
    let id = submit_id(&mut c, req(6, 1, 1, P::Normal)).await;
    let done = await_done(&mut c, id).await;
    check_proofs(&t.pvk(6), 6, 1, 1, &done);
    std::fs::copy(
        t.params_path(6),
        t.params_path(6).with_file_name("supplied-6.params"),
    )
    .unwrap();
    let third = c.submit_proof(r.clone()).await.unwrap().into_inner();
    assert!(!third.deduplicated);
    let done = await_done(&mut c, third.job_id).await;
    check_proofs(&t.pvk(6), 6, 9, 2, &done);
    let k = status(&mut c).await.counters.unwrap();
    assert_eq!((k.failed, k.completed), (2, 2));
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_proof_that_does_not_verify_fails_its_job_with_the_reason() {
    let t = TestDaemon::start_with(
        |_| {},
        |b| // The verifier expects other public inputs than the circuit
            // computes (as a Filecoin circuit would for a C1 output whose
            // seed was changed): every proof must fail verification.
            b.register_kind(Arc::new(
                Variant::new(PorepLikeKind::new(6, 4), "porep-like-6-wrong").verifier_inputs(
                    |input, partition| {
                        let i = input.downcast_ref::<cuzk_daemon::kinds::PorepLikeInput>()?;
                        let mut x = i.circuit(6, partition).public_inputs();
                        x[0] += cuzk_core::Scalar::from(1u64);
                        Some(x)
                    },
                ),
            )),
    )
    .await;
    let mut c = t.unix().await;
    let mut r = req(6, 3, 2, P::Normal);
    r.kind = "porep-like-6-wrong".into();
    let id = submit_id(&mut c, r).await;
    let bad = await_done(&mut c, id).await;
    assert_eq!(bad.state, proto::JobState::Failed as i32);
    assert!(bad.proof.is_empty());
    assert!(bad.error.contains("does not verify"), "{}", bad.error);
    // The same circuits checked against their own inputs verify.
    let id = submit_id(&mut c, req(6, 3, 2, P::Normal)).await;
    let done = await_done(&mut c, id).await;
    check_proofs(&t.pvk(6), 6, 3, 2, &done);
    let k = status(&mut c).await.counters.unwrap();
    assert_eq!((k.failed, k.completed), (1, 1));
    let text = c
        .get_metrics(proto::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .text;
    assert_eq!(metric(&text, "cuzk_proof_verification_failures_total"), 2.0);
    assert_eq!(metric(&text, "cuzk_proofs_verified_total"), 2.0);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn status_counts_collected_jobs_by_priority_and_names_what_workers_prove() {
    let t = TestDaemon::start(|c| {
        // Batches of porep-like-6 wait in the collector for the whole test.
        c.engine.max_batch_size = 16;
        c.engine.max_batch_wait_ms = 600_000;
    })
    .await;
    let mut c = t.unix().await;
    for seed in 0..3 {
        c.submit_proof(req(6, seed, 1, P::High)).await.unwrap();
    }
    let engine = &t.daemon().engine;
    let s = engine.status();
    let six: Vec<_> = s.jobs.iter().filter(|j| j.kind == "porep-like-6").collect();
    assert_eq!(six.len(), 1, "{:?}", s.jobs);
    assert_eq!(
        (six[0].priority, six[0].queued, six[0].running),
        (cuzk_daemon::Priority::High, 3, 0)
    );
    // A full batch is dispatched at once; while it is proved, the status
    // names its job and request id.
    let mut big = req(10, 7, 16, P::Normal);
    big.request_id = "big-1".into();
    let id = submit_id(&mut c, big).await;
    assert!(
        eventually(LIMIT, || async {
            engine
                .status()
                .proving
                .iter()
                .any(|w| w.kind == "porep-like-10" && w.jobs == [(id, Some("big-1".to_owned()))])
        })
        .await,
        "no worker reported proving big-1"
    );
    await_done(&mut c, id).await;
    assert!(engine.status().proving.is_empty());
    t.stop().await;
}

/// A client without a token whose connections leave from `source` (a
/// loopback address: Linux routes all of 127/8 to lo).
async fn tcp_from(
    target: std::net::SocketAddr,
    source: std::net::Ipv4Addr,
) -> proto::proof_service_client::ProofServiceClient<tonic::transport::Channel> {
    let channel = tonic::transport::Endpoint::from_static("http://localhost")
        .connect_with_connector(tower::service_fn(
            move |_: tonic::transport::Uri| async move {
                let sock = tokio::net::TcpSocket::new_v4()?;
                sock.bind((source, 0).into())?;
                let s = sock.connect(target).await?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(s))
            },
        ))
        .await
        .unwrap();
    proto::proof_service_client::ProofServiceClient::new(channel)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn trusted_networks_are_admitted_without_a_token_and_others_refused() {
    let trusted = cuzk_daemon::config::IpNet::parse("127.0.0.2/32").unwrap();
    // With a token: the trusted network needs none, others still do.
    let t = TestDaemon::start(|c| c.server.allow_unauthenticated_from = vec![trusted]).await;
    let addr = t.daemon().tcp_addr.unwrap();
    let mut from_trusted = tcp_from(addr, "127.0.0.2".parse().unwrap()).await;
    from_trusted
        .get_status(proto::GetStatusRequest {})
        .await
        .unwrap();
    let id = from_trusted
        .submit_proof(req(6, 4, 1, P::Normal))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let mut other = tcp_from(addr, "127.0.0.3".parse().unwrap()).await;
    let e = other
        .get_status(proto::GetStatusRequest {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated, "{e}");
    let mut ok = t.tcp(Some(TOKEN)).await;
    let done = await_done(&mut ok, id).await;
    check_proofs(&t.pvk(6), 6, 4, 1, &done);
    t.stop().await;

    // Without a token, on a wildcard address (allowed by the opt-in):
    // only the trusted network is admitted (loopback is not implied).
    let t = TestDaemon::start(|c| {
        c.server.token = None;
        c.server.http_listen = None;
        c.server.tcp_listen = Some("0.0.0.0:0".parse().unwrap());
        c.server.allow_unauthenticated_from = vec![trusted];
    })
    .await;
    let port = t.daemon().tcp_addr.unwrap().port();
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    for (source, admitted) in [
        ("127.0.0.2", true),
        ("127.0.0.1", false),
        ("127.0.0.3", false),
    ] {
        let mut c = tcp_from(addr, source.parse().unwrap()).await;
        let r = c.get_status(proto::GetStatusRequest {}).await;
        assert_eq!(r.is_ok(), admitted, "{source}: {r:?}");
        if let Err(e) = r {
            assert_eq!(e.code(), Code::Unauthenticated);
            assert!(e.message().contains("allow_unauthenticated_from"), "{e}");
        }
    }
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_requests_get_errors_and_the_daemon_keeps_serving() {
    let t = TestDaemon::start(|c| {
        c.server.max_message_bytes = cuzk_daemon::config::ByteSize(64 << 10);
        c.server.max_queued_per_client = 2;
        c.engine.max_batch_wait_ms = 300;
    })
    .await;
    // The socket file is private.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&t.sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let mut c = t.unix().await;
    // Malformed input, unknown kind, bad priority.
    let mut bad = req(6, 1, 1, P::Normal);
    bad.input = vec![1, 2, 3];
    assert_eq!(
        c.submit_proof(bad).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    let mut bad = req(6, 1, 1, P::Normal);
    bad.kind = "../../etc/passwd".into();
    assert_eq!(
        c.submit_proof(bad).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    let mut bad = req(6, 1, 1, P::Normal);
    bad.priority = 99;
    assert_eq!(
        c.submit_proof(bad).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    let mut bad = req(6, 1, 1000, P::Normal);
    bad.kind = "porep-like-6".into();
    assert_eq!(
        c.submit_proof(bad).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    // Oversized.
    let mut big = req(6, 1, 1, P::Normal);
    big.input = vec![0u8; 100 << 10];
    let e = c.submit_proof(big).await.unwrap_err();
    // tonic reports a message over the decoding limit as OUT_OF_RANGE.
    assert_eq!(e.code(), Code::OutOfRange, "{e}");
    // Not a gRPC message at all: raw bytes on the TCP port.
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(t.daemon().tcp_addr.unwrap())
            .await
            .unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\x01garbage")
            .await
            .unwrap();
        let mut buf = [0u8; 64];
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await;
    }
    // TCP: no token, wrong token, right token.
    let mut no = t.tcp(None).await;
    assert_eq!(
        no.get_status(proto::GetStatusRequest {})
            .await
            .unwrap_err()
            .code(),
        Code::Unauthenticated
    );
    let mut wrong = t.tcp(Some("test-token-0123456789abcdeX")).await;
    assert_eq!(
        wrong
            .submit_proof(req(6, 1, 1, P::Normal))
            .await
            .unwrap_err()
            .code(),
        Code::Unauthenticated
    );
    let mut ok = t.tcp(Some(TOKEN)).await;
    status(&mut ok).await;
    // HTTP with the same token rule.
    let http = t.daemon().http_addr.unwrap();
    assert_eq!(http_get(http, "/metrics", None).await.0, 401);
    let (code, body) = http_get(http, "/metrics", Some(TOKEN)).await;
    assert_eq!(code, 200);
    assert!(body.contains("cuzk_jobs_total"));

    // Per-client limit on unfinished jobs (client ids shared on purpose).
    let mut lim = Vec::new();
    for s in 0..3u64 {
        let mut r = req(6, s, 1, P::Normal);
        r.client_id = "tenant-a".into();
        lim.push(ok.submit_proof(r).await.map(|r| r.into_inner().job_id));
    }
    assert!(lim[0].is_ok() && lim[1].is_ok());
    assert_eq!(lim[2].as_ref().unwrap_err().code(), Code::ResourceExhausted);
    for (s, r) in lim.iter().take(2).enumerate() {
        let done = await_done(&mut c, *r.as_ref().unwrap()).await;
        check_proofs(&t.pvk(6), 6, s as u64, 1, &done);
    }
    // Still serving, and the limit frees up once jobs finish.
    let mut r = req(6, 9, 1, P::Normal);
    r.client_id = "tenant-a".into();
    let p = ok.prove(r).await.unwrap().into_inner();
    check_proofs(&t.pvk(6), 6, 9, 1, &p);
    let k = status(&mut c).await.counters.unwrap();
    assert_eq!(
        k.rejected, 5,
        "malformed, unknown kind, bad partitions, priority, client limit"
    );
    assert_eq!(k.completed, 3);
    t.stop().await;
}

fn metric(text: &str, name_labels: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(name_labels)
                .and_then(|r| r.trim().parse().ok())
        })
        .unwrap_or_else(|| panic!("metric {name_labels} missing"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn status_metrics_and_parameter_tiers_agree_with_what_happened() {
    let t = TestDaemon::start(|_| {}).await;
    let mut c = t.unix().await;
    let s = status(&mut c).await;
    assert!(!s.gpu_backend_present && s.devices.is_empty() && s.backend == "cpu");
    assert!(s.params.is_empty());
    // Preload generates and loads; evict drops from memory, the file stays.
    let l = c
        .preload_params(proto::PreloadParamsRequest {
            kinds: vec!["porep-like-8".into()],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(l.loaded.len(), 1);
    assert_eq!(l.loaded[0].tier, "pinned");
    assert!(t.params_path(8).exists());
    let e = c
        .evict_params(proto::EvictParamsRequest {
            kinds: vec!["porep-like-8".into()],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((e.evicted.len(), e.busy.len()), (1, 0));
    let s = status(&mut c).await;
    assert_eq!(s.params[0].tier, "disk");
    assert_eq!(
        c.preload_params(proto::PreloadParamsRequest {
            kinds: vec!["nope".into()]
        })
        .await
        .unwrap_err()
        .code(),
        Code::InvalidArgument
    );

    for s in 0..3 {
        let r = c.prove(req(8, s, 1, P::High)).await.unwrap().into_inner();
        check_proofs(&t.pvk(8), 8, s, 1, &r);
    }
    let id = submit_id(&mut c, req(8, 99, 1, P::Low)).await;
    c.cancel_proof(proto::CancelProofRequest { job_id: id })
        .await
        .unwrap();
    let mut bad = req(8, 1, 1, P::Normal);
    bad.input.clear();
    assert!(c.submit_proof(bad).await.is_err());
    // The cancelled job may still be synthesizing (a chunk of one starts at
    // once): its lease goes when that returns. Then nothing is in flight
    // and the numbers are settled.
    let mut s = status(&mut c).await;
    for _ in 0..200 {
        if s.params.first().is_some_and(|p| p.ref_count == 0) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        s = status(&mut c).await;
    }
    let k = s.counters.unwrap();
    let m = c
        .get_metrics(proto::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .text;
    assert_eq!(k.submitted, 4);
    assert_eq!(metric(&m, "cuzk_jobs_total{outcome=\"submitted\"}"), 4.0);
    assert_eq!(k.completed, 3);
    assert_eq!(metric(&m, "cuzk_jobs_total{outcome=\"completed\"}"), 3.0);
    assert_eq!(
        k.cancelled + k.completed,
        4,
        "the cancel raced the job; it must be one or the other"
    );
    assert_eq!(
        metric(&m, "cuzk_jobs_total{outcome=\"cancelled\"}"),
        k.cancelled as f64
    );
    assert_eq!(k.rejected, 1);
    assert_eq!(metric(&m, "cuzk_jobs_total{outcome=\"rejected\"}"), 1.0);
    assert_eq!(
        metric(&m, "cuzk_circuits_proved_total"),
        k.circuits_proved as f64
    );
    assert_eq!(
        metric(&m, "cuzk_job_phase_seconds_count"),
        k.completed as f64
    );
    assert_eq!(metric(&m, "cuzk_gpu_backend_present"), 0.0);
    let pinned = s.tiers.iter().find(|t| t.tier == "pinned").unwrap();
    assert!(pinned.used_bytes > 0);
    assert_eq!(
        metric(&m, "cuzk_params_tier_bytes{tier=\"pinned\",kind=\"used\"}"),
        pinned.used_bytes as f64
    );
    assert_eq!(s.params[0].tier, "pinned");
    assert_eq!(s.params[0].ref_count, 0);
    // HTTP /status agrees.
    let (code, body) = http_get(t.daemon().http_addr.unwrap(), "/status", Some(TOKEN)).await;
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["counters"]["completed"], 3);
    assert_eq!(v["gpu_backend_present"], false);
    assert!(v["note"].as_str().unwrap().contains("no GPU backend"));
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn load_test_hundreds_of_jobs_from_concurrent_clients() {
    let t = TestDaemon::start(|c| {
        c.engine.max_batch_size = 8;
        c.engine.max_batch_wait_ms = 5;
    })
    .await;
    const CLIENTS: u64 = 6;
    const PER_CLIENT: u64 = 50;
    let mut tasks = Vec::new();
    for cl in 0..CLIENTS {
        let mut c = if cl % 2 == 0 {
            t.unix().await
        } else {
            t.tcp(Some(TOKEN)).await
        };
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for j in 0..PER_CLIENT {
                let seed = cl * 1000 + j;
                let log = if j % 5 == 0 { 8 } else { 6 };
                let p = [P::Low, P::Normal, P::High, P::Critical][(j % 4) as usize];
                let id = submit_id(&mut c, req(log, seed, 1, p)).await;
                ids.push((id, log, seed));
            }
            let mut out = Vec::new();
            for (id, log, seed) in ids {
                out.push((await_done(&mut c, id).await, log, seed));
            }
            out
        }));
    }
    let mut results = Vec::new();
    for task in tasks {
        results.extend(task.await.unwrap());
    }
    assert_eq!(results.len(), (CLIENTS * PER_CLIENT) as usize);
    let pvks: HashMap<u32, _> = [6, 8].into_iter().map(|l| (l, t.pvk(l))).collect();
    let mut seen = std::collections::HashSet::new();
    for (r, log, seed) in &results {
        assert!(seen.insert(r.job_id), "job id {} returned twice", r.job_id);
        check_proofs(&pvks[log], *log, *seed, 1, r);
    }
    let mut c = t.unix().await;
    let k = status(&mut c).await.counters.unwrap();
    assert_eq!(k.completed, CLIENTS * PER_CLIENT);
    assert_eq!((k.failed, k.cancelled), (0, 0));
    assert_eq!(k.circuits_proved, CLIENTS * PER_CLIENT);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_finishes_jobs_then_refuses_and_removes_the_socket() {
    let t = TestDaemon::start(|c| c.engine.max_batch_size = 1).await;
    let mut c = t.unix().await;
    let ids: Vec<u64> = {
        let mut v = Vec::new();
        for s in 0..3 {
            v.push(submit_id(&mut c, req(8, s, 1, P::Normal)).await);
        }
        v
    };
    let waiters: Vec<_> = ids
        .iter()
        .map(|&id| {
            let mut c = c.clone();
            tokio::spawn(async move { await_done(&mut c, id).await })
        })
        .collect();
    let engine = t.daemon().engine.clone();
    let sock = t.sock.clone();
    let pvk_path = t.params_path(8);
    let TestDaemon { d, dir, .. } = t;
    d.unwrap().shutdown().await;
    for (s, w) in waiters.into_iter().enumerate() {
        let r = w.await.unwrap();
        let pvk = cuzk_core::verifier::prepare_verifying_key(
            &cuzk_core::params::MappedParameters::open(&pvk_path)
                .unwrap()
                .vk,
        );
        check_proofs(&pvk, 8, s as u64, 1, &r);
    }
    assert!(!sock.exists(), "socket file left behind");
    let late = engine.submit(cuzk_daemon::SubmitRequest {
        request_id: None,
        kind: "porep-like-6".into(),
        input: 1u64.to_le_bytes().to_vec(),
        priority: cuzk_daemon::Priority::Normal,
        client: "x".into(),
    });
    assert!(matches!(late, Err(cuzk_daemon::EngineError::ShuttingDown)));
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_in_cancel_mode_cancels_what_is_left() {
    let t = TestDaemon::start(|c| {
        c.engine.max_batch_size = 1;
        c.engine.shutdown = cuzk_daemon::config::ShutdownMode::Cancel;
    })
    .await;
    let mut c = t.unix().await;
    let mut ids = Vec::new();
    for s in 0..4 {
        ids.push(submit_id(&mut c, req(10, s, 4, P::Normal)).await);
    }
    let engine = t.daemon().engine.clone();
    let TestDaemon { d, dir, .. } = t;
    d.unwrap().shutdown().await;
    let mut cancelled = 0;
    for id in ids {
        let v = engine.job(id).unwrap();
        assert!(v.state.is_final());
        if v.state == cuzk_daemon::JobState::Cancelled {
            cancelled += 1;
        }
    }
    assert!(
        cancelled >= 3,
        "only {cancelled} of 4 long jobs were cancelled"
    );
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_kinds_compiled_systems_and_shapes_are_held_from_the_host_budget() {
    let want: u64 = [6, 8, 10]
        .iter()
        .map(|&l| PorepLikeKind::new(l, 1).resident_host_bytes())
        .sum();
    let per10 = PorepLikeKind::new(10, 1).host_bytes_per_partition();
    assert!(want > 0);
    // Room for both: all of it is held, apart from what partitions reserve.
    for (budget, held) in [(want + 4 * per10, want), (want / 2 + per10, want / 2)] {
        let t = TestDaemon::start(|c| {
            c.engine.host_memory_budget = Some(cuzk_daemon::config::ByteSize(budget));
        })
        .await;
        let mut c = t.unix().await;
        let s = status(&mut c).await;
        assert_eq!(
            (
                s.host_budget_bytes,
                s.host_resident_bytes,
                s.host_reserved_bytes
            ),
            (budget, held, 0)
        );
        // A job of the largest kind still proves in what is left (with a
        // budget too small for both, one partition at a time).
        let id = submit_id(&mut c, req(10, 3, 2, P::Normal)).await;
        let r = await_done(&mut c, id).await;
        check_proofs(&t.pvk(10), 10, 3, 2, &r);
        let s = status(&mut c).await;
        assert_eq!((s.host_resident_bytes, s.host_reserved_bytes), (held, 0));
        t.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn host_budget_makes_jobs_wait_and_refuses_what_never_fits() {
    let per8 = PorepLikeKind::new(8, 1).host_bytes_per_partition();
    let t = TestDaemon::start(|c| {
        c.engine.max_batch_size = 1;
        c.engine.synthesis_lookahead = 3;
        // Room for one synthesized porep-like-8 partition at a time.
        c.engine.host_memory_budget = Some(cuzk_daemon::config::ByteSize(per8));
    })
    .await;
    let mut c = t.unix().await;
    let mut ids = Vec::new();
    for s in 0..6 {
        ids.push(submit_id(&mut c, req(8, s, 1, P::Normal)).await);
    }
    let too_big = submit_id(&mut c, req(10, 0, 1, P::Critical)).await;
    let r = await_done(&mut c, too_big).await;
    assert_eq!(r.state, proto::JobState::Failed as i32);
    assert!(r.error.contains("host memory"), "{}", r.error);
    let mut results = Vec::new();
    for &id in &ids {
        results.push(await_done(&mut c, id).await);
    }
    let pvk = t.pvk(8);
    for (s, r) in results.iter().enumerate() {
        check_proofs(&pvk, 8, s as u64, 1, r);
    }
    let s = status(&mut c).await;
    assert_eq!((s.host_budget_bytes, s.host_reserved_bytes), (per8, 0));
    t.stop().await;
}

/// A job's decoded input (a Filecoin job's built circuits) is held while
/// the job runs and let go when it ends; its result stays for
/// `result_retention_s`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_finished_job_lets_its_input_go_and_keeps_its_result() {
    let inputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = inputs.clone();
    let t = TestDaemon::start_with(
        |_| {},
        move |b| {
            // A weak handle on each input decoded, to see when the engine
            // lets go of them.
            b.register_kind(Arc::new(
                Variant::new(PorepLikeKind::new(6, 4), "watched-6").on_decode(move |input| {
                    seen.lock().unwrap().push(Arc::downgrade(input));
                }),
            ))
        },
    )
    .await;
    let mut c = t.unix().await;
    let mut r = req(6, 21, 3, P::Normal);
    r.kind = "watched-6".into();
    let id = submit_id(&mut c, r).await;
    let input = {
        let v = inputs.lock().unwrap();
        assert_eq!(v.len(), 1, "decoded once");
        v[0].clone()
    };
    let done = await_done(&mut c, id).await;
    check_proofs(&t.pvk(6), 6, 21, 3, &done);
    assert!(
        eventually(LIMIT, || {
            let gone = input.upgrade().is_none();
            async move { gone }
        })
        .await,
        "the finished job's input is still held"
    );
    // The result is still there.
    let again = await_done(&mut c, id).await;
    assert_eq!(again.proof, done.proof);
    check_proofs(&t.pvk(6), 6, 21, 3, &again);
    t.stop().await;
}
