//! The VRAM budget of one device: how many bytes this process may hold on
//! it, and who holds what. Every device buffer the GPU backend creates is
//! backed by a [`Reservation`] taken here first; a reservation is released
//! when it is dropped, so an early return, an error or a panic unwinding
//! through a worker gives its bytes back.
//!
//! The budget knows nothing of CUDA: the backend feeds it measured free
//! memory (cuMemGetInfo) when the device is opened and before each
//! partition, which keeps it unit-testable on machines without a GPU.
//!
//! Capacity = min(free memory measured − safety margin, `vram_limit`).
//! Re-measuring lowers it when another process took memory and raises it
//! again (never above the limit) when that memory comes back.
//!
//! A partition takes its whole working set at once, as a [`Grant`]: a
//! reservation of the budget that is itself a small budget, from which the
//! partition's steps reserve their buffers without ever waiting. A
//! partition therefore either holds all it needs or nothing, and waits for
//! its grant in a first-come queue ([`VramBudget::enqueue`]) while other
//! partitions hold memory they will give back; nothing waits while holding
//! memory, so nothing deadlocks.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// 512 MiB: what the issue asks to keep free for the driver, other
/// contexts and allocations the backend does not see (module images,
/// the kernels' local memory).
pub const DEFAULT_SAFETY_MARGIN: u64 = 512 << 20;

/// Settings of a device's budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetConfig {
    /// Bytes left free below the measured free memory.
    pub safety_margin: u64,
    /// Cap on what this process uses on the device (for tests and for
    /// sharing a card), whatever is free.
    pub vram_limit: Option<u64>,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            safety_margin: DEFAULT_SAFETY_MARGIN,
            vram_limit: None,
        }
    }
}

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum BudgetError {
    /// The request does not fit what is left of the budget.
    #[error(
        "device {device}: {what} needs {bytes} bytes but only {available} of the budget's \
         {capacity} are free ({reserved} reserved)"
    )]
    Exhausted {
        device: String,
        what: &'static str,
        bytes: u64,
        available: u64,
        capacity: u64,
        reserved: u64,
    },
    /// The fault-injection hook failed this reservation on purpose.
    #[error("device {device}: injected failure of allocation #{n} ({what}, {bytes} bytes)")]
    Injected {
        device: String,
        what: &'static str,
        bytes: u64,
        n: u64,
    },
}

/// What the fault hook does to the chosen reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Return [`BudgetError::Injected`], as a failed allocation would.
    Error,
    /// Panic, as a bug inside a worker would.
    Panic,
}

#[derive(Debug)]
struct State {
    device: String,
    config: BudgetConfig,
    capacity: u64,
    reserved: u64,
    /// Of `reserved`, what partitions hold for one step (not resident
    /// parameters): it comes back when that step ends.
    transient: u64,
    /// Partitions in flight on the device.
    in_flight: u32,
    peak: u64,
    /// Reservations granted or refused so far (the fault hook counts them).
    requests: u64,
    /// Fail (or panic in) the reservation whose 1-based request number
    /// this is.
    fail_at: Option<(u64, Fault)>,
    /// Counts releases and queue changes, so a waiter that looked at the
    /// budget and then waits does not miss one that came in between.
    generation: u64,
    /// Tickets of partitions waiting for their grants, first come first.
    queue: VecDeque<u64>,
    next_ticket: u64,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Signalled whenever a reservation is released.
    released: Condvar,
    /// The budget a grant's budget was carved from: its fault hook and
    /// request count are the ones that apply.
    parent: Option<Arc<Shared>>,
}

/// One device's budget; cheap to clone (shared by the device's workers).
#[derive(Clone, Debug)]
pub struct VramBudget {
    state: Arc<Shared>,
}

/// Bytes of a budget held until drop.
#[derive(Debug)]
pub struct Reservation {
    state: Arc<Shared>,
    bytes: u64,
    transient: bool,
    what: &'static str,
}

fn lock(state: &Shared) -> MutexGuard<'_, State> {
    // A panic while the lock is held leaves the counters consistent (each
    // update is a single assignment), so a poisoned lock is still usable;
    // refusing it would leak every later reservation's bytes.
    state.state.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long a partition waits for its grant before it gives up: far
