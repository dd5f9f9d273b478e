//! Queue order: four priority classes (CRITICAL > HIGH > NORMAL > LOW),
//! first in first out within a class, and a batch collector per circuit
//! kind that groups same-kind jobs until `max_batch_size` circuits or
//! `max_batch_wait` has passed. Kinds that do not batch bypass it.
//!
//! Pure data structures with explicit clocks, so every rule is unit-tested
//! without proofs; the engine drives them.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

pub type JobId = u64;

/// The classes are cluster mode's queue's too: one type for both.
pub use cuzk_cluster::Priority;

/// A job as the queue sees it.
#[derive(Clone, Debug)]
pub struct QueuedJob {
    pub id: JobId,
    pub kind: String,
    pub priority: Priority,
    /// Arrival order, unique and increasing.
    pub seq: u64,
    /// Its partition count: the circuits it adds to a batch.
    pub circuits: usize,
    pub batchable: bool,
}

/// Jobs of one kind handed to the pipeline together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    pub kind: String,
    /// The highest priority of its jobs.
    pub priority: Priority,
    /// The arrival order of its first job: FIFO key within the class.
    pub seq: u64,
    pub jobs: Vec<JobId>,
    pub circuits: usize,
}

struct Collector {
    batch: Batch,
    opened: Instant,
}

pub struct Scheduler {
    max_batch_size: usize,
    max_wait: Duration,
    /// Indexed by `Priority as usize`; each sorted by `seq`.
    classes: [VecDeque<Batch>; 4],
    collectors: HashMap<String, Collector>,
}

impl Scheduler {
    pub fn new(max_batch_size: usize, max_wait: Duration) -> Self {
        Self {
            max_batch_size: max_batch_size.max(1),
            max_wait,
            classes: Default::default(),
            collectors: HashMap::new(),
        }
    }

    pub fn push(&mut self, job: QueuedJob, now: Instant) {
        let single = Batch {
            kind: job.kind.clone(),
            priority: job.priority,
            seq: job.seq,
            jobs: vec![job.id],
            circuits: job.circuits,
        };
        if !job.batchable || job.circuits >= self.max_batch_size {
            self.enqueue(single);
            return;
        }
        if let Some(c) = self.collectors.get(&job.kind) {
            if c.batch.circuits + job.circuits > self.max_batch_size {
                if let Some(c) = self.collectors.remove(&job.kind) {
                    self.enqueue(c.batch);
                }
            }
        }
        let c = self
            .collectors
            .entry(job.kind.clone())
            .or_insert_with(|| Collector {
                batch: Batch {
                    jobs: Vec::new(),
                    circuits: 0,
                    ..single.clone()
                },
                opened: now,
            });
        c.batch.jobs.push(job.id);
        c.batch.circuits += job.circuits;
        c.batch.priority = c.batch.priority.max(job.priority);
        if c.batch.circuits >= self.max_batch_size {
            if let Some(c) = self.collectors.remove(&job.kind) {
                self.enqueue(c.batch);
            }
        }
    }

    fn enqueue(&mut self, batch: Batch) {
        let q = &mut self.classes[batch.priority as usize];
        let pos = q.iter().position(|b| b.seq > batch.seq).unwrap_or(q.len());
        q.insert(pos, batch);
    }

    /// Move collectors open for `max_wait` into their classes.
    pub fn flush_due(&mut self, now: Instant) {
        let due: Vec<String> = self
            .collectors
            .iter()
            .filter(|(_, c)| now.saturating_duration_since(c.opened) >= self.max_wait)
            .map(|(k, _)| k.clone())
            .collect();
        for k in due {
            if let Some(c) = self.collectors.remove(&k) {
                self.enqueue(c.batch);
            }
        }
    }

    /// Move every collector into its class (shutdown).
    pub fn flush_all(&mut self) {
        let all: Vec<String> = self.collectors.keys().cloned().collect();
        for k in all {
            if let Some(c) = self.collectors.remove(&k) {
                self.enqueue(c.batch);
            }
        }
    }

    /// The next batch to run: due collectors flushed, then the oldest batch
    /// of the highest non-empty class.
    pub fn pop(&mut self, now: Instant) -> Option<Batch> {
        self.flush_due(now);
        Priority::ALL
            .iter()
            .find_map(|&p| self.classes[p as usize].pop_front())
    }

    /// The class of the batch `pop` would return now (due collectors
    /// flushed first), without taking it.
    pub fn peek_priority(&mut self, now: Instant) -> Option<Priority> {
        self.flush_due(now);
        Priority::ALL
            .iter()
            .copied()
            .find(|&p| !self.classes[p as usize].is_empty())
    }

