//! The host-memory budget for synthesized circuits (a/b/c evaluations and
//! assignments). The dispatcher reserves a chunk's estimated bytes before
//! synthesizing it and waits while the budget is spent, so a long queue
//! waits instead of exhausting RAM; only a request larger than the whole
//! budget fails, naming both sizes. Reservations release on drop.
//!
//! Priority order is the engine's: one dispatcher reserves at a time, for
//! the highest-priority chunk, and gives its wait up when a higher class
//! arrives (engine.rs, `unless_preempted`), so this budget needs no queue
//! of its own.

use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

#[derive(Debug, thiserror::Error)]
#[error(
    "{what} needs {needed} bytes of host memory; the whole budget is {budget}{}",
    if *resident > 0 { format!(", of which {resident} are held for the kinds' compiled systems and shapes") } else { String::new() }
)]
pub struct BudgetTooSmall {
    pub what: String,
    pub needed: u64,
    pub budget: u64,
    /// Bytes of the budget held for the kinds' resident memory.
    pub resident: u64,
}

#[derive(Debug)]
pub struct HostBudget {
    budget: u64,
    used: Mutex<u64>,
    /// Held apart for memory that lives as long as the daemon (the kinds'
    /// compiled systems and shapes): not reserved by partitions, not
    /// counted in [`HostBudget::used`].
    resident: std::sync::atomic::AtomicU64,
    freed: Notify,
}

impl HostBudget {
    pub fn new(budget: u64) -> Arc<Self> {
        Arc::new(Self {
            budget,
            used: Mutex::new(0),
            resident: std::sync::atomic::AtomicU64::new(0),
            freed: Notify::new(),
        })
    }

    /// Total RAM (from /proc/meminfo) minus `margin`; when RAM cannot be
    /// read, `fallback`.
    pub fn from_system(margin: u64, fallback: u64) -> Arc<Self> {
        let total = total_ram().unwrap_or(fallback.saturating_add(margin));
        Self::new(total.saturating_sub(margin).max(1))
    }

    pub fn budget(&self) -> u64 {
        self.budget
    }
    pub fn used(&self) -> u64 {
        *self.used.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Bytes held apart for resident memory ([`HostBudget::hold_resident`]).
    pub fn resident(&self) -> u64 {
        self.resident.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// What partitions may reserve: the budget less the resident bytes.
    pub fn available(&self) -> u64 {
        self.budget.saturating_sub(self.resident())
    }
    /// Holds `bytes` (at most the whole budget) apart for memory that lives
    /// as long as the daemon, replacing what was held before.
    pub fn hold_resident(&self, bytes: u64) {
        self.resident
            .store(bytes.min(self.budget), std::sync::atomic::Ordering::Relaxed);
        self.freed.notify_waiters();
    }

    /// Take `bytes` without waiting, if they fit now.
    pub fn try_reserve(self: &Arc<Self>, bytes: u64) -> Option<HostReservation> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        if *used + bytes <= self.available() {
            *used += bytes;
            Some(HostReservation {
                budget: self.clone(),
                bytes,
            })
        } else {
            None
        }
    }

    /// Wait until `bytes` fit. Fails at once when they never can.
    pub async fn reserve(
        self: &Arc<Self>,
        bytes: u64,
        what: &str,
    ) -> Result<HostReservation, BudgetTooSmall> {
        if bytes > self.available() {
            return Err(BudgetTooSmall {
                what: what.to_owned(),
                needed: bytes,
                budget: self.budget,
                resident: self.resident(),
            });
        }
        loop {
            // Register for the wake-up before checking, so a release between
            // the check and the wait is not missed.
            let notified = self.freed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(r) = self.try_reserve(bytes) {
                return Ok(r);
            }
            notified.await;
        }
    }

    fn release(&self, bytes: u64) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(bytes);
        drop(used);
        self.freed.notify_waiters();
    }
}

/// Bytes held against a [`HostBudget`] until dropped.
#[derive(Debug)]
pub struct HostReservation {
    budget: Arc<HostBudget>,
    bytes: u64,
}

impl HostReservation {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// Give back part of the reservation early (a cancelled job's share).
    pub fn release_part(&mut self, bytes: u64) {
        let b = bytes.min(self.bytes);
        self.bytes -= b;
        self.budget.release(b);
    }
}

impl Drop for HostReservation {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// MemTotal from /proc/meminfo, in bytes.
pub fn total_ram() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo_total(&text)
}

fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn meminfo_parse() {
        assert_eq!(
            parse_meminfo_total("MemTotal:       24576 kB\nMemFree: 1 kB\n"),
            Some(24576 * 1024)
        );
        assert_eq!(parse_meminfo_total("MemFree: 1 kB\n"), None);
    }

    #[tokio::test]
    async fn reservations_wait_and_release() {
        let b = HostBudget::new(100);
        let r1 = b.reserve(60, "a").await.unwrap();
        assert!(b.try_reserve(50).is_none());
        assert!(b.reserve(101, "too big").await.is_err());
        let b2 = b.clone();
        let waiter = tokio::spawn(async move { b2.reserve(50, "b").await.map(|r| r.bytes()) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        let mut r1 = r1;
        r1.release_part(20);
        assert_eq!(b.used(), 40);
        drop(r1);
        assert_eq!(
            tokio::time::timeout(Duration::from_secs(5), waiter)
                .await
                .unwrap()
                .unwrap()
                .unwrap(),
            50
        );
        assert_eq!(b.used(), 0);
    }

    #[tokio::test]
    async fn resident_bytes_come_off_what_partitions_may_reserve() {
        let b = HostBudget::new(100);
        b.hold_resident(70);
        assert_eq!((b.resident(), b.available(), b.used()), (70, 30, 0));
        assert!(b.try_reserve(31).is_none());
        let r = b.try_reserve(30).unwrap();
        assert_eq!(b.used(), 30);
        drop(r);
        // What fits the budget but not beside the resident bytes never fits.
        let e = b.reserve(40, "a chunk").await.unwrap_err();
        assert_eq!((e.needed, e.budget, e.resident), (40, 100, 70));
        assert!(e.to_string().contains("70 are held"), "{e}");
        // Held at most the whole budget; a new hold replaces the old.
        b.hold_resident(500);
        assert_eq!(b.available(), 0);
        b.hold_resident(0);
        assert!(b.reserve(100, "all").await.is_ok());
    }
}
