//! [`ClusterClient`]: one node's connection to the cluster database, which
//! reconnects by itself. Every operation runs through [`db_op!`]: a lost
//! connection (server restarted, network cut, no answer within
//! `op_timeout`) is dropped and the operation run again on a fresh one,
//! with backoff, until `reconnect_for` has passed; then the caller gets
//! [`ClusterError::Unavailable`] and decides (the daemon keeps proving what
//! it holds and asks again later). Conflicts between concurrent
//! transactions are retried the same way.
//!
//! Running an operation again after a lost connection is safe because every
//! operation is idempotent for its caller: a submit carries a request id, a
//! result or failure names its lease's claim number, and a commit whose
//! answer was lost is recognised on the second run (see `queue.rs`). The one
//! exception is a claim whose commit succeeded but whose answer was lost:
//! those leases are never worked and expire (`DESIGN.md`).

use crate::error::{ClusterError, Unavailable};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{Mutex, MutexGuard};
use tokio::task::JoinHandle;

/// Settings of one node's cluster client. The daemon's `[cluster]` section
/// maps onto this (`cuzk-daemon/src/cluster.rs`).
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// `postgres://user:password@host:port/dbname` or the key=value form.
    pub database_url: String,
    /// This node's name in leases and heartbeats; unique in the cluster.
    pub node_id: String,
    /// How long a claim stays ours without renewal. Must exceed the renewal
    /// interval by several network round trips; see DESIGN.md for the
    /// trade-off against detecting a dead node.
    pub lease_ttl: Duration,
    /// Failures (errors or expired leases) of one partition before its job
    /// fails. Stored with each job at submit.
    pub max_failures: u32,
    /// After waiting this long, a partition is no longer passed over by
    /// nodes that do not hold its kind resident (no starvation by
    /// placement).
    pub placement_max_wait: Duration,
    /// A partition younger than this is passed over by a node that does
    /// not hold its kind resident while another alive node (by heartbeat)
    /// does: that node gets the first chance, so parameters are not loaded
    /// on one more machine for a short wait. Zero: no grace.
    pub placement_grace: Duration,
    pub connect_timeout: Duration,
    /// An operation without an answer for this long is treated as a lost
    /// connection (a half-open TCP connection would otherwise hang it).
    pub op_timeout: Duration,
    /// How long an operation keeps reconnecting and retrying before it
    /// reports the database unavailable.
    pub reconnect_for: Duration,
}

impl ClusterConfig {
    pub fn new(database_url: impl Into<String>, node_id: impl Into<String>) -> Self {
        Self {
            database_url: database_url.into(),
            node_id: node_id.into(),
            // A partition of a 32 GiB PoRep takes seconds to minutes; a
            // renewal every ttl/3 = 10 s costs one small UPDATE per node.
            lease_ttl: Duration::from_secs(30),
            max_failures: 3,
            placement_max_wait: Duration::from_secs(60),
            // Loading a 32 GiB PoRep's parameters takes minutes; a few
            // seconds' wait for a node that holds them costs less.
            placement_grace: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            op_timeout: Duration::from_secs(30),
            reconnect_for: Duration::from_secs(30),
        }
    }

    fn validate(&self) -> Result<(), ClusterError> {
        if self.node_id.is_empty() || self.node_id.len() > 128 {
            return Err(ClusterError::InvalidConfig(
                "node_id must be 1 to 128 bytes",
            ));
        }
        if self.lease_ttl < Duration::from_millis(100) {
            return Err(ClusterError::InvalidConfig(
                "lease_ttl must be at least 100 ms",
            ));
        }
        if self.max_failures == 0 || self.max_failures > 1000 {
            return Err(ClusterError::InvalidConfig(
                "max_failures must be 1 to 1000",
            ));
        }
        if self.op_timeout.is_zero() || self.connect_timeout.is_zero() {
            return Err(ClusterError::InvalidConfig("timeouts must be non-zero"));
        }
        Ok(())
    }
}

struct Conn {
    client: tokio_postgres::Client,
    driver: JoinHandle<()>,
}

/// A node's handle on the cluster database: one connection, used by one
/// operation at a time, re-established when lost. Open a few per node if
/// renewals must not wait behind a large result upload.
pub struct ClusterClient {
    cfg: ClusterConfig,
    pg: tokio_postgres::Config,
    /// host:port/dbname, without credentials, for errors and logs.
    target: String,
    conn: Mutex<Option<Conn>>,
    connects: AtomicU64,
    /// Since when (ms after the Unix epoch) the database has not answered
    /// this client: set by the first failed attempt, cleared by the next
    /// answer of any kind. 0: it answered last time.
    unreachable_since_ms: AtomicU64,
    /// Why, while `unreachable_since_ms` is set.
    unreachable_cause: std::sync::Mutex<String>,
}

