//! Curio's proving service, `cuzk.v1.ProvingEngine`, served by the cuzk
//! daemon beside its own: an operator points Curio at cuzk unchanged.
//!
//! Requests become jobs of the daemon's Filecoin kinds ([`crate::filecoin`]).
//! As in Curio's own daemon, a request's `request_id` is its job id (a
//! request without one gets the daemon's numeric id), and an id names the
//! request's latest attempt (see the daemon's proto README, "Request ids").
//! How each proof kind's fields are read is described in
//! proto/cuzk/v1/proving.proto.
//!
//! In cluster mode (`[cluster] database_url`) requests go to the shared
//! queue through the daemon's [`ClusterNode`], as the daemon's own
//! ProofService sends them: any daemon of the cluster proves them, and
//! `AwaitProof`, `CancelProof` and `Prove` on any daemon act on the stored
//! job, found by its request id (or the queue's numeric id). `GetStatus`
//! then reports the shared queue's partitions in `queues`; the GPUs,
//! parameters and counters stay this daemon's.

// tonic::Status is large, but it is what every handler returns.
#![allow(clippy::result_large_err)]

use crate::cluster::{ClusterModeError, ClusterNode};
use crate::engine::{EngineError, JobState};
use crate::filecoin::{default_priority, encode_request, job_input_of, kind_name};
use crate::{proto, Engine, Priority, ServiceHook, SubmitRequest};
use base64::Engine as _;
use cuzk_filecoin::circuits::{CircuitId, ProofKind, REGISTERED_SECTOR_SIZES};
use cuzk_filecoin::prover::ProofRequest;
use cuzk_filecoin::{ids, porep, post, snap, Counted, Error, Expected, Fact, InputPart, Readable};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::service::RoutesBuilder;
use tonic::{Request, Response, Status};

/// Code generated from proto/cuzk/v1/proving.proto.
pub mod pb {
    #![allow(clippy::all)]
    tonic::include_proto!("cuzk.v1");
}

use pb::proving_engine_server::{ProvingEngine, ProvingEngineServer};

/// Serve Curio's service on every daemon listener
/// (`DaemonBuilder::add_service`). `max_message_bytes` bounds requests and
/// responses: a 32 GiB C1 output in Curio's wrapper is about 67 MB, and
/// Curio's client sends up to 256 MiB (the daemon's default
/// `server.max_message_bytes`).
pub fn service_hook(max_message_bytes: usize) -> ServiceHook {
    Arc::new(move |engine: &Engine, cluster, rb: &mut RoutesBuilder| {
        rb.add_service(
            ProvingEngineServer::new(CurioService::new(engine.clone(), cluster.cloned()))
                .max_decoding_message_size(max_message_bytes)
                .max_encoding_message_size(max_message_bytes),
        );
    })
}

pub struct CurioService {
    engine: Engine,
    /// Cluster mode: jobs go to and come from the shared queue.
    cluster: Option<Arc<ClusterNode>>,
    started: Instant,
}

impl CurioService {
    pub fn new(engine: Engine, cluster: Option<Arc<ClusterNode>>) -> Self {
        CurioService {
            engine,
            cluster,
            started: Instant::now(),
        }
    }

    /// The parameter set of the kind Curio names `name` (a circuit id).
    fn params_id_of(&self, name: &str) -> Result<String, Status> {
        let kind = self
            .engine
            .registry()
            .get(name)
            .map_err(|e| Status::not_found(e.to_string()))?;
        Ok(kind.params_id().to_owned())
    }

