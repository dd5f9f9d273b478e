//! Curio's proving service, `cuzk.v1.ProvingEngine`, served by the cuzk
//! daemon beside its own: an operator points Curio at cuzk unchanged.
//!
//! Requests become jobs of the daemon's Filecoin kinds ([`crate::daemon`]);
//! job ids are the daemon's. How each proof kind's fields are read is
//! described in proto/cuzk/v1/proving.proto.

use crate::circuits::ProofKind;
use crate::daemon::{default_priority, encode_request, kind_name};
use crate::prover::ProofRequest;
use crate::{cli, porep, post, snap, Error};
use base64::Engine as _;
use cuzk_daemon::engine::{EngineError, JobState, JobView};
use cuzk_daemon::{Engine, Priority, ServiceHook, SubmitRequest};
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
/// (`DaemonBuilder::add_service`). `max_message_bytes` bounds requests (a
/// 32 GiB C1 output is about 50 MB) and responses.
pub fn service_hook(max_message_bytes: usize) -> ServiceHook {
    Arc::new(move |engine: &Engine, rb: &mut RoutesBuilder| {
        rb.add_service(
            ProvingEngineServer::new(CurioService::new(engine.clone()))
                .max_decoding_message_size(max_message_bytes)
                .max_encoding_message_size(max_message_bytes),
        );
    })
}

pub struct CurioService {
    engine: Engine,
    started: Instant,
}

impl CurioService {
    pub fn new(engine: Engine) -> Self {
        CurioService {
            engine,
            started: Instant::now(),
        }
    }

    // tonic's Status is what every handler returns; boxing it here would
    // only be unboxed again by the caller.
    #[allow(clippy::result_large_err)]
    fn submit(&self, req: &pb::SubmitProofRequest) -> Result<pb::SubmitProofResponse, Status> {
        let proof = request_of(req).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let kind = proof.circuit().kind();
        let priority = match pb::Priority::try_from(req.priority) {
            Ok(pb::Priority::Low) => Priority::Low,
            Ok(pb::Priority::Normal) => Priority::Normal,
            Ok(pb::Priority::High) => Priority::High,
            Ok(pb::Priority::Critical) => Priority::Critical,
            Ok(pb::Priority::Unspecified) => default_priority(kind),
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "unknown priority {}",
                    req.priority
                )))
            }
        };
        let submitted = self
            .engine
            .submit(SubmitRequest {
                request_id: (!req.request_id.is_empty()).then(|| req.request_id.clone()),
                kind: kind_name(proof.circuit()),
                input: encode_request(&proof),
                priority,
                client: "curio".into(),
            })
            .map_err(engine_status)?;
        let queued: usize = self.engine.status().queues.iter().map(|(_, n)| n).sum();
        Ok(pb::SubmitProofResponse {
            job_id: submitted.job_id.to_string(),
            queue_position: u32::try_from(queued).unwrap_or(u32::MAX),
            assigned_gpu: String::new(),
        })
    }

    async fn wait(
        &self,
        job_id: &str,
        timeout: Option<Duration>,
    ) -> Result<pb::AwaitProofResponse, Status> {
        let id: u64 = job_id
            .parse()
            .map_err(|_| Status::not_found(format!("no job {job_id:?}")))?;
        let view = self
            .engine
            .await_job(id, timeout)
            .await
            .map_err(engine_status)?;
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

fn engine_status(e: EngineError) -> Status {
    let msg = e.to_string();
    match e {
        EngineError::Kind(_) => Status::invalid_argument(msg),
        EngineError::RequestIdConflict(_) => Status::already_exists(msg),
        EngineError::RequestIdTooLong(_) => Status::invalid_argument(msg),
        EngineError::ClientLimit { .. } => Status::resource_exhausted(msg),
        EngineError::ShuttingDown => Status::unavailable(msg),
        EngineError::UnknownJob(_) => Status::not_found(msg),
        EngineError::Params(_) => Status::failed_precondition(msg),
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn await_response(job_id: &str, v: &JobView) -> pb::AwaitProofResponse {
    use pb::await_proof_response::Status as S;
    let status = match v.state {
        JobState::Completed => S::Completed,
        JobState::Failed => S::Failed,
        JobState::Cancelled => S::Cancelled,
        JobState::Queued | JobState::Running => S::Timeout,
    };
    pb::AwaitProofResponse {
        job_id: job_id.to_owned(),
        status: status as i32,
        proof: if v.state == JobState::Completed {
            v.proof.clone()
        } else {
            Vec::new()
        },
        error_message: v.error.clone().unwrap_or_default(),
        queue_wait_ms: ms(v.timings.queue_wait),
        srs_load_ms: ms(v.timings.param_load),
        synthesis_ms: ms(v.timings.synthesis),
        gpu_compute_ms: ms(v.timings.gpu),
        total_ms: ms(v.timings.total),
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
        return Err(Error::InvalidInput(
            "both vanilla_proof and vanilla_proofs are set; send one".into(),
        ));
    }
    if let Some(i) = req.vanilla_proofs.iter().position(|v| v.is_empty()) {
        return Err(Error::InvalidInput(format!("vanilla_proofs[{i}] is empty")));
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
                        .map_err(|e| Error::Decode {
                            what: format!("vanilla proof {i} of the JSON list (base64)"),
                            detail: e.to_string(),
                        })
                })
                .collect();
        }
    }
    if bytes.is_empty() {
        return Err(Error::InvalidInput("vanilla_proof is empty".into()));
    }
    Ok(vec![bytes.to_vec()])
}

