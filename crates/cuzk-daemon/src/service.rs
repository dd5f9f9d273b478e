//! The `cuzk.daemon.v1.ProofService` gRPC service: a thin translation
//! between protobuf messages and [`Engine`] calls, and from engine errors
//! to gRPC status codes.

// tonic::Status is large, but it is what every handler returns.
#![allow(clippy::result_large_err)]

use crate::engine::{Engine, EngineError, JobState, JobView, SubmitRequest};
use crate::proto;
use crate::scheduler::Priority;
use std::time::Duration;
use tonic::{Request, Response, Status};

#[derive(Clone)]
pub struct ProofServiceImpl {
    engine: Engine,
}

fn worker_busy(b: &crate::trace::Busy) -> Vec<proto::WorkerBusy> {
    b.workers
        .iter()
        .map(|w| proto::WorkerBusy {
            worker: w.worker,
            device: w.device,
            busy_fraction: w.busy_fraction,
        })
        .collect()
}

/// A trace window from seconds (0: the status window); None when out of
/// range.
pub fn trace_window(secs: f64) -> Option<Duration> {
    if !(0.0..=1e6).contains(&secs) {
        return None;
    }
    Some(if secs == 0.0 {
        crate::engine::BUSY_WINDOW
    } else {
        Duration::from_secs_f64(secs)
    })
}

impl ProofServiceImpl {
    pub fn new(engine: Engine) -> Self {
        Self { engine }
    }
    /// The tonic server for this service, with the message size limit.
    pub fn into_server(
        self,
        max_message_bytes: usize,
    ) -> proto::proof_service_server::ProofServiceServer<Self> {
        proto::proof_service_server::ProofServiceServer::new(self)
            .max_decoding_message_size(max_message_bytes)
            .max_encoding_message_size(max_message_bytes)
    }
}

pub fn status_of(e: EngineError) -> Status {
    use crate::kinds::KindError;
    let msg = e.to_string();
    match e {
        EngineError::Kind(KindError::Unknown(_))
        | EngineError::Kind(KindError::MalformedInput { .. }) => Status::invalid_argument(msg),
        EngineError::RequestIdTooLong(_) => Status::invalid_argument(msg),
        EngineError::RequestIdConflict(_) => Status::already_exists(msg),
        EngineError::ClientLimit { .. } => Status::resource_exhausted(msg),
        EngineError::ShuttingDown => Status::unavailable(msg),
        EngineError::Kind(KindError::Failed { .. }) => Status::internal(msg),
        EngineError::UnknownJob(_) => Status::not_found(msg),
        EngineError::Kind(_) | EngineError::Params(_) | EngineError::NoGpuFits(_) => {
            Status::failed_precondition(msg)
        }
    }
}

pub fn priority_from_proto(p: i32) -> Result<Priority, Status> {
    match proto::Priority::try_from(p) {
        Ok(proto::Priority::Unspecified) | Ok(proto::Priority::Normal) => Ok(Priority::Normal),
        Ok(proto::Priority::Low) => Ok(Priority::Low),
        Ok(proto::Priority::High) => Ok(Priority::High),
        Ok(proto::Priority::Critical) => Ok(Priority::Critical),
        Err(_) => Err(Status::invalid_argument(format!("unknown priority {p}"))),
    }
}

pub fn priority_to_proto(p: Priority) -> proto::Priority {
    match p {
        Priority::Low => proto::Priority::Low,
        Priority::Normal => proto::Priority::Normal,
        Priority::High => proto::Priority::High,
        Priority::Critical => proto::Priority::Critical,
    }
}