    async fn submit(&self, req: pb::SubmitProofRequest) -> Result<pb::SubmitProofResponse, Status> {
        let request_id = req.request_id.clone();
        let priority = req.priority;
        let (circuit, input, decoded) = match job_input(req) {
            Ok(v) => v,
            // Not the request's fault: the daemon could not serialise what
            // it decoded, or a check of its own work failed.
            Err(e @ (Error::Encode { .. } | Error::Internal { .. })) => {
                return Err(Status::internal(e.to_string()))
            }
            Err(e) => {
                self.engine.note_rejected();
                return Err(Status::invalid_argument(e.to_string()));
            }
        };
        let kind = circuit.kind();
        let priority = match pb::Priority::try_from(priority) {
            Ok(pb::Priority::Low) => Priority::Low,
            Ok(pb::Priority::Normal) => Priority::Normal,
            Ok(pb::Priority::High) => Priority::High,
            Ok(pb::Priority::Critical) => Priority::Critical,
            Ok(pb::Priority::Unspecified) => default_priority(kind),
            Err(_) => {
                self.engine.note_rejected();
                return Err(Status::invalid_argument(format!(
                    "unknown priority {priority}"
                )));
            }
        };
        let job = SubmitRequest {
            request_id: (!request_id.is_empty()).then(|| request_id.clone()),
            kind: kind_name(circuit),
            input,
            priority,
            client: "curio".into(),
        };
        let (job_id, queued) = match &self.cluster {
            Some(node) => {
                let submitted = node
                    .submit_decoded(job, decoded.1)
                    .await
                    .map_err(cluster_status)?;
                // Jobs waiting in the shared queue; 0 when the count
                // cannot be had (the job is stored: not worth failing for).
                let queued = node.client().overview().await.map_or(0, |o| {
                    o.jobs
                        .iter()
                        .filter(|(s, _)| *s == crate::cluster::DbJobState::Queued)
                        .map(|(_, n)| *n as usize)
                        .sum()
                });
                (submitted.job_id.to_string(), queued)
            }
            None => {
                let submitted = self
                    .engine
                    .submit_decoded(job, decoded)
                    .map_err(engine_status)?;
                let s = self.engine.status();
                let queued: usize = s.jobs.iter().map(|c| c.queued).sum();
                (submitted.job_id.to_string(), queued)
            }
        };
        Ok(pb::SubmitProofResponse {
            job_id: if request_id.is_empty() {
                job_id
            } else {
                request_id
            },
            queue_position: u32::try_from(queued).unwrap_or(u32::MAX),
            assigned_gpu: String::new(),
        })
    }

    /// The job a Curio job id names: a request id's latest attempt, else
    /// the daemon's numeric id (in cluster mode, the queue's).
    async fn resolve(&self, job_id: &str) -> Result<Option<u64>, Status> {
        let by_request = match &self.cluster {
            Some(node) => node
                .client()
                .job_of_request(job_id)
                .await
                .map_err(|e| cluster_status(e.into()))?
                .map(|id| id as u64),
            None => self.engine.job_of_request(job_id),
        };
        Ok(by_request.or_else(|| job_id.parse().ok()))
    }

    /// The job as the daemon's ProofService reports it (one translation
    /// of local and stored jobs), once final or when `timeout` passes.
    async fn await_job(
        &self,
        id: u64,
        timeout: Option<Duration>,
    ) -> Result<proto::AwaitProofResponse, Status> {
        match &self.cluster {
            Some(node) => {
                let id = cluster_job_id(id)?;
                let j = node
                    .await_job(id, timeout)
                    .await
                    .map_err(|e| cluster_status(e.into()))?;
                Ok(crate::cluster::record_to_proto(j))
            }
            None => {
                let v = self
                    .engine
                    .await_job(id, timeout)
                    .await
                    .map_err(engine_status)?;
                Ok(crate::service::view_to_proto(v))
            }
        }
    }

    async fn wait(
        &self,
        job_id: &str,
        timeout: Option<Duration>,
    ) -> Result<pb::AwaitProofResponse, Status> {
        let id = self
            .resolve(job_id)
            .await?
            .ok_or_else(|| Status::not_found(format!("no job {job_id:?}")))?;
        let view = self.await_job(id, timeout).await?;
        Ok(await_response(job_id, &view))
    }

    /// The daemon's kind names, by parameter id.
    fn kinds_by_params(&self) -> HashMap<String, String> {
        let reg = self.engine.registry();
        reg.names()
            .into_iter()
            .filter_map(|n| reg.get(&n).ok().map(|k| (k.params_id().to_owned(), n)))
            .collect()
    }
}

/// Curio's daemon's name for the proof kind of a daemon kind
/// ("porep-32g" is a "porep-c2"), None for a kind that is not Filecoin's.
pub fn curio_proof_kind(kind: &str) -> Option<&'static str> {
    for k in [
        ProofKind::Porep,
        ProofKind::WinningPost,
        ProofKind::WindowPost,
        ProofKind::SnapDeals,
    ] {
        let named = REGISTERED_SECTOR_SIZES
            .iter()
            .any(|&size| CircuitId::current(k, size).is_ok_and(|c| kind_name(c) == kind));
        if named {
            return Some(match k {
                ProofKind::Porep => "porep-c2",
                ProofKind::WinningPost => "winning-post",
                ProofKind::WindowPost => "window-post",
                ProofKind::SnapDeals => "snap-update",
            });
        }
    }
    None
}

