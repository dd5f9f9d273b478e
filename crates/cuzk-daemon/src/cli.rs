//! The logic behind the `cuzk` daemon subcommands (`daemon`, `submit`,
//! `await`, `prove`, `cancel`, `status`, `preload`, `evict`, `trace`,
//! `bench batch`).
//! The CLI crate declares the subcommands and calls in here, so everything
//! is tested in this crate.

use crate::client::{connect, ConnectOptions, DaemonClient};
use crate::kinds::PorepLikeInput;
use crate::proto;
use anyhow::{bail, Context};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Instant;

/// Where the daemon is and how to authenticate.
#[derive(clap::Args, Clone, Debug)]
pub struct ConnectArgs {
    /// unix:PATH, a socket path, http://HOST:PORT or https://HOST:PORT
    /// [default: the daemon's default socket, `$XDG_RUNTIME_DIR/cuzk/cuzk.sock`,
    /// as root `/run/cuzk/cuzk.sock`].
    #[arg(long, default_value_t = crate::config::DefaultPaths::current().daemon_target(), hide_default_value = true)]
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

/// Milliseconds rounded to the microsecond (the clocks' noise below it,
/// and float sums' `51.110487000000006`, are not worth printing).
pub fn round_ms(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e3
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

/// `cuzk daemon --config cuzk.toml`: serve until SIGTERM.
pub fn run_daemon(args: DaemonArgs) -> anyhow::Result<()> {
    run_daemon_with(args, Ok)
}

/// Run the daemon with extra circuit kinds or services: `extend` receives
/// the builder (and the configuration) before the daemon starts. The `cuzk`
/// binary uses it to add the Filecoin kinds and Curio's service.
pub fn run_daemon_with(
    args: DaemonArgs,
    extend: impl FnOnce(crate::server::DaemonBuilder) -> anyhow::Result<crate::server::DaemonBuilder>,
) -> anyhow::Result<()> {
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
    let cfg = crate::config::DaemonConfig::from_file(&args.config)?;
    // The default socket's directory (`$XDG_RUNTIME_DIR/cuzk`, `/run/cuzk`)
    // may not exist yet; made private to the daemon's user.
    if let Some(dir) = cfg
        .server
        .unix_socket
        .as_deref()
        .and_then(std::path::Path::parent)
    {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("creating the socket directory {}", dir.display()))?;
        }
    }
    runtime()?.block_on(async move {
        let devices = open_devices(&cfg.engine)?;
        let builder = crate::server::DaemonBuilder::new(cfg)
            .add_service(crate::keys::service_hook())
            .device_backend(devices);
        let d = extend(builder)?.start().await?;
        d.run_until_signal().await?;
        Ok(())
    })
}

/// The machine's GPUs behind the accelerator seam, each with the engine's
/// `gpu_workers_per_device` slots and GPU budget settings
/// (`gpu_vram_margin`, `gpu_vram_limit`, `gpu_reuse_host_buffers`); the
/// CPU where there is none (no libcuda, no device) or the build has no
/// CUDA (the `cuda` feature).
pub fn open_devices(
    engine: &crate::config::EngineConfig,
) -> anyhow::Result<std::sync::Arc<dyn crate::devices::DeviceBackend>> {
    #[cfg(feature = "cuda")]
    {
        let template = cuzk_gpu::GpuConfig {
            workers_per_device: engine.gpu_workers_per_device.max(1),
            budget: cuzk_gpu::BudgetConfig {
                safety_margin: engine.gpu_vram_margin.0,
                vram_limit: engine.gpu_vram_limit.map(|b| b.0),
            },
            reuse_host_buffers: engine.gpu_reuse_host_buffers,
            ..cuzk_gpu::GpuConfig::default()
        };
        if let Some(gpus) =
            cuzk_gpu::GpuDevices::open_all(template).context("opening the GPUs for the daemon")?
        {
            return Ok(std::sync::Arc::new(gpus));
        }
    }
    let _ = engine;
    Ok(std::sync::Arc::new(crate::devices::CpuDevices))
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
    let mut c = crate::client::connect_keys(&conn.options()?).await?;
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

/// A protocol priority by the scheduler's names (`critical` ... `low`), the
/// ones HTTP /status, the metrics and `--priority` use.
pub fn priority_name(p: i32) -> &'static str {
    match proto::Priority::try_from(p) {
        Ok(proto::Priority::Low) => crate::Priority::Low.name(),
        Ok(proto::Priority::Normal) | Ok(proto::Priority::Unspecified) => {
            crate::Priority::Normal.name()
        }
        Ok(proto::Priority::High) => crate::Priority::High.name(),
        Ok(proto::Priority::Critical) => crate::Priority::Critical.name(),
        Err(_) => "unknown",
    }
}