/// A database that has not answered a client since `since`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreachable {
    pub since: SystemTime,
    /// The last attempt's error.
    pub cause: String,
}

impl ClusterClient {
    /// Checks the configuration; does not connect (the first operation
    /// does, and [`ClusterClient::migrate`] is the usual first operation).
    pub fn new(cfg: ClusterConfig) -> Result<Self, ClusterError> {
        cfg.validate()?;
        let mut pg: tokio_postgres::Config =
            cfg.database_url.parse().map_err(ClusterError::InvalidUrl)?;
        pg.connect_timeout(cfg.connect_timeout);
        pg.application_name(format!("cuzk {}", cfg.node_id));
        let target = describe(&pg);
        Ok(Self {
            cfg,
            pg,
            target,
            conn: Mutex::new(None),
            connects: AtomicU64::new(0),
            unreachable_since_ms: AtomicU64::new(0),
            unreachable_cause: std::sync::Mutex::new(String::new()),
        })
    }

    pub fn config(&self) -> &ClusterConfig {
        &self.cfg
    }

    pub fn node_id(&self) -> &str {
        &self.cfg.node_id
    }

    /// The database, without credentials.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Connections opened so far (more than one means it reconnected).
    pub fn connections_opened(&self) -> u64 {
        self.connects.load(Ordering::Relaxed)
    }

    /// Whether the database answered this client's last attempt; when it
    /// did not, since when and why. An operation still retrying counts as
    /// unreachable from its first failed attempt, not from when it gives up.
    pub fn unreachable(&self) -> Option<Unreachable> {
        let ms = self.unreachable_since_ms.load(Ordering::SeqCst);
        (ms != 0).then(|| Unreachable {
            since: UNIX_EPOCH + Duration::from_millis(ms),
            cause: self
                .unreachable_cause
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        })
    }

    pub(crate) fn mark_answered(&self) {
        self.unreachable_since_ms.store(0, Ordering::SeqCst);
    }

    fn mark_unanswered(&self, cause: &Unavailable) {
        *self
            .unreachable_cause
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = cause.to_string();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_millis().max(1) as u64);
        // The first failure of an outage keeps its time.
        let _ =
            self.unreachable_since_ms
                .compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The connection, opened if there is none or it has closed.
    pub(crate) async fn checkout(&self) -> Result<Slot<'_>, Unavailable> {
        let mut guard = self.conn.lock().await;
        if guard.as_ref().is_some_and(|c| c.client.is_closed()) {
            if let Some(old) = guard.take() {
                old.driver.abort();
            }
        }
        if guard.is_none() {
            let (client, connection) = match tokio::time::timeout(
                // tokio-postgres applies connect_timeout to the TCP connect;
                // this bounds the startup exchange too.
                self.cfg.connect_timeout * 2,
                self.pg.connect(tokio_postgres::NoTls),
            )
            .await
            {
                Ok(Ok(pair)) => pair,
                Ok(Err(e)) => return Err(Unavailable::Connect(e)),
                Err(_) => return Err(Unavailable::TimedOut(self.cfg.connect_timeout * 2)),
            };
            let target = self.target.clone();
            let driver = tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::warn!(%target, error = %e, "cluster database connection ended");
                }
            });
            self.connects.fetch_add(1, Ordering::Relaxed);
            *guard = Some(Conn { client, driver });
        }
        Ok(Slot { guard })
    }

    pub(crate) fn retry(&self, op: &'static str) -> Retry<'_> {
        Retry {
            client: self,
            op,
            start: Instant::now(),
            backoff: Duration::from_millis(20),
            tries: 0,
        }
    }
}

impl Drop for ClusterClient {
    fn drop(&mut self) {
        if let Some(c) = self.conn.get_mut().take() {
            c.driver.abort();
        }
    }
}

pub(crate) struct Slot<'a> {
    guard: MutexGuard<'a, Option<Conn>>,
}

impl Slot<'_> {
    pub(crate) fn client(&mut self) -> &mut tokio_postgres::Client {
        match self.guard.as_mut() {
            Some(c) => &mut c.client,
            // checkout() returns a Slot only with a connection in it.
            None => unreachable!("a Slot always holds a connection"),
        }
    }

    /// Drop the connection: the next checkout opens a new one.
    pub(crate) fn discard(&mut self) {
        if let Some(c) = self.guard.take() {
            c.driver.abort();
        }
    }
}