    /// When the earliest collector comes due.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.collectors
            .values()
            .map(|c| c.opened + self.max_wait)
            .min()
    }

    /// Remove a queued job; false when it is not queued here.
    pub fn remove(&mut self, id: JobId) -> bool {
        for q in self.classes.iter_mut() {
            for i in 0..q.len() {
                if let Some(pos) = q[i].jobs.iter().position(|&j| j == id) {
                    q[i].jobs.remove(pos);
                    if q[i].jobs.is_empty() {
                        q.remove(i);
                    }
                    // Circuit counts only guide batch filling; a shrunk
                    // batch keeps its place.
                    return true;
                }
            }
        }
        let mut found: Option<(String, bool)> = None;
        for (k, c) in self.collectors.iter_mut() {
            if let Some(pos) = c.batch.jobs.iter().position(|&j| j == id) {
                c.batch.jobs.remove(pos);
                found = Some((k.clone(), c.batch.jobs.is_empty()));
                break;
            }
        }
        if let Some((k, emptied)) = found {
            if emptied {
                self.collectors.remove(&k);
            }
            return true;
        }
        false
    }

    /// Queued jobs per class (in `Priority::ALL` order) and jobs collecting.
    pub fn depths(&self) -> ([(Priority, usize); 4], usize) {
        let per = Priority::ALL.map(|p| {
            (
                p,
                self.classes[p as usize].iter().map(|b| b.jobs.len()).sum(),
            )
        });
        let collecting = self.collectors.values().map(|c| c.batch.jobs.len()).sum();
        (per, collecting)
    }

    pub fn is_empty(&self) -> bool {
        self.collectors.is_empty() && self.classes.iter().all(|q| q.is_empty())
    }
}