/// Curio's queue entries from (kind, priority, pending, in progress): by
/// proof kind as Curio's daemon names them ("porep-c2", "winning-post",
/// ...; other kinds by their own names), then by the daemon's priority
/// classes ("priority-critical", ...), then "all".
fn queue_status(counts: Vec<(String, Priority, usize, usize)>) -> Vec<pb::QueueStatus> {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let mut by_kind: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut by_priority: std::collections::BTreeMap<std::cmp::Reverse<Priority>, (usize, usize)> =
        Default::default();
    let (mut q, mut r) = (0, 0);
    for (kind, priority, pending, running) in counts {
        let name = curio_proof_kind(&kind).unwrap_or(&kind).to_owned();
        for e in [
            by_kind.entry(name).or_default(),
            by_priority.entry(std::cmp::Reverse(priority)).or_default(),
        ] {
            e.0 += pending;
            e.1 += running;
        }
        q += pending;
        r += running;
    }
    let mut queues: Vec<pb::QueueStatus> = by_kind
        .into_iter()
        .map(|(k, (q, r))| pb::QueueStatus {
            proof_kind: k,
            pending: count(q),
            in_progress: count(r),
        })
        .collect();
    queues.extend(by_priority.into_iter().map(|(p, (q, r))| pb::QueueStatus {
        proof_kind: format!("priority-{}", p.0.name()),
        pending: count(q),
        in_progress: count(r),
    }));
    queues.push(pb::QueueStatus {
        proof_kind: "all".into(),
        pending: count(q),
        in_progress: count(r),
    });
    queues
}

/// A queue job id from a numeric Curio job id.
fn cluster_job_id(id: u64) -> Result<crate::cluster::DbJobId, Status> {
    id.try_into()
        .map_err(|_| Status::not_found(format!("no job {id}")))
}

/// gRPC status of a cluster-mode submission error: the engine's errors
/// (the kind refusing the input) as this service maps them, the queue's as
/// the daemon's ProofService does.
fn cluster_status(e: ClusterModeError) -> Status {
    match e {
        ClusterModeError::Engine(e) => engine_status(e),
        e => crate::cluster::cluster_status(e),
    }
}

/// The daemon's own service answers engine errors the same way.
fn engine_status(e: EngineError) -> Status {
    crate::service::status_of(e)
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Whole milliseconds of the daemon's fractional ones.
fn whole_ms(v: f64) -> u64 {
    // `as` saturates, and maps NaN to 0.
    v.max(0.0) as u64
}

/// Curio's answer for a job as the daemon's ProofService reports it.
fn await_response(job_id: &str, v: &proto::AwaitProofResponse) -> pb::AwaitProofResponse {
    use pb::await_proof_response::Status as S;
    let state = proto::JobState::try_from(v.state).unwrap_or(proto::JobState::Unspecified);
    let status = match state {
        proto::JobState::Completed => S::Completed,
        proto::JobState::Failed => S::Failed,
        proto::JobState::Cancelled => S::Cancelled,
        _ => S::Timeout,
    };
    let t = v.timings.unwrap_or_default();
    pb::AwaitProofResponse {
        job_id: job_id.to_owned(),
        status: status as i32,
        proof: if state == proto::JobState::Completed {
            v.proof.clone()
        } else {
            Vec::new()
        },
        error_message: v.error.clone(),
        queue_wait_ms: whole_ms(t.queue_wait_ms),
        srs_load_ms: whole_ms(t.param_load_ms),
        synthesis_ms: whole_ms(t.synthesis_ms),
        gpu_compute_ms: whole_ms(t.gpu_ms),
        total_ms: whole_ms(t.total_ms),
    }
}

/// The vanilla proofs of a PoSt or SnapDeals request: the repeated
/// `vanilla_proofs` field (Curio's newer schema) when it has any, else
/// `vanilla_proof` read by [`vanilla_list`].
fn vanilla_proofs_of(req: &pb::SubmitProofRequest) -> Result<Vec<Vec<u8>>, Error> {
    if req.vanilla_proofs.is_empty() {
        return vanilla_list(&req.vanilla_proof);
    }
    if !req.vanilla_proof.is_empty() {
        return Err(Error::BothSet {
            first: "vanilla_proof",
            second: "vanilla_proofs",
        });
    }
    if let Some(i) = req.vanilla_proofs.iter().position(|v| v.is_empty()) {
        return Err(Error::Empty {
            field: format!("vanilla_proofs[{i}]"),
        });
    }
    Ok(req.vanilla_proofs.clone())
}

/// The vanilla proofs of a PoSt or SnapDeals request in the older schema's
/// one field: a JSON array of base64 strings, or one proof as it is.
fn vanilla_list(bytes: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    if bytes.first() == Some(&b'[') {
        if let Ok(list) = serde_json::from_slice::<Vec<String>>(bytes) {
            return list
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    base64::engine::general_purpose::STANDARD
                        .decode(s)
                        .map_err(|e| {
                            Error::decode(InputPart::VanillaProof(i), "base64, in the JSON list", e)
                        })
                })
                .collect();
        }
    }
    if bytes.is_empty() {
        return Err(Error::Empty {
            field: "vanilla_proof".into(),
        });
    }
    Ok(vec![bytes.to_vec()])
}

