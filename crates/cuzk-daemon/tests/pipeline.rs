//! The synthesis pipeline on the CPU backend: several syntheses in flight
//! (one job's partitions and different jobs' chunks), bounded by
//! `synthesis_concurrency` and the host budget; a CRITICAL job overtaking
//! queued work; cancellation releasing memory mid-synthesis; the timeline
//! exported as a Chrome trace; proof verification failing a job.

mod common;

use common::*;
use cuzk_daemon::kinds::{CircuitKind, JobInput, KindError, PorepLikeKind};
use cuzk_daemon::proto::{self, Priority as P};
use serde_json::Value;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);
/// How long a gated synthesis waits at most before giving up (the test
/// then fails on `gave_up`; it never passes by waiting).
const GATE_LIMIT: Duration = Duration::from_secs(60);

#[derive(Default)]
struct GaugeState {
    in_flight: usize,
    max: usize,
    calls: usize,
    /// Syntheses wait until this many ran at once (0: no waiting)...
    target: usize,
    /// ...or until the test opens the gate.
    open: bool,
    gave_up: bool,
}

/// Counts the syntheses running at once.
#[derive(Default)]
struct Gauge {
    s: Mutex<GaugeState>,
    cv: Condvar,
}

impl Gauge {
    fn reset(&self, target: usize, open: bool) {
        *self.s.lock().unwrap() = GaugeState {
            target,
            open,
            ..Default::default()
        };
    }
    fn open(&self) {
        self.s.lock().unwrap().open = true;
        self.cv.notify_all();
    }
    fn get(&self) -> (usize, usize, bool) {
        let s = self.s.lock().unwrap();
        (s.max, s.calls, s.gave_up)
    }
}

/// porep-like-6 (its parameters) whose synthesis reports to a gauge and
/// can be held until several run at once or a gate opens.
struct Gauged {
    inner: PorepLikeKind,
    gauge: Arc<Gauge>,
    host_bytes: u64,
}

impl CircuitKind for Gauged {
    fn name(&self) -> &str {
        "gauged-6"
    }
    fn params_id(&self) -> &str {
        self.inner.params_id()
    }
    fn batchable(&self) -> bool {
        true
    }
    fn decode_input(&self, input: &[u8]) -> Result<(JobInput, usize), KindError> {
        self.inner.decode_input(input)
    }
    fn synthesize(
        &self,
        parts: &[(JobInput, usize)],
    ) -> Result<Vec<cuzk_core::synthesis::ProvingAssignment>, KindError> {
        let g = &self.gauge;
        {
            let mut s = g.s.lock().unwrap();
            s.in_flight += 1;
            s.calls += 1;
            s.max = s.max.max(s.in_flight);
            g.cv.notify_all();
            let start = std::time::Instant::now();
            while !(s.open || (s.target > 0 && s.max >= s.target)) {
                let left = GATE_LIMIT.saturating_sub(start.elapsed());
                if left.is_zero() {
                    s.gave_up = true;
                    g.cv.notify_all();
                    break;
                }
                s = g.cv.wait_timeout(s, left).unwrap().0;
            }
        }
        let r = self.inner.synthesize(parts);
        g.s.lock().unwrap().in_flight -= 1;
        r
    }
    fn host_bytes_per_partition(&self) -> u64 {
        self.host_bytes
    }
    fn generates_params(&self) -> bool {
        true
    }
    fn generate_params(&self) -> Option<Result<cuzk_core::Parameters, KindError>> {
        self.inner.generate_params()
    }
}

fn gauged_req(seed: u64, partitions: u32, p: P) -> proto::SubmitProofRequest {
    let mut r = req(6, seed, partitions, p);
    r.kind = "gauged-6".into();
    r
}

async fn start_gauged(
    gauge: &Arc<Gauge>,
    host_bytes: u64,
    edit: impl FnOnce(&mut cuzk_daemon::DaemonConfig),
) -> TestDaemon {
    let g = gauge.clone();
    TestDaemon::start_with(edit, move |b| {
        b.register_kind(Arc::new(Gauged {
            inner: PorepLikeKind::new(6, 16),
            gauge: g,
            host_bytes,
        }))
    })
    .await
}

