//! The logic behind the `cuzk` daemon subcommands (`daemon`, `submit`,
//! `await`, `prove`, `cancel`, `status`, `preload`, `evict`, `trace`,
//! `bench batch`), declared in [`crate::daemon_commands`]: arguments,
//! client calls, printing and logging. What is not the command line's lives
//! in cuzk-daemon: the status tables ([`cuzk_daemon::report`]), starting the
//! daemon ([`cuzk_daemon::server::serve_until_signal`]), opening the GPUs
//! ([`cuzk_daemon::devices::open_devices`]).

use anyhow::{bail, Context};
use cuzk_daemon::client::{connect, ConnectOptions, DaemonClient};
use cuzk_daemon::kinds::PorepLikeInput;
use cuzk_daemon::proto;
use cuzk_daemon::report::{cluster_json, cluster_text, round_ms, status_json, status_text};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Instant;

/// Where the daemon is and how to authenticate.
#[derive(clap::Args, Clone, Debug)]
pub struct ConnectArgs {
    /// unix:PATH, a socket path, http://HOST:PORT or https://HOST:PORT
    /// [default: the daemon's default socket, `$XDG_RUNTIME_DIR/cuzk/cuzk.sock`,
    /// as root `/run/cuzk/cuzk.sock`].
    #[arg(long, default_value_t = cuzk_daemon::config::DefaultPaths::current().daemon_target(), hide_default_value = true)]
    pub daemon: String,
    /// File holding the bearer token (for TCP listeners that require one).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// PEM CA certificate for https targets.
    #[arg(long)]
    pub tls_ca: Option<PathBuf>,
    /// Server name to check the certificate against.
    #[arg(long)]
    pub tls_domain: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

impl ConnectArgs {
    pub fn options(&self) -> anyhow::Result<ConnectOptions> {
        let token = match &self.token_file {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .with_context(|| format!("reading token file {}", p.display()))?
                    .trim_end()
                    .to_owned(),
            ),
            None => None,
        };
        Ok(ConnectOptions {
            target: self.daemon.clone(),
            token,
            tls_ca: self.tls_ca.clone(),
            tls_domain: self.tls_domain.clone(),
            max_message_bytes: Some(64 << 20),
        })
    }
    async fn client(&self) -> anyhow::Result<DaemonClient> {
        Ok(connect(&self.options()?).await?)
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default)]
pub enum PriorityArg {
    Low,
    #[default]
    Normal,
    High,
    Critical,
}

impl PriorityArg {
    fn proto(self) -> proto::Priority {
        match self {
            PriorityArg::Low => proto::Priority::Low,
            PriorityArg::Normal => proto::Priority::Normal,
            PriorityArg::High => proto::Priority::High,
            PriorityArg::Critical => proto::Priority::Critical,
        }
    }
}

/// What to prove.
#[derive(clap::Args, Clone, Debug)]
pub struct JobArgs {
    /// Circuit kind, e.g. porep-like-10 (`cuzk status` lists them).
    #[arg(long)]
    pub kind: String,
    /// The kind's input as hex; for porep-like kinds --seed/--partitions
    /// build it instead.
    #[arg(long, conflicts_with_all = ["seed", "partitions", "input"])]
    pub input_hex: Option<String>,
    /// The kind's input read from a file (`-`: standard input), e.g. a
    /// PoRep C1 output's JSON for porep-32g.
    #[arg(long, conflicts_with_all = ["seed", "partitions"])]
    pub input: Option<PathBuf>,
    /// porep-like kinds: the witness seed [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// porep-like kinds: circuits proved together [default: 1].
    #[arg(long)]
    pub partitions: Option<u32>,
    /// Queue priority; higher ones run first.
    #[arg(long, value_enum, default_value_t)]
    pub priority: PriorityArg,
    /// Makes the submission idempotent.
    #[arg(long)]
    pub request_id: Option<String>,
    /// Who is asking, for the daemon's per-client queue limit (default: the
    /// connection's peer).
    #[arg(long)]
    pub client_id: Option<String>,
}