pub fn status_json(s: &proto::GetStatusResponse) -> Value {
    let c = s.counters.unwrap_or_default();
    json!({
        "backend": s.backend,
        "gpu_backend_present": s.gpu_backend_present,
        "note": if s.gpu_backend_present { Value::Null } else { json!("no GPU backend is present: proving on the CPU, VRAM tier unused") },
        "devices": s.devices.iter().map(|d| json!({"index": d.index, "name": d.name, "vram_total_bytes": d.vram_total_bytes, "vram_free_bytes": d.vram_free_bytes, "healthy": d.healthy, "partitions_proved": d.partitions_proved, "failures": d.failures, "last_error": (!d.last_error.is_empty()).then_some(&d.last_error), "out_since_unix_ms": (d.out_since_unix_ms > 0).then_some(d.out_since_unix_ms), "probes": d.probes, "last_probe_unix_ms": (d.last_probe_unix_ms > 0).then_some(d.last_probe_unix_ms), "last_probe_error": (!d.last_probe_error.is_empty()).then_some(&d.last_probe_error), "returned": d.returned, "busy_s": d.busy_s, "busy_fraction": d.busy_fraction, "busy_fraction_window": d.busy_fraction_window})).collect::<Vec<_>>(),
        "params": s.params.iter().map(|p| json!({"id": p.id, "tier": p.tier, "bytes": p.bytes, "ref_count": p.ref_count, "devices": p.devices})).collect::<Vec<_>>(),
        "tiers": s.tiers.iter().map(|t| json!({"tier": t.tier, "used_bytes": t.used_bytes, "budget_bytes": t.budget_bytes})).collect::<Vec<_>>(),
        "queues": s.queues.iter().map(|q| json!({"priority": priority_name(q.priority), "queued": q.queued})).collect::<Vec<_>>(),
        "collecting": s.collecting,
        "running": s.running,
        "workers": s.workers,
        "host_reserved_bytes": s.host_reserved_bytes,
        "host_budget_bytes": s.host_budget_bytes,
        "host_resident_bytes": s.host_resident_bytes,
        "counters": {"submitted": c.submitted, "deduplicated": c.deduplicated, "completed": c.completed, "failed": c.failed, "cancelled": c.cancelled, "rejected": c.rejected, "batches": c.batches, "circuits_proved": c.circuits_proved, "proofs_verified": c.proofs_verified, "verification_failures": c.verification_failures},
        "kinds": s.kinds,
        "cluster": s.cluster.as_ref().map(cluster_json),
        "shutting_down": s.shutting_down,
        "pipeline": {"synthesizing": s.synthesizing, "synthesis_concurrency": s.synthesis_concurrency, "open_chunks": s.open_chunks, "ready_chunks": s.ready_chunks},
        "busy": {
            "window_s": s.busy_window_s,
            "workers": s.worker_busy.iter().map(|w| json!({"worker": w.worker, "device": w.device, "busy_fraction": w.busy_fraction})).collect::<Vec<_>>(),
            "synthesis_busy_fraction": s.synthesis_busy_fraction,
        },
    })
}

/// A byte count for people: `512 B`, `1.5 KiB` ... `2.0 TiB`; `u64::MAX`
/// (the protocol's "no budget") as `unlimited`.
pub fn human_bytes(n: u64) -> String {
    if n == u64::MAX {
        return "unlimited".into();
    }
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut x = n as f64 / 1024.0;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    format!("{x:.1} {}", UNITS[u])
}