fn bytes32(b: &[u8], what: &str) -> Result<[u8; 32], Error> {
    b.try_into().map_err(|_| Error::WrongCount {
        what: Counted::Bytes { field: what.into() },
        expected: Expected::Exactly(32),
        got: b.len(),
    })
}

/// Read an unsigned LEB128 varint.
fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Filecoin's piece/sector CID multicodecs.
const FIL_COMMITMENT_UNSEALED: u64 = 0xf101;
const FIL_COMMITMENT_SEALED: u64 = 0xf102;

/// A commitment from its CID's binary form (CIDv1: version, codec,
/// multihash code, digest length, 32-byte digest), or from the 32 raw bytes.
pub fn commitment_from_cid(b: &[u8], codec: u64, what: &str) -> Result<[u8; 32], Error> {
    if b.len() == 32 {
        return bytes32(b, what);
    }
    let bad =
        |why: &str| Error::invalid_value(what, anyhow::anyhow!("not a commitment CID ({why})"));
    let mut at = 0;
    if varint(b, &mut at) != Some(1) {
        return Err(bad("not CIDv1"));
    }
    match varint(b, &mut at) {
        Some(c) if c == codec => {}
        Some(c) => return Err(bad(&format!("codec 0x{c:x}, expected 0x{codec:x}"))),
        None => return Err(bad("truncated")),
    }
    varint(b, &mut at).ok_or_else(|| bad("truncated"))?;
    if varint(b, &mut at) != Some(32) || b.len() != at + 32 {
        return Err(bad("digest is not 32 bytes"));
    }
    bytes32(&b[at..], what)
}

/// A Curio submission as a daemon job: its circuit, the kind's input
/// bytes, and that input decoded (the request decoded here to check it,
/// which the engine keeps rather than decoding the bytes again; the bytes
/// still name the job, and in cluster mode are what the queue stores). A
/// PoRep C1 output in a form that names its registered proof
/// (filecoin-proofs-api JSON, Curio's wrapper) is passed on as it came
/// rather than re-encoded, so that a C1 of tens of megabytes is held as
/// bytes once, beside one decoded copy.
pub fn job_input(req: pb::SubmitProofRequest) -> Result<(CircuitId, Vec<u8>, DecodedInput), Error> {
    let (proof, self_describing) = decode_submission(&req)?;
    let circuit = proof.circuit();
    let bytes = if self_describing {
        req.vanilla_proof
    } else {
        encode_request(&proof)?
    };
    Ok((circuit, bytes, job_input_of(proof)?))
}

/// A job input as the kind's `decode_input` gives it, and its partitions.
pub type DecodedInput = (crate::kinds::JobInput, usize);

/// The proof request a Curio submission describes.
pub fn request_of(req: &pb::SubmitProofRequest) -> Result<ProofRequest, Error> {
    decode_submission(req).map(|(r, _)| r)
}