impl JobArgs {
    fn input(&self) -> anyhow::Result<Vec<u8>> {
        if let Some(h) = &self.input_hex {
            return hex_decode(h);
        }
        if let Some(path) = &self.input {
            if path.as_os_str() == "-" {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
                    .context("reading the job's input from standard input")?;
                return Ok(bytes);
            }
            return std::fs::read(path)
                .with_context(|| format!("reading the job's input from {}", path.display()));
        }
        Ok(PorepLikeInput {
            seed: self.seed.unwrap_or(0),
            partitions: self.partitions.unwrap_or(1),
        }
        .encode())
    }
    fn request(&self) -> anyhow::Result<proto::SubmitProofRequest> {
        Ok(proto::SubmitProofRequest {
            request_id: self.request_id.clone().unwrap_or_default(),
            kind: self.kind.clone(),
            input: self.input()?,
            priority: self.priority.proto() as i32,
            client_id: self.client_id.clone().unwrap_or_default(),
        })
    }
}

#[derive(clap::Args, Clone, Debug)]
pub struct DaemonArgs {
    /// The configuration file (see cuzk.example.toml).
    #[arg(long)]
    pub config: PathBuf,
}

#[derive(clap::Args, Clone, Debug)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub conn: ConnectArgs,
    #[command(flatten)]
    pub job: JobArgs,
}

#[derive(clap::Args, Clone, Debug)]
pub struct AwaitArgs {
    #[command(flatten)]
    pub conn: ConnectArgs,
    pub job_id: u64,
    /// Give up waiting after this many milliseconds (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub timeout_ms: u64,
    /// Write the proof bytes here, and its public inputs beside it
    /// (`FILE.inputs`, for `cuzk verify --inputs`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(clap::Args, Clone, Debug)]
pub struct ProveArgs {
    #[command(flatten)]
    pub conn: ConnectArgs,
    #[command(flatten)]
    pub job: JobArgs,
    /// Write the proof bytes here, and its public inputs beside it
    /// (`FILE.inputs`, for `cuzk verify --inputs`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(clap::Args, Clone, Debug)]
pub struct VkArgs {
    #[command(flatten)]
    pub conn: ConnectArgs,
    /// The circuit kind whose verifying key to fetch.
    #[arg(long)]
    pub kind: String,
    /// Where to write the key (bellperson's `.vk` format).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
}

#[derive(clap::Args, Clone, Debug)]
pub struct CancelArgs {
    #[command(flatten)]
    pub conn: ConnectArgs,
    pub job_id: u64,
}

#[derive(clap::Args, Clone, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    pub conn: ConnectArgs,
    /// The cluster's view instead (cluster mode): every daemon with its
    /// heartbeat, jobs and partitions by state, the queue.
    #[arg(long)]
    pub cluster: bool,
}

#[derive(clap::Args, Clone, Debug)]
pub struct ParamsArgs {
    #[command(flatten)]
    pub conn: ConnectArgs,
    /// Circuit kinds whose parameters to load or drop.
    #[arg(required = true)]
    pub kinds: Vec<String>,
}

#[derive(clap::Args, Clone, Debug)]
pub struct BenchBatchOptions {
    #[command(flatten)]
    pub conn: ConnectArgs,
    /// Proofs to request.
    #[arg(long, default_value_t = 16)]
    pub count: usize,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Circuit kind of every request.
    #[arg(long, default_value = "porep-like-10")]
    pub kind: String,
    /// Circuits per request.
    #[arg(long, default_value_t = 1)]
    pub partitions: u32,
    /// Every request's input, read from this file (a Filecoin kind's, e.g.
    /// a C1 output for porep-32g); without it, porep-like inputs of
    /// --partitions circuits seeded by the request's index.
    #[arg(long, conflicts_with = "partitions")]
    pub input: Option<PathBuf>,
    /// Queue priority of every request.
    #[arg(long, value_enum, default_value_t)]
    pub priority: PriorityArg,
    /// Write the daemon's timeline of the run here (a Chrome trace: open it
    /// in Perfetto or chrome://tracing).
    #[arg(long)]
    pub trace: Option<PathBuf>,
}

#[derive(clap::Args, Clone, Debug)]
pub struct TraceArgs {
    #[command(flatten)]
    pub conn: ConnectArgs,
    /// The window, ending now, in seconds.
    #[arg(long, default_value_t = 60.0)]
    pub seconds: f64,
    /// Where to write the Chrome trace (JSON).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
}

fn hex_decode(s: &str) -> anyhow::Result<Vec<u8>> {
    let s = s.trim();
    if s.len() & 1 == 1 {
        bail!("hex input has an odd number of digits");
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).with_context(|| format!("bad hex at {i}")))
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn state_name(s: i32) -> &'static str {
    match proto::JobState::try_from(s) {
        Ok(proto::JobState::Queued) => "queued",
        Ok(proto::JobState::Running) => "running",
        Ok(proto::JobState::Completed) => "completed",
        Ok(proto::JobState::Failed) => "failed",
        Ok(proto::JobState::Cancelled) => "cancelled",
        _ => "unknown",
    }
}