/// longer than any partition takes (a 2^27 one takes seconds).
pub const MAX_WAIT: Duration = Duration::from_secs(600);

fn capacity_for(config: &BudgetConfig, free: u64, reserved: u64) -> u64 {
    let measured = (free + reserved).saturating_sub(config.safety_margin);
    match config.vram_limit {
        Some(limit) => measured.min(limit),
        None => measured,
    }
}

impl VramBudget {
    /// A budget for `device` whose free memory was just measured as
    /// `free` bytes (nothing of this process held yet).
    pub fn new(device: impl Into<String>, free: u64, config: BudgetConfig) -> Self {
        VramBudget {
            state: Arc::new(Shared {
                state: Mutex::new(State {
                    device: device.into(),
                    config,
                    capacity: capacity_for(&config, free, 0),
                    reserved: 0,
                    transient: 0,
                    in_flight: 0,
                    peak: 0,
                    requests: 0,
                    fail_at: None,
                    generation: 0,
                    queue: VecDeque::new(),
                    next_ticket: 0,
                }),
                released: Condvar::new(),
                parent: None,
            }),
        }
    }

    /// Takes `bytes` at once (no waiting) as a [`Grant`]: a budget of
    /// exactly those bytes for one partition's steps.
    pub fn grant(&self, bytes: u64, what: &'static str) -> Result<Grant, BudgetError> {
        let held = self.take(bytes, what, true)?;
        let device = format!(
            "{} (a partition's grant of {bytes} bytes)",
            lock(&self.state).device
        );
        let config = BudgetConfig {
            safety_margin: 0,
            vram_limit: Some(bytes),
        };
        let mut child = VramBudget::new(device, bytes, config);
        // The new budget is not shared yet, so it can still be linked.
        Arc::get_mut(&mut child.state)
            .expect("a new budget has one owner")
            .parent = Some(self.state.clone());
        Ok(Grant {
            budget: child,
            _held: held,
        })
    }

    /// Runs `attempt` each time the budget changes while this caller is
    /// first in the queue for grants, until it returns [`Try::Done`] or
    /// [`Try::Fail`]; [`Try::Wait`] waits for the next release. Gives up
    /// with `timed_out()` after `max_wait`. A caller must hold no
    /// reservation that it would wait for itself.
    pub fn wait_in_queue<R, E>(
        &self,
        max_wait: Duration,
        timed_out: impl FnOnce() -> E,
        mut attempt: impl FnMut() -> Try<R, E>,
    ) -> Result<R, E> {
        let ticket = self.enqueue();
        let deadline = Instant::now() + max_wait;
        loop {
            let seen = self.generation();
            if ticket.is_first() {
                match attempt() {
                    Try::Done(r) => return Ok(r),
                    Try::Fail(e) => return Err(e),
                    Try::Wait => {}
                }
            }
            // A bounded wait also covers changes no one signals (the
            // attempt may look at more than this budget).
            let until = deadline.min(Instant::now() + POLL);
            if !self.wait_for_change(seen, until) && Instant::now() >= deadline {
                return Err(timed_out());
            }
        }
    }

    /// A grant of `bytes`, waiting in the queue while other partitions hold
    /// what it needs; fails at once when `bytes` exceed the whole budget.
    pub fn grant_waiting(&self, bytes: u64, what: &'static str) -> Result<Grant, BudgetError> {
        self.grant_waiting_for(bytes, what, MAX_WAIT)
    }

    fn grant_waiting_for(
        &self,
        bytes: u64,
        what: &'static str,
        max_wait: Duration,
    ) -> Result<Grant, BudgetError> {
        let exhausted = || {
            let s = lock(&self.state);
            BudgetError::Exhausted {
                device: s.device.clone(),
                what,
                bytes,
                available: s.capacity.saturating_sub(s.reserved),
                capacity: s.capacity,
                reserved: s.reserved,
            }
        };
        if bytes > self.capacity() {
            return Err(exhausted());
        }
        self.wait_in_queue(max_wait, exhausted, || {
            if bytes > self.capacity() {
                Try::Fail(exhausted())
            } else if bytes <= self.available() {
                match self.grant(bytes, what) {
                    Ok(g) => Try::Done(g),
                    Err(e) => Try::Fail(e),
                }
            } else {
                Try::Wait
            }
        })
    }

