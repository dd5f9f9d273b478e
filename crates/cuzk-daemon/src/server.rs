//! Building and running the daemon: listeners (unix socket, TCP with an
//! optional bearer token and TLS, HTTP for `/metrics` and `/status`), the
//! engine behind them, and an orderly shutdown.
//!
//! [`DaemonBuilder`] is the extension point: register more circuit kinds,
//! another [`DeviceBackend`], or more tonic services (for instance Curio's
//! `cuzk.v1.ProvingEngine`) that wrap the same [`Engine`].

use crate::budget::HostBudget;
use crate::config::{ConfigError, DaemonConfig};
use crate::devices::{CpuDevices, DeviceBackend};
use crate::engine::Engine;
use crate::kinds::{KindRegistry, PorepLikeKind};
use crate::params::{ParamManager, ParamsError, TierBudgets};
use crate::service::ProofServiceImpl;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tonic::service::RoutesBuilder;
use tonic::{Request, Status};

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Params(#[from] ParamsError),
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("binding {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("unix socket {}: another daemon is listening there", .0.display())]
    SocketInUse(PathBuf),
    #[error("unix socket {}: the path exists and is not a socket", .0.display())]
    NotASocket(PathBuf),
    #[error("TLS configuration: {0}")]
    Tls(#[source] tonic::transport::Error),
    #[error("cluster mode: {0}")]
    Cluster(#[from] cuzk_cluster::ClusterError),
}

/// Adds a service to the routes of every gRPC listener, from the engine
/// and, in cluster mode, this daemon's cluster membership (a service that
/// takes jobs must submit them to the shared queue through it, as
/// `ClusterProofService` does).
pub type ServiceHook = Arc<
    dyn Fn(&Engine, Option<&Arc<crate::cluster::ClusterNode>>, &mut RoutesBuilder) + Send + Sync,
>;

pub struct DaemonBuilder {
    config: DaemonConfig,
    registry: KindRegistry,
    devices: Arc<dyn DeviceBackend>,
    hooks: Vec<ServiceHook>,
}

/// The `authorization: Bearer <token>` check, in constant time (on SHA-256
/// digests, so the token's length does not leak either), and the networks
/// trusted without one (`server.allow_unauthenticated_from`).
#[derive(Clone)]
pub struct BearerAuth {
    digest: Option<[u8; 32]>,
    trusted: Arc<Vec<crate::config::IpNet>>,
}

impl BearerAuth {
    pub fn new(token: Option<&str>) -> Self {
        Self {
            digest: token.map(|t| Sha256::digest(t.as_bytes()).into()),
            trusted: Arc::new(Vec::new()),
        }
    }

    /// Also admit calls from these networks without a token.
    pub fn trusting(mut self, nets: &[crate::config::IpNet]) -> Self {
        self.trusted = Arc::new(nets.to_vec());
        self
    }

    /// Whether a call from `peer` with `header` is admitted: from a trusted
    /// network; else, with a token configured, only with it; else (no
    /// token) only from a trusted network when some are listed (loopback
    /// is not implied: list 127.0.0.0/8 for it), and from anywhere when
    /// none are (the listener is then loopback-only, or the unix socket).
    pub fn admits(&self, header: Option<&[u8]>, peer: Option<std::net::IpAddr>) -> bool {
        if peer.is_some_and(|ip| self.trusted.iter().any(|n| n.contains(ip))) {
            return true;
        }
        if self.digest.is_none() && !self.trusted.is_empty() {
            return false;
        }
        self.allows(header)
    }
    /// True when no token is required or `header` carries the right one.
    pub fn allows(&self, header: Option<&[u8]>) -> bool {
        let Some(want) = &self.digest else {
            return true;
        };
        let Some(h) = header else { return false };
        let Some(tok) = h.strip_prefix(b"Bearer ") else {
            return false;
        };
        let got: [u8; 32] = Sha256::digest(tok).into();
        bool::from(got.ct_eq(want))
    }
}

impl tonic::service::Interceptor for BearerAuth {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let h = req.metadata().get("authorization").map(|v| v.as_bytes());
        let peer = req.remote_addr().map(|a| a.ip());
        if self.admits(h, peer) {
            Ok(req)
        } else if self.digest.is_none() {
            Err(Status::unauthenticated(
                "the peer is not in server.allow_unauthenticated_from",
            ))
        } else {
            Err(Status::unauthenticated("missing or invalid bearer token"))
        }
    }
}

impl DaemonBuilder {
    /// A daemon with the CPU device backend and the porep-like kinds the
    /// configuration lists.
    pub fn new(config: DaemonConfig) -> Self {
        let mut registry = KindRegistry::new();
        for &l in &config.kinds.porep_like_log_sizes {
            let max = config.kinds.porep_like_max_partitions;
            let kind = match config.kinds.synthesis {
                crate::config::SynthesisSetting::Compiled => PorepLikeKind::new(l, max),
                crate::config::SynthesisSetting::Full => PorepLikeKind::with_full_synthesis(l, max),
            };
            registry.register(Arc::new(kind));
        }
        Self {
            config,
            registry,
            devices: Arc::new(CpuDevices),
            hooks: Vec::new(),
        }
    }
    /// The configuration the daemon will run with.
    pub fn config(&self) -> &DaemonConfig {
        &self.config
    }
    pub fn register_kind(mut self, kind: Arc<dyn crate::kinds::CircuitKind>) -> Self {
        self.registry.register(kind);
        self
    }
    pub fn device_backend(mut self, devices: Arc<dyn DeviceBackend>) -> Self {
        self.devices = devices;
        self
    }
    /// Serve another gRPC service on every listener, built from the engine.
    pub fn add_service(mut self, hook: ServiceHook) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Start the engine and the listeners; returns once they are bound.
    pub async fn start(self) -> Result<RunningDaemon, DaemonError> {
        let cfg = self.config;
        cfg.validate()?;
        let token = cfg.token()?;
        let p = &cfg.params;
        let regenerable: HashSet<String> = self
            .registry
            .names()
            .iter()
            .filter_map(|n| self.registry.get(n).ok())
            .filter(|k| k.generates_params())
            .map(|k| k.params_id().to_owned())
            .collect();
        let params = ParamManager::new(
            &p.dir,
            TierBudgets {
                vram: p.vram_budget.0,
                pinned: p.pinned_budget.0,
                mapped: p.mapped_budget.0,
                disk: p.disk_budget.0,
            },
            p.check_points,
            self.devices.clone(),
            regenerable,
        )?;
        // Cluster mode: the database reached and migrated before anything
        // starts, so that an unreachable one fails the start with its error.
        let cluster = match cfg.cluster.database_url {
            Some(_) => {
                Some(crate::cluster::ClusterConnection::open(&cfg.cluster, &cfg.server).await?)
            }
            None => None,
        };
        // GPUs that upload parameters from their mapped file leave the
        // pinned tier empty: the partitions' default budget need not set
        // its share aside.
        let pinned_share = if self.devices.gpu_present() && self.devices.keeps_parameters_resident()
        {
            0
        } else {
            cfg.params.pinned_budget.0
        };
        let host = match cfg.engine.host_memory_budget {
            Some(b) => HostBudget::new(b.0),
            None => match crate::budget::total_ram() {
                Some(total) => HostBudget::new(crate::config::default_host_budget(
                    total,
                    cfg.engine.host_memory_margin.0,
                    pinned_share,
                )),
                None => HostBudget::from_system(cfg.engine.host_memory_margin.0, 4 << 30),
            },
        };
        let engine = Engine::start(
            cfg.engine.clone(),
            cfg.server.max_queued_per_client,
            self.registry,
            params,
            self.devices,
            host,
        );
        if !cfg.params.preload.is_empty() {
            let e = engine.clone();
            let list = cfg.params.preload.clone();
            tokio::spawn(async move {
                match e.preload(&list).await {
                    Ok(l) => tracing::info!(count = l.len(), "preloaded parameters"),
                    Err(err) => tracing::error!(error = %err, "preloading parameters failed"),
                }
            });
        }

        let cluster = match cluster {
            Some(c) => Some(c.start(engine.clone())?),
            None => None,
        };

        let (stop_tx, stop_rx) = watch::channel(false);
        let max_msg = cfg.server.max_message_bytes.0.min(usize::MAX as u64) as usize;
        let routes = |engine: &Engine| {
            let mut rb = RoutesBuilder::default();
            match &cluster {
                Some(node) => rb.add_service(
                    crate::cluster::ClusterProofService::new(engine.clone(), node.clone())
                        .into_server(max_msg),
                ),
                None => rb.add_service(ProofServiceImpl::new(engine.clone()).into_server(max_msg)),
            };
            for h in &self.hooks {
                h(engine, cluster.as_ref(), &mut rb);
            }
            rb.routes()
        };
        let mut servers: Vec<JoinHandle<()>> = Vec::new();

        let mut unix_socket = None;
        if let Some(path) = &cfg.server.unix_socket {
            let listener = bind_unix(path, cfg.server.unix_socket_mode.0)?;
            // Wrapped so that C-core clients' percent-encoded socket path as
            // `:authority` is accepted (crate::authority says why and how).
            let incoming = tokio_stream::StreamExt::map(
                tokio_stream::wrappers::UnixListenerStream::new(listener),
                |conn| conn.map(crate::authority::AuthorityFix::new),
            );
            let svc = tonic::transport::Server::builder()
                .layer(crate::size_limit::SizeLimitNote)
                .layer(tonic::service::interceptor(BearerAuth::new(None)))
                .add_routes(routes(&engine));
            let stop = wait_stop(stop_rx.clone());
            servers.push(tokio::spawn(async move {
                if let Err(e) = svc.serve_with_incoming_shutdown(incoming, stop).await {
                    tracing::error!(error = %e, "unix socket server stopped");
                }
            }));
            unix_socket = Some(path.clone());
        }

        let mut tcp_addr = None;
        if let Some(addr) = cfg.server.tcp_listen {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| DaemonError::Bind { addr, source })?;
            tcp_addr = Some(
                listener
                    .local_addr()
                    .map_err(|source| DaemonError::Bind { addr, source })?,
            );
            let mut builder = tonic::transport::Server::builder();
            if let (Some(cert), Some(key)) = (&cfg.server.tls_cert, &cfg.server.tls_key) {
                let read = |p: &Path| {
                    std::fs::read(p).map_err(|source| DaemonError::Io {
                        what: "reading TLS file",
                        path: p.to_owned(),
                        source,
                    })
                };
                let identity = tonic::transport::Identity::from_pem(read(cert)?, read(key)?);
                builder = builder
                    .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
                    .map_err(DaemonError::Tls)?;
            }
            let trusted = &cfg.server.allow_unauthenticated_from;
            if !trusted.is_empty() {
                let nets: Vec<String> = trusted.iter().map(|n| n.to_string()).collect();
                tracing::warn!(
                    networks = %nets.join(", "),
                    "server.allow_unauthenticated_from: gRPC calls on TCP from these networks \
                     are accepted without a token; anyone who can reach {addr} from them can \
                     submit and cancel jobs"
                );
            }
            let svc = builder
                .layer(crate::size_limit::SizeLimitNote)
                .layer(tonic::service::interceptor(
                    BearerAuth::new(token.as_deref()).trusting(trusted),
                ))
                .add_routes(routes(&engine));
            let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
            let stop = wait_stop(stop_rx.clone());
            servers.push(tokio::spawn(async move {
                if let Err(e) = svc.serve_with_incoming_shutdown(incoming, stop).await {
                    tracing::error!(error = %e, "TCP server stopped");
                }
            }));
        }

        let mut http_addr = None;
        if let Some(addr) = cfg.server.http_listen {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| DaemonError::Bind { addr, source })?;
            http_addr = Some(
                listener
                    .local_addr()
                    .map_err(|source| DaemonError::Bind { addr, source })?,
            );
            // The status page's history: sampled for as long as the
            // listener serves it.
            let history = crate::history::History::new(
                engine.clone(),
                Duration::from_millis(cfg.server.status_sample_interval_ms),
            );
            servers.push(tokio::spawn(history.clone().run(stop_rx.clone())));
            let app = crate::http::router(
                engine.clone(),
                BearerAuth::new(token.as_deref()),
                cluster.clone(),
                history,
            );
            let stop = wait_stop(stop_rx.clone());
            servers.push(tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, app)
                    .with_graceful_shutdown(stop)
                    .await
                {
                    tracing::error!(error = %e, "HTTP server stopped");
                }
            }));
        }

        tracing::info!(
            unix = ?unix_socket, tcp = ?tcp_addr, http = ?http_addr,
            backend = engine.status().backend, "cuzk daemon serving"
        );
        Ok(RunningDaemon {
            engine,
            cluster,
            unix_socket,
            tcp_addr,
            http_addr,
            stop_tx,
            servers,
            shutdown_mode: cfg.engine.shutdown,
            shutdown_timeout: Duration::from_secs(cfg.engine.shutdown_timeout_s),
        })
    }
}