/// Which of the ready chunks a free worker on `device` takes: among those
/// of the head's priority, the first whose parameters the device already
/// holds; otherwise the head. Never lets a lower class pass a higher one,
/// except past chunks this device cannot prove (`provable` false: their
/// partitions fit no plan on it, and another GPU in service takes them).
pub fn pick_for_worker<'a>(
    ready: impl Iterator<Item = (Priority, &'a str)>,
    device: Option<u32>,
    resident: impl Fn(&str, u32) -> bool,
    provable: impl Fn(usize) -> bool,
) -> Option<usize> {
    let mut head: Option<(Priority, usize)> = None;
    for (i, (p, params)) in ready.enumerate() {
        if !provable(i) {
            continue;
        }
        let (hp, _) = *head.get_or_insert((p, i));
        if p != hp {
            break;
        }
        match device {
            Some(d) if resident(params, d) => return Some(i),
            Some(_) => {}
            None => return Some(i),
        }
    }
    head.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: JobId, kind: &str, p: Priority, circuits: usize, batchable: bool) -> QueuedJob {
        QueuedJob {
            id,
            kind: kind.into(),
            priority: p,
            seq: id,
            circuits,
            batchable,
        }
    }

    #[test]
    fn priority_then_fifo() {
        let t = Instant::now();
        let mut s = Scheduler::new(1, Duration::from_millis(10));
        let order = [
            (1, Priority::Low),
            (2, Priority::Normal),
            (3, Priority::Critical),
            (4, Priority::High),
            (5, Priority::Normal),
            (6, Priority::Critical),
            (7, Priority::Low),
        ];
        for (id, p) in order {
            s.push(job(id, "k", p, 1, true), t);
        }
        let (d, _) = s.depths();
        assert_eq!(d.iter().map(|x| x.1).sum::<usize>(), 7);
        assert_eq!(s.peek_priority(t), Some(Priority::Critical));
        assert_eq!(
            s.depths().0.iter().map(|x| x.1).sum::<usize>(),
            7,
            "peek takes nothing"
        );
        let got: Vec<JobId> = std::iter::from_fn(|| s.pop(t))
            .flat_map(|b| b.jobs)
            .collect();
        assert_eq!(got, vec![3, 6, 4, 2, 5, 1, 7]);
        assert_eq!(s.peek_priority(t), None);
        assert!(s.is_empty());
    }

    #[test]
    fn batch_fills_and_times_out() {
        let t = Instant::now();
        let wait = Duration::from_millis(50);
        let mut s = Scheduler::new(3, wait);
        for id in 1..=4 {
            s.push(job(id, "k", Priority::Normal, 1, true), t);
        }
        // Full batch of three is ready at once; the fourth waits.
        assert_eq!(s.pop(t).unwrap().jobs, vec![1, 2, 3]);
        assert!(s.pop(t).is_none());
        assert_eq!(s.next_deadline(), Some(t + wait));
        assert!(s.pop(t + wait - Duration::from_millis(1)).is_none());
        let b = s.pop(t + wait).unwrap();
        assert_eq!((b.jobs, b.circuits), (vec![4], 1));
        assert!(s.next_deadline().is_none());
    }

    #[test]
    fn non_batching_and_big_jobs_bypass_and_kinds_separate() {
        let t = Instant::now();
        let mut s = Scheduler::new(4, Duration::from_secs(1));
        s.push(job(1, "a", Priority::Normal, 1, false), t);
        s.push(job(2, "b", Priority::Normal, 4, true), t);
        s.push(job(3, "c", Priority::Normal, 3, true), t);
        s.push(job(4, "d", Priority::Normal, 1, true), t);
        s.push(job(5, "c", Priority::High, 2, true), t); // 3 + 2 > 4: flushes c's 3
        assert_eq!(s.pop(t).unwrap().jobs, vec![1]);
        assert_eq!(s.pop(t).unwrap().jobs, vec![2]);
        assert_eq!(s.pop(t).unwrap().jobs, vec![3]);
        assert!(s.pop(t).is_none());
        let (_, collecting) = s.depths();
        assert_eq!(collecting, 2);
        s.flush_all();
        // The collector of c now holds job 5 (HIGH) and goes first.
        let b = s.pop(t).unwrap();
        assert_eq!((b.jobs, b.priority), (vec![5], Priority::High));
        assert_eq!(s.pop(t).unwrap().jobs, vec![4]);
    }

    #[test]
    fn batch_priority_is_max_and_fifo_by_first_job() {
        let t = Instant::now();
        let mut s = Scheduler::new(2, Duration::from_secs(1));
        s.push(job(1, "k", Priority::High, 1, false), t);
        s.push(job(2, "k2", Priority::Low, 1, true), t);
        s.push(job(3, "k2", Priority::High, 1, true), t); // fills: batch seq 2, HIGH
        let b = s.pop(t).unwrap();
        assert_eq!(b.jobs, vec![1]);
        let b = s.pop(t).unwrap();
        assert_eq!((b.jobs, b.priority), (vec![2, 3], Priority::High));
    }

    #[test]
    fn remove_from_queue_and_collector() {
        let t = Instant::now();
        let mut s = Scheduler::new(3, Duration::from_secs(1));
        s.push(job(1, "a", Priority::Normal, 1, false), t);
        s.push(job(2, "b", Priority::Normal, 1, true), t);
        s.push(job(3, "b", Priority::Normal, 1, true), t);
        assert!(s.remove(1));
        assert!(!s.remove(1));
        assert!(s.remove(2));
        assert!(s.remove(3));
        assert!(!s.remove(99));
        assert!(s.is_empty());
        assert!(s.pop(t + Duration::from_secs(2)).is_none());
    }

    #[test]
    fn worker_affinity_within_head_class() {
        let ready = [
            (Priority::High, "p1"),
            (Priority::High, "p2"),
            (Priority::Normal, "p3"),
        ];
        let res = |held: &'static [&'static str]| move |p: &str, _d: u32| held.contains(&p);
        let all = |_: usize| true;
        assert_eq!(
            pick_for_worker(ready.iter().copied(), Some(0), res(&["p2"]), all),
            Some(1)
        );
        // p3 is resident but NORMAL must not pass the HIGH head.
        assert_eq!(
            pick_for_worker(ready.iter().copied(), Some(0), res(&["p3"]), all),
            Some(0)
        );
        assert_eq!(
            pick_for_worker(ready.iter().copied(), None, res(&["p2"]), all),
            Some(0)
        );
        // Chunks this device cannot prove are passed over, whatever their
        // class: the head is the first it can prove.
        let not = |skip: &'static [usize]| move |i: usize| !skip.contains(&i);
        assert_eq!(
            pick_for_worker(ready.iter().copied(), Some(0), res(&[]), not(&[0])),
            Some(1)
        );
        assert_eq!(
            pick_for_worker(ready.iter().copied(), Some(0), res(&["p3"]), not(&[0, 1])),
            Some(2)
        );
        assert_eq!(
            pick_for_worker(
                ready.iter().copied(),
                Some(0),
                res(&["p1"]),
                not(&[0, 1, 2])
            ),
            None
        );
        assert_eq!(
            pick_for_worker(std::iter::empty(), Some(0), res(&[]), all),
            None
        );
    }
}
