//! Shared helpers: a daemon on a unix socket, loopback TCP (token) and
//! loopback HTTP in a temp dir, clients, and independent proof checking.

#![allow(dead_code)]

use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::params::MappedParameters;
use cuzk_core::proof::{Proof, PROOF_BYTES};
use cuzk_core::verifier::{prepare_verifying_key, verify_proof, PreparedVerifyingKey};
use cuzk_daemon::client::{connect, ConnectOptions, DaemonClient};
use cuzk_daemon::config::{ByteSize, DaemonConfig};
use cuzk_daemon::kinds::{CircuitKind, JobInput, KindError, PorepLikeInput, PorepLikeKind};
use cuzk_daemon::proto;
use cuzk_daemon::{DaemonBuilder, RunningDaemon};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub const TOKEN: &str = "test-token-0123456789abcdef";

pub struct TestDaemon {
    pub d: Option<RunningDaemon>,
    pub dir: tempfile::TempDir,
    pub sock: PathBuf,
}

pub fn base_config(dir: &std::path::Path) -> DaemonConfig {
    let mut cfg = DaemonConfig::default();
    cfg.server.unix_socket = Some(dir.join("cuzk.sock"));
    cfg.server.tcp_listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.server.http_listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.server.token = Some(TOKEN.into());
    cfg.params.dir = dir.join("params");
    cfg.engine.host_memory_budget = Some(ByteSize(1 << 30));
    cfg.engine.max_batch_wait_ms = 20;
    cfg.engine.rng_seed = None;
    cfg.kinds.porep_like_log_sizes = vec![6, 8, 10];
    cfg
}

impl TestDaemon {
    pub async fn start(edit: impl FnOnce(&mut DaemonConfig)) -> Self {
        Self::start_with(edit, |b| b).await
    }
    pub async fn start_with(
        edit: impl FnOnce(&mut DaemonConfig),
        build: impl FnOnce(DaemonBuilder) -> DaemonBuilder,
    ) -> Self {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = base_config(dir.path());
        edit(&mut cfg);
        let sock = cfg.server.unix_socket.clone().unwrap();
        let d = build(DaemonBuilder::new(cfg)).start().await.unwrap();
        TestDaemon {
            d: Some(d),
            dir,
            sock,
        }
    }
    pub fn daemon(&self) -> &RunningDaemon {
        self.d.as_ref().unwrap()
    }
    pub async fn unix(&self) -> DaemonClient {
        connect(&ConnectOptions {
            target: format!("unix:{}", self.sock.display()),
            ..Default::default()
        })
        .await
        .unwrap()
    }
    pub async fn tcp(&self, token: Option<&str>) -> DaemonClient {
        connect(&ConnectOptions {
            target: format!("http://{}", self.daemon().tcp_addr.unwrap()),
            token: token.map(str::to_owned),
            ..Default::default()
        })
        .await
        .unwrap()
    }
    pub fn params_path(&self, log: u32) -> PathBuf {
        self.dir.path().join("params").join(format!(
            "{}.params",
            cuzk_core::circuits::porep_like::params_id(log)
        ))
    }
    pub fn pvk(&self, log: u32) -> PreparedVerifyingKey {
        let m = MappedParameters::open(&self.params_path(log)).unwrap();
        prepare_verifying_key(&m.vk)
    }
    pub async fn stop(mut self) {
        if let Some(d) = self.d.take() {
            d.shutdown().await;
        }
    }
}

pub fn req(log: u32, seed: u64, partitions: u32, p: proto::Priority) -> proto::SubmitProofRequest {
    proto::SubmitProofRequest {
        request_id: String::new(),
        kind: format!("porep-like-{log}"),
        input: PorepLikeInput { seed, partitions }.encode(),
        priority: p as i32,
        client_id: String::new(),
    }
}