async fn wait_stop(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}

/// Bind a unix socket with `mode`, without a window in which it exists
/// with looser permissions: bind inside a fresh 0700 directory beside the
/// target, set the mode, then rename into place.
fn bind_unix(path: &Path, mode: u32) -> Result<tokio::net::UnixListener, DaemonError> {
    use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
    let io = |what, p: &Path| {
        let p = p.to_owned();
        move |source| DaemonError::Io {
            what,
            path: p,
            source,
        }
    };
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(DaemonError::NotASocket(path.to_owned()));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(DaemonError::SocketInUse(path.to_owned()));
        }
        std::fs::remove_file(path).map_err(io("removing stale socket", path))?;
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let tmpdir = parent.join(format!(
        ".cuzk-sock-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&tmpdir)
        .map_err(io("creating socket directory", &tmpdir))?;
    let tmp = tmpdir.join("s");
    let result = (|| {
        let listener = std::os::unix::net::UnixListener::bind(&tmp).map_err(io("binding", &tmp))?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))
            .map_err(io("chmod", &tmp))?;
        std::fs::rename(&tmp, path).map_err(io("renaming socket to", path))?;
        listener
            .set_nonblocking(true)
            .map_err(io("configuring", path))?;
        tokio::net::UnixListener::from_std(listener).map_err(io("registering", path))
    })();
    let _ = std::fs::remove_file(&tmp);
    let _ = std::fs::remove_dir(&tmpdir);
    result
}