/// A PoRep submission's C1 output, checked against the request's other
/// fields: `registered_proof` must be the C1 output's (Curio always sends
/// it); `sector_number`, where set, the sector of Curio's wrapper; and
/// `miner_id` with the sector number must give the C1 output's replica id
/// (which filecoin-proofs derives from the prover id, sector number,
/// ticket, CommD and the proof's PoRep id), so a C1 of another sector or
/// miner is refused by name. Returns the C1 and whether its bytes name
/// their registered proof.
fn porep_submission(req: &pb::SubmitProofRequest) -> Result<(porep::C1Output, bool), Error> {
    let named =
        porep::seal_proof_from_u64(req.registered_proof).map_err(|_| Error::WrongProofKind {
            given: format!("registered_proof {}", req.registered_proof),
            expected: vec![ProofKind::Porep],
        })?;
    let (c1, self_describing) = match porep::decode_c1(&req.vanilla_proof, None) {
        Ok(c1) => (c1, true),
        Err(first) => (
            porep::decode_c1(&req.vanilla_proof, Some(named)).map_err(|_| first)?,
            false,
        ),
    };
    let got = c1.output.registered_proof;
    if got != named {
        return Err(Error::disagree(
            Fact::RegisteredProof,
            "registered_proof",
            format!("{} ({named:?})", req.registered_proof),
            "the C1 output",
            format!("{got:?}"),
        ));
    }
    if let Some(n) = c1.sector_num {
        if req.sector_number != 0 && req.sector_number != n {
            return Err(Error::disagree(
                Fact::SectorNumber,
                "sector_number",
                req.sector_number,
                "the C1 file",
                n,
            ));
        }
    }
    if req.miner_id != 0 {
        let sector = c1.sector_num.unwrap_or(req.sector_number);
        let prover_id = ids::prover_id_from_miner(req.miner_id);
        if !porep::sealed_for(&c1.output, named, &prover_id, sector) {
            return Err(Error::disagree(
                Fact::ReplicaId,
                "miner_id and sector_number",
                format!("that of miner {} sector {sector}", req.miner_id),
                "the C1 output",
                "another (it was sealed for another miner or sector)",
            ));
        }
    }
    Ok((c1, self_describing))
}

/// The request, and whether its input bytes can go to the kind as they are.
fn decode_submission(req: &pb::SubmitProofRequest) -> Result<(ProofRequest, bool), Error> {
    let kind = match pb::ProofKind::try_from(req.proof_kind) {
        Ok(pb::ProofKind::PorepSealCommit) => ProofKind::Porep,
        Ok(pb::ProofKind::WinningPost) => ProofKind::WinningPost,
        Ok(pb::ProofKind::WindowPostPartition) => ProofKind::WindowPost,
        Ok(pb::ProofKind::SnapDealsUpdate) => ProofKind::SnapDeals,
        _ => {
            return Err(Error::Unreadable {
                what: Readable::CurioProofKind,
                given: req.proof_kind.to_string(),
            })
        }
    };
    let mut self_describing = false;
    let request = match kind {
        ProofKind::Porep => {
            let (c1, sd) = porep_submission(req)?;
            self_describing = sd;
            ProofRequest::PoRepC2(Box::new(c1.output))
        }
        ProofKind::WinningPost | ProofKind::WindowPost => {
            let registered_proof = post::post_proof_from_u64(req.registered_proof)?;
            let randomness = bytes32(&req.randomness, "randomness")?;
            let prover_id = ids::prover_id_from_miner(req.miner_id);
            let vanilla_proofs = vanilla_proofs_of(req)?;
            // WinningPoSt has one partition; Curio leaves the index at 0.
            let partition = (kind == ProofKind::WindowPost).then_some(req.partition_index as usize);
            ProofRequest::post(
                kind,
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
                partition,
            )?
        }
        ProofKind::SnapDeals => ProofRequest::SnapDeals {
            registered_proof: snap::update_proof_from_u64(req.registered_proof)?,
            vanilla_proofs: vanilla_proofs_of(req)?,
            comm_r_old: commitment_from_cid(&req.comm_r_old, FIL_COMMITMENT_SEALED, "comm_r_old")?,
            comm_r_new: commitment_from_cid(&req.comm_r_new, FIL_COMMITMENT_SEALED, "comm_r_new")?,
            comm_d_new: commitment_from_cid(
                &req.comm_d_new,
                FIL_COMMITMENT_UNSEALED,
                "comm_d_new",
            )?,
        },
    };
    let circuit = request.circuit();
    if circuit.kind() != kind {
        return Err(Error::WrongProofKind {
            given: format!("registered proof {circuit}"),
            expected: vec![kind],
        });
    }
    if req.sector_size != 0 && req.sector_size != circuit.sector_size() {
        return Err(Error::disagree(
            Fact::SectorSize,
            "sector_size",
            req.sector_size,
            "the registered proof",
            circuit,
        ));
    }
    Ok((request, self_describing))
}

#[tonic::async_trait]
impl ProvingEngine for CurioService {
    async fn submit_proof(
        &self,
        request: Request<pb::SubmitProofRequest>,
    ) -> Result<Response<pb::SubmitProofResponse>, Status> {
        Ok(Response::new(self.submit(request.into_inner()).await?))
    }

