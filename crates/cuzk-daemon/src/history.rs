//! The status page's history (`/status/history`): the engine sampled every
//! `server.status_sample_interval_ms` into a ring of fixed size that holds
//! the last hour, so that a page opened now draws the last hour at once.
//!
//! It only reads the engine (its status, busy fractions and recent jobs);
//! it decides nothing. The page's layout is the page's
//! (`status_page.html`); this module owns the JSON it reads.

use crate::engine::{Engine, EngineStatus, JobSummary};
use crate::scheduler::Priority;
use crate::trace::Busy;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// What the history covers.
pub const WINDOW: Duration = Duration::from_secs(3600);
/// The sampling interval's bounds: at 250 ms the ring holds 14 400
/// samples (a few MB with many workers), at 60 s an hour is 60 points.
pub const MIN_INTERVAL_MS: u64 = 250;
pub const MAX_INTERVAL_MS: u64 = 60_000;
/// Jobs listed with their phases (the page's table).
pub const RECENT_JOBS: usize = 20;

/// The engine at one moment: cumulative counters (the page takes their
/// differences for rates) and levels.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub t_unix_ms: u64,
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub partitions_proved: u64,
    /// Unfinished jobs waiting (queue or batch collector), per priority in
    /// [`Priority::ALL`]'s order.
    pub queued: [u32; 4],
    /// Jobs running.
    pub running: u32,
    /// Each worker's busy fraction since the sample before (the windows
    /// tile the timeline, so that no proving falls between two).
    pub worker_busy: Box<[f32]>,
    /// Each parameter tier's bytes in use, in the status's tier order.
    pub tier_used: Box<[u64]>,
    /// Host memory reserved for synthesis.
    pub host_reserved: u64,
    /// Each GPU's memory in use (total less free), in device order.
    pub vram_used: Box<[u64]>,
}

impl Sample {
    /// `busy` is over the time since the sample before.
    pub fn of(s: &EngineStatus, busy: &Busy, t_unix_ms: u64) -> Self {
        let mut queued = [0u32; 4];
        for j in &s.jobs {
            if let Some(i) = Priority::ALL.iter().position(|&p| p == j.priority) {
                queued[i] += j.queued as u32;
            }
        }
        Sample {
            t_unix_ms,
            completed: s.counters.completed,
            failed: s.counters.failed,
            cancelled: s.counters.cancelled,
            partitions_proved: s.counters.circuits_proved,
            queued,
            running: s.running as u32,
            worker_busy: busy
                .workers
                .iter()
                .map(|w| w.busy_fraction as f32)
                .collect(),
            tier_used: s.tiers.iter().map(|t| t.used_bytes).collect(),
            host_reserved: s.host_reserved_bytes,
            vram_used: s
                .devices
                .iter()
                .map(|d| d.vram_total_bytes.saturating_sub(d.vram_free_bytes))
                .collect(),
        }
    }
}

/// The last `cap` samples; the oldest go first.
#[derive(Debug)]
pub struct Ring {
    cap: usize,
    samples: VecDeque<Sample>,
    /// Samples dropped to make room (once non-zero, the first sample kept
    /// is no longer the first taken).
    dropped: u64,
}