    /// Joins the queue for grants; the returned ticket leaves it when
    /// dropped. Grants are handed out in ticket order: only the first
    /// ticket's holder should take one (see [`Ticket::is_first`]).
    pub fn enqueue(&self) -> Ticket {
        let mut s = lock(&self.state);
        let id = s.next_ticket;
        s.next_ticket += 1;
        s.queue.push_back(id);
        s.generation += 1;
        Ticket {
            state: self.state.clone(),
            id,
        }
    }

    /// Partitions waiting for a grant.
    pub fn queued(&self) -> usize {
        lock(&self.state).queue.len()
    }

    /// A number that changes whenever memory is released or the queue
    /// moves; pass it to [`wait_for_change`](Self::wait_for_change).
    pub fn generation(&self) -> u64 {
        lock(&self.state).generation
    }

    /// Waits until the generation differs from `seen` or `until` passes;
    /// false on the timeout.
    pub fn wait_for_change(&self, seen: u64, until: Instant) -> bool {
        let mut s = lock(&self.state);
        while s.generation == seen {
            let now = Instant::now();
            if now >= until {
                return false;
            }
            s = self
                .state
                .released
                .wait_timeout(s, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }

    /// Wakes the waiters, for a change the budget cannot see (a resident
    /// set that a partition stopped using may now be evicted).
    pub fn notify(&self) {
        lock(&self.state).generation += 1;
        self.state.released.notify_all();
    }

    /// New free-memory reading. `free` must have been measured with every
    /// reserved buffer allocated (the backend trims the driver's pools and
    /// synchronises first), so reserved + free is what this process could
    /// hold.
    pub fn refresh(&self, free: u64) {
        let mut s = lock(&self.state);
        s.capacity = capacity_for(&s.config, free, s.reserved);
    }

    /// Takes `bytes` for one step of a partition (`what` is a short label
    /// that errors carry); fails at once when they do not fit.
    pub fn reserve(&self, bytes: u64, what: &'static str) -> Result<Reservation, BudgetError> {
        self.take(bytes, what, true)
    }

    /// Takes `bytes` held across partitions (resident parameters) at
    /// once, failing when they do not fit (the caller made room first).
    pub fn reserve_persistent(
        &self,
        bytes: u64,
        what: &'static str,
    ) -> Result<Reservation, BudgetError> {
        self.take(bytes, what, false)
    }

    /// Marks a partition in flight until the guard drops.
    pub fn enter_partition(&self) -> PartitionGuard {
        lock(&self.state).in_flight += 1;
        PartitionGuard {
            state: self.state.clone(),
        }
    }

    fn take(
        &self,
        bytes: u64,
        what: &'static str,
        transient: bool,
    ) -> Result<Reservation, BudgetError> {
        // A grant's steps count, and fail, where the device's do.
        let root = self.state.parent.as_ref().unwrap_or(&self.state);
        let mut s = lock(root);
        s.requests += 1;
        if let Some((at, fault)) = s.fail_at {
            if at == s.requests {
                s.fail_at = None;
                let (device, n) = (s.device.clone(), s.requests);
                drop(s);
                if fault == Fault::Panic {
                    panic!("injected panic at allocation #{n} ({what}, {bytes} bytes) on device {device}");
                }
                return Err(BudgetError::Injected {
                    device,
                    what,
                    bytes,
                    n,
                });
            }
        }
        drop(s);
        let mut s = lock(&self.state);
        let available = s.capacity.saturating_sub(s.reserved);
        if bytes > available {
            return Err(BudgetError::Exhausted {
                device: s.device.clone(),
                what,
                bytes,
                available,
                capacity: s.capacity,
                reserved: s.reserved,
            });
        }
        s.reserved += bytes;
        if transient {
            s.transient += bytes;
        }
        s.peak = s.peak.max(s.reserved);
        Ok(Reservation {
            state: self.state.clone(),
            bytes,
            transient,
            what,
        })
    }

    /// Partitions in flight (see [`enter_partition`](Self::enter_partition)).
    pub fn in_flight(&self) -> u32 {
        lock(&self.state).in_flight
    }

    /// Bytes held by steps of partitions in flight (not resident data).
    pub fn transient(&self) -> u64 {
        lock(&self.state).transient
    }

    /// Bytes that a reservation may take now.
    pub fn available(&self) -> u64 {
        let s = lock(&self.state);
        s.capacity.saturating_sub(s.reserved)
    }
    pub fn capacity(&self) -> u64 {
        lock(&self.state).capacity
    }
    pub fn reserved(&self) -> u64 {
        lock(&self.state).reserved
    }
    /// Most bytes reserved at once since the budget was made.
    pub fn peak(&self) -> u64 {
        lock(&self.state).peak
    }
    pub fn config(&self) -> BudgetConfig {
        lock(&self.state).config
    }
    pub fn device(&self) -> String {
        lock(&self.state).device.clone()
    }

    /// Fault hook: the `n`-th reservation from now (1 = the next one)
    /// fails with [`BudgetError::Injected`]; `None` disarms it.
    pub fn fail_nth_reservation(&self, n: Option<u64>) {
        self.inject(n, Fault::Error)
    }
    /// Fault hook: the `n`-th reservation from now panics.
    pub fn panic_nth_reservation(&self, n: Option<u64>) {
        self.inject(n, Fault::Panic)
    }
    fn inject(&self, n: Option<u64>, fault: Fault) {
        let mut s = lock(&self.state);
        s.fail_at = n.map(|n| (s.requests + n.max(1), fault));
    }
    /// Reservations asked for so far (granted or not): with the fault hook,
    /// lets a test aim at each allocation of a proof in turn.
    pub fn requests(&self) -> u64 {
        lock(&self.state).requests
    }
    /// Starts a new peak measurement at the bytes reserved now.
    pub fn reset_peak(&self) {
        let mut s = lock(&self.state);
        s.peak = s.reserved;
    }
}

impl Reservation {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// Keeps only `bytes` of this reservation (no-op if it holds fewer),
    /// handing the rest back at once: for a step whose tail needs less
    /// than its peak, without a window where the kept bytes are
    /// unaccounted.
    pub fn shrink_to(&mut self, bytes: u64, what: &'static str) {
        let excess = self.bytes.saturating_sub(bytes);
        self.what = what;
        if excess == 0 {
            return;
        }
        let mut s = lock(&self.state);
        s.reserved = s.reserved.saturating_sub(excess);
        if self.transient {
            s.transient = s.transient.saturating_sub(excess);
        }
        s.generation += 1;
        drop(s);
        self.bytes -= excess;
        self.state.released.notify_all();
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut s = lock(&self.state);
        s.reserved = s.reserved.saturating_sub(self.bytes);
        if self.transient {
            s.transient = s.transient.saturating_sub(self.bytes);
        }
        s.generation += 1;
        drop(s);
        self.state.released.notify_all();
    }
}

/// One partition's working set: `bytes` of the device's budget held for
/// the partition's life, handed out to its steps by [`Grant::budget`]
/// (whose reservations never wait: the plan that sized the grant bounds
/// what its steps hold at once, and a step beyond it is a bug that fails
/// with the sizes named rather than waits).
#[derive(Debug)]
pub struct Grant {
    budget: VramBudget,
    // Dropped after the steps' budget.
    _held: Reservation,
}

impl Grant {
    /// The grant's own budget, for the partition's steps.
    pub fn budget(&self) -> &VramBudget {
        &self.budget
    }
    pub fn bytes(&self) -> u64 {
        self._held.bytes()
    }
}

/// One try of [`VramBudget::wait_in_queue`].
pub enum Try<R, E> {
    Done(R),
    /// Not now: wait for memory to come back.
    Wait,
    Fail(E),
}

/// How often a queued waiter looks again without being signalled.
const POLL: Duration = Duration::from_millis(100);

/// A place in the queue for grants (see [`VramBudget::enqueue`]).
#[derive(Debug)]
pub struct Ticket {
    state: Arc<Shared>,
    id: u64,
}

impl Ticket {
    /// Whether no ticket taken earlier is still waiting.
    pub fn is_first(&self) -> bool {
        lock(&self.state).queue.front() == Some(&self.id)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = lock(&self.state);
        s.queue.retain(|&t| t != self.id);
        s.generation += 1;
        drop(s);
        self.state.released.notify_all();
    }
}

/// A partition in flight (see [`VramBudget::enter_partition`]).
#[derive(Debug)]
pub struct PartitionGuard {
    state: Arc<Shared>,
}

impl Drop for PartitionGuard {
    fn drop(&mut self) {
        let mut s = lock(&self.state);
        s.in_flight = s.in_flight.saturating_sub(1);
        s.generation += 1;
        drop(s);
        self.state.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering::SeqCst;

    const GIB: u64 = 1 << 30;

    fn budget(free: u64, limit: Option<u64>) -> VramBudget {
        VramBudget::new(
            "test",
            free,
            BudgetConfig {
                safety_margin: DEFAULT_SAFETY_MARGIN,
                vram_limit: limit,
            },
        )
    }

    #[test]
    fn capacity_is_free_minus_margin_capped_by_limit() {
        assert_eq!(budget(10 * GIB, None).capacity(), 10 * GIB - (512 << 20));
        assert_eq!(budget(10 * GIB, Some(4 * GIB)).capacity(), 4 * GIB);
        assert_eq!(budget(100 << 20, None).capacity(), 0);
        assert_eq!(budget(0, Some(GIB)).capacity(), 0);
    }

    #[test]
    fn shrinking_returns_the_excess_and_keeps_the_rest() {
        let b = budget(4 * GIB, Some(3 * GIB));
        let mut r = b.reserve(3 * GIB, "step").unwrap();
        assert_eq!(b.available(), 0);
        r.shrink_to(GIB, "tail");
        assert_eq!((r.bytes(), r.what()), (GIB, "tail"));
        assert_eq!(b.available(), 2 * GIB);
        assert_eq!(b.transient(), GIB);
        r.shrink_to(2 * GIB, "grow?");
        assert_eq!(r.bytes(), GIB, "shrink_to never grows a reservation");
        drop(r);
        assert_eq!((b.reserved(), b.transient()), (0, 0));
    }

    #[test]
    fn reservations_release_on_drop() {
        let b = budget(4 * GIB, Some(2 * GIB));
        let r1 = b.reserve(GIB, "one").unwrap();
        let r2 = b.reserve(GIB, "two").unwrap();
        assert_eq!(b.available(), 0);
        let e = b.reserve(1, "three").unwrap_err();
        assert!(matches!(e, BudgetError::Exhausted { what: "three", .. }));
        drop(r1);
        assert_eq!(b.available(), GIB);
        assert_eq!(r2.bytes(), GIB);
        drop(r2);
        assert_eq!(b.reserved(), 0);
        assert_eq!(b.peak(), 2 * GIB);
        // Zero-byte reservations always fit.
        let _z = b.reserve(0, "zero").unwrap();
    }

    #[test]
    fn reservations_release_when_a_panic_unwinds() {
        let b = budget(4 * GIB, None);
        let b2 = b.clone();
        let r = std::panic::catch_unwind(move || {
            let _held = b2.reserve(GIB, "held").unwrap();
            panic!("worker panics while holding a reservation");
        });
        assert!(r.is_err());
        assert_eq!(b.reserved(), 0);
        // The budget stays usable after the panic.
        assert!(b.reserve(GIB, "after").is_ok());
    }

    #[test]
    fn refresh_follows_other_users_of_the_device() {
        let b = budget(8 * GIB, Some(6 * GIB));
        let held = b.reserve(2 * GIB, "params").unwrap();
        // Another process took 5 GiB: 1 GiB free now beside our 2 GiB.
        b.refresh(GIB);
        assert_eq!(b.capacity(), 3 * GIB - (512 << 20));
        assert_eq!(b.available(), GIB - (512 << 20));
        // It freed them again: back to the limit, not beyond.
        b.refresh(6 * GIB);
        assert_eq!(b.capacity(), 6 * GIB);
        drop(held);
        assert_eq!(b.available(), 6 * GIB);
    }

    #[test]
    fn injected_failure_hits_exactly_the_nth_request() {
        let b = budget(8 * GIB, None);
        b.fail_nth_reservation(Some(3));
        let r1 = b.reserve(1, "a").unwrap();
        let r2 = b.reserve(1, "b").unwrap();
        let e = b.reserve(1, "c").unwrap_err();
        assert!(matches!(
            e,
            BudgetError::Injected {
                what: "c",
                n: 3,
                ..
            }
        ));
        // One failure only; the counters did not move for it.
        assert_eq!(b.reserved(), 2);
        let r4 = b.reserve(1, "d").unwrap();
        drop((r1, r2, r4));
        assert_eq!(b.reserved(), 0);
        b.fail_nth_reservation(Some(1));
        b.fail_nth_reservation(None);
        assert!(b.reserve(1, "e").is_ok());
        assert_eq!(b.requests(), 5);
    }

    #[test]
    fn injected_panic_unwinds_and_leaves_the_budget_usable() {
        let b = budget(8 * GIB, None);
        let held = b.reserve(GIB, "before").unwrap();
        b.panic_nth_reservation(Some(2));
        let b2 = b.clone();
        let r = std::panic::catch_unwind(move || {
            let _one = b2.reserve(GIB, "one").unwrap();
            let _two = b2.reserve(GIB, "two");
        });
        assert!(r.is_err());
        assert_eq!(b.reserved(), GIB);
        drop(held);
        b.reset_peak();
        assert_eq!(b.peak(), 0);
        assert!(b.reserve(GIB, "after").is_ok());
    }

    #[test]
    fn concurrent_workers_never_overcommit() {
        let b = budget(8 * GIB, Some(GIB));
        let granted = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        let r = b.grant_waiting(100 << 20, "w").unwrap();
                        let now = granted.fetch_add(r.bytes(), SeqCst) + r.bytes();
                        assert!(now <= GIB);
                        granted.fetch_sub(r.bytes(), SeqCst);
                    }
                });
            }
        });
        assert_eq!(b.reserved(), 0);
        assert!(b.peak() <= GIB);
    }

    #[test]
    fn grants_on_a_small_budget_wait_and_all_finish() {
        // Three workers, a 1 GiB budget, working sets of 400 to 900 MiB:
        // at most two fit at once, often one; each waits for its grant
        // instead of failing, and every step inside a grant gets its bytes.
        const MIB: u64 = 1 << 20;
        let b = budget(8 * GIB, Some(GIB));
        let held = std::sync::atomic::AtomicU64::new(0);
        let done = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for w in 0..3u64 {
                let (b, held, done) = (&b, &held, &done);
                s.spawn(move || {
                    for k in 0..20u64 {
                        let bytes = (400 + (w * 7 + k * 13) % 6 * 100) * MIB;
                        let _p = b.enter_partition();
                        let g = b.grant_waiting(bytes, "working set").unwrap();
                        let now = held.fetch_add(bytes, SeqCst) + bytes;
                        assert!(now <= GIB, "{now} bytes granted at once");
                        // The partition's steps: the whole grant, then two
                        // halves side by side, never waiting.
                        drop(g.budget().reserve(bytes, "step").unwrap());
                        let h1 = g.budget().reserve(bytes / 2, "half").unwrap();
                        let _h2 = g.budget().reserve(bytes - bytes / 2, "half").unwrap();
                        assert!(g.budget().reserve(1, "beyond the grant").is_err());
                        drop(h1);
                        std::thread::yield_now();
                        held.fetch_sub(bytes, SeqCst);
                        done.fetch_add(1, SeqCst);
                    }
                });
            }
        });
        assert_eq!(done.load(SeqCst), 60);
        assert_eq!((b.reserved(), b.transient(), b.queued()), (0, 0, 0));
        assert!(b.peak() <= GIB);
    }

    #[test]
    fn a_grant_larger_than_the_budget_fails_at_once_with_sizes() {
        let b = budget(8 * GIB, Some(GIB));
        // Another partition holds most of the budget: a grant that could
        // fit once it is done would wait; this one never can, so it fails
        // now, naming both sizes.
        let other = b.grant(GIB / 2, "other").unwrap();
        let e = b
            .grant_waiting(2 * GIB, "H bases and MSM scratch")
            .unwrap_err();
        match &e {
            BudgetError::Exhausted {
                what,
                bytes,
                capacity,
                ..
            } => {
                assert_eq!(
                    (*what, *bytes, *capacity),
                    ("H bases and MSM scratch", 2 * GIB, GIB)
                );
            }
            other => panic!("{other:?}"),
        }
        let msg = e.to_string();
        assert!(
            msg.contains(&(2 * GIB).to_string()) && msg.contains(&GIB.to_string()),
            "{msg}"
        );
        assert_eq!(b.queued(), 0);
        drop(other);
        assert_eq!(b.reserved(), 0);
    }

    #[test]
    fn grants_are_served_first_come() {
        // A large request waiting first is not overtaken by a small one
        // that would fit now, so a stream of small partitions cannot
        // starve a large one.
        let b = budget(8 * GIB, Some(GIB));
        let hold = b.grant(GIB - GIB / 8, "in flight").unwrap();
        std::thread::scope(|s| {
            let b = &b;
            // Each returns its grant (held until joined) and what the
            // budget held when it got it.
            let large = s.spawn(move || {
                let g = b.grant_waiting(GIB / 2, "large").unwrap();
                let seen = b.reserved();
                (g, seen)
            });
            while b.queued() < 1 {
                std::thread::yield_now();
            }
            let small = s.spawn(move || {
                let g = b.grant_waiting(GIB / 16, "small").unwrap();
                let seen = b.reserved();
                (g, seen)
            });
            while b.queued() < 2 {
                std::thread::yield_now();
            }
            // The small one fits beside `hold`, but waits its turn.
            std::thread::sleep(Duration::from_millis(50));
            assert!(!small.is_finished());
            assert!(!large.is_finished());
            drop(hold);
            let ((l, l_seen), (sm, s_seen)) = (large.join().unwrap(), small.join().unwrap());
            assert_eq!((l.bytes(), sm.bytes()), (GIB / 2, GIB / 16));
            // The large grant came first: the small one was granted beside
            // it, never before it.
            assert!((GIB / 2..=GIB / 2 + GIB / 16).contains(&l_seen), "{l_seen}");
            assert_eq!(s_seen, GIB / 2 + GIB / 16);
        });
        assert_eq!(b.reserved(), 0);
    }

    #[test]
    fn the_fault_hook_reaches_a_grants_steps() {
        let b = budget(8 * GIB, Some(GIB));
        let g = b.grant(GIB / 2, "grant").unwrap();
        let r0 = b.requests();
        drop(g.budget().reserve(1, "step").unwrap());
        assert_eq!(b.requests(), r0 + 1, "a grant's step counts on the device");
        b.fail_nth_reservation(Some(1));
        assert!(matches!(
            g.budget().reserve(1, "step"),
            Err(BudgetError::Injected { what: "step", .. })
        ));
        // A step beyond the grant fails at once with the grant's sizes.
        let e = g.budget().reserve(GIB, "too much").unwrap_err();
        assert!(matches!(
            e,
            BudgetError::Exhausted { bytes, capacity, .. } if bytes == GIB && capacity == GIB / 2
        ));
        drop(g);
        assert_eq!(b.reserved(), 0);
    }

    #[test]
    fn a_queued_wait_times_out_with_its_error() {
        let b = budget(8 * GIB, Some(GIB));
        let _hold = b.grant(GIB, "in flight").unwrap();
        let e = b.grant_waiting_for(GIB, "waiter", Duration::from_millis(10));
        assert!(matches!(
            e,
            Err(BudgetError::Exhausted { what: "waiter", .. })
        ));
        assert_eq!(b.queued(), 0, "the ticket left the queue");
    }
}