    async fn await_proof(
        &self,
        request: Request<pb::AwaitProofRequest>,
    ) -> Result<Response<pb::AwaitProofResponse>, Status> {
        let r = request.get_ref();
        let timeout = (r.timeout_ms > 0).then(|| Duration::from_millis(r.timeout_ms));
        Ok(Response::new(self.wait(&r.job_id, timeout).await?))
    }

    async fn prove(
        &self,
        request: Request<pb::ProveRequest>,
    ) -> Result<Response<pb::ProveResponse>, Status> {
        let submit = request
            .into_inner()
            .submit
            .ok_or_else(|| Status::invalid_argument("ProveRequest without submit"))?;
        let submitted = self.submit(submit).await?;
        let result = self.wait(&submitted.job_id, None).await?;
        Ok(Response::new(pb::ProveResponse {
            result: Some(result),
        }))
    }

    async fn cancel_proof(
        &self,
        request: Request<pb::CancelProofRequest>,
    ) -> Result<Response<pb::CancelProofResponse>, Status> {
        // As Curio's own daemon answers: an unknown (or expired) id is not
        // an error, only nothing that was running.
        let job_id = &request.get_ref().job_id;
        let not_running = Response::new(pb::CancelProofResponse { was_running: false });
        let Some(id) = self.resolve(job_id).await? else {
            return Ok(not_running);
        };
        if let Some(node) = &self.cluster {
            let Ok(id) = cluster_job_id(id) else {
                return Ok(not_running);
            };
            let before = match node.client().job(id).await {
                Ok(j) => j.state,
                Err(crate::cluster::DbError::UnknownJob(_)) => return Ok(not_running),
                Err(e) => return Err(cluster_status(e.into())),
            };
            let cancelled = match node.cancel(id).await {
                Ok((_, c)) => c,
                Err(crate::cluster::DbError::UnknownJob(_)) => false,
                Err(e) => return Err(cluster_status(e.into())),
            };
            return Ok(Response::new(pb::CancelProofResponse {
                was_running: cancelled && before == crate::cluster::DbJobState::Running,
            }));
        }
        let Ok(before) = self.engine.job(id).map(|v| v.state) else {
            return Ok(not_running);
        };
        let cancelled = match self.engine.cancel(id) {
            Ok((_, c)) => c,
            Err(EngineError::UnknownJob(_)) => false,
            Err(e) => return Err(engine_status(e)),
        };
        Ok(Response::new(pb::CancelProofResponse {
            was_running: cancelled && before == JobState::Running,
        }))
    }

    async fn get_status(
        &self,
        _request: Request<pb::GetStatusRequest>,
    ) -> Result<Response<pb::GetStatusResponse>, Status> {
        let s = self.engine.status();
        let names = self.kinds_by_params();
        // A GPU's current job: the first job of the first of its workers
        // proving now, named as SubmitProof named it.
        let current = |device: u32| {
            s.proving
                .iter()
                .find(|w| w.device == Some(device))
                .and_then(|w| {
                    let (id, rid) = w.jobs.first()?;
                    Some((
                        rid.clone().unwrap_or_else(|| id.to_string()),
                        curio_proof_kind(&w.kind).unwrap_or(&w.kind).to_owned(),
                    ))
                })
                .unwrap_or_default()
        };
        let gpus = s
            .devices
            .iter()
            .map(|d| {
                let (current_job_id, current_proof_kind) = current(d.index);
                pb::GpuStatus {
                    ordinal: d.index,
                    name: d.name.clone(),
                    vram_total_bytes: d.vram_total_bytes,
                    vram_free_bytes: d.vram_free_bytes,
                    current_job_id,
                    current_proof_kind,
                }
            })
            .collect();
        // Parameters in memory only: an evicted set is not loaded.
        let loaded_srs = s
            .params
            .iter()
            .filter(|p| p.tier != "disk")
            .map(|p| pb::SrsStatus {
                circuit_id: names.get(&p.id).cloned().unwrap_or_else(|| p.id.clone()),
                tier: match p.tier {
                    "vram" | "pinned" => pb::srs_status::Tier::Hot,
                    "mapped" => pb::srs_status::Tier::Warm,
                    _ => pb::srs_status::Tier::Cold,
                } as i32,
                size_bytes: p.bytes,
                ref_count: p.ref_count,
            })
            .collect();
        // In cluster mode the shared queue's partitions (pending, leased),
        // else this daemon's jobs (queued, running); this daemon's when the
        // database does not answer.
        let cluster_queues = match &self.cluster {
            Some(node) => node.status(true).await.view.map(|v| {
                v.queues
                    .into_iter()
                    .map(|q| {
                        let p = crate::service::priority_from_proto(q.priority)
                            .unwrap_or(Priority::Normal);
                        (q.kind, p, q.pending as usize, q.leased as usize)
                    })
                    .collect::<Vec<_>>()
            }),
            None => None,
        };
        let queues = match cluster_queues {
            Some(q) => queue_status(q),
            None => queue_status(
                s.jobs
                    .iter()
                    .map(|c| (c.kind.clone(), c.priority, c.queued, c.running))
                    .collect(),
            ),
        };
        Ok(Response::new(pb::GetStatusResponse {
            gpus,
            loaded_srs,
            queues,
            total_proofs_completed: s.counters.completed,
            total_proofs_failed: s.counters.failed,
            uptime_seconds: self.started.elapsed().as_secs(),
            pinned_memory_bytes: s
                .tiers
                .iter()
                .filter(|t| t.tier == "pinned")
                .map(|t| t.used_bytes)
                .sum(),
            pinned_memory_limit_bytes: s
                .tiers
                .iter()
                .filter(|t| t.tier == "pinned")
                .map(|t| t.budget_bytes)
                .sum(),
        }))
    }