/// A started daemon.
pub struct RunningDaemon {
    pub engine: Engine,
    /// This daemon's membership of the cluster, in cluster mode.
    pub cluster: Option<Arc<crate::cluster::ClusterNode>>,
    pub unix_socket: Option<PathBuf>,
    /// The bound addresses (useful with port 0).
    pub tcp_addr: Option<SocketAddr>,
    pub http_addr: Option<SocketAddr>,
    stop_tx: watch::Sender<bool>,
    servers: Vec<JoinHandle<()>>,
    shutdown_mode: crate::config::ShutdownMode,
    shutdown_timeout: Duration,
}

impl RunningDaemon {
    /// Stop accepting, finish or cancel the jobs as configured, stop the
    /// listeners and remove the socket file.
    pub async fn shutdown(self) {
        let (mode, timeout) = (self.shutdown_mode, self.shutdown_timeout);
        self.shutdown_with(mode, timeout).await
    }

    pub async fn shutdown_with(self, mode: crate::config::ShutdownMode, timeout: Duration) {
        tracing::info!(?mode, "shutting down");
        // New clients cannot find the socket; new submissions are refused
        // (UNAVAILABLE) from here on, while AwaitProof calls in flight get
        // their answers as the engine finishes or cancels the jobs.
        if let Some(p) = &self.unix_socket {
            let _ = std::fs::remove_file(p);
        }
        if let Some(c) = &self.cluster {
            c.stop_claiming();
        }
        self.engine.shutdown(mode, timeout).await;
        if let Some(c) = &self.cluster {
            c.finish(timeout).await;
        }
        let _ = self.stop_tx.send(true);
        for s in self.servers {
            // A graceful stop waits for clients to hang up; idle clients
            // that keep their connection open are cut after a short grace.
            let abort = s.abort_handle();
            if tokio::time::timeout(Duration::from_secs(2), s)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        tracing::info!("shut down");
    }

    /// Serve until SIGTERM or SIGINT, then shut down.
    pub async fn run_until_signal(self) -> Result<(), DaemonError> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).map_err(|source| DaemonError::Io {
            what: "installing the SIGTERM handler",
            path: PathBuf::new(),
            source,
        })?;
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        self.shutdown().await;
        Ok(())
    }
}

/// The daemon operators run (`cuzk daemon`): serve `cfg` until SIGTERM
/// (or SIGINT), with the socket's directory made where missing (private to
/// the daemon's user), the machine's GPUs opened
/// ([`crate::devices::open_devices`]), the verifying keys' service and
/// Curio's beside cuzk's, and every Filecoin kind registered beside the
/// configured ones ([`crate::filecoin::add_filecoin`]). Blocks on a runtime
/// of its own.
pub fn serve_until_signal(cfg: crate::config::DaemonConfig) -> anyhow::Result<()> {
    use anyhow::Context;
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
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let devices = crate::devices::open_devices(&cfg.engine)?;
            let builder = DaemonBuilder::new(cfg)
                .add_service(crate::keys::service_hook())
                .device_backend(devices);
            let d = crate::filecoin::add_filecoin(builder)?.start().await?;
            d.run_until_signal().await?;
            Ok(())
        })
}