pub fn state_to_proto(s: JobState) -> proto::JobState {
    match s {
        JobState::Queued => proto::JobState::Queued,
        JobState::Running => proto::JobState::Running,
        JobState::Completed => proto::JobState::Completed,
        JobState::Failed => proto::JobState::Failed,
        JobState::Cancelled => proto::JobState::Cancelled,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn view_to_proto(v: JobView) -> proto::AwaitProofResponse {
    proto::AwaitProofResponse {
        job_id: v.id,
        state: state_to_proto(v.state) as i32,
        proof: v.proof,
        public_inputs: v.public_inputs,
        error: v.error.map(|e| e.to_string()).unwrap_or_default(),
        timings: Some(proto::Timings {
            queue_wait_ms: ms(v.timings.queue_wait),
            param_load_ms: ms(v.timings.param_load),
            synthesis_ms: ms(v.timings.synthesis),
            gpu_ms: ms(v.timings.gpu),
            total_ms: ms(v.timings.total),
        }),
        kind: v.kind,
        batch_size: v.batch_size,
        completion_seq: v.completion_seq,
    }
}

fn params_to_proto(p: crate::params::ParamsStatus) -> proto::LoadedParams {
    proto::LoadedParams {
        id: p.id,
        tier: p.tier.to_owned(),
        bytes: p.bytes,
        ref_count: p.ref_count,
        devices: p.devices,
    }
}

/// Who a request comes from, for the per-client limit: the caller's
/// `client_id`, else the peer (its IP on TCP, its uid on a unix socket).
fn client_key<T>(req: &Request<T>, client_id: &str) -> String {
    if !client_id.is_empty() {
        return format!("id:{}", client_id.chars().take(128).collect::<String>());
    }
    if let Some(addr) = req.remote_addr() {
        return format!("ip:{}", addr.ip());
    }
    #[cfg(unix)]
    if let Some(info) = req
        .extensions()
        .get::<tonic::transport::server::UdsConnectInfo>()
    {
        if let Some(cred) = info.peer_cred {
            return format!("uid:{}", cred.uid());
        }
    }
    "unknown".into()
}

impl ProofServiceImpl {
    /// A submission as the engine takes it: the caller ([`client_key`]),
    /// the priority checked (a bad one counted as a rejection).
    pub(crate) fn submit_req(
        &self,
        req: Request<proto::SubmitProofRequest>,
    ) -> Result<SubmitRequest, Status> {
        let client = client_key(&req, &req.get_ref().client_id);
        let r = req.into_inner();
        Ok(SubmitRequest {
            request_id: Some(r.request_id).filter(|s| !s.is_empty()),
            kind: r.kind,
            input: r.input,
            priority: priority_from_proto(r.priority)
                .inspect_err(|_| self.engine.note_rejected())?,
            client,
        })
    }
}

#[tonic::async_trait]
impl proto::proof_service_server::ProofService for ProofServiceImpl {
    async fn submit_proof(
        &self,
        req: Request<proto::SubmitProofRequest>,
    ) -> Result<Response<proto::SubmitProofResponse>, Status> {
        let s = self
            .engine
            .submit(self.submit_req(req)?)
            .map_err(status_of)?;
        Ok(Response::new(proto::SubmitProofResponse {
            job_id: s.job_id,
            deduplicated: s.deduplicated,
        }))
    }

    async fn await_proof(
        &self,
        req: Request<proto::AwaitProofRequest>,
    ) -> Result<Response<proto::AwaitProofResponse>, Status> {
        let r = req.into_inner();
        let timeout = (r.timeout_ms > 0).then(|| Duration::from_millis(r.timeout_ms));
        let v = self
            .engine
            .await_job(r.job_id, timeout)
            .await
            .map_err(status_of)?;
        Ok(Response::new(view_to_proto(v)))
    }

    async fn prove(
        &self,
        req: Request<proto::SubmitProofRequest>,
    ) -> Result<Response<proto::AwaitProofResponse>, Status> {
        let v = self
            .engine
            .prove(self.submit_req(req)?)
            .await
            .map_err(status_of)?;
        Ok(Response::new(view_to_proto(v)))
    }

    async fn cancel_proof(
        &self,
        req: Request<proto::CancelProofRequest>,
    ) -> Result<Response<proto::CancelProofResponse>, Status> {
        let (state, cancelled) = self
            .engine
            .cancel(req.into_inner().job_id)
            .map_err(status_of)?;
        Ok(Response::new(proto::CancelProofResponse {
            state: state_to_proto(state) as i32,
            cancelled,
        }))
    }

    async fn get_status(
        &self,
        _req: Request<proto::GetStatusRequest>,
    ) -> Result<Response<proto::GetStatusResponse>, Status> {
        let s = self.engine.status();
        let c = &s.counters;
        Ok(Response::new(proto::GetStatusResponse {
            backend: s.backend.to_owned(),
            gpu_backend_present: s.gpu_backend_present,
            devices: s
                .devices
                .iter()
                .map(|d| {
                    let h = s.device_health.iter().find(|h| h.index == d.index);
                    proto::Device {
                        index: d.index,
                        name: d.name.clone(),
                        vram_total_bytes: d.vram_total_bytes,
                        vram_free_bytes: d.vram_free_bytes,
                        // A device the engine has no record of (none
                        // today) has had no failure.
                        healthy: h.is_none_or(|h| h.healthy),
                        partitions_proved: h.map_or(0, |h| h.partitions_proved),
                        failures: h.map_or(0, |h| h.failures),
                        last_error: h.and_then(|h| h.last_error.clone()).unwrap_or_default(),
                        out_since_unix_ms: h.and_then(|h| h.out_since_unix_ms).unwrap_or(0),
                        probes: h.map_or(0, |h| h.probes),
                        last_probe_unix_ms: h.and_then(|h| h.last_probe_unix_ms).unwrap_or(0),
                        last_probe_error: h
                            .and_then(|h| h.last_probe_error.clone())
                            .unwrap_or_default(),
                        returned: h.map_or(0, |h| h.returned),
                        busy_s: h.map_or(0.0, |h| h.busy_s),
                        busy_fraction: h.map_or(0.0, |h| h.busy_fraction),
                        busy_fraction_window: s
                            .busy
                            .devices
                            .iter()
                            .find(|b| b.device == d.index)
                            .map_or(0.0, |b| b.busy_fraction),
                    }
                })
                .collect(),
            params: s.params.iter().cloned().map(params_to_proto).collect(),
            tiers: s
                .tiers
                .iter()
                .map(|t| proto::TierBudget {
                    tier: t.tier.to_owned(),
                    used_bytes: t.used_bytes,
                    budget_bytes: t.budget_bytes,
                })
                .collect(),
            queues: s
                .queues
                .iter()
                .map(|(p, n)| proto::QueueDepth {
                    priority: priority_to_proto(*p) as i32,
                    queued: *n as u32,
                })
                .collect(),
            collecting: s.collecting as u32,
            running: s.running as u32,
            counters: Some(proto::Counters {
                submitted: c.submitted,
                deduplicated: c.deduplicated,
                completed: c.completed,
                failed: c.failed,
                cancelled: c.cancelled,
                rejected: c.rejected,
                batches: c.batches,
                circuits_proved: c.circuits_proved,
                proofs_verified: c.proofs_verified,
                verification_failures: c.verification_failures,
            }),
            host_reserved_bytes: s.host_reserved_bytes,
            host_budget_bytes: s.host_budget_bytes,
            host_resident_bytes: s.host_resident_bytes,
            kinds: s.kinds.clone(),
            workers: s.workers as u32,
            shutting_down: s.shutting_down,
            synthesizing: s.synthesizing as u32,
            synthesis_concurrency: s.synthesis_concurrency as u32,
            open_chunks: s.open_chunks as u32,
            ready_chunks: s.ready_chunks as u32,
            worker_busy: worker_busy(&s.busy),
            synthesis_busy_fraction: s.busy.synthesis_busy_fraction,
            busy_window_s: s.busy.window_s,
            cluster: None,
        }))
    }

    async fn get_cluster_status(
        &self,
        _req: Request<proto::GetClusterStatusRequest>,
    ) -> Result<Response<proto::ClusterStatus>, Status> {
        // Cluster mode answers with ClusterProofService.
        Err(Status::failed_precondition(
            "this daemon is not in cluster mode ([cluster] database_url is not set)",
        ))
    }

    async fn get_trace(
        &self,
        req: Request<proto::GetTraceRequest>,
    ) -> Result<Response<proto::GetTraceResponse>, Status> {
        let secs = req.into_inner().seconds;
        let window = trace_window(secs).ok_or_else(|| {
            Status::invalid_argument(format!("seconds = {secs}: a window of 0 to 1e6 s"))
        })?;
        let (trace, busy) = self.engine.trace(window);
        Ok(Response::new(proto::GetTraceResponse {
            trace_json: serde_json::to_vec(&trace).map_err(|e| Status::internal(e.to_string()))?,
            window_s: busy.window_s,
            workers: worker_busy(&busy),
            worker_busy_fraction: busy.worker_busy_fraction,
            synthesis_slots: busy.synthesis_slots,
            synthesis_busy_fraction: busy.synthesis_busy_fraction,
        }))
    }

    async fn get_metrics(
        &self,
        _req: Request<proto::GetMetricsRequest>,
    ) -> Result<Response<proto::GetMetricsResponse>, Status> {
        Ok(Response::new(proto::GetMetricsResponse {
            text: crate::metrics::render(&self.engine.status()),
        }))
    }

    async fn preload_params(
        &self,
        req: Request<proto::PreloadParamsRequest>,
    ) -> Result<Response<proto::PreloadParamsResponse>, Status> {
        let loaded = self
            .engine
            .preload(&req.into_inner().kinds)
            .await
            .map_err(status_of)?;
        Ok(Response::new(proto::PreloadParamsResponse {
            loaded: loaded.into_iter().map(params_to_proto).collect(),
        }))
    }

    async fn evict_params(
        &self,
        req: Request<proto::EvictParamsRequest>,
    ) -> Result<Response<proto::EvictParamsResponse>, Status> {
        let (evicted, busy) = self
            .engine
            .evict(&req.into_inner().kinds)
            .map_err(status_of)?;
        Ok(Response::new(proto::EvictParamsResponse { evicted, busy }))
    }
}