    async fn get_metrics(
        &self,
        _request: Request<pb::GetMetricsRequest>,
    ) -> Result<Response<pb::GetMetricsResponse>, Status> {
        Ok(Response::new(pb::GetMetricsResponse {
            prometheus_text: crate::metrics::render(&self.engine.status()),
        }))
    }

    async fn preload_srs(
        &self,
        request: Request<pb::PreloadSrsRequest>,
    ) -> Result<Response<pb::PreloadSrsResponse>, Status> {
        let name = request.get_ref().circuit_id.clone();
        let id = self.params_id_of(&name)?;
        let in_memory = |s: &crate::engine::EngineStatus| {
            s.params.iter().any(|p| p.id == id && p.tier != "disk")
        };
        let already_loaded = in_memory(&self.engine.status());
        let t = Instant::now();
        self.engine.preload(&[name]).await.map_err(engine_status)?;
        Ok(Response::new(pb::PreloadSrsResponse {
            already_loaded,
            load_time_ms: if already_loaded { 0 } else { ms(t.elapsed()) },
        }))
    }

    async fn evict_srs(
        &self,
        request: Request<pb::EvictSrsRequest>,
    ) -> Result<Response<pb::EvictSrsResponse>, Status> {
        let name = request.get_ref().circuit_id.clone();
        let id = self.params_id_of(&name)?;
        let bytes: u64 = self
            .engine
            .status()
            .params
            .iter()
            .filter(|p| p.id == id && p.tier != "disk")
            .map(|p| p.bytes)
            .sum();
        let (evicted, _busy) = self.engine.evict(&[name]).map_err(engine_status)?;
        let was_loaded = evicted.contains(&id);
        Ok(Response::new(pb::EvictSrsResponse {
            was_loaded,
            freed_bytes: if was_loaded { bytes } else { 0 },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commitment_cids() {
        let digest = [7u8; 32];
        // CommR: CIDv1, fil-commitment-sealed, poseidon-bls12_381-a2-fc1.
        let mut cid = vec![0x01, 0x82, 0xe2, 0x03, 0x81, 0xe8, 0x02, 0x20];
        cid.extend_from_slice(&digest);
        assert_eq!(
            commitment_from_cid(&cid, FIL_COMMITMENT_SEALED, "r").unwrap(),
            digest
        );
        assert!(commitment_from_cid(&cid, FIL_COMMITMENT_UNSEALED, "d").is_err());
        assert!(commitment_from_cid(&cid[..cid.len() - 1], FIL_COMMITMENT_SEALED, "r").is_err());
        let mut v0 = cid.clone();
        v0[0] = 0;
        assert!(commitment_from_cid(&v0, FIL_COMMITMENT_SEALED, "r").is_err());
        // CommD: fil-commitment-unsealed, sha2-256-trunc254-padded.
        let mut cid = vec![0x01, 0x81, 0xe2, 0x03, 0x92, 0x20, 0x20];
        cid.extend_from_slice(&digest);
        assert_eq!(
            commitment_from_cid(&cid, FIL_COMMITMENT_UNSEALED, "d").unwrap(),
            digest
        );
        assert_eq!(
            commitment_from_cid(&digest, FIL_COMMITMENT_UNSEALED, "d").unwrap(),
            digest
        );
        for bad in [&[][..], &[1][..], &[0xff; 12][..]] {
            assert!(commitment_from_cid(bad, FIL_COMMITMENT_SEALED, "x").is_err());
        }
    }

    #[test]
    fn queues_are_named_as_curios_daemon_names_proof_kinds() {
        for (kind, curio) in [
            ("porep-2k", Some("porep-c2")),
            ("porep-32g", Some("porep-c2")),
            ("winning-64g", Some("winning-post")),
            ("wpost-512m", Some("window-post")),
            ("snap-8m", Some("snap-update")),
            ("porep-like-20", None),
            ("porep-3g", None),
        ] {
            assert_eq!(curio_proof_kind(kind), curio, "{kind}");
        }
    }

    #[test]
    fn vanilla_lists() {
        assert_eq!(vanilla_list(&[1, 2, 3]).unwrap(), vec![vec![1, 2, 3]]);
        assert_eq!(
            vanilla_list(br#"["AQI=","Aw=="]"#).unwrap(),
            vec![vec![1, 2], vec![3]]
        );
        assert!(vanilla_list(b"").is_err());
        assert!(vanilla_list(br#"["!!"]"#).is_err());
    }

    #[test]
    fn repeated_vanilla_proofs_come_first() {
        let mut r = pb::SubmitProofRequest {
            vanilla_proofs: vec![vec![1, 2], vec![3]],
            ..Default::default()
        };
        assert_eq!(vanilla_proofs_of(&r).unwrap(), vec![vec![1, 2], vec![3]]);
        r.vanilla_proof = vec![9];
        assert!(matches!(vanilla_proofs_of(&r), Err(Error::BothSet { .. })));
        r.vanilla_proofs.clear();
        assert_eq!(vanilla_proofs_of(&r).unwrap(), vec![vec![9]]);
        r.vanilla_proof.clear();
        r.vanilla_proofs = vec![vec![1], vec![]];
        assert!(
            matches!(vanilla_proofs_of(&r), Err(Error::Empty { field }) if field == "vanilla_proofs[1]")
        );
    }

    #[test]
    fn snap_deals_in_the_newer_schema() {
        let r = pb::SubmitProofRequest {
            proof_kind: pb::ProofKind::SnapDealsUpdate as i32,
            registered_proof: 0, // StackedDrg2KiBV1
            vanilla_proofs: vec![vec![5; 10], vec![6; 10]],
            comm_r_old: vec![1; 32],
            comm_r_new: vec![2; 32],
            comm_d_new: vec![3; 32],
            ..Default::default()
        };
        match request_of(&r).unwrap() {
            ProofRequest::SnapDeals {
                vanilla_proofs,
                comm_r_old,
                comm_r_new,
                comm_d_new,
                ..
            } => {
                assert_eq!(vanilla_proofs, vec![vec![5; 10], vec![6; 10]]);
                assert_eq!(
                    (comm_r_old, comm_r_new, comm_d_new),
                    ([1; 32], [2; 32], [3; 32])
                );
            }
            other => panic!("{other:?}"),
        }
        let mut short = r.clone();
        short.comm_d_new = vec![3; 31];
        assert!(
            matches!(request_of(&short), Err(Error::InvalidValue { field, .. }) if field == "comm_d_new")
        );
    }

    #[test]
    fn bad_submissions_are_invalid_input() {
        let mut r = pb::SubmitProofRequest {
            proof_kind: 9,
            ..Default::default()
        };
        assert!(request_of(&r).is_err());
        r.proof_kind = pb::ProofKind::WinningPost as i32;
        r.registered_proof = 0;
        r.randomness = vec![1; 31];
        r.vanilla_proof = vec![1];
        assert!(
            matches!(request_of(&r), Err(Error::WrongCount { what: Counted::Bytes { field }, .. }) if field == "randomness")
        );
        // A WindowPoSt registered proof under WINNING_POST.
        r.randomness = vec![1; 32];
        r.registered_proof = 5;
        assert!(
            matches!(request_of(&r), Err(Error::WrongProofKind { expected, .. }) if expected == [ProofKind::WinningPost])
        );
        r.proof_kind = pb::ProofKind::PorepSealCommit as i32;
        assert!(request_of(&r).is_err());
    }
}
