//! The daemon's configuration file (`cuzk.toml`), its defaults and its
//! validation. Every field has a default, so an empty file is a valid
//! configuration: a unix socket only, CPU workers, parameters generated
//! or read in the conventional directory ([`DefaultPaths`]: the socket
//! under `$XDG_RUNTIME_DIR/cuzk/`, parameters under
//! `$XDG_DATA_HOME/cuzk/params`, or `/run/cuzk/` and `/var/lib/cuzk/` as
//! root). See `cuzk.example.toml` beside Cargo.toml.

use serde::{Deserialize, Deserializer};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    #[error("configuration: {0}")]
    Invalid(String),
    /// A file that parsed but whose settings are not acceptable.
    #[error("{}: {what}", path.display())]
    InvalidFile { path: PathBuf, what: String },
}

/// A byte count written as an integer or a string such as "512MiB", "4GiB".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub fn parse(s: &str) -> Option<u64> {
        let s = s.trim();
        let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let n: u64 = num.parse().ok()?;
        let mul: u64 = match unit.trim() {
            "" | "B" => 1,
            "KiB" | "K" => 1 << 10,
            "MiB" | "M" => 1 << 20,
            "GiB" | "G" => 1 << 30,
            "TiB" | "T" => 1 << 40,
            _ => return None,
        };
        n.checked_mul(mul)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(ByteSize(n)),
            Raw::S(s) => ByteSize::parse(&s)
                .map(ByteSize)
                .ok_or_else(|| serde::de::Error::custom(format!("not a byte size: {s:?}"))),
        }
    }
}

/// An octal file mode written as a string ("0600") or an integer (384).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileMode(pub u32);

impl<'de> Deserialize<'de> for FileMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u32),
            S(String),
        }
        let mode = match Raw::deserialize(d)? {
            Raw::N(n) => n,
            Raw::S(s) => u32::from_str_radix(s.trim_start_matches("0o"), 8)
                .map_err(|_| serde::de::Error::custom(format!("not an octal mode: {s:?}")))?,
        };
        if mode > 0o777 {
            return Err(serde::de::Error::custom(format!(
                "mode {mode:o} exceeds 0777"
            )));
        }
        Ok(FileMode(mode))
    }
}

/// A network in CIDR notation: "10.0.0.0/8", "fd00::/8", or one address
/// ("192.168.1.7", a /32 or /128).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    pub fn parse(s: &str) -> Option<Self> {
        let (a, p) = match s.trim().split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s.trim(), None),
        };
        let addr: IpAddr = a.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            Some(p) => p.parse::<u8>().ok().filter(|&p| p <= max)?,
            None => max,
        };
        Some(IpNet { addr, prefix })
    }

    /// Whether `ip` is in the network (an IPv4 address seen as IPv6 on a
    /// dual-stack listener, ::ffff:a.b.c.d, counts as a.b.c.d).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let bits = |a: IpAddr| -> (u128, u32) {
            match a.to_canonical() {
                IpAddr::V4(v) => (u128::from(u32::from(v)) << 96, 32),
                IpAddr::V6(v) => (u128::from(v), 128),
            }
        };
        let (net, family) = bits(self.addr);
        let (got, got_family) = bits(ip);
        if family != got_family {
            return false;
        }
        // Both in the top bits of a u128 (IPv4 shifted up), so a prefix
        // is the top `prefix` bits for either family.
        let p = u32::from(self.prefix);
        let m = if p == 0 { 0 } else { !(u128::MAX >> p) };
        net & m == got & m
    }
}

impl std::fmt::Display for IpNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl<'de> Deserialize<'de> for IpNet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        IpNet::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("not a network (CIDR): {s:?}")))
    }
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct DaemonConfig {
    pub server: ServerConfig,
    pub engine: EngineConfig,
    pub params: ParamsConfig,
    pub kinds: KindsConfig,
    pub cluster: ClusterSettings,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// gRPC on a unix socket (no token; guarded by the file mode).
    pub unix_socket: Option<PathBuf>,
    pub unix_socket_mode: FileMode,
    /// gRPC on TCP. Without `token`, only a loopback address is accepted.
    pub tcp_listen: Option<SocketAddr>,
    /// Bearer token required on TCP (gRPC and HTTP) when set.
    pub token: Option<String>,
    /// Networks whose gRPC calls on TCP are accepted without a token (an
    /// explicit opt-in for trusted networks, for clients such as Curio's
    /// that send none; warned about at start). With it, `tcp_listen` may
    /// be a non-loopback address without a token: peers outside these
    /// networks (loopback too, unless listed) are then refused. Not
    /// applied to HTTP, which keeps the token rule.
    pub allow_unauthenticated_from: Vec<IpNet>,
    /// Read the token from this file instead (trailing whitespace trimmed).
    pub token_file: Option<PathBuf>,
    /// PEM certificate chain and key: TLS (rustls) on the TCP listener.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// HTTP `/metrics` (Prometheus), `/status` (JSON) and the status page
    /// `/` with its history `/status/history`.
    pub http_listen: Option<SocketAddr>,
    /// How often the status page's history samples the engine (the
    /// history keeps the last hour: 3600 s over this many samples).
    pub status_sample_interval_ms: u64,
    /// Largest gRPC message accepted (decoded) or sent. 256 MiB, as
    /// Curio's client sends: a 32 GiB PoRep C1 output in Curio's wrapper is
    /// about 67 MB.
    pub max_message_bytes: ByteSize,
    /// Unfinished jobs one client may have at once.
    pub max_queued_per_client: usize,
}

