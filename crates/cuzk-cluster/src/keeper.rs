//! [`LeaseKeeper`]: renews a node's leases on a task of its own while the
//! partitions are worked on, and tells the worker when to stop.
//!
//! The daemon's proving runs on blocking threads for seconds to minutes;
//! the renewals must not wait for it, nor for a large result upload on the
//! same connection, so the keeper is given a client of its own. Each held
//! lease has a [`HeldLease`] whose `stop()` turns `Some` when a renewal
//! answers that the lease is cancelled, lost or its job failed; dropping
//! the `HeldLease` stops renewing it (after the result is reported, or when
//! the worker gives up).

use crate::client::ClusterClient;
use crate::queue::{Lease, LeaseKey, LeaseStatus, StopReason};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

type Held = Arc<Mutex<HashMap<LeaseKey, watch::Sender<Option<StopReason>>>>>;

pub struct LeaseKeeper {
    held: Held,
    renewals: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl LeaseKeeper {
    /// Renew every `lease_ttl / 3` (the client's): two renewals can be
    /// missed (a slow database, a reconnection) before a lease expires.
    pub fn start(client: Arc<ClusterClient>) -> Self {
        let held: Held = Arc::default();
        let renewals = Arc::new(AtomicU64::new(0));
        let every = client.config().lease_ttl / 3;
        let task = tokio::spawn(renew_loop(client, held.clone(), renewals.clone(), every));
        Self {
            held,
            renewals,
            task,
        }
    }

    /// Keep `lease` renewed until the returned handle is dropped.
    pub fn hold(&self, lease: &Lease) -> HeldLease {
        let key = lease.key();
        let (tx, rx) = watch::channel(None);
        lock(&self.held).insert(key, tx);
        HeldLease {
            key,
            stop: rx,
            held: self.held.clone(),
        }
    }

    /// Renewal rounds that got an answer (for metrics and tests).
    pub fn renewals(&self) -> u64 {
        self.renewals.load(Ordering::Relaxed)
    }

    pub fn held(&self) -> usize {
        lock(&self.held).len()
    }

    /// Stop renewing, now, without releasing anything: the node's leases
    /// expire as a crashed node's would (a daemon killed in a test; a
    /// daemon giving up on the database).
    pub fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for LeaseKeeper {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The map holds no invariant a panicking holder could break.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn renew_loop(
    client: Arc<ClusterClient>,
    held: Held,
    renewals: Arc<AtomicU64>,
    every: Duration,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let keys: Vec<LeaseKey> = lock(&held).keys().copied().collect();
        if keys.is_empty() {
            continue;
        }
        match client.renew(&keys).await {
            Ok(statuses) => {
                renewals.fetch_add(1, Ordering::Relaxed);
                let mut map = lock(&held);
                for (key, st) in keys.iter().zip(statuses) {
                    if let LeaseStatus::Stop(reason) = st {
                        if let Some(tx) = map.remove(key) {
                            let _ = tx.send(Some(reason));
                        }
                    }
                }
            }
            // Unavailable past the client's retry window: keep trying. The
            // worker learns the truth when it reports; a lease that expired
            // meanwhile is refused then.
            Err(e) => tracing::warn!(error = %e, leases = keys.len(), "lease renewal failed"),
        }
    }
}

/// One lease being kept. Drop it once the partition's result or failure is
/// reported.
pub struct HeldLease {
    key: LeaseKey,
    stop: watch::Receiver<Option<StopReason>>,
    held: Held,
}

impl HeldLease {
    pub fn key(&self) -> LeaseKey {
        self.key
    }

    /// Why to stop working on it, once a renewal said so.
    pub fn stop(&self) -> Option<StopReason> {
        self.stop.borrow().clone()
    }

    /// Wait until a renewal says to stop.
    pub async fn stopped(&mut self) -> StopReason {
        loop {
            if let Some(r) = self.stop.borrow_and_update().clone() {
                return r;
            }
            if self.stop.changed().await.is_err() {
                // The keeper is gone: nothing will say stop any more.
                std::future::pending::<()>().await;
            }
        }
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        lock(&self.held).remove(&self.key);
    }
}