fn bytes32(b: &[u8], what: &str) -> Result<[u8; 32], Error> {
    b.try_into()
        .map_err(|_| Error::InvalidInput(format!("{what}: expected 32 bytes, got {}", b.len())))
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
    let bad = |why: &str| Error::InvalidInput(format!("{what}: not a commitment CID ({why})"));
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

/// The proof request a Curio submission describes.
pub fn request_of(req: &pb::SubmitProofRequest) -> Result<ProofRequest, Error> {
    let kind = match pb::ProofKind::try_from(req.proof_kind) {
        Ok(pb::ProofKind::PorepSealCommit) => ProofKind::Porep,
        Ok(pb::ProofKind::WinningPost) => ProofKind::WinningPost,
        Ok(pb::ProofKind::WindowPostPartition) => ProofKind::WindowPost,
        Ok(pb::ProofKind::SnapDealsUpdate) => ProofKind::SnapDeals,
        _ => {
            return Err(Error::InvalidInput(format!(
                "proof_kind {}",
                req.proof_kind
            )))
        }
    };
    let request = match kind {
        ProofKind::Porep => {
            // The C1 output names its registered proof; the request's field
            // is needed only for filecoin-proofs' untagged form.
            let c1 = match porep::decode_c1(&req.vanilla_proof, None) {
                Ok(c1) => c1,
                Err(first) => porep::decode_c1(
                    &req.vanilla_proof,
                    Some(porep::seal_proof_from_u64(req.registered_proof).map_err(|_| first)?),
                )?,
            };
            ProofRequest::PoRepC2(Box::new(c1.output))
        }
        ProofKind::WinningPost | ProofKind::WindowPost => {
            let registered_proof = post::post_proof_from_u64(req.registered_proof)?;
            let randomness = bytes32(&req.randomness, "randomness")?;
            let prover_id = cli::prover_id_from_miner(req.miner_id);
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
        return Err(Error::InvalidInput(format!(
            "registered proof {circuit} is not a {kind} proof"
        )));
    }
    if req.sector_size != 0 && req.sector_size != circuit.sector_size() {
        return Err(Error::InvalidInput(format!(
            "sector_size {} but the proof is for {circuit}",
            req.sector_size
        )));
    }
    Ok(request)
}

#[tonic::async_trait]
impl ProvingEngine for CurioService {
    async fn submit_proof(
        &self,
        request: Request<pb::SubmitProofRequest>,
    ) -> Result<Response<pb::SubmitProofResponse>, Status> {
        Ok(Response::new(self.submit(request.get_ref())?))
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
            .get_ref()
            .submit
            .as_ref()
            .ok_or_else(|| Status::invalid_argument("ProveRequest without submit"))?;
        let submitted = self.submit(submit)?;
        let result = self.wait(&submitted.job_id, None).await?;
        Ok(Response::new(pb::ProveResponse {
            result: Some(result),
        }))
    }

    async fn cancel_proof(
        &self,
        request: Request<pb::CancelProofRequest>,
    ) -> Result<Response<pb::CancelProofResponse>, Status> {
        let job_id = &request.get_ref().job_id;
        let id: u64 = job_id
            .parse()
            .map_err(|_| Status::not_found(format!("no job {job_id:?}")))?;
        let before = self.engine.job(id).map_err(engine_status)?.state;
        let (_, cancelled) = self.engine.cancel(id).map_err(engine_status)?;
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
        let gpus = s
            .devices
            .iter()
            .map(|d| pb::GpuStatus {
                ordinal: d.index,
                name: d.name.clone(),
                vram_total_bytes: d.vram_total_bytes,
                vram_free_bytes: d.vram_free_bytes,
                current_job_id: String::new(),
                current_proof_kind: String::new(),
            })
            .collect();
        let loaded_srs = s
            .params
            .iter()
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
        // The daemon queues by priority, not by proof kind.
        let mut queues: Vec<pb::QueueStatus> = s
            .queues
            .iter()
            .map(|(p, n)| pb::QueueStatus {
                proof_kind: format!("priority-{}", p.name()),
                pending: u32::try_from(*n).unwrap_or(u32::MAX),
                in_progress: 0,
            })
            .collect();
        queues.push(pb::QueueStatus {
            proof_kind: "all".into(),
            pending: u32::try_from(s.collecting).unwrap_or(u32::MAX),
            in_progress: u32::try_from(s.running).unwrap_or(u32::MAX),
        });
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
            prometheus_text: cuzk_daemon::metrics::render(&self.engine.status()),
        }))
    }

    async fn preload_srs(
        &self,
        request: Request<pb::PreloadSrsRequest>,
    ) -> Result<Response<pb::PreloadSrsResponse>, Status> {
        let name = request.get_ref().circuit_id.clone();
        let kind = self
            .engine
            .registry()
            .get(&name)
            .map_err(|e| Status::not_found(e.to_string()))?;
        let id = kind.params_id().to_owned();
        let in_memory = |s: &cuzk_daemon::engine::EngineStatus| {
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
        let kind = self
            .engine
            .registry()
            .get(&name)
            .map_err(|e| Status::not_found(e.to_string()))?;
        let id = kind.params_id().to_owned();
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
        assert!(matches!(vanilla_proofs_of(&r), Err(Error::InvalidInput(m)) if m.contains("both")));
        r.vanilla_proofs.clear();
        assert_eq!(vanilla_proofs_of(&r).unwrap(), vec![vec![9]]);
        r.vanilla_proof.clear();
        r.vanilla_proofs = vec![vec![1], vec![]];
        assert!(
            matches!(vanilla_proofs_of(&r), Err(Error::InvalidInput(m)) if m.contains("vanilla_proofs[1]"))
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
            matches!(request_of(&short), Err(Error::InvalidInput(m)) if m.contains("comm_d_new"))
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
        assert!(matches!(request_of(&r), Err(Error::InvalidInput(m)) if m.contains("randomness")));
        // A WindowPoSt registered proof under WINNING_POST.
        r.randomness = vec![1; 32];
        r.registered_proof = 5;
        assert!(
            matches!(request_of(&r), Err(Error::InvalidInput(m)) if m.contains("not a winning-post"))
        );
        r.proof_kind = pb::ProofKind::PorepSealCommit as i32;
        assert!(request_of(&r).is_err());
    }
}