pub fn outcome_json(r: &proto::AwaitProofResponse, include_proof: bool) -> Value {
    let t = r.timings.unwrap_or_default();
    let mut v = json!({
        "job_id": r.job_id,
        "kind": r.kind,
        "state": state_name(r.state),
        "proof_bytes": r.proof.len(),
        "batch_size": r.batch_size,
        // `prove`: the time in the prover backend, GPU or CPU (the
        // protocol's `gpu_ms`).
        "timings_ms": {
            "queue_wait": round_ms(t.queue_wait_ms), "param_load": round_ms(t.param_load_ms),
            "synthesis": round_ms(t.synthesis_ms), "prove": round_ms(t.gpu_ms),
            "total": round_ms(t.total_ms),
        },
    });
    if !r.error.is_empty() {
        v["error"] = json!(r.error);
    }
    if include_proof && !r.proof.is_empty() {
        v["proof_hex"] = json!(hex(&r.proof));
    }
    v
}

fn print(json_out: bool, v: &Value) {
    if json_out {
        println!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
    } else {
        print_text(v, "");
    }
}

fn print_text(v: &Value, prefix: &str) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                print_text(x, &p);
            }
        }
        Value::Array(a) if a.iter().all(|x| !x.is_object()) => {
            let items: Vec<String> = a
                .iter()
                .map(|x| x.to_string().trim_matches('"').to_owned())
                .collect();
            println!("{prefix}: {}", items.join(", "));
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                print_text(x, &format!("{prefix}[{i}]"));
            }
        }
        Value::String(s) => println!("{prefix}: {s}"),
        other => println!("{prefix}: {other}"),
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// The directory a file is to be written into exists (checked before
/// work whose result would have nowhere to go).
pub fn check_output_dir(path: &std::path::Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "{}: the directory {} does not exist",
            path.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Where `--out FILE`'s public inputs go: `FILE.inputs`.
pub fn inputs_path(proof: &std::path::Path) -> PathBuf {
    let mut name = proof.as_os_str().to_owned();
    name.push(".inputs");
    PathBuf::from(name)
}

/// Public inputs as `cuzk verify` reads them: one `0x` big-endian element
/// per line, a blank line between partitions. `le` is the protocol's
/// encoding: 32-byte little-endian scalars, partitions concatenated.
pub fn inputs_text(le: &[u8], partitions: usize) -> anyhow::Result<String> {
    if !le.len().is_multiple_of(32)
        || partitions == 0
        || !(le.len() / 32).is_multiple_of(partitions)
    {
        bail!(
            "{} bytes of public inputs do not split into {partitions} partition(s) of 32-byte scalars",
            le.len()
        );
    }
    let per = le.len() / 32 / partitions;
    let mut text = String::new();
    for (i, x) in le.chunks(32).enumerate() {
        if i > 0 && per > 0 && i % per == 0 {
            text.push('\n');
        }
        text.push_str("0x");
        for b in x.iter().rev() {
            text.push_str(&format!("{b:02x}"));
        }
        text.push('\n');
    }
    Ok(text)
}

/// Writes the proof to `out` and its public inputs to `out.inputs`;
/// returns the inputs file.
fn write_proof(
    out: &Option<PathBuf>,
    r: &proto::AwaitProofResponse,
) -> anyhow::Result<Option<PathBuf>> {
    let Some(p) = out else { return Ok(None) };
    if r.proof.is_empty() {
        bail!(
            "job {} has no proof ({}): {}",
            r.job_id,
            state_name(r.state),
            r.error
        );
    }
    let partitions = r.proof.len() / cuzk_core::proof::PROOF_BYTES;
    let text = inputs_text(&r.public_inputs, partitions)?;
    std::fs::write(p, &r.proof).with_context(|| format!("writing {}", p.display()))?;
    let inputs = inputs_path(p);
    std::fs::write(&inputs, text).with_context(|| format!("writing {}", inputs.display()))?;
    Ok(Some(inputs))
}

/// `outcome_json` plus where `--out` wrote.
fn outcome_with_files(
    r: &proto::AwaitProofResponse,
    out: &Option<PathBuf>,
    inputs: Option<PathBuf>,
) -> Value {
    let mut v = outcome_json(r, out.is_none());
    if let (Some(p), Some(i)) = (out, inputs) {
        v["proof_file"] = json!(p.display().to_string());
        v["inputs_file"] = json!(i.display().to_string());
    }
    v
}

/// `cuzk daemon --config cuzk.toml`: logging on stderr, then the daemon
/// ([`cuzk_daemon::server::serve_until_signal`]: the configured kinds, every
/// Filecoin kind and Curio's service) until SIGTERM.
pub fn run_daemon(args: DaemonArgs) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        // Logs on stderr (stdout is for output), colour codes only for a
        // terminal, not in a log file or journal.
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // filecoin-proofs logs every parameter identifier it
                // computes at info (dozens of lines as the Filecoin kinds
                // register); RUST_LOG brings them back.
                .unwrap_or_else(|_| {
                    tracing_subscriber::EnvFilter::new(
                        "info,storage_proofs_core=warn,filecoin_proofs=warn",
                    )
                }),
        )
        .try_init();
    let cfg = cuzk_daemon::config::DaemonConfig::from_file(&args.config)?;
    cuzk_daemon::server::serve_until_signal(cfg)
}