async fn preload6(c: &mut cuzk_daemon::client::DaemonClient) {
    c.preload_params(proto::PreloadParamsRequest {
        kinds: vec!["porep-like-6".into()],
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn partitions_of_one_job_and_chunks_of_many_are_synthesized_side_by_side() {
    let gauge = Arc::new(Gauge::default());
    let t = start_gauged(&gauge, 1 << 20, |c| {
        c.engine.synthesis_concurrency = 4;
        c.engine.max_batch_size = 2;
        c.engine.max_batch_wait_ms = 5;
    })
    .await;
    let mut c = t.unix().await;
    preload6(&mut c).await;
    let pvk = t.pvk(6);

    // One job of four partitions: two chunks of two, all four partitions
    // synthesized at once (each synthesis waits until four run together).
    gauge.reset(4, false);
    let r = c
        .prove(gauged_req(10, 4, P::Normal))
        .await
        .unwrap()
        .into_inner();
    check_proofs(&pvk, 6, 10, 4, &r);
    let (max, calls, gave_up) = gauge.get();
    assert!(!gave_up, "four syntheses never ran at once (most: {max})");
    assert_eq!((max, calls), (4, 4));

    // Four single-partition jobs (batched in pairs): different jobs' and
    // chunks' partitions synthesized at once.
    gauge.reset(4, false);
    let mut ids = Vec::new();
    for s in 0..4 {
        let mut q = gauged_req(20 + s, 1, P::Normal);
        q.request_id = format!("single-{s}");
        ids.push(submit_id(&mut c, q).await);
    }
    for (s, id) in ids.into_iter().enumerate() {
        let r = await_done(&mut c, id).await;
        check_proofs(&pvk, 6, 20 + s as u64, 1, &r);
    }
    let (max, calls, gave_up) = gauge.get();
    assert!(
        !gave_up,
        "four jobs' syntheses never ran at once (most: {max})"
    );
    assert_eq!((max, calls), (4, 4));

    // Never more than the setting, however much is queued.
    gauge.reset(0, true);
    let mut ids = Vec::new();
    for s in 0..12 {
        ids.push(submit_id(&mut c, gauged_req(100 + s, 2, P::Normal)).await);
    }
    for (s, id) in ids.into_iter().enumerate() {
        let r = await_done(&mut c, id).await;
        check_proofs(&pvk, 6, 100 + s as u64, 2, &r);
    }
    let (max, calls, _) = gauge.get();
    assert_eq!(calls, 24);
    assert!(
        max <= 4,
        "{max} syntheses at once with synthesis_concurrency = 4"
    );

    // Status and metrics agree with what happened.
    let s = status(&mut c).await;
    let k = s.counters.unwrap();
    assert_eq!((k.completed, k.failed, k.cancelled), (17, 0, 0));
    assert_eq!(k.circuits_proved, 4 + 4 + 24);
    assert_eq!(k.proofs_verified, 4 + 4 + 24);
    assert_eq!(k.verification_failures, 0);
    assert_eq!(s.host_reserved_bytes, 0);
    assert_eq!(
        (
            s.synthesizing,
            s.open_chunks,
            s.ready_chunks,
            s.synthesis_concurrency
        ),
        (0, 0, 0, 4)
    );
    assert_eq!(s.worker_busy.len(), s.workers as usize);
    assert!(s.worker_busy[0].busy_fraction > 0.0 && s.synthesis_busy_fraction > 0.0);
    assert!(s.busy_window_s > 0.0);
    let e = t.daemon().engine.status();
    assert_eq!((e.synthesizing, e.open_chunks, e.ready_chunks), (0, 0, 0));
    assert_eq!(e.synthesis_concurrency, 4);
    assert_eq!(e.busy.workers.len(), e.workers);
    assert!(e.busy.synthesis_busy_fraction > 0.0 && e.busy.synthesis_busy_fraction <= 1.0);
    assert!(e.busy.worker_busy_fraction > 0.0 && e.busy.worker_busy_fraction <= 1.0);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_small_host_budget_makes_reservations_wait_and_all_finish() {
    let gauge = Arc::new(Gauge::default());
    let per = 1u64 << 20;
    // What the porep-like kinds keep resident is held from the budget.
    let resident: u64 = [6, 8, 10]
        .iter()
        .map(|&l| PorepLikeKind::new(l, 1).resident_host_bytes())
        .sum();
    let t = start_gauged(&gauge, per, |c| {
        c.engine.synthesis_concurrency = 4;
        c.engine.max_batch_size = 1;
        c.engine.synthesis_lookahead = 4;
        // Two partitions' memory beside the resident bytes: two syntheses
        // at a time, whatever the concurrency setting.
        c.engine.host_memory_budget = Some(cuzk_daemon::config::ByteSize(2 * per + resident));
    })
    .await;
    let mut c = t.unix().await;
    assert_eq!(status(&mut c).await.host_resident_bytes, resident);
    preload6(&mut c).await;
    gauge.reset(2, false);
    let mut ids = Vec::new();
    for s in 0..8 {
        ids.push(submit_id(&mut c, gauged_req(s, 1, P::Normal)).await);
    }
    // A job of four partitions: its chunks fit only two at a time.
    ids.push(submit_id(&mut c, gauged_req(50, 4, P::High)).await);
    let pvk = t.pvk(6);
    for (i, id) in ids.into_iter().enumerate() {
        let r = await_done(&mut c, id).await;
        if i < 8 {
            check_proofs(&pvk, 6, i as u64, 1, &r);
        } else {
            check_proofs(&pvk, 6, 50, 4, &r);
        }
    }
    let (max, calls, gave_up) = gauge.get();
    assert!(!gave_up, "two syntheses never ran at once");
    assert_eq!(calls, 12);
    assert_eq!(max, 2, "the budget holds two partitions");
    let s = status(&mut c).await;
    assert_eq!(s.host_reserved_bytes, 0);
    let k = s.counters.unwrap();
    assert_eq!((k.completed, k.failed), (9, 0));
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_critical_job_overtakes_queued_partitions() {
    let t = TestDaemon::start(|c| {
        c.engine.synthesis_concurrency = 2;
        c.engine.cpu_workers = 1;
        c.engine.max_batch_size = 1;
        c.engine.synthesis_lookahead = 1;
    })
    .await;
    let mut c = t.unix().await;
    c.preload_params(proto::PreloadParamsRequest {
        kinds: vec!["porep-like-10".into()],
    })
    .await
    .unwrap();
    const NORMAL: u64 = 16;
    let mut ids = Vec::new();
    for s in 0..NORMAL {
        ids.push(submit_id(&mut c, req(10, s, 1, P::Normal)).await);
    }
    let critical = submit_id(&mut c, req(10, 999, 1, P::Critical)).await;
    let pvk = t.pvk(10);
    let rc = await_done(&mut c, critical).await;
    check_proofs(&pvk, 10, 999, 1, &rc);
    let mut after = 0;
    for (s, id) in ids.into_iter().enumerate() {
        let r = await_done(&mut c, id).await;
        check_proofs(&pvk, 10, s as u64, 1, &r);
        if r.completion_seq > rc.completion_seq {
            after += 1;
        }
    }
    // At most workers + synthesis_concurrency + lookahead = 4 chunks were
    // opened before it arrived, and a couple more may finish while it is
    // synthesized; in arrival order it would have been last.
    assert!(
        after >= NORMAL - 8,
        "only {after} of {NORMAL} earlier NORMAL jobs finished after the CRITICAL one"
    );
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancelling_a_job_mid_synthesis_releases_its_memory_and_slots() {
    let gauge = Arc::new(Gauge::default());
    let per = 1u64 << 20;
    let t = start_gauged(&gauge, per, |c| {
        c.engine.synthesis_concurrency = 2;
        c.engine.max_batch_size = 2;
    })
    .await;
    let mut c = t.unix().await;
    preload6(&mut c).await;
    // Syntheses hold until the gate opens.
    gauge.reset(usize::MAX, false);
    let id = submit_id(&mut c, gauged_req(1, 6, P::Normal)).await;
    let engine = t.daemon().engine.clone();
    assert!(
        eventually(LIMIT, || {
            let s = engine.status();
            async move { s.synthesizing == 2 }
        })
        .await
    );
    let s = engine.status();
    assert!(
        s.host_reserved_bytes >= 2 * per,
        "{}",
        s.host_reserved_bytes
    );
    let r = c
        .cancel_proof(proto::CancelProofRequest { job_id: id })
        .await
        .unwrap()
        .into_inner();
    assert!(r.cancelled);
    gauge.open();
    assert!(
        eventually(LIMIT, || {
            let s = engine.status();
            async move {
                s.host_reserved_bytes == 0
                    && s.running == 0
                    && s.open_chunks == 0
                    && s.ready_chunks == 0
                    && s.synthesizing == 0
            }
        })
        .await,
        "memory or chunks not released after cancel: {:?}",
        engine.status().host_reserved_bytes
    );
    let k = status(&mut c).await.counters.unwrap();
    assert_eq!((k.cancelled, k.completed, k.failed), (1, 0, 0));
    assert_eq!(
        k.circuits_proved, 0,
        "a cancelled job's partitions were proved"
    );
    let (_, calls, gave_up) = gauge.get();
    assert!(!gave_up);
    assert!(
        calls <= 4,
        "{calls} partitions synthesized after the cancel"
    );
    // The pipeline goes on: every slot came back.
    let r = c
        .prove(gauged_req(7, 3, P::Normal))
        .await
        .unwrap()
        .into_inner();
    check_proofs(&t.pvk(6), 6, 7, 3, &r);
    t.stop().await;
}

fn x_events<'a>(trace: &'a Value, name: &str) -> Vec<&'a Value> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_timeline_exports_as_a_chrome_trace_of_what_happened() {
    let t = TestDaemon::start(|c| {
        c.engine.synthesis_concurrency = 2;
        c.engine.max_batch_size = 2;
    })
    .await;
    let mut c = t.unix().await;
    preload6(&mut c).await;
    let pvk = t.pvk(6);
    for s in 0..3 {
        let r = c.prove(req(6, s, 2, P::Normal)).await.unwrap().into_inner();
        check_proofs(&pvk, 6, s, 2, &r);
    }
    let tr = c
        .get_trace(proto::GetTraceRequest { seconds: 600.0 })
        .await
        .unwrap()
        .into_inner();
    let v: Value = serde_json::from_slice(&tr.trace_json).unwrap();
    for e in v["traceEvents"].as_array().unwrap() {
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
        if e["ph"] == "X" {
            assert!(
                e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0,
                "{e}"
            );
        } else {
            assert_eq!(e["ph"], "M", "{e}");
        }
    }
    assert_eq!(x_events(&v, "synthesis").len(), 6);
    assert_eq!(x_events(&v, "queued").len(), 6);
    let proves = x_events(&v, "prove");
    let parts: usize = proves
        .iter()
        .map(|e| e["args"]["partitions"].as_array().unwrap().len())
        .sum();
    assert_eq!(parts, 6, "every partition proved once");
    assert!(proves.iter().all(|e| e["args"]["phases_ms"].is_object()));
    // Each partition's phases as they happened, on its worker's row and
    // inside the call that proved it.
    for phase in ["h_ntt", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2"] {
        let spans = x_events(&v, phase);
        assert_eq!(spans.len(), 6, "one {phase} per partition");
        let mut seen: Vec<(u64, u64)> = spans
            .iter()
            .map(|e| {
                let call = proves
                    .iter()
                    .find(|p| {
                        p["pid"] == e["pid"]
                            && p["tid"] == e["tid"]
                            && p["args"]["partitions"].as_array().unwrap().contains(
                                &serde_json::json!([e["args"]["job"], e["args"]["partition"]]),
                            )
                    })
                    .unwrap_or_else(|| panic!("{phase} {e} is on no call's row"));
                let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
                let (pts, pdur) = (call["ts"].as_f64().unwrap(), call["dur"].as_f64().unwrap());
                assert!(
                    ts + 1.0 >= pts && ts + dur <= pts + pdur + 1.0,
                    "{phase} {e} outside its call {call}"
                );
                (
                    e["args"]["job"].as_u64().unwrap(),
                    e["args"]["partition"].as_u64().unwrap(),
                )
            })
            .collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 6, "{phase}: every partition once");
    }
    let verified: u64 = x_events(&v, "verify")
        .iter()
        .map(|e| e["args"]["valid"].as_u64().unwrap())
        .sum();
    assert_eq!(verified, 6);
    let names: Vec<&str> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    for want in [
        "queue (per job)",
        "synthesis (cpu)",
        "cpu prover",
        "verification (cpu)",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert!(tr.worker_busy_fraction > 0.0 && tr.worker_busy_fraction <= 1.0);
    assert!(tr.synthesis_busy_fraction > 0.0 && tr.synthesis_busy_fraction <= 1.0);
    assert_eq!(tr.synthesis_slots, 2);

    // HTTP /trace is the same trace; /status carries the busy fractions.
    let http = t.daemon().http_addr.unwrap();
    let (code, body) = http_get(http, "/trace?seconds=600", Some(TOKEN)).await;
    assert_eq!(code, 200, "{body}");
    let h: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(x_events(&h, "synthesis").len(), 6);
    let (code, _) = http_get(http, "/trace?seconds=soon", Some(TOKEN)).await;
    assert_eq!(code, 400);
    let (code, _) = http_get(http, "/trace", None).await;
    assert_eq!(code, 401);
    let (_, body) = http_get(http, "/status", Some(TOKEN)).await;
    let st: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(st["busy"]["workers"].as_array().unwrap().len(), 1);
    assert!(st["busy"]["workers"][0]["busy_fraction"].as_f64().unwrap() > 0.0);
    assert_eq!(st["counters"]["proofs_verified"], 6);
    let (_, m) = http_get(http, "/metrics", Some(TOKEN)).await;
    assert!(m.contains("cuzk_proofs_verified_total 6"), "{m}");
    assert!(
        m.contains("cuzk_worker_busy_fraction{worker=\"0\",device=\"cpu\"}"),
        "{m}"
    );
    // A window the daemon refuses.
    let e = c
        .get_trace(proto::GetTraceRequest { seconds: -1.0 })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    t.stop().await;
}

/// porep-like-6 whose parameter file pairs one generation's proving key
/// with another's verifying key: its proofs never verify.
struct Mismatched(PorepLikeKind);

impl CircuitKind for Mismatched {
    fn name(&self) -> &str {
        "mismatched-6"
    }
    fn params_id(&self) -> &str {
        "mismatched-6"
    }
    fn batchable(&self) -> bool {
        true
    }
    fn decode_input(&self, input: &[u8]) -> Result<(JobInput, usize), KindError> {
        self.0.decode_input(input)
    }
    fn synthesize(
        &self,
        parts: &[(JobInput, usize)],
    ) -> Result<Vec<cuzk_core::synthesis::ProvingAssignment>, KindError> {
        self.0.synthesize(parts)
    }
    fn host_bytes_per_partition(&self) -> u64 {
        self.0.host_bytes_per_partition()
    }
    fn generates_params(&self) -> bool {
        true
    }
    fn generate_params(&self) -> Option<Result<cuzk_core::Parameters, KindError>> {
        let a = match self.0.generate_params()? {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        let b = match self.0.generate_params()? {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(cuzk_core::Parameters { vk: b.vk, ..a }))
    }
}

async fn run_mismatched(
    verify: bool,
) -> (
    proto::AwaitProofResponse,
    proto::Counters,
    String,
    Option<cuzk_daemon::JobFailure>,
) {
    let t = TestDaemon::start_with(
        |c| c.engine.verify_proofs = verify,
        |b| b.register_kind(Arc::new(Mismatched(PorepLikeKind::new(6, 4)))),
    )
    .await;
    let mut c = t.unix().await;
    let mut q = req(6, 3, 2, P::Normal);
    q.kind = "mismatched-6".into();
    let bad = c.prove(q).await.unwrap().into_inner();
    // A good job beside it is unaffected.
    let good = c.prove(req(6, 4, 1, P::Normal)).await.unwrap().into_inner();
    check_proofs(&t.pvk(6), 6, 4, 1, &good);
    let k = status(&mut c).await.counters.unwrap();
    let m = c
        .get_metrics(proto::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .text;
    let failure = t.d.as_ref().unwrap().engine.job(bad.job_id).unwrap().error;
    t.stop().await;
    (bad, k, m, failure)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_proof_that_does_not_verify_fails_its_job_and_is_counted() {
    let (bad, k, m, failure) = run_mismatched(true).await;
    assert_eq!(bad.state, proto::JobState::Failed as i32);
    assert!(bad.error.contains("does not verify"), "{}", bad.error);
    // The engine keeps it as a value: which partition, which parameters.
    match failure {
        Some(cuzk_daemon::JobFailure::NotVerified {
            partition,
            ref params_id,
        }) => {
            assert!(partition < 2, "{partition}");
            assert!(params_id.contains("mismatched-6"), "{params_id}");
        }
        ref other => panic!("{other:?}"),
    }
    assert!(bad.error.contains("mismatched-6"), "{}", bad.error);
    assert!(bad.proof.is_empty());
    assert_eq!((k.completed, k.failed), (1, 1));
    assert_eq!((k.proofs_verified, k.verification_failures), (1, 2));
    assert!(
        m.contains("cuzk_proof_verification_failures_total 2"),
        "{m}"
    );

    // With verification off the same proofs are returned unchecked.
    let (bad, k, _, _) = run_mismatched(false).await;
    assert_eq!(
        bad.state,
        proto::JobState::Completed as i32,
        "{}",
        bad.error
    );
    assert_eq!((k.proofs_verified, k.verification_failures), (0, 0));
}