/// `cuzk status` on a terminal: [`status_json`]'s facts as a few aligned
/// tables with units (`--json` prints the object itself).
pub fn status_text(v: &Value) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let b = |x: &Value| human_bytes(n(x));
    let pct = |x: &Value| format!("{:.0}%", x.as_f64().unwrap_or(0.0) * 100.0);
    let list = |x: &Value| {
        x.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let _ = write!(o, "backend   {}", v["backend"].as_str().unwrap_or("?"));
    if let Some(note) = v["note"].as_str() {
        let _ = write!(o, " ({note})");
    }
    o.push('\n');
    if v["shutting_down"] == json!(true) {
        o.push_str("state     shutting down\n");
    }
    let _ = writeln!(o, "kinds     {}", list(&v["kinds"]));
    if v["cluster"].is_object() {
        o.push_str(&cluster_line(&v["cluster"]));
    }
    let p = &v["pipeline"];
    let _ = writeln!(
        o,
        "jobs      {} running, {} in batch collectors; queued: {}",
        n(&v["running"]),
        n(&v["collecting"]),
        v["queues"]
            .as_array()
            .map(|q| q
                .iter()
                .map(|q| format!(
                    "{} {}",
                    q["priority"].as_str().unwrap_or("?"),
                    n(&q["queued"])
                ))
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "pipeline  {} workers; synthesis {} of {} slots busy; chunks {} synthesizing, {} ready",
        n(&v["workers"]),
        n(&p["synthesizing"]),
        n(&p["synthesis_concurrency"]),
        n(&p["open_chunks"]),
        n(&p["ready_chunks"])
    );
    let c = &v["counters"];
    let _ = writeln!(
        o,
        "jobs done {} completed, {} failed, {} cancelled, {} rejected ({} submitted, {} deduplicated)",
        n(&c["completed"]),
        n(&c["failed"]),
        n(&c["cancelled"]),
        n(&c["rejected"]),
        n(&c["submitted"]),
        n(&c["deduplicated"])
    );
    let _ = writeln!(
        o,
        "proofs    {} circuits proved in {} batches; {} verified, {} did not verify",
        n(&c["circuits_proved"]),
        n(&c["batches"]),
        n(&c["proofs_verified"]),
        n(&c["verification_failures"])
    );
    let _ = writeln!(
        o,
        "host      {} reserved for synthesis of {}{}",
        b(&v["host_reserved_bytes"]),
        b(&v["host_budget_bytes"]),
        match v["host_resident_bytes"].as_u64() {
            Some(r) if r > 0 => format!(
                " ({} held for compiled systems and shapes)",
                b(&v["host_resident_bytes"])
            ),
            _ => String::new(),
        }
    );
    let table = |o: &mut String, title: &str, head: &[&str], rows: Vec<Vec<String>>| {
        if rows.is_empty() {
            return;
        }
        let mut w: Vec<usize> = head.iter().map(|h| h.len()).collect();
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        // Text left, columns of numbers (with their units) right.
        let numeric = |c: &str| c.starts_with(|ch: char| ch.is_ascii_digit()) || c == "unlimited";
        let right: Vec<bool> = (0..head.len())
            .map(|i| i > 0 && rows.iter().all(|r| numeric(&r[i])))
            .collect();
        let line = |o: &mut String, cells: &[String]| {
            let mut s = String::from("  ");
            for (i, c) in cells.iter().enumerate() {
                if right[i] {
                    let _ = write!(s, "{c:>width$}  ", width = w[i]);
                } else {
                    let _ = write!(s, "{c:<width$}  ", width = w[i]);
                }
            }
            let _ = writeln!(o, "{}", s.trim_end());
        };
        let _ = writeln!(o, "{title}");
        line(o, &head.iter().map(|h| h.to_string()).collect::<Vec<_>>());
        for r in &rows {
            line(o, r);
        }
    };
    let empty = Vec::new();
    let arr = |x: &Value| x.as_array().cloned().unwrap_or_default();
    table(
        &mut o,
        "devices",
        &[
            "gpu",
            "name",
            "vram free",
            "vram total",
            "state",
            "proved",
            "failures",
            "busy (window)",
            "busy (all)",
        ],
        arr(&v["devices"])
            .iter()
            .map(|d| {
                vec![
                    n(&d["index"]).to_string(),
                    d["name"].as_str().unwrap_or("").to_owned(),
                    b(&d["vram_free_bytes"]),
                    b(&d["vram_total_bytes"]),
                    if d["healthy"].as_bool().unwrap_or(true) {
                        "ok".into()
                    } else {
                        "out of service".into()
                    },
                    n(&d["partitions_proved"]).to_string(),
                    n(&d["failures"]).to_string(),
                    pct(&d["busy_fraction_window"]),
                    pct(&d["busy_fraction"]),
                ]
            })
            .collect(),
    );
    // A GPU's last error in full below the table (too long for a column),
    // and for one out of service since when, and its probes.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let ago = |ms: u64| format!("{} s ago", now_ms.saturating_sub(ms) / 1000);
    for d in arr(&v["devices"]) {
        if let Some(e) = d["last_error"].as_str() {
            let _ = writeln!(o, "  gpu {} error: {e}", n(&d["index"]));
        }
        if let Some(out) = d["out_since_unix_ms"].as_u64() {
            let probe = match (
                d["last_probe_unix_ms"].as_u64(),
                d["last_probe_error"].as_str(),
            ) {
                (None, _) => "not probed yet".to_owned(),
                (Some(at), Some(e)) => format!("last {}: {e}", ago(at)),
                (Some(at), None) => format!("last {}: passed", ago(at)),
            };
            let _ = writeln!(
                o,
                "  gpu {} out of service since {}; {} probes, {probe}",
                n(&d["index"]),
                ago(out),
                n(&d["probes"])
            );
        }
    }
    table(
        &mut o,
        "memory tiers (parameters)",
        &["tier", "used", "budget"],
        arr(&v["tiers"])
            .iter()
            .map(|t| {
                vec![
                    t["tier"].as_str().unwrap_or("?").to_owned(),
                    b(&t["used_bytes"]),
                    b(&t["budget_bytes"]),
                ]
            })
            .collect(),
    );
    table(
        &mut o,
        "parameters",
        &["id", "tier", "size", "in use", "gpus"],
        arr(&v["params"])
            .iter()
            .map(|p| {
                vec![
                    p["id"].as_str().unwrap_or("?").to_owned(),
                    p["tier"].as_str().unwrap_or("?").to_owned(),
                    b(&p["bytes"]),
                    n(&p["ref_count"]).to_string(),
                    list(&json!(p["devices"]
                        .as_array()
                        .unwrap_or(&empty)
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>())),
                ]
            })
            .collect(),
    );
    let busy = &v["busy"];
    let mut rows: Vec<Vec<String>> = arr(&busy["workers"])
        .iter()
        .map(|w| {
            vec![
                format!("worker {}", n(&w["worker"])),
                match w["device"].as_u64() {
                    Some(d) => format!("gpu {d}"),
                    None => "cpu".into(),
                },
                pct(&w["busy_fraction"]),
            ]
        })
        .collect();
    rows.push(vec![
        "synthesis".into(),
        format!("{} slots", n(&p["synthesis_concurrency"])),
        pct(&busy["synthesis_busy_fraction"]),
    ]);
    table(
        &mut o,
        &format!(
            "busy (last {:.0} s)",
            busy["window_s"].as_f64().unwrap_or(0.0)
        ),
        &["who", "on", "busy"],
        rows,
    );
    o
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

const JOB_STATES: [&str; 5] = ["queued", "running", "completed", "failed", "cancelled"];
const PARTITION_STATES: [&str; 5] = ["pending", "leased", "done", "failed", "cancelled"];

/// `GetStatus`'s cluster part as `cuzk status --cluster --json` prints it
/// (and under "cluster" in `cuzk status --json`); every state is listed,
/// zero when the queue has none.
pub fn cluster_json(c: &proto::ClusterStatus) -> Value {
    let counts = |names: &[&str], got: &[proto::StateCount]| {
        let mut m = serde_json::Map::new();
        for n in names {
            let k = got.iter().find(|s| s.state == *n).map_or(0, |s| s.count);
            m.insert((*n).into(), json!(k));
        }
        // A state this build does not know still shows.
        for s in got.iter().filter(|s| !names.contains(&s.state.as_str())) {
            m.insert(s.state.clone(), json!(s.count));
        }
        Value::Object(m)
    };
    json!({
        "node_id": c.node_id,
        "database": c.database,
        "database_unreachable_since_unix_s": c.database_unreachable_since_unix_s,
        "database_error": (!c.database_error.is_empty()).then_some(&c.database_error),
        "claimed": c.claimed,
        "reports_waiting": c.reports_waiting,
        "partitions_proved": c.partitions_proved,
        "retain_finished_s": c.retain_finished_s,
        "view": c.view.as_ref().map(|v| json!({
            "nodes": v.nodes.iter().map(|n| json!({
                "node_id": n.node_id, "address": n.address, "last_seen_s": n.last_seen_s,
                "alive": n.alive, "heartbeat_interval_s": n.heartbeat_interval_s, "up_s": n.up_s,
                "kinds_supported": n.kinds_supported, "kinds_resident": n.kinds_resident,
                "free_vram_bytes": n.free_vram_bytes, "leases": n.leases,
                "partitions_proved": n.partitions_proved,
            })).collect::<Vec<_>>(),
            "jobs": counts(&JOB_STATES, &v.jobs),
            "partitions": counts(&PARTITION_STATES, &v.partitions),
            "oldest_pending_s": v.oldest_pending_s,
            "queues": v.queues.iter().map(|q| json!({
                "kind": q.kind, "priority": priority_name(q.priority),
                "pending": q.pending, "leased": q.leased,
            })).collect::<Vec<_>>(),
        })),
        "view_error": (!c.view_error.is_empty()).then_some(&c.view_error),
    })
}

/// Unix seconds as `2026-12-01 21:59:03 UTC` (proleptic Gregorian, from
/// days since the epoch; no time zone database needed).
pub fn utc_time(unix_s: f64) -> String {
    let secs = unix_s.max(0.0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A duration in seconds for people: `850 ms`, `12.3 s`, `4 min`, `2.5 h`.
pub fn human_secs(s: f64) -> String {
    match s {
        s if s < 1.0 => format!("{:.0} ms", s * 1e3),
        s if s < 120.0 => format!("{s:.1} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// The "cluster" line of `cuzk status` (and the head of `--cluster`): this
/// daemon's membership and whether the database answers it.
fn cluster_line(c: &Value) -> String {
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let mut o = format!(
        "cluster   node {} on {}: {} partitions claimed, {} proved here",
        c["node_id"].as_str().unwrap_or("?"),
        c["database"].as_str().unwrap_or("?"),
        n(&c["claimed"]),
        n(&c["partitions_proved"]),
    );
    if let Some(since) = c["database_unreachable_since_unix_s"].as_f64() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(since, |d| d.as_secs_f64());
        o.push_str(&format!(
            "\ncluster   database unreachable since {} ({} ago): {}; {} results held, claiming stopped",
            utc_time(since),
            human_secs((now - since).max(0.0)),
            c["database_error"].as_str().unwrap_or("no answer"),
            n(&c["reports_waiting"]),
        ));
    }
    o.push('\n');
    o
}

/// Aligned columns under a title (text left, numbers right).
fn text_table(title: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let mut w: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let numeric = |c: &str| c.starts_with(|ch: char| ch.is_ascii_digit()) || c == "-";
    let right: Vec<bool> = (0..head.len())
        .map(|i| i > 0 && !rows.is_empty() && rows.iter().all(|r| numeric(&r[i])))
        .collect();
    let _ = writeln!(o, "{title}");
    let heads: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    for r in std::iter::once(&heads).chain(rows) {
        let mut s = String::from("  ");
        for (i, c) in r.iter().enumerate() {
            if right[i] {
                let _ = write!(s, "{c:>width$}  ", width = w[i]);
            } else {
                let _ = write!(s, "{c:<width$}  ", width = w[i]);
            }
        }
        let _ = writeln!(o, "{}", s.trim_end());
    }
    o
}

/// `cuzk status --cluster` on a terminal: [`cluster_json`]'s facts.
pub fn cluster_text(c: &Value) -> String {
    use std::fmt::Write;
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let list = |x: &Value| {
        x.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let mut o = cluster_line(c);
    let v = &c["view"];
    if !v.is_object() {
        let _ = writeln!(
            o,
            "the cluster's view is not available: {}",
            c["view_error"].as_str().unwrap_or("no answer")
        );
        return o;
    }
    let states = |x: &Value, names: &[&str]| {
        names
            .iter()
            .map(|s| format!("{} {s}", n(&x[*s])))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let retain = c["retain_finished_s"].as_f64().unwrap_or(0.0);
    let _ = writeln!(
        o,
        "jobs      {} ({})",
        states(&v["jobs"], &JOB_STATES),
        if retain > 0.0 {
            format!("finished ones kept {}", human_secs(retain))
        } else {
            "finished ones kept forever".into()
        }
    );
    let _ = writeln!(
        o,
        "partitions {}; oldest pending {}",
        states(&v["partitions"], &PARTITION_STATES),
        v["oldest_pending_s"]
            .as_f64()
            .map_or("-".into(), |s| format!("{} ago", human_secs(s)))
    );
    let nodes: Vec<Vec<String>> = v["nodes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|x| {
            vec![
                x["node_id"].as_str().unwrap_or("?").to_owned(),
                x["address"].as_str().unwrap_or("").to_owned(),
                if x["alive"].as_bool().unwrap_or(false) {
                    "alive"
                } else {
                    "dead"
                }
                .into(),
                format!(
                    "{} ago",
                    human_secs(x["last_seen_s"].as_f64().unwrap_or(0.0))
                ),
                human_secs(x["up_s"].as_f64().unwrap_or(0.0)),
                n(&x["leases"]).to_string(),
                n(&x["partitions_proved"]).to_string(),
                human_bytes(n(&x["free_vram_bytes"])),
                list(&x["kinds_resident"]),
            ]
        })
        .collect();
    o.push_str(&text_table(
        "nodes",
        &[
            "node",
            "address",
            "state",
            "heartbeat",
            "up",
            "leases",
            "proved",
            "vram free",
            "resident",
        ],
        &nodes,
    ));
    let queues: Vec<Vec<String>> = v["queues"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|q| {
            vec![
                q["kind"].as_str().unwrap_or("?").to_owned(),
                q["priority"].as_str().unwrap_or("?").to_owned(),
                n(&q["pending"]).to_string(),
                n(&q["leased"]).to_string(),
            ]
        })
        .collect();
    if !queues.is_empty() {
        o.push_str(&text_table(
            "queue",
            &["kind", "priority", "pending", "leased"],
            &queues,
        ));
    }
    o
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
    fn bytes_for_people() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(8 << 30), "8.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "unlimited");
        assert_eq!(human_bytes(1 << 50), "1.0 PiB");
    }

    #[test]
    fn timings_are_rounded_to_the_microsecond() {
        assert_eq!(round_ms(51.110487000000006), 51.110);
        assert_eq!(round_ms(0.0004), 0.0);
        assert_eq!(round_ms(2.0005), 2.001);
    }

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

    #[test]
    fn status_reads_as_tables_with_units() {
        let s = proto::GetStatusResponse {
            backend: "cpu".into(),
            tiers: vec![
                proto::TierBudget {
                    tier: "vram".into(),
                    used_bytes: 0,
                    budget_bytes: u64::MAX,
                },
                proto::TierBudget {
                    tier: "pinned".into(),
                    used_bytes: 3 << 20,
                    budget_bytes: 8 << 30,
                },
            ],
            queues: vec![proto::QueueDepth {
                priority: proto::Priority::Critical as i32,
                queued: 2,
            }],
            kinds: vec!["porep-like-6".into(), "porep-like-10".into()],
            workers: 1,
            host_budget_bytes: 4 << 30,
            worker_busy: vec![proto::WorkerBusy {
                worker: 0,
                device: None,
                busy_fraction: 0.25,
            }],
            ..Default::default()
        };
        let v = status_json(&s);
        // One set of priority names.
        assert_eq!(v["queues"][0]["priority"], "critical");
        let t = status_text(&v);
        assert!(t.contains("backend   cpu"), "{t}");
        assert!(t.contains("kinds     porep-like-6, porep-like-10"), "{t}");
        assert!(t.contains("queued: critical 2"), "{t}");
        assert!(t.contains("of 4.0 GiB"), "{t}");
        let vram = t
            .lines()
            .find(|l| l.trim_start().starts_with("vram"))
            .unwrap();
        assert!(vram.ends_with("unlimited"), "{vram}");
        assert!(!t.contains("18446744073709551615"), "{t}");
        let pinned = t
            .lines()
            .find(|l| l.trim_start().starts_with("pinned"))
            .unwrap();
        assert!(
            pinned.contains("3.0 MiB") && pinned.ends_with("8.0 GiB"),
            "{pinned}"
        );
        let worker = t.lines().find(|l| l.contains("worker 0")).unwrap();
        assert!(
            worker.contains("cpu") && worker.ends_with("25%"),
            "{worker}"
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