/// The retry state of one operation.
pub(crate) struct Retry<'a> {
    client: &'a ClusterClient,
    op: &'static str,
    start: Instant,
    backoff: Duration,
    tries: u32,
}

impl Retry<'_> {
    pub(crate) fn op(&self) -> &'static str {
        self.op
    }

    pub(crate) fn op_timeout(&self) -> Duration {
        self.client.cfg.op_timeout
    }

    /// Wait before trying again, or give up with `Unavailable`.
    pub(crate) async fn after_unavailable(
        &mut self,
        cause: Unavailable,
    ) -> Result<(), ClusterError> {
        self.client.mark_unanswered(&cause);
        self.tries += 1;
        let waited = self.start.elapsed();
        if waited >= self.client.cfg.reconnect_for {
            return Err(ClusterError::Unavailable {
                target: self.client.target.clone(),
                op: self.op,
                waited,
                cause,
            });
        }
        tracing::debug!(op = self.op, error = %cause, "cluster database unavailable; retrying");
        self.sleep().await;
        Ok(())
    }

    /// A concurrent transaction won: try again soon, a bounded number of
    /// times.
    pub(crate) async fn after_conflict(&mut self) -> Result<(), ClusterError> {
        self.tries += 1;
        // Past the window, or so many conflicts that something is wrong
        // (a transaction of ours conflicts in microseconds, not seconds).
        if self.tries > 200 || self.start.elapsed() >= self.client.cfg.reconnect_for {
            return Err(ClusterError::Contended {
                op: self.op,
                tries: self.tries,
            });
        }
        // Jitter so that the conflicting transactions do not meet again.
        let ms = rand::random::<u64>() % (5 * u64::from(self.tries.min(20))) + 1;
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(())
    }

    async fn sleep(&mut self) {
        let left = self
            .client
            .cfg
            .reconnect_for
            .saturating_sub(self.start.elapsed());
        tokio::time::sleep(self.backoff.min(left)).await;
        // 20 ms doubling to 1 s: a restarted server is found within about
        // a second of coming back.
        self.backoff = (self.backoff * 2).min(Duration::from_secs(1));
    }
}

/// Run `$body` (an expression of type `Result<T, OpError>` that may use the
/// connection `$c: &mut tokio_postgres::Client`) with reconnection and
/// conflict retries; evaluates to `Result<T, ClusterError>`.
macro_rules! db_op {
    ($client:expr, $op:expr, |$c:ident| $body:expr) => {{
        let client: &$crate::client::ClusterClient = $client;
        let mut retry = client.retry($op);
        loop {
            let mut slot = match client.checkout().await {
                Ok(s) => s,
                Err(cause) => {
                    retry.after_unavailable(cause).await?;
                    continue;
                }
            };
            let outcome = {
                let $c: &mut tokio_postgres::Client = slot.client();
                tokio::time::timeout(retry.op_timeout(), async { $body }).await
            };
            match outcome {
                Err(_elapsed) => {
                    slot.discard();
                    drop(slot);
                    let t = retry.op_timeout();
                    retry
                        .after_unavailable($crate::error::Unavailable::TimedOut(t))
                        .await?;
                }
                Ok(Ok(v)) => {
                    client.mark_answered();
                    break Ok(v);
                }
                Ok(Err($crate::error::OpError::Domain(e))) => {
                    client.mark_answered();
                    break Err(e);
                }
                Ok(Err($crate::error::OpError::Pg(e))) => match $crate::error::classify(&e) {
                    $crate::error::ErrorClass::Connection => {
                        slot.discard();
                        drop(slot);
                        retry
                            .after_unavailable($crate::error::Unavailable::Lost(e))
                            .await?;
                    }
                    $crate::error::ErrorClass::Conflict => {
                        client.mark_answered();
                        drop(slot);
                        retry.after_conflict().await?;
                    }
                    $crate::error::ErrorClass::Fatal => {
                        client.mark_answered();
                        break Err($crate::error::ClusterError::Database {
                            op: retry.op(),
                            source: e,
                        });
                    }
                },
            }
        }
    }};
}
pub(crate) use db_op;

fn describe(pg: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let host = match pg.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = pg.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", pg.get_dbname().unwrap_or("(default)"))
}