impl Ring {
    pub fn new(cap: usize) -> Self {
        let cap = cap.max(1);
        Ring {
            cap,
            samples: VecDeque::with_capacity(cap),
            dropped: 0,
        }
    }
    pub fn push(&mut self, s: Sample) {
        while self.samples.len() >= self.cap {
            self.samples.pop_front();
            self.dropped += 1;
        }
        self.samples.push_back(s);
    }
    pub fn len(&self) -> usize {
        self.samples.len()
    }
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
    pub fn capacity(&self) -> usize {
        self.cap
    }
    pub fn iter(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
    /// The newest sample's time.
    pub fn last_t_unix_ms(&self) -> Option<u64> {
        self.samples.back().map(|s| s.t_unix_ms)
    }
}

/// A sample's time: the clock's `now`, but always after the sample
/// before (`prev`), so that times order the samples even when two fall in
/// one millisecond or the wall clock steps back; the page asks for the
/// samples after the last time it holds (`?since=`), and two samples with
/// one time would lose the second.
pub fn stamp(prev: Option<u64>, now: u64) -> u64 {
    prev.map_or(now, |p| now.max(p + 1))
}

/// The samples that cover [`WINDOW`] at `interval`.
pub fn capacity(interval: Duration) -> usize {
    let ms = interval.as_millis().max(1) as usize;
    (WINDOW.as_millis() as usize).div_ceil(ms)
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The sampler and its ring, shared by the sampling task and the HTTP
/// handler.
#[derive(Clone)]
pub struct History {
    engine: Engine,
    interval: Duration,
    recorded: Arc<Mutex<Recorded>>,
}

struct Recorded {
    ring: Ring,
    /// When the last sample kept was taken.
    last_at: Option<Instant>,
}

impl History {
    pub fn new(engine: Engine, interval: Duration) -> Self {
        History {
            engine,
            interval,
            recorded: Arc::new(Mutex::new(Recorded {
                ring: Ring::new(capacity(interval)),
                last_at: None,
            })),
        }
    }

    fn recorded(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.recorded.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A sample now, its busy fractions since the last one kept (at
    /// start: over one interval, or the engine's age), timed after it.
    /// The caller holds `r` from here until it has used the sample, so
    /// that no sample is kept in between.
    fn sample(&self, r: &Recorded, status: &EngineStatus, now: Instant) -> Sample {
        let since = r
            .last_at
            .map_or(self.interval, |t| now.saturating_duration_since(t));
        let busy = self.engine.busy(since);
        Sample::of(status, &busy, stamp(r.ring.last_t_unix_ms(), unix_ms()))
    }

    /// Take one sample now and keep it.
    pub fn record(&self) {
        let status = self.engine.status();
        let mut r = self.recorded();
        let now = Instant::now();
        let s = self.sample(&r, &status, now);
        r.ring.push(s);
        r.last_at = Some(now);
    }

    /// Sample every interval (the first at once) until `stop` is set.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(self.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => self.record(),
                _ = stop.wait_for(|s| *s) => return,
            }
        }
    }

    /// The history as the page reads it: the ring's samples (those taken
    /// after `since`, ms since the Unix epoch, when given: a page that has
    /// the rest asks only for those) and one taken now (so that the last
    /// point is current), column by column; the ring's oldest sample's time
    /// and whether older ones were dropped; what the series are (workers,
    /// GPUs, tiers, priorities); the engine's status now as `/status` shows
    /// it; and the newest jobs with their phases.
    pub fn json(&self, since: Option<u64>) -> Value {
        let status = self.engine.status();
        let jobs: Vec<Value> = self
            .engine
            .recent_jobs(RECENT_JOBS)
            .iter()
            .map(job_json)
            .collect();
        // Held from the live sample on: a sample kept after it would come
        // before it in the answer.
        let recorded = self.recorded();
        let live = self.sample(&recorded, &status, Instant::now());
        let ring = &recorded.ring;
        let samples: Vec<&Sample> = ring
            .iter()
            .filter(|s| since.is_none_or(|t| s.t_unix_ms > t))
            .chain(std::iter::once(&live))
            .collect();
        let col = |f: &dyn Fn(&Sample) -> Value| -> Value {
            Value::Array(samples.iter().map(|s| f(s)).collect())
        };
        let per = |n: usize, f: &dyn Fn(&Sample, usize) -> Value| -> Value {
            Value::Array(
                (0..n)
                    .map(|i| Value::Array(samples.iter().map(|s| f(s, i)).collect()))
                    .collect(),
            )
        };
        let workers: Vec<Value> = status
            .busy
            .workers
            .iter()
            .map(|w| json!({"worker": w.worker, "device": w.device}))
            .collect();
        let devices: Vec<Value> = status
            .devices
            .iter()
            .map(|d| json!({"index": d.index, "name": d.name, "vram_total_bytes": d.vram_total_bytes}))
            .collect();
        let tiers: Vec<Value> = status
            .tiers
            .iter()
            .map(|t| {
                json!({
                    "tier": t.tier,
                    "budget_bytes": (t.budget_bytes != u64::MAX).then_some(t.budget_bytes),
                })
            })
            .collect();
        let (nw, nd, nt) = (workers.len(), devices.len(), tiers.len());
        json!({
            "now_unix_ms": live.t_unix_ms,
            "interval_ms": self.interval.as_millis() as u64,
            "window_s": WINDOW.as_secs(),
            "capacity": ring.capacity(),
            "first_t_unix_ms": ring.iter().next().map(|s| s.t_unix_ms),
            "ring_dropped": ring.dropped(),
            "priorities": Priority::ALL.map(|p| p.name()),
            "workers": workers,
            "devices": devices,
            "tiers": tiers,
            "host_budget_bytes": status.host_budget_bytes,
            "samples": {
                "t_unix_ms": col(&|s| json!(s.t_unix_ms)),
                "completed": col(&|s| json!(s.completed)),
                "failed": col(&|s| json!(s.failed)),
                "cancelled": col(&|s| json!(s.cancelled)),
                "partitions_proved": col(&|s| json!(s.partitions_proved)),
                "queued": per(4, &|s, i| json!(s.queued[i])),
                "running": col(&|s| json!(s.running)),
                "worker_busy": per(nw, &|s, i| {
                    // Rounded: the page draws percent, not float noise.
                    let f = s.worker_busy.get(i).copied().unwrap_or(0.0);
                    json!((f as f64 * 1e4).round() / 1e4)
                }),
                "tier_used_bytes": per(nt, &|s, i| json!(s.tier_used.get(i).copied().unwrap_or(0))),
                "host_reserved_bytes": col(&|s| json!(s.host_reserved)),
                "vram_used_bytes": per(nd, &|s, i| json!(s.vram_used.get(i).copied().unwrap_or(0))),
            },
            "jobs": jobs,
            "status": crate::http::status_value(&status),
        })
    }
}

fn ms(d: Duration) -> f64 {
    crate::report::round_ms(d.as_secs_f64() * 1e3)
}

/// A job as the page's table shows it; `prove` is the prover backend's
/// time (GPU or CPU), as everywhere else.
fn job_json(j: &JobSummary) -> Value {
    let t = &j.timings;
    json!({
        "id": j.id,
        "kind": j.kind,
        "priority": j.priority,
        "state": j.state,
        "partitions": j.partitions,
        "partitions_done": j.partitions_done,
        "batch_size": j.batch_size,
        "submitted_unix_ms": j.submitted_unix_ms,
        "elapsed_ms": ms(j.elapsed),
        "phases_ms": {
            "queue_wait": ms(t.queue_wait),
            "param_load": ms(t.param_load),
            "synthesis": ms(t.synthesis),
            "prove": ms(t.gpu),
        },
        "error": j.error.as_ref().map(ToString::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: u64) -> Sample {
        Sample {
            t_unix_ms: t,
            completed: t,
            failed: 0,
            cancelled: 0,
            partitions_proved: 0,
            queued: [0; 4],
            running: 0,
            worker_busy: Box::new([]),
            tier_used: Box::new([]),
            host_reserved: 0,
            vram_used: Box::new([]),
        }
    }

    #[test]
    fn the_ring_keeps_the_last_hour_and_no_more() {
        assert_eq!(capacity(Duration::from_secs(5)), 720);
        assert_eq!(capacity(Duration::from_millis(MIN_INTERVAL_MS)), 14_400);
        assert_eq!(capacity(Duration::from_millis(7000)), 515, "rounded up");
        let mut r = Ring::new(3);
        assert!(r.is_empty());
        for t in 0..5 {
            r.push(sample(t));
        }
        assert_eq!(r.len(), 3);
        let ts: Vec<u64> = r.iter().map(|s| s.t_unix_ms).collect();
        assert_eq!(ts, [2, 3, 4], "oldest dropped first");
        assert_eq!(r.dropped(), 2);
        assert_eq!(r.last_t_unix_ms(), Some(4));
        assert_eq!(Ring::new(2).last_t_unix_ms(), None);
    }

    #[test]
    fn sample_times_always_increase() {
        assert_eq!(stamp(None, 1000), 1000);
        assert_eq!(stamp(Some(999), 1000), 1000, "the clock when it moved on");
        assert_eq!(stamp(Some(1000), 1000), 1001, "one millisecond: after");
        assert_eq!(stamp(Some(1500), 1000), 1501, "the clock stepped back");
    }
}