/// Check a completed job's proofs against the circuit's own public inputs
/// (computed here, not taken from the daemon) and the verifying key read
/// from the parameter file.
pub fn check_proofs(
    pvk: &PreparedVerifyingKey,
    log: u32,
    seed: u64,
    partitions: u32,
    r: &proto::AwaitProofResponse,
) {
    assert_eq!(
        r.state,
        proto::JobState::Completed as i32,
        "job {}: {}",
        r.job_id,
        r.error
    );
    assert_eq!(r.proof.len(), PROOF_BYTES * partitions as usize);
    let inp = PorepLikeInput { seed, partitions };
    let mut publics = Vec::new();
    for p in 0..partitions as usize {
        let circuit: PorepLikeCircuit = inp.circuit(log, p);
        let inputs = circuit.public_inputs();
        let proof = Proof::from_bytes(&r.proof[p * PROOF_BYTES..(p + 1) * PROOF_BYTES]).unwrap();
        assert!(
            verify_proof(pvk, &proof, &inputs).unwrap(),
            "job {} partition {p} does not verify",
            r.job_id
        );
        publics.extend(inputs.iter().flat_map(|s| s.to_bytes_le()));
    }
    assert_eq!(
        r.public_inputs, publics,
        "job {}: public inputs differ",
        r.job_id
    );
}

/// Submits `r` and returns its job's id.
pub async fn submit_id(c: &mut DaemonClient, r: proto::SubmitProofRequest) -> u64 {
    c.submit_proof(r).await.unwrap().into_inner().job_id
}

/// Submits porep-like-`log` jobs of seeds 0..jobs, `partitions` each, at
/// normal priority, waits for every one and checks its proofs.
pub async fn prove_seeds(
    t: &TestDaemon,
    c: &mut DaemonClient,
    log: u32,
    jobs: u64,
    partitions: u32,
) {
    let mut ids = Vec::new();
    for seed in 0..jobs {
        ids.push((
            submit_id(c, req(log, seed, partitions, proto::Priority::Normal)).await,
            seed,
        ));
    }
    let mut done = Vec::new();
    for (id, seed) in ids {
        done.push((await_done(c, id).await, seed));
    }
    // The parameter file exists once the first job has run.
    let pvk = t.pvk(log);
    for (r, seed) in &done {
        check_proofs(&pvk, log, *seed, partitions, r);
    }
}

