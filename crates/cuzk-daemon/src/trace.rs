//! The engine's timeline: one event per partition phase (queue wait,
//! synthesis on a synthesis slot, proving on a worker, verification), kept
//! in a bounded ring, exported as a Chrome trace (the Trace Event Format,
//! which chrome://tracing and Perfetto open) and summed into the busy
//! fractions `/status` and `cuzk bench batch` report.
//!
//! Pure data with explicit clocks; the engine records into it under its
//! state lock.

use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Where an event happened: one row of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    /// A job's partitions waiting from submission to their synthesis (one
    /// row per job).
    Queue { job: u64 },
    /// One of the `synthesis_concurrency` synthesis slots.
    Synthesis { slot: u32 },
    /// A proving worker, on a GPU or (None) the CPU: its calls and, under
    /// them, the phases of each partition as they happened on the stream
    /// the call used.
    Worker { worker: u32, device: Option<u32> },
    /// The host preparation (densities, 0/1 splits) that a worker's
    /// partition runs beside its stream.
    Prep { worker: u32, device: Option<u32> },
    /// Proof verification after a worker's chunk.
    Verify { worker: u32 },
}

/// The thread ids of the host-preparation rows, after the workers'.
const PREP_TID: u64 = 1000;

impl Lane {
    /// Chrome trace (pid, tid): one process per device / the CPU's roles.
    fn ids(self) -> (u64, u64) {
        match self {
            Lane::Queue { job } => (1, job),
            Lane::Synthesis { slot } => (2, slot as u64),
            Lane::Worker {
                worker,
                device: None,
            } => (3, worker as u64),
            Lane::Verify { worker } => (4, worker as u64),
            Lane::Worker {
                worker,
                device: Some(d),
            } => (100 + d as u64, worker as u64),
            // Beside its worker, in the same process.
            Lane::Prep {
                worker,
                device: None,
            } => (3, PREP_TID + worker as u64),
            Lane::Prep {
                worker,
                device: Some(d),
            } => (100 + d as u64, PREP_TID + worker as u64),
        }
    }
    fn process_name(self) -> String {
        match self {
            Lane::Queue { .. } => "queue (per job)".into(),
            Lane::Synthesis { .. } => "synthesis (cpu)".into(),
            Lane::Worker { device: None, .. } | Lane::Prep { device: None, .. } => {
                "cpu prover".into()
            }
            Lane::Verify { .. } => "verification (cpu)".into(),
            Lane::Worker {
                device: Some(d), ..
            }
            | Lane::Prep {
                device: Some(d), ..
            } => format!("gpu {d}"),
        }
    }
    fn thread_name(self) -> String {
        match self {
            Lane::Queue { job } => format!("job {job}"),
            Lane::Synthesis { slot } => format!("slot {slot}"),
            Lane::Worker { worker, .. } | Lane::Verify { worker } => format!("worker {worker}"),
            Lane::Prep { worker, .. } => format!("worker {worker} host prep"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct TraceEvent {
    pub name: &'static str,
    pub lane: Lane,
    pub start: Instant,
    pub dur: Duration,
    pub args: Value,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct WorkerBusy {
    pub worker: u32,
    pub device: Option<u32>,
    pub busy_fraction: f64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DeviceBusy {
    pub device: u32,
    /// Fraction of the window in which at least one of its workers proved.
    pub busy_fraction: f64,
}

/// Busy fractions over a window ending now.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Busy {
    /// The window's length: the one asked for, or the engine's age when
    /// shorter.
    pub window_s: f64,
    pub workers: Vec<WorkerBusy>,
    pub devices: Vec<DeviceBusy>,
    /// Mean over the workers.
    pub worker_busy_fraction: f64,
    pub synthesis_slots: u32,
    /// Synthesis-seconds over slots × window.
    pub synthesis_busy_fraction: f64,
}

pub struct Timeline {
    origin: Instant,
    cap: usize,
    events: VecDeque<TraceEvent>,
    dropped: u64,
    synth_since: Vec<Option<Instant>>,
    worker_since: Vec<Option<Instant>>,
    /// Each worker's device (None: CPU).
    workers: Vec<Option<u32>>,
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The part of [a, b) inside [from, to).
fn clip(a: Instant, b: Instant, from: Instant, to: Instant) -> Option<(Instant, Instant)> {
    let s = a.max(from);
    let e = b.min(to);
    (e > s).then_some((s, e))
}

fn union_len(mut v: Vec<(Instant, Instant)>) -> Duration {
    v.sort();
    let mut total = Duration::ZERO;
    let mut cur: Option<(Instant, Instant)> = None;
    for (s, e) in v {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}

impl Timeline {
    pub fn new(
        origin: Instant,
        cap: usize,
        synthesis_slots: usize,
        workers: Vec<Option<u32>>,
    ) -> Self {
        Self {
            origin,
            cap,
            events: VecDeque::new(),
            dropped: 0,
            synth_since: vec![None; synthesis_slots],
            worker_since: vec![None; workers.len()],
            workers,
        }
    }

    pub fn push(&mut self, e: TraceEvent) {
        if self.cap == 0 {
            self.dropped += 1;
            return;
        }
        while self.events.len() >= self.cap {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(e);
    }

    /// Events recorded since start (kept or dropped).
    pub fn recorded(&self) -> u64 {
        self.dropped + self.events.len() as u64
    }

    pub fn synthesis_started(&mut self, slot: usize, at: Instant) {
        if let Some(s) = self.synth_since.get_mut(slot) {
            *s = Some(at);
        }
    }
    pub fn synthesis_ended(&mut self, slot: usize) {
        if let Some(s) = self.synth_since.get_mut(slot) {
            *s = None;
        }
    }
    pub fn proving_started(&mut self, worker: usize, at: Instant) {
        if let Some(s) = self.worker_since.get_mut(worker) {
            *s = Some(at);
        }
    }
    pub fn proving_ended(&mut self, worker: usize) {
        if let Some(s) = self.worker_since.get_mut(worker) {
            *s = None;
        }
    }

    /// The syntheses running now.
    pub fn synthesizing(&self) -> usize {
        self.synth_since.iter().flatten().count()
    }

    fn window(&self, now: Instant, window: Duration) -> (Instant, Duration) {
        let age = now.saturating_duration_since(self.origin);
        let w = window.min(age);
        (now - w, w)
    }

    /// Busy fractions over the `window` before `now`, work in progress
    /// included.
    pub fn busy(&self, now: Instant, window: Duration) -> Busy {
        let (from, w) = self.window(now, window);
        let mut per_worker: Vec<Vec<(Instant, Instant)>> = vec![Vec::new(); self.workers.len()];
        let mut synth = Duration::ZERO;
        for e in &self.events {
            let Some((s, t)) = clip(e.start, e.start + e.dur, from, now) else {
                continue;
            };
            match e.lane {
                Lane::Worker { worker, .. } if e.name == "prove" => {
                    if let Some(v) = per_worker.get_mut(worker as usize) {
                        v.push((s, t));
                    }
                }
                Lane::Synthesis { .. } => synth += t - s,
                _ => {}
            }
        }
        for (i, since) in self.worker_since.iter().enumerate() {
            if let Some((s, t)) = since.and_then(|a| clip(a, now, from, now)) {
                per_worker[i].push((s, t));
            }
        }
        for since in self.synth_since.iter().flatten() {
            if let Some((s, t)) = clip(*since, now, from, now) {
                synth += t - s;
            }
        }
        let frac = |d: Duration| {
            if w.is_zero() {
                0.0
            } else {
                (d.as_secs_f64() / w.as_secs_f64()).min(1.0)
            }
        };
        let workers: Vec<WorkerBusy> = per_worker
            .iter()
            .enumerate()
            .map(|(i, v)| WorkerBusy {
                worker: i as u32,
                device: self.workers[i],
                busy_fraction: frac(union_len(v.clone())),
            })
            .collect();
        let mut by_device: BTreeMap<u32, Vec<(Instant, Instant)>> = BTreeMap::new();
        for (i, v) in per_worker.into_iter().enumerate() {
            if let Some(d) = self.workers[i] {
                by_device.entry(d).or_default().extend(v);
            }
        }
        let devices = by_device
            .into_iter()
            .map(|(device, v)| DeviceBusy {
                device,
                busy_fraction: frac(union_len(v)),
            })
            .collect();
        let slots = self.synth_since.len().max(1) as u32;
        let mean = if workers.is_empty() {
            0.0
        } else {
            workers.iter().map(|x| x.busy_fraction).sum::<f64>() / workers.len() as f64
        };
        Busy {
            window_s: w.as_secs_f64(),
            worker_busy_fraction: mean,
            workers,
            devices,
            synthesis_slots: slots,
            // The slots' busy time summed, over the window times the slots
            // (clamping before dividing capped it at 1/slots).
            synthesis_busy_fraction: if w.is_zero() {
                0.0
            } else {
                (synth.as_secs_f64() / (w.as_secs_f64() * slots as f64)).min(1.0)
            },
        }
    }

    /// The events that overlap the `window` before `now` (work in progress
    /// drawn up to now), as a Chrome trace: "X" events with `ts`/`dur` in
    /// microseconds since the engine started, named processes and threads.
    pub fn chrome_trace(&self, now: Instant, window: Duration) -> Value {
        let (from, w) = self.window(now, window);
        let mut lanes: BTreeMap<Lane, ()> = BTreeMap::new();
        let mut out = Vec::new();
        let mut emit = |out: &mut Vec<Value>,
                        name: &str,
                        lane: Lane,
                        start: Instant,
                        dur: Duration,
                        args: &Value| {
            let (pid, tid) = lane.ids();
            lanes.insert(lane, ());
            out.push(json!({
                "name": name,
                "cat": "cuzk",
                "ph": "X",
                "ts": us(start.saturating_duration_since(self.origin)),
                "dur": us(dur),
                "pid": pid,
                "tid": tid,
                "args": args,
            }));
        };
        for e in &self.events {
            if e.start + e.dur < from {
                continue;
            }
            emit(&mut out, e.name, e.lane, e.start, e.dur, &e.args);
        }
        let ongoing = json!({"ongoing": true});
        for (i, since) in self.synth_since.iter().enumerate() {
            if let Some(s) = since {
                let lane = Lane::Synthesis { slot: i as u32 };
                emit(&mut out, "synthesis", lane, *s, now - *s, &ongoing);
            }
        }
        for (i, since) in self.worker_since.iter().enumerate() {
            if let Some(s) = since {
                let lane = Lane::Worker {
                    worker: i as u32,
                    device: self.workers[i],
                };
                emit(&mut out, "prove", lane, *s, now - *s, &ongoing);
            }
        }
        let mut meta = Vec::new();
        let mut named_pids = std::collections::BTreeSet::new();
        for lane in lanes.keys() {
            let (pid, tid) = lane.ids();
            if named_pids.insert(pid) {
                meta.push(
                    json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                    "args": {"name": lane.process_name()}}),
                );
            }
            meta.push(
                json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                "args": {"name": lane.thread_name()}}),
            );
        }
        meta.extend(out);
        json!({
            "traceEvents": meta,
            "displayTimeUnit": "ms",
            "otherData": {
                "window_s": format!("{:.3}", w.as_secs_f64()),
                "events_dropped_since_start": self.dropped.to_string(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &'static str, lane: Lane, start: Instant, ms: u64) -> TraceEvent {
        TraceEvent {
            name,
            lane,
            start,
            dur: Duration::from_millis(ms),
            args: json!({}),
        }
    }

    #[test]
    fn busy_fractions_clip_to_the_window_and_union_per_device() {
        let t0 = Instant::now();
        let mut tl = Timeline::new(t0, 100, 2, vec![Some(0), Some(0), None]);
        let w0 = Lane::Worker {
            worker: 0,
            device: Some(0),
        };
        let w1 = Lane::Worker {
            worker: 1,
            device: Some(0),
        };
        // Worker 0 busy 0-400 ms, worker 1 200-600 ms: the device 0-600.
        tl.push(ev("prove", w0, t0, 400));
        tl.push(ev("prove", w1, t0 + Duration::from_millis(200), 400));
        tl.push(ev("synthesis", Lane::Synthesis { slot: 0 }, t0, 1000));
        tl.push(ev("queued", Lane::Queue { job: 1 }, t0, 1000));
        let now = t0 + Duration::from_millis(1000);
        let b = tl.busy(now, Duration::from_secs(60));
        assert!(
            (b.window_s - 1.0).abs() < 1e-9,
            "window is the engine's age"
        );
        assert!((b.workers[0].busy_fraction - 0.4).abs() < 1e-6);
        assert!((b.workers[1].busy_fraction - 0.4).abs() < 1e-6);
        assert_eq!(b.workers[2].busy_fraction, 0.0);
        assert_eq!(b.devices.len(), 1);
        assert!((b.devices[0].busy_fraction - 0.6).abs() < 1e-6);
        assert!(
            (b.synthesis_busy_fraction - 0.5).abs() < 1e-6,
            "one of two slots"
        );
        // A 500 ms window sees worker 1's last 100 ms only.
        let b = tl.busy(now, Duration::from_millis(500));
        assert_eq!(b.workers[0].busy_fraction, 0.0);
        assert!((b.workers[1].busy_fraction - 0.2).abs() < 1e-6);
        // Work in progress counts up to now.
        tl.proving_started(2, t0 + Duration::from_millis(750));
        let b = tl.busy(now, Duration::from_millis(500));
        assert!((b.workers[2].busy_fraction - 0.5).abs() < 1e-6);
        // Both slots busy the whole window: 1, not 1/slots.
        tl.push(ev("synthesis", Lane::Synthesis { slot: 1 }, t0, 1000));
        let b = tl.busy(now, Duration::from_secs(60));
        assert!(
            (b.synthesis_busy_fraction - 1.0).abs() < 1e-6,
            "both slots: {}",
            b.synthesis_busy_fraction
        );
    }

    #[test]
    fn the_ring_is_bounded_and_the_export_names_its_lanes() {
        let t0 = Instant::now();
        let mut tl = Timeline::new(t0, 3, 1, vec![None]);
        for i in 0..5 {
            tl.push(ev(
                "synthesis",
                Lane::Synthesis { slot: 0 },
                t0 + Duration::from_millis(i),
                1,
            ));
        }
        assert_eq!(tl.recorded(), 5);
        let v = tl.chrome_trace(t0 + Duration::from_millis(10), Duration::from_secs(1));
        let evs = v["traceEvents"].as_array().unwrap();
        let xs: Vec<&Value> = evs.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(xs.len(), 3, "oldest two dropped");
        assert_eq!(xs[0]["ts"].as_f64().unwrap(), 2000.0);
        assert_eq!(xs[0]["dur"].as_f64().unwrap(), 1000.0);
        assert!(evs
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "synthesis (cpu)"));
        assert_eq!(v["otherData"]["events_dropped_since_start"], "2");
    }
}