/// A system service's socket (root's default, and contrib/cuzk-gpu.toml's).
pub const SYSTEM_SOCKET: &str = "/run/cuzk/cuzk.sock";

/// The conventional places of the daemon's files when the configuration
/// names none: the one owner of these defaults, asked by the daemon (where
/// to bind, where parameters live) and by its clients (where to connect),
/// so both agree without a configuration file.
///
/// An XDG variable that is set (to an absolute path, as the XDG spec
/// requires) is followed, also as root; otherwise root gets the system
/// directories (`/run/cuzk`, `/var/lib/cuzk`, for a system service) and a
/// user the XDG defaults (`~/.local/share`; the socket in
/// `/tmp/cuzk-<uid>/`, where no runtime directory exists).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefaultPaths {
    /// Whether the process runs as root (effective uid 0).
    pub root: bool,
    /// The effective uid, where known.
    pub uid: Option<u32>,
    pub xdg_runtime_dir: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    pub home: Option<PathBuf>,
}

impl DefaultPaths {
    /// From this process's environment.
    pub fn current() -> Self {
        use std::os::unix::fs::MetadataExt;
        // /proc/self belongs to the process's effective uid.
        let uid = std::fs::metadata("/proc/self").ok().map(|m| m.uid());
        let abs = |v: &str| {
            std::env::var_os(v)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        Self {
            root: uid == Some(0),
            uid,
            xdg_runtime_dir: abs("XDG_RUNTIME_DIR"),
            xdg_data_home: abs("XDG_DATA_HOME"),
            home: abs("HOME"),
        }
    }

    /// The daemon's unix socket.
    pub fn socket(&self) -> PathBuf {
        let dir = match (&self.xdg_runtime_dir, self.root) {
            (Some(d), _) => d.join("cuzk"),
            (None, true) => return PathBuf::from(SYSTEM_SOCKET),
            (None, false) => match self.uid {
                Some(uid) => std::env::temp_dir().join(format!("cuzk-{uid}")),
                None => std::env::temp_dir().join("cuzk"),
            },
        };
        dir.join("cuzk.sock")
    }

    /// The client's default target: the daemon's default socket, unless
    /// only a system service's socket (`/run/cuzk/cuzk.sock`, where
    /// contrib/systemd/cuzk.service puts it) exists.
    pub fn daemon_target(&self) -> String {
        let own = self.socket();
        let system = Path::new(SYSTEM_SOCKET);
        let chosen = if !own.exists() && system.exists() {
            system
        } else {
            own.as_path()
        };
        format!("unix:{}", chosen.display())
    }

    /// The parameter directory (`params.dir`).
    pub fn params_dir(&self) -> PathBuf {
        match (&self.xdg_data_home, self.root, &self.home) {
            (Some(d), _, _) => d.join("cuzk").join("params"),
            (None, true, _) => PathBuf::from("/var/lib/cuzk/params"),
            (None, false, Some(h)) => h.join(".local/share/cuzk/params"),
            // No home: beside the socket's fallback, not the working
            // directory.
            (None, false, None) => std::env::temp_dir().join("cuzk-params"),
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            unix_socket: Some(DefaultPaths::current().socket()),
            unix_socket_mode: FileMode(0o600),
            tcp_listen: None,
            token: None,
            allow_unauthenticated_from: Vec::new(),
            token_file: None,
            tls_cert: None,
            tls_key: None,
            http_listen: None,
            status_sample_interval_ms: 5000,
            max_message_bytes: ByteSize(256 << 20),
            max_queued_per_client: 1024,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ShutdownMode {
    /// Finish queued and running jobs (up to `shutdown_timeout_s`).
    #[default]
    Finish,
    /// Cancel queued and running jobs.
    Cancel,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Proving workers when no GPU backend is present (each uses every core
    /// through rayon, so 1 is right on most hosts).
    pub cpu_workers: usize,
    /// Proving workers per GPU: one worker's transfers and host work overlap
    /// another's kernels; the device's VRAM budget keeps them together
    /// within its memory.
    pub gpu_workers_per_device: usize,
    /// Memory each GPU's budget leaves free below what the driver reports
    /// free (kernels' local memory, other processes' small allocations).
    pub gpu_vram_margin: ByteSize,
    /// Cap on the device memory the prover uses on each GPU, whatever is
    /// free (sharing a card); proofs that do not fit stream in parts.
    pub gpu_vram_limit: Option<ByteSize>,
    /// The GPUs to prove on, by CUDA ordinal (after CUDA_VISIBLE_DEVICES),
    /// e.g. `[0, 1]`: the daemon's devices 0, 1, .. are these, in this
    /// order. Absent: every GPU the driver reports; empty: none (the CPU
    /// proves). An ordinal the driver does not report fails the start.
    pub gpu_devices: Option<Vec<usize>>,
    /// Keep each GPU worker's host preparation vectors (about 8 GB per
    /// worker for a 2^27 partition) for the next partition to refill;
    /// false frees them after every partition.
    pub gpu_reuse_host_buffers: bool,
    /// Times a partition is proved again, on another GPU, after its GPU
    /// was lost proving it (the backend says which errors mean that); the
    /// GPU is then taken out of service. A partition that fails more often fails
    /// its job. 0: a GPU's failure fails the jobs at once.
    pub partition_retries: u32,
    /// Seconds between probes of a GPU taken out of service
    /// (`DeviceBackend::probe`); one that passes returns to service. 0:
    /// never probe (out until the daemon restarts).
    pub device_probe_interval_s: u64,
    /// Partitions synthesized at once (each synthesis runs on one core):
    /// the width of the pipeline's CPU side, independent of
    /// `max_batch_size`. Default: the host's cores.
    pub synthesis_concurrency: usize,
    /// Chunks that may wait synthesized for a worker beyond those the
    /// synthesis slots are working on. The pipeline holds at most
    /// workers + `synthesis_concurrency` + `synthesis_lookahead` chunks
    /// (each with its host memory reserved) at once.
    pub synthesis_lookahead: usize,
    /// Verify every proof against the parameters' verifying key before its
    /// job completes; a proof that does not verify fails its job.
    pub verify_proofs: bool,
    /// Timeline events (one per partition phase) kept for `cuzk trace`,
    /// `/trace` and the busy fractions in `/status`; the oldest go first.
    pub trace_events: usize,
    /// Most circuits proved in one backend call (a batch of same-kind jobs,
    /// or a run of one job's partitions). Default 1: both backends prove a
    /// call's circuits one after another, so a larger chunk only makes its
    /// first partitions wait for its slowest and a worker wait for a whole
    /// chunk (on the H200, porep-like-20: 993 proofs/min with GPU busy 0.96
    /// at 1, 812 with 0.75 at 4; BENCHMARKS.md).
    pub max_batch_size: usize,
    /// How long the batch collector holds a partial batch.
    pub max_batch_wait_ms: u64,
    /// Host budget for synthesis = total RAM minus this margin...
    pub host_memory_margin: ByteSize,
    /// ...unless given outright here.
    pub host_memory_budget: Option<ByteSize>,
    /// How long finished jobs' results (and their request ids) are kept.
    pub result_retention_s: u64,
    pub max_retained_results: usize,
    pub shutdown: ShutdownMode,
    pub shutdown_timeout_s: u64,
    /// Seed for the proofs' randomness; None: from the OS. Only tests fix it.
    pub rng_seed: Option<u64>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            cpu_workers: 1,
            gpu_workers_per_device: 2,
            gpu_vram_margin: ByteSize(512 << 20),
            gpu_vram_limit: None,
            gpu_devices: None,
            gpu_reuse_host_buffers: true,
            partition_retries: 2,
            device_probe_interval_s: 60,
            synthesis_concurrency: default_synthesis_concurrency(),
            synthesis_lookahead: 1,
            verify_proofs: true,
            trace_events: 200_000,
            max_batch_size: 1,
            max_batch_wait_ms: 50,
            host_memory_margin: ByteSize(2 << 30),
            host_memory_budget: None,
            result_retention_s: 3600,
            max_retained_results: 100_000,
            shutdown: ShutdownMode::Finish,
            shutdown_timeout_s: 300,
            rng_seed: None,
        }
    }
}

/// One synthesis per core.
pub fn default_synthesis_concurrency() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

impl EngineConfig {
    pub fn max_batch_wait(&self) -> Duration {
        Duration::from_millis(self.max_batch_wait_ms)
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ParamsConfig {
    /// The only directory parameter files are read from or written to.
    pub dir: PathBuf,
    /// Per-device budget for parameters resident in VRAM.
    pub vram_budget: ByteSize,
    /// Decoded parameters in host RAM (pinned when a GPU backend is present).
    /// Default: half the host's RAM, at least 8 GiB (a 32 GiB PoRep's
    /// parameters decode to 47 GB; a set larger than this budget fails its
    /// jobs, naming both sizes).
    pub pinned_budget: ByteSize,
    /// Memory-mapped parameter files (address space and page cache).
    pub mapped_budget: ByteSize,
    /// Parameter files the daemon generated (random porep-like parameters);
    /// files it did not write are never deleted.
    pub disk_budget: ByteSize,
    /// Check that every point read from a file is on the curve and in the
    /// subgroup (slower to load; protects against a corrupt file). Once per
    /// file: a record beside it (`<file>.checked`, see
    /// `crate::params::check_record`) lets later loads of the unchanged
    /// file skip the subgroup checks.
    pub check_points: bool,
    /// Kinds whose parameters are loaded at start-up.
    pub preload: Vec<String>,
}

impl Default for ParamsConfig {
    fn default() -> Self {
        Self {
            dir: DefaultPaths::current().params_dir(),
            vram_budget: ByteSize(u64::MAX),
            pinned_budget: ByteSize(default_pinned_budget(crate::budget::total_ram())),
            mapped_budget: ByteSize(256 << 30),
            disk_budget: ByteSize(64 << 30),
            check_points: true,
            preload: Vec::new(),
        }
    }
}

/// The default pinned budget on a host with `total` bytes of RAM: half of
/// it, at least 8 GiB (8 GiB when RAM cannot be read).
pub fn default_pinned_budget(total: Option<u64>) -> u64 {
    total.map_or(0, |t| t / 2).max(8 << 30)
}

/// The host budget for synthesized partitions when none is set: RAM less
/// the margin and less what the pinned tier may hold (at most half the
/// RAM), since decoded parameters and synthesized partitions share it.
pub fn default_host_budget(total: u64, margin: u64, pinned_budget: u64) -> u64 {
    total
        .saturating_sub(margin)
        .saturating_sub(pinned_budget.min(total / 2))
        .max(1)
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KindsConfig {
    /// Sizes (log2 constraints) of the porep-like kinds to register, each as
    /// "porep-like-<log>".
    pub porep_like_log_sizes: Vec<u32>,
    /// Most partitions one porep-like job may ask for.
    pub porep_like_max_partitions: u32,
    /// How every kind synthesizes its partitions.
    pub synthesis: SynthesisSetting,
}

/// `compiled`: each kind's constraints compiled once (on its first
/// partition), then witness-only synthesis and sparse products; `full`:
/// every constraint built and evaluated for every partition. Proofs are
/// the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SynthesisSetting {
    #[default]
    Compiled,
    Full,
}

impl Default for KindsConfig {
    fn default() -> Self {
        Self {
            porep_like_log_sizes: vec![6, 8, 10, 12, 14, 16, 18, 20],
            porep_like_max_partitions: 16,
            synthesis: SynthesisSetting::Compiled,
        }
    }
}

/// `[cluster]`: several daemons sharing one durable job queue in a
/// PostgreSQL-protocol database (crate `cuzk-cluster`; `src/cluster.rs`).
/// Without `database_url` the daemon keeps its own in-memory queue.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterSettings {
    /// `postgres://user:password@host:port/dbname`; every daemon of the
    /// cluster names the same database.
    pub database_url: Option<String>,
    /// This daemon's name in leases and heartbeats, unique in the cluster.
    /// Default: the host name.
    pub node_id: Option<String>,
    /// How long a claimed partition stays this daemon's without renewal
    /// (renewed every third of it): a dead daemon's partitions are re-run
    /// elsewhere this long after it stopped.
    pub lease_ttl_s: u64,
    /// Failures (errors or expired leases) of one partition before its
    /// job fails with the reasons.
    pub max_failures: u32,
    /// Partitions this daemon holds claimed at once. Default: its proving
    /// workers plus its synthesis slots.
    pub max_claimed: Option<usize>,
    /// How often an idle daemon asks the queue for work.
    pub poll_interval_ms: u64,
    /// How often the daemon reports itself (kinds, resident parameters,
    /// free VRAM, claimed partitions) in `cuzk_nodes`.
    pub heartbeat_interval_s: u64,
    /// A partition waiting longer than this is claimed by any daemon, not
    /// first by those holding its parameters resident.
    pub placement_max_wait_s: u64,
    /// A partition younger than this is left to the daemons holding its
    /// parameters resident when another alive daemon does and this one
    /// does not (0: no grace).
    pub placement_grace_s: u64,
    /// How long a database operation keeps reconnecting before it reports
    /// the database unavailable.
    pub reconnect_for_s: u64,
    /// Finished jobs (completed, failed, cancelled) are deleted with their
    /// partitions and proofs this long after they finished, and nodes
    /// silent this long are forgotten; 0 keeps them forever. Every daemon
    /// sweeps every quarter of it (at most every 10 minutes); concurrent
    /// sweeps split the rows, never delete twice.
    pub retain_finished_s: u64,
    /// This daemon's address as `cuzk status --cluster` shows it. Default:
    /// the host name and `server.tcp_listen`'s port, else the Unix socket.
    pub advertise_address: Option<String>,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        Self {
            database_url: None,
            node_id: None,
            lease_ttl_s: 30,
            max_failures: 3,
            max_claimed: None,
            poll_interval_ms: 500,
            heartbeat_interval_s: 10,
            placement_max_wait_s: 60,
            placement_grace_s: 10,
            reconnect_for_s: 30,
            retain_finished_s: 24 * 3600,
            advertise_address: None,
        }
    }
}

impl ClusterSettings {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(m.to_owned()));
        if self.database_url.as_deref().is_some_and(str::is_empty) {
            return bad("cluster.database_url is empty");
        }
        if self
            .node_id
            .as_deref()
            .is_some_and(|n| n.is_empty() || n.len() > 128)
        {
            return bad("cluster.node_id must be 1 to 128 bytes");
        }
        if self.lease_ttl_s == 0 {
            return bad("cluster.lease_ttl_s must be at least 1");
        }
        if !(1..=1000).contains(&self.max_failures) {
            return bad("cluster.max_failures must be between 1 and 1000");
        }
        if self.max_claimed == Some(0) {
            return bad("cluster.max_claimed must be at least 1");
        }
        if self.poll_interval_ms == 0 || self.heartbeat_interval_s == 0 {
            return bad("cluster.poll_interval_ms and heartbeat_interval_s must be non-zero");
        }
        Ok(())
    }
}

impl DaemonConfig {
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let cfg: DaemonConfig = toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source,
        })?;
        cfg.validate().map_err(|e| match e {
            ConfigError::Invalid(what) => ConfigError::InvalidFile {
                path: path.to_owned(),
                what,
            },
            e => e,
        })?;
        Ok(cfg)
    }

    /// The bearer token, from `token` or `token_file`.
    pub fn token(&self) -> Result<Option<String>, ConfigError> {
        match (&self.server.token, &self.server.token_file) {
            (Some(_), Some(_)) => Err(ConfigError::Invalid(
                "set server.token or server.token_file, not both".into(),
            )),
            (Some(t), None) => Ok(Some(t.clone())),
            (None, Some(p)) => {
                let t = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.clone(),
                    source,
                })?;
                Ok(Some(t.trim_end().to_owned()))
            }
            (None, None) => Ok(None),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(m.to_owned()));
        let s = &self.server;
        if s.unix_socket.is_none() && s.tcp_listen.is_none() {
            return bad("no listener: set server.unix_socket and/or server.tcp_listen");
        }
        let token = self.token()?;
        if let Some(t) = &token {
            if t.len() < 16 {
                return bad("server.token must be at least 16 characters");
            }
        }
        let trusted = !s.allow_unauthenticated_from.is_empty();
        for (name, addr, opt_in) in [
            ("tcp_listen", s.tcp_listen, trusted),
            ("http_listen", s.http_listen, false),
        ] {
            if let Some(a) = addr {
                if token.is_none() && !opt_in && !a.ip().is_loopback() {
                    return Err(ConfigError::Invalid(format!(
                        "server.{name} = {a} is not a loopback address; a token (or, for \
                         tcp_listen, server.allow_unauthenticated_from) is required to listen there"
                    )));
                }
            }
        }
        if s.tls_cert.is_some() != s.tls_key.is_some() {
            return bad("TLS needs both server.tls_cert and server.tls_key");
        }
        if s.max_message_bytes.0 < 1024 {
            return bad("server.max_message_bytes must be at least 1024");
        }
        if !(crate::history::MIN_INTERVAL_MS..=crate::history::MAX_INTERVAL_MS)
            .contains(&s.status_sample_interval_ms)
        {
            return Err(ConfigError::Invalid(format!(
                "server.status_sample_interval_ms must be between {} and {}",
                crate::history::MIN_INTERVAL_MS,
                crate::history::MAX_INTERVAL_MS
            )));
        }
        if s.max_queued_per_client == 0 {
            return bad("server.max_queued_per_client must be at least 1");
        }
        self.cluster.validate()?;
        let e = &self.engine;
        if e.cpu_workers == 0 {
            return bad("engine.cpu_workers must be at least 1");
        }
        if !(1..=16).contains(&e.gpu_workers_per_device) {
            return bad("engine.gpu_workers_per_device must be between 1 and 16");
        }
        if e.partition_retries > 16 {
            return bad("engine.partition_retries must be at most 16");
        }
        if let Some(d) = e.gpu_devices.as_deref().and_then(cuzk_gpu::first_repeated) {
            return Err(ConfigError::Invalid(format!(
                "engine.gpu_devices lists GPU {d} twice"
            )));
        }
        if e.max_batch_size == 0 {
            return bad("engine.max_batch_size must be at least 1");
        }
        if !(1..=4096).contains(&e.synthesis_concurrency) {
            return bad("engine.synthesis_concurrency must be between 1 and 4096");
        }
        if self.kinds.porep_like_max_partitions == 0 {
            return bad("kinds.porep_like_max_partitions must be at least 1");
        }
        for &l in &self.kinds.porep_like_log_sizes {
            if !(1..=cuzk_core::domain::MAX_LOG_DOMAIN - 1).contains(&l) {
                return Err(ConfigError::Invalid(format!(
                    "kinds.porep_like_log_sizes: {l} is out of range"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pinned_tier_and_the_host_budget_share_the_ram() {
        const G: u64 = 1 << 30;
        // Half the RAM, at least 8 GiB (and 8 GiB when RAM is unknown).
        assert_eq!(default_pinned_budget(Some(125 * G)), 125 * G / 2);
        assert_eq!(default_pinned_budget(Some(12 * G)), 8 * G);
        assert_eq!(default_pinned_budget(None), 8 * G);
        // A 125 GiB host: 62.5 GiB for decoded parameters (a 32 GiB
        // PoRep's 47 GB fit), the rest less the margin for synthesis.
        let pinned = default_pinned_budget(Some(125 * G));
        assert_eq!(
            default_host_budget(125 * G, 2 * G, pinned),
            125 * G - 2 * G - pinned
        );
        // A pinned budget above half the RAM takes at most half from it.
        assert_eq!(default_host_budget(100 * G, 2 * G, u64::MAX), 48 * G);
        // Never zero.
        assert_eq!(default_host_budget(G, 2 * G, G), 1);
        // The configured default is the one computed from this host's RAM.
        assert_eq!(
            ParamsConfig::default().pinned_budget.0,
            default_pinned_budget(crate::budget::total_ram())
        );
    }

    use super::*;

    #[test]
    fn default_paths_follow_xdg_then_root_then_home() {
        let user = DefaultPaths {
            root: false,
            uid: Some(1000),
            xdg_runtime_dir: Some("/run/user/1000".into()),
            xdg_data_home: None,
            home: Some("/home/op".into()),
        };
        assert_eq!(user.socket(), Path::new("/run/user/1000/cuzk/cuzk.sock"));
        if !Path::new(SYSTEM_SOCKET).exists() {
            // (Else a client would take the system service's socket.)
            assert_eq!(user.daemon_target(), "unix:/run/user/1000/cuzk/cuzk.sock");
        }
        assert_eq!(
            user.params_dir(),
            Path::new("/home/op/.local/share/cuzk/params")
        );
        let no_runtime = DefaultPaths {
            xdg_runtime_dir: None,
            xdg_data_home: Some("/data".into()),
            ..user.clone()
        };
        assert_eq!(
            no_runtime.socket(),
            std::env::temp_dir().join("cuzk-1000/cuzk.sock")
        );
        assert_eq!(no_runtime.params_dir(), Path::new("/data/cuzk/params"));
        let root = DefaultPaths {
            root: true,
            uid: Some(0),
            home: Some("/root".into()),
            ..Default::default()
        };
        assert_eq!(root.socket(), Path::new("/run/cuzk/cuzk.sock"));
        assert_eq!(root.params_dir(), Path::new("/var/lib/cuzk/params"));
        // Set XDG variables win, also as root (a root login session).
        let root_session = DefaultPaths {
            xdg_runtime_dir: Some("/run/user/0".into()),
            ..root
        };
        assert_eq!(
            root_session.socket(),
            Path::new("/run/user/0/cuzk/cuzk.sock")
        );
        // Never relative to the working directory.
        let bare = DefaultPaths::default();
        assert!(bare.socket().is_absolute() && bare.params_dir().is_absolute());
    }

    #[test]
    fn empty_file_is_valid_defaults() {
        let cfg: DaemonConfig = toml::from_str("").unwrap();
        cfg.validate().unwrap();
        assert_eq!(cfg.server.unix_socket_mode, FileMode(0o600));
        // Curio's client sends PoRep C1 outputs of up to 256 MiB.
        assert_eq!(cfg.server.max_message_bytes, ByteSize(256 << 20));
    }

    #[test]
    fn a_file_with_a_bad_setting_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[engine]\ncpu_workers = 0\n").unwrap();
        let e = DaemonConfig::from_file(&path).unwrap_err();
        assert!(matches!(e, ConfigError::InvalidFile { .. }), "{e:?}");
        let shown = e.to_string();
        assert!(shown.starts_with(&path.display().to_string()), "{shown}");
        assert!(shown.contains("engine.cpu_workers"), "{shown}");
    }

    #[test]
    fn gpu_workers_per_device() {
        let cfg: DaemonConfig = toml::from_str("").unwrap();
        assert_eq!(cfg.engine.gpu_workers_per_device, 2);
        for (v, ok) in [(0, false), (1, true), (4, true), (17, false)] {
            let cfg: DaemonConfig =
                toml::from_str(&format!("[engine]\ngpu_workers_per_device = {v}\n")).unwrap();
            let r = cfg.validate();
            assert_eq!(r.is_ok(), ok, "{v}: {r:?}");
            if let Err(e) = r {
                assert!(e.to_string().contains("gpu_workers_per_device"), "{e}");
            }
        }
    }

    #[test]
    fn the_example_configuration_parses_and_validates() {
        let cfg: DaemonConfig = toml::from_str(include_str!("../cuzk.example.toml")).unwrap();
        cfg.validate().unwrap();
        assert_eq!(cfg.engine.gpu_vram_margin, ByteSize(512 << 20));
    }

    /// The fields a table of the configuration accepts, as serde's refusal
    /// of an unknown one lists them ("expected one of `a`, `b`"): the
    /// configuration type itself answers, so a field added to any section
    /// (or a section added) is seen here without this test changing.
    fn accepted_keys(toml_text: &str) -> Vec<String> {
        let e = toml::from_str::<DaemonConfig>(toml_text)
            .expect_err("an unknown key must be refused")
            .to_string();
        let list = e
            .split_once("expected one of ")
            .or_else(|| e.split_once("expected "))
            .map(|(_, l)| l)
            .unwrap_or_else(|| panic!("no key list in {e:?}"));
        list.split(", ")
            .map(|k| k.trim().trim_matches(|c| c == '`' || c == '\n').to_owned())
            .filter(|k| !k.is_empty())
            .collect()
    }

    /// The GPU box's configuration shipped with the systemd unit.
    #[test]
    fn the_shipped_gpu_configuration_parses_and_validates() {
        let cfg: DaemonConfig =
            toml::from_str(include_str!("../../../contrib/cuzk-gpu.toml")).unwrap();
        cfg.validate().unwrap();
        assert_eq!(
            cfg.server.unix_socket.as_deref(),
            Some(Path::new(SYSTEM_SOCKET))
        );
        assert_eq!(cfg.params.dir, Path::new("/var/lib/cuzk/params"));
    }

    /// Every key of every section of the configuration type is in the
    /// example (set, or commented out as `# key = value`) under its
    /// section, and the example names no key the type lacks.
    #[test]
    fn the_example_lists_every_key() {
        let example = include_str!("../cuzk.example.toml");
        let sections = accepted_keys("[zz_no_such_section]\n");
        assert!(sections.contains(&"server".to_string()), "{sections:?}");
        let mut listed: std::collections::BTreeSet<(String, String)> = Default::default();
        let mut section = String::new();
        for line in example.lines() {
            let line = line.trim();
            if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = s.to_owned();
                continue;
            }
            let text = line.strip_prefix('#').unwrap_or(line).trim();
            if let Some((key, _)) = text.split_once(" = ") {
                if key.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    listed.insert((section.clone(), key.to_owned()));
                }
            }
        }
        let mut missing = Vec::new();
        let mut fields = std::collections::BTreeSet::new();
        for s in &sections {
            for k in accepted_keys(&format!("[{s}]\nzz_no_such_key = 1\n")) {
                if !listed.contains(&(s.clone(), k.clone())) {
                    missing.push(format!("{s}.{k}"));
                }
                fields.insert((s.clone(), k));
            }
        }
        assert!(missing.is_empty(), "cuzk.example.toml lacks {missing:?}");
        let unknown: Vec<_> = listed.difference(&fields).collect();
        assert!(
            unknown.is_empty(),
            "cuzk.example.toml names unknown keys {unknown:?}"
        );
    }

    #[test]
    fn pipeline_settings() {
        let cfg: DaemonConfig = toml::from_str("").unwrap();
        assert_eq!(
            cfg.engine.synthesis_concurrency,
            default_synthesis_concurrency()
        );
        assert!(cfg.engine.synthesis_concurrency >= 1);
        assert!(cfg.engine.verify_proofs);
        let cfg: DaemonConfig = toml::from_str(
            "[engine]\nsynthesis_concurrency = 12\nverify_proofs = false\ntrace_events = 10\n",
        )
        .unwrap();
        cfg.validate().unwrap();
        assert_eq!(cfg.engine.synthesis_concurrency, 12);
        assert!(!cfg.engine.verify_proofs);
        let cfg: DaemonConfig = toml::from_str("[engine]\nsynthesis_concurrency = 0\n").unwrap();
        let e = cfg.validate().unwrap_err();
        assert!(e.to_string().contains("synthesis_concurrency"), "{e}");
    }

    #[test]
    fn gpu_budget_settings() {
        let cfg: DaemonConfig = toml::from_str("").unwrap();
        assert_eq!(cfg.engine.gpu_vram_margin, ByteSize(512 << 20));
        assert_eq!(cfg.engine.gpu_vram_limit, None);
        assert!(cfg.engine.gpu_reuse_host_buffers);
        let cfg: DaemonConfig = toml::from_str(
            "[engine]\ngpu_vram_margin = \"1GiB\"\ngpu_vram_limit = \"16GiB\"\n\
             gpu_reuse_host_buffers = false\n",
        )
        .unwrap();
        cfg.validate().unwrap();
        assert_eq!(cfg.engine.gpu_vram_margin, ByteSize(1 << 30));
        assert_eq!(cfg.engine.gpu_vram_limit, Some(ByteSize(16 << 30)));
        assert!(!cfg.engine.gpu_reuse_host_buffers);
        assert!(toml::from_str::<DaemonConfig>("[engine]\ngpu_vram_limit = \"lots\"\n").is_err());
    }

    #[test]
    fn gpu_devices_select_by_ordinal_once_each() {
        let parse = |t: &str| toml::from_str::<DaemonConfig>(t).unwrap();
        assert_eq!(parse("").engine.gpu_devices, None);
        let cfg = parse("[engine]\ngpu_devices = [2, 0]\n");
        cfg.validate().unwrap();
        assert_eq!(cfg.engine.gpu_devices, Some(vec![2, 0]));
        let cfg = parse("[engine]\ngpu_devices = []\n");
        cfg.validate().unwrap();
        assert_eq!(cfg.engine.gpu_devices, Some(vec![]));
        let e = parse("[engine]\ngpu_devices = [1, 0, 1]\n")
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("lists GPU 1 twice"), "{e}");
        assert!(toml::from_str::<DaemonConfig>("[engine]\ngpu_devices = [-1]\n").is_err());
    }

    #[test]
    fn byte_sizes_and_modes() {
        assert_eq!(ByteSize::parse("4GiB"), Some(4 << 30));
        assert_eq!(ByteSize::parse("512MiB"), Some(512 << 20));
        assert_eq!(ByteSize::parse("17"), Some(17));
        assert_eq!(ByteSize::parse("3 XB"), None);
        assert_eq!(ByteSize::parse("99999999999999999999"), None);
        let cfg: DaemonConfig =
            toml::from_str("[server]\nunix_socket_mode = \"0640\"\nmax_message_bytes = \"1MiB\"\n")
                .unwrap();
        assert_eq!(cfg.server.unix_socket_mode, FileMode(0o640));
        assert_eq!(cfg.server.max_message_bytes, ByteSize(1 << 20));
        assert!(toml::from_str::<DaemonConfig>("[server]\nunix_socket_mode = \"1777\"\n").is_err());
        assert!(toml::from_str::<DaemonConfig>("[server]\nbogus = 1\n").is_err());
    }

    #[test]
    fn networks() {
        let n = IpNet::parse("10.0.0.0/8").unwrap();
        assert!(n.contains("10.1.2.3".parse().unwrap()));
        assert!(n.contains("::ffff:10.1.2.3".parse().unwrap()));
        assert!(!n.contains("11.0.0.1".parse().unwrap()));
        assert!(!n.contains("::a01:203".parse().unwrap()));
        let one = IpNet::parse("127.0.0.2").unwrap();
        assert!(one.contains("127.0.0.2".parse().unwrap()));
        assert!(!one.contains("127.0.0.1".parse().unwrap()));
        let v6 = IpNet::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("fe80::1".parse().unwrap()));
        assert!(IpNet::parse("0.0.0.0/0")
            .unwrap()
            .contains("8.8.8.8".parse().unwrap()));
        for bad in ["10.0.0.0/33", "fd00::/129", "10.0.0/8", "x", "10.0.0.0/"] {
            assert!(IpNet::parse(bad).is_none(), "{bad}");
        }
        let cfg: DaemonConfig = toml::from_str(
            "[server]\ntcp_listen = \"0.0.0.0:9000\"\nallow_unauthenticated_from = [\"10.0.0.0/8\"]\n",
        )
        .unwrap();
        cfg.validate().unwrap();
        assert!(toml::from_str::<DaemonConfig>(
            "[server]\nallow_unauthenticated_from = [\"10.0.0.0/40\"]\n"
        )
        .is_err());
        // The HTTP listener keeps the token rule.
        let cfg: DaemonConfig = toml::from_str(
            "[server]\nhttp_listen = \"0.0.0.0:9001\"\nallow_unauthenticated_from = [\"10.0.0.0/8\"]\n",
        )
        .unwrap();
        assert!(cfg.validate().is_err());
    }

    #[test]
    fn tcp_without_token_must_be_loopback() {
        let cfg: DaemonConfig =
            toml::from_str("[server]\ntcp_listen = \"0.0.0.0:9000\"\n").unwrap();
        assert!(cfg.validate().is_err());
        let cfg: DaemonConfig =
            toml::from_str("[server]\ntcp_listen = \"127.0.0.1:9000\"\n").unwrap();
        cfg.validate().unwrap();
        let cfg: DaemonConfig = toml::from_str(
            "[server]\ntcp_listen = \"0.0.0.0:9000\"\ntoken = \"0123456789abcdef0123\"\n",
        )
        .unwrap();
        cfg.validate().unwrap();
        let cfg: DaemonConfig =
            toml::from_str("[server]\ntcp_listen = \"0.0.0.0:9000\"\ntoken = \"short\"\n").unwrap();
        assert!(cfg.validate().is_err());
    }

    #[test]
    fn the_status_sample_interval_is_bounded() {
        let with = |ms: u64| {
            toml::from_str::<DaemonConfig>(&format!("[server]\nstatus_sample_interval_ms = {ms}\n"))
                .unwrap()
                .validate()
        };
        assert_eq!(
            toml::from_str::<DaemonConfig>("")
                .unwrap()
                .server
                .status_sample_interval_ms,
            5000
        );
        with(250).unwrap();
        with(60_000).unwrap();
        for ms in [0, 249, 60_001] {
            let e = with(ms).unwrap_err().to_string();
            assert!(e.contains("status_sample_interval_ms"), "{ms}: {e}");
        }
    }
}