pub async fn status(c: &mut DaemonClient) -> proto::GetStatusResponse {
    c.get_status(proto::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

/// Poll until `f` holds, for at most `limit`.
pub async fn eventually<F, Fut>(limit: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while start.elapsed() < limit {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

pub async fn await_done(c: &mut DaemonClient, id: u64) -> proto::AwaitProofResponse {
    let r = c
        .await_proof(proto::AwaitProofRequest {
            job_id: id,
            timeout_ms: 300_000,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        r.state >= proto::JobState::Completed as i32,
        "job {id} still not finished after the wait"
    );
    r
}

/// A minimal HTTP/1.1 GET over loopback.
pub async fn http_get(
    addr: std::net::SocketAddr,
    path: &str,
    token: Option<&str>,
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(30), s.read_to_string(&mut out))
        .await
        .unwrap()
        .unwrap();
    let code = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = out
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_owned())
        .unwrap_or_default();
    (code, body)
}

type Hook = Box<dyn Fn() + Send + Sync>;
type DecodeHook = Box<dyn Fn(&JobInput) + Send + Sync>;
type VerifierInputs = Box<dyn Fn(&JobInput, usize) -> Option<Vec<cuzk_core::Scalar>> + Send + Sync>;

/// porep-like under another name, differing from it only where a test says
/// (batching, supplied parameters, a hook on decoding or synthesis, the
/// verifier's inputs): the tests' kinds are these, so that each names only
/// what it changes.
pub struct Variant {
    inner: PorepLikeKind,
    name: &'static str,
    batchable: bool,
    /// Parameters under this id that the daemon must be given (None: the
    /// inner kind's, generated).
    supplied: Option<&'static str>,
    on_decode: Option<DecodeHook>,
    before_synthesis: Option<Hook>,
    verifier_inputs: Option<VerifierInputs>,
}

impl Variant {
    /// `inner` under `name`, batched and with its parameters.
    pub fn new(inner: PorepLikeKind, name: &'static str) -> Self {
        Variant {
            inner,
            name,
            batchable: true,
            supplied: None,
            on_decode: None,
            before_synthesis: None,
            verifier_inputs: None,
        }
    }

    /// Jobs of it are never batched.
    pub fn single(mut self) -> Self {
        self.batchable = false;
        self
    }

    /// Its parameters are its own (`<name>.params`) and must be supplied.
    pub fn supplied(self) -> Self {
        let name = self.name;
        self.supplied_as(name)
    }

    /// Its parameters are `id`'s and must be supplied.
    pub fn supplied_as(mut self, id: &'static str) -> Self {
        self.supplied = Some(id);
        self
    }

    /// `f` sees each input decoded.
    pub fn on_decode(mut self, f: impl Fn(&JobInput) + Send + Sync + 'static) -> Self {
        self.on_decode = Some(Box::new(f));
        self
    }

    /// `f` runs before each synthesis (to wait or to sleep).
    pub fn before_synthesis(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.before_synthesis = Some(Box::new(f));
        self
    }

    /// The verifier checks proofs against `f`'s public inputs.
    pub fn verifier_inputs(
        mut self,
        f: impl Fn(&JobInput, usize) -> Option<Vec<cuzk_core::Scalar>> + Send + Sync + 'static,
    ) -> Self {
        self.verifier_inputs = Some(Box::new(f));
        self
    }

    fn synthesis_starts(&self) {
        if let Some(f) = &self.before_synthesis {
            f();
        }
    }
}

impl CircuitKind for Variant {
    fn name(&self) -> &str {
        self.name
    }
    fn params_id(&self) -> &str {
        self.supplied.unwrap_or(self.inner.params_id())
    }
    fn batchable(&self) -> bool {
        self.batchable
    }
    fn decode_input(&self, input: &[u8]) -> Result<(JobInput, usize), KindError> {
        let (input, parts) = self.inner.decode_input(input)?;
        if let Some(f) = &self.on_decode {
            f(&input);
        }
        Ok((input, parts))
    }
    fn synthesize(
        &self,
        parts: &[(JobInput, usize)],
    ) -> Result<Vec<cuzk_core::synthesis::ProvingAssignment>, KindError> {
        self.synthesis_starts();
        self.inner.synthesize(parts)
    }
    fn synthesize_parts(
        &self,
        parts: &[(JobInput, usize)],
    ) -> Result<Vec<cuzk_core::prover::Synthesized>, KindError> {
        self.synthesis_starts();
        self.inner.synthesize_parts(parts)
    }
    fn host_bytes_per_partition(&self) -> u64 {
        self.inner.host_bytes_per_partition()
    }
    fn verifier_inputs(
        &self,
        input: &JobInput,
        partition: usize,
    ) -> Option<Vec<cuzk_core::Scalar>> {
        self.verifier_inputs.as_ref()?(input, partition)
    }
    fn generates_params(&self) -> bool {
        self.supplied.is_none()
    }
    fn generate_params(&self) -> Option<Result<cuzk_core::Parameters, KindError>> {
        match self.supplied {
            Some(_) => None,
            None => self.inner.generate_params(),
        }
    }
}

/// The parameter sets one stand-in GPU holds resident, by id, with their
/// bytes: the table behind a fake `DeviceBackend`'s `upload_params`,
/// `release_params` and `resident_params`.
#[derive(Default)]
pub struct FakeResident(std::sync::Mutex<std::collections::BTreeMap<String, u64>>);

impl FakeResident {
    /// What `params` take on a stand-in GPU (its H query, 96 bytes a point).
    pub fn bytes_of(params: &cuzk_core::params::Parameters) -> u64 {
        params.h.len() as u64 * 96
    }

    /// Hold `id`, of `bytes`.
    pub fn insert(&self, id: &str, bytes: u64) {
        self.0.lock().unwrap().insert(id.to_owned(), bytes);
    }

    /// Hold `params` under `id`; their bytes.
    pub fn upload(&self, id: &str, params: &cuzk_core::params::Parameters) -> u64 {
        let bytes = Self::bytes_of(params);
        self.insert(id, bytes);
        bytes
    }

    pub fn release(&self, id: &str) {
        self.0.lock().unwrap().remove(id);
    }

    pub fn holds(&self, id: &str) -> bool {
        self.0.lock().unwrap().contains_key(id)
    }

    /// The bytes held.
    pub fn held(&self) -> u64 {
        self.0.lock().unwrap().values().sum()
    }

    /// What it holds, as `DeviceBackend::resident_params` lists it.
    pub fn list(&self) -> Vec<cuzk_daemon::devices::ResidentParams> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(id, &bytes)| cuzk_daemon::devices::ResidentParams {
                id: id.clone(),
                bytes,
                in_use: 0,
                idle_ms: 0,
            })
            .collect()
    }
}