/// An error and its causes on one line. Most of our error types already
/// print their cause in their own message (and also expose it as their
/// `source`), so a cause whose text is already on the line is not repeated.
pub fn error_line(e: &anyhow::Error) -> String {
    let mut line = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// A daemon's answer, or its refusal on one readable line: the call, the
/// gRPC code and the daemon's message (tonic's own rendering of a status
/// adds its metadata and details).
fn answer<T>(r: Result<tonic::Response<T>, tonic::Status>, rpc: &str) -> anyhow::Result<T> {
    r.map(tonic::Response::into_inner)
        .map_err(|s| anyhow::anyhow!("{rpc} failed ({:?}): {}", s.code(), s.message()))
}

pub async fn submit(a: &SubmitArgs) -> anyhow::Result<Value> {
    let mut c = a.conn.client().await?;
    let r = answer(c.submit_proof(a.job.request()?).await, "SubmitProof")?;
    Ok(json!({"job_id": r.job_id, "deduplicated": r.deduplicated}))
}

pub async fn await_job(a: &AwaitArgs) -> anyhow::Result<Value> {
    let mut c = a.conn.client().await?;
    let r = answer(
        c.await_proof(proto::AwaitProofRequest {
            job_id: a.job_id,
            timeout_ms: a.timeout_ms,
        })
        .await,
        "AwaitProof",
    )?;
    let inputs = write_proof(&a.out, &r)?;
    Ok(outcome_with_files(&r, &a.out, inputs))
}

pub async fn prove(a: &ProveArgs) -> anyhow::Result<Value> {
    // Refused before the proof, not after it.
    if let Some(p) = &a.out {
        check_output_dir(p)?;
    }
    let request = a.job.request()?;
    let mut c = a.conn.client().await?;
    let r = answer(c.prove(request).await, "Prove")?;
    let inputs = write_proof(&a.out, &r)?;
    Ok(outcome_with_files(&r, &a.out, inputs))
}

/// A kind's verifying key from the daemon (KeyService).
pub async fn fetch_verifying_key(
    conn: &ConnectArgs,
    kind: &str,
) -> anyhow::Result<proto::GetVerifyingKeyResponse> {
    let mut c = cuzk_daemon::client::connect_keys(&conn.options()?).await?;
    answer(
        c.get_verifying_key(proto::GetVerifyingKeyRequest {
            kind: kind.to_owned(),
        })
        .await,
        "GetVerifyingKey",
    )
}

/// [`fetch_verifying_key`] on a runtime of its own, for callers without one.
pub fn fetch_verifying_key_blocking(
    conn: &ConnectArgs,
    kind: &str,
) -> anyhow::Result<proto::GetVerifyingKeyResponse> {
    runtime()?.block_on(fetch_verifying_key(conn, kind))
}

/// `cuzk vk --kind K -o FILE`: the daemon's verifying key of a kind.
pub async fn vk(a: &VkArgs) -> anyhow::Result<Value> {
    check_output_dir(&a.out)?;
    let r = fetch_verifying_key(&a.conn, &a.kind).await?;
    std::fs::write(&a.out, &r.vk).with_context(|| format!("writing {}", a.out.display()))?;
    Ok(json!({
        "kind": a.kind, "params_id": r.params_id, "public_inputs": r.public_inputs,
        "vk_file": a.out.display().to_string(), "vk_bytes": r.vk.len(),
    }))
}

pub async fn cancel(a: &CancelArgs) -> anyhow::Result<Value> {
    let mut c = a.conn.client().await?;
    let r = answer(
        c.cancel_proof(proto::CancelProofRequest { job_id: a.job_id })
            .await,
        "CancelProof",
    )?;
    Ok(json!({"job_id": a.job_id, "state": state_name(r.state), "cancelled": r.cancelled}))
}

pub async fn status(a: &StatusArgs) -> anyhow::Result<Value> {
    let mut c = a.conn.client().await?;
    if a.cluster {
        let s = answer(
            c.get_cluster_status(proto::GetClusterStatusRequest {})
                .await,
            "GetClusterStatus",
        )?;
        return Ok(cluster_json(&s));
    }
    let s = answer(c.get_status(proto::GetStatusRequest {}).await, "GetStatus")?;
    Ok(status_json(&s))
}

pub async fn preload(a: &ParamsArgs) -> anyhow::Result<Value> {
    let mut c = a.conn.client().await?;
    let r = answer(
        c.preload_params(proto::PreloadParamsRequest {
            kinds: a.kinds.clone(),
        })
        .await,
        "PreloadParams",
    )?;
    Ok(
        json!({"loaded": r.loaded.iter().map(|p| json!({"id": p.id, "tier": p.tier, "bytes": p.bytes})).collect::<Vec<_>>()}),
    )
}

pub async fn evict(a: &ParamsArgs) -> anyhow::Result<Value> {
    let mut c = a.conn.client().await?;
    let r = answer(
        c.evict_params(proto::EvictParamsRequest {
            kinds: a.kinds.clone(),
        })
        .await,
        "EvictParams",
    )?;
    Ok(json!({"evicted": r.evicted, "busy": r.busy}))
}

fn busy_json(t: &proto::GetTraceResponse) -> Value {
    json!({
        "window_s": t.window_s,
        "worker_busy_fraction": t.worker_busy_fraction,
        "workers": t.workers.iter().map(|w| json!({"worker": w.worker, "device": w.device, "busy_fraction": w.busy_fraction})).collect::<Vec<_>>(),
        "synthesis_slots": t.synthesis_slots,
        "synthesis_busy_fraction": t.synthesis_busy_fraction,
    })
}

async fn get_trace(c: &mut DaemonClient, seconds: f64) -> anyhow::Result<proto::GetTraceResponse> {
    answer(
        c.get_trace(proto::GetTraceRequest { seconds }).await,
        "GetTrace",
    )
}

fn write_trace(path: &std::path::Path, t: &proto::GetTraceResponse) -> anyhow::Result<()> {
    std::fs::write(path, &t.trace_json).with_context(|| format!("writing {}", path.display()))
}

/// `cuzk trace --seconds N -o FILE`: the daemon's timeline of the last N
/// seconds as a Chrome trace, and its busy fractions.
pub async fn trace(a: &TraceArgs) -> anyhow::Result<Value> {
    let mut c = a.conn.client().await?;
    let t = get_trace(&mut c, a.seconds).await?;
    write_trace(&a.out, &t)?;
    Ok(
        json!({"trace": a.out.display().to_string(), "bytes": t.trace_json.len(), "busy": busy_json(&t)}),
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `cuzk bench batch`: `count` Prove calls, `concurrency` at a time.
/// The result says whether the run passed (`ok`): every job completed and
/// every proof was verified by the daemon (`engine.verify_proofs`).
pub async fn bench_batch(a: &BenchBatchOptions) -> anyhow::Result<Value> {
    if a.count == 0 || a.concurrency == 0 {
        bail!("--count and --concurrency must be at least 1");
    }
    let client = a.conn.client().await?;
    let counters = |s: proto::GetStatusResponse| s.counters.unwrap_or_default();
    let before = counters(answer(
        client.clone().get_status(proto::GetStatusRequest {}).await,
        "GetStatus",
    )?);
    let fixed_input = match &a.input {
        Some(path) => Some(std::sync::Arc::new(std::fs::read(path).with_context(
            || format!("reading the requests' input from {}", path.display()),
        )?)),
        None => None,
    };
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..a.concurrency.min(a.count) {
        let mut c = client.clone();
        let next = next.clone();
        let a = a.clone();
        let fixed_input = fixed_input.clone();
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= a.count {
                    break;
                }
                let req = proto::SubmitProofRequest {
                    request_id: String::new(),
                    kind: a.kind.clone(),
                    input: match &fixed_input {
                        Some(bytes) => bytes.as_ref().clone(),
                        None => PorepLikeInput {
                            seed: i as u64,
                            partitions: a.partitions,
                        }
                        .encode(),
                    },
                    priority: a.priority.proto() as i32,
                    client_id: String::new(),
                };
                out.push(c.prove(req).await.map(|r| r.into_inner()));
            }
            out
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.extend(t.await?);
    }
    let wall = start.elapsed();
    let mut c = client.clone();
    let after = counters(answer(
        c.get_status(proto::GetStatusRequest {}).await,
        "GetStatus",
    )?);
    // The window reaches back to the run's start (not only its wall time:
    // the status call above came after it ended).
    let trace = get_trace(&mut c, start.elapsed().as_secs_f64().max(1e-3)).await?;
    if let Some(p) = &a.trace {
        write_trace(p, &trace)?;
    }
    let mut ok = Vec::new();
    let mut failures = 0usize;
    let mut first_error = None;
    for r in results {
        match r {
            Ok(r) if r.state == proto::JobState::Completed as i32 => {
                ok.push(r.timings.unwrap_or_default())
            }
            Ok(r) => {
                failures += 1;
                first_error.get_or_insert(format!(
                    "job {} {}: {}",
                    r.job_id,
                    state_name(r.state),
                    r.error
                ));
            }
            Err(s) => {
                failures += 1;
                first_error.get_or_insert(format!(
                    "Prove failed ({:?}): {}",
                    s.code(),
                    s.message()
                ));
            }
        }
    }
    let proofs = ok.len() as u64 * a.partitions as u64;
    // Counted by the daemon over the run (other clients' proofs included
    // if any share it).
    let verified = after.proofs_verified.saturating_sub(before.proofs_verified);
    let not_verified = after
        .verification_failures
        .saturating_sub(before.verification_failures);
    let secs = wall.as_secs_f64().max(1e-9);
    let med = |f: fn(&proto::Timings) -> f64| median(ok.iter().map(f).collect());
    let passed = failures == 0 && not_verified == 0 && verified >= proofs;
    Ok(json!({
        "ok": passed,
        "kind": a.kind,
        "count": a.count,
        "concurrency": a.concurrency,
        "partitions": a.partitions,
        "completed": ok.len(),
        "failed": failures,
        "first_error": first_error,
        "proofs": proofs,
        "proofs_verified": verified,
        "proofs_not_verified": not_verified,
        "wall_s": secs,
        "proofs_per_minute": proofs as f64 / secs * 60.0,
        "jobs_per_minute": ok.len() as f64 / secs * 60.0,
        "seconds_per_job": if ok.is_empty() { Value::Null } else { json!(secs / ok.len() as f64) },
        "gpu_busy_fraction": trace.worker_busy_fraction,
        "cpu_busy_fraction": trace.synthesis_busy_fraction,
        "busy": busy_json(&trace),
        "trace": a.trace.as_ref().map(|p| p.display().to_string()),
        "median_ms": {
            "queue_wait": round_ms(med(|t| t.queue_wait_ms)),
            "param_load": round_ms(med(|t| t.param_load_ms)),
            "synthesis": round_ms(med(|t| t.synthesis_ms)),
            "prove": round_ms(med(|t| t.gpu_ms)),
            "total": round_ms(med(|t| t.total_ms)),
        },
    }))
}

/// `cuzk bench batch` as a command: print the result, then fail (exit
/// non-zero) when a job failed or a proof was not verified.
pub fn run_bench_batch(a: &BenchBatchOptions) -> anyhow::Result<()> {
    let v = runtime()?.block_on(bench_batch(a))?;
    print(a.conn.json, &v);
    if v["ok"] != json!(true) {
        bail!(
            "bench batch: {} of {} jobs failed{}; {} of {} proofs verified by the daemon, {} did not verify{}",
            v["failed"],
            a.count,
            v["first_error"].as_str().map(|e| format!(" (first: {e})")).unwrap_or_default(),
            v["proofs_verified"],
            v["proofs"],
            v["proofs_not_verified"],
            if v["proofs_verified"].as_u64() < v["proofs"].as_u64() && v["proofs_not_verified"] == json!(0) {
                " (is engine.verify_proofs off?)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// `cuzk status`: a table on a terminal, the JSON object with `--json`.
pub fn run_status(a: &StatusArgs) -> anyhow::Result<()> {
    let v = runtime()?.block_on(status(a))?;
    if a.conn.json {
        print(true, &v);
    } else if a.cluster {
        print!("{}", cluster_text(&v));
    } else {
        print!("{}", status_text(&v));
    }
    Ok(())
}

/// Run one client operation on a fresh runtime and print its result.
pub fn run_client<F, Fut>(json_out: bool, f: F) -> anyhow::Result<()>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Value>>,
{
    let v = runtime()?.block_on(f())?;
    print(json_out, &v);
    Ok(())
}

#[cfg(test)]
mod error_line_tests {
    use super::error_line;
    use anyhow::Context;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let core = cuzk_core::Error::Io {
            path: "x.params".into(),
            source: io,
        };
        let e = anyhow::Error::new(core);
        assert_eq!(error_line(&e), "x.params: no such file");

        // A context adds its own text; a cause not yet shown is appended.
        let e: std::result::Result<(), std::io::Error> = Err(std::io::Error::other("disk full"));
        let e = e.context("writing proof.bin").unwrap_err();
        assert_eq!(error_line(&e), "writing proof.bin: disk full");
    }
}

#[cfg(test)]
mod output_tests {
    use super::*;

    #[test]
    fn public_inputs_as_verify_reads_them() {
        let mut le = vec![0u8; 32 * 4];
        le[0] = 1; // partition 0: 1, 2
        le[32] = 2;
        le[64] = 0xab; // partition 1: 0xab, 0x0100
        le[97] = 1;
        let text = inputs_text(&le, 2).unwrap();
        let z = "0".repeat(62);
        assert_eq!(
            text,
            format!("0x{z}01\n0x{z}02\n\n0x{z}ab\n0x{}0100\n", "0".repeat(60))
        );
        assert!(inputs_text(&le, 3).is_err());
        assert!(inputs_text(&le[..31], 1).is_err());
        assert_eq!(
            inputs_path(std::path::Path::new("/x/p.bin")),
            std::path::Path::new("/x/p.bin.inputs")
        );
    }
}

#[cfg(test)]
mod job_input_tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        job: JobArgs,
    }

    fn parse(args: &[&str]) -> Result<Wrap, clap::Error> {
        Wrap::try_parse_from(std::iter::once("cuzk").chain(args.iter().copied()))
    }

    #[test]
    fn a_jobs_input_comes_from_a_file_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c1.json");
        let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        std::fs::write(&path, &bytes).unwrap();
        let w = parse(&["--kind", "porep-32g", "--input", path.to_str().unwrap()]).unwrap();
        assert_eq!(w.job.input().unwrap(), bytes);

        // A missing file names itself; --input excludes the other inputs.
        let missing = dir.path().join("absent.json");
        let w = parse(&["--kind", "k", "--input", missing.to_str().unwrap()]).unwrap();
        let e = format!("{:#}", w.job.input().unwrap_err());
        assert!(e.contains("absent.json"), "{e}");
        assert!(parse(&["--kind", "k", "--input", "x", "--seed", "1"]).is_err());
        assert!(parse(&["--kind", "k", "--input", "x", "--input-hex", "00"]).is_err());
        // Without it, the porep-like input as before.
        let w = parse(&["--kind", "porep-like-10", "--seed", "7"]).unwrap();
        assert_eq!(
            w.job.input().unwrap(),
            PorepLikeInput {
                seed: 7,
                partitions: 1
            }
            .encode()
        );
    }
}
