//! Parameter generation's progress on stderr, for the front ends that
//! generate (`cuzk params gen --filecoin`, the benchmarks, the tests): the
//! one place that prints what [`cuzk_core::generator::GenerationEvent`]s say.

use cuzk_core::generator::GenerationEvent;

/// Generation's progress on stderr: the circuit's size once synthesized,
/// then each query's points done, at most every few seconds and at its end,
/// so that a run of minutes (the 32 GiB PoRep) is never silent for long.
pub struct ProgressPrinter {
    start: std::time::Instant,
    last: std::cell::Cell<Option<std::time::Instant>>,
}

impl Default for ProgressPrinter {
    fn default() -> Self {
        Self::new()
    }
}

/// Seconds between two lines for one query.
const PROGRESS_EVERY_S: f64 = 5.0;

impl ProgressPrinter {
    pub fn new() -> Self {
        ProgressPrinter {
            start: std::time::Instant::now(),
            last: std::cell::Cell::new(None),
        }
    }
    /// A line of its own, timed like the events.
    pub fn note(&self, what: &str) {
        let at = self.start.elapsed().as_secs_f64();
        eprintln!("[{at:7.1} s] {what}");
    }

    pub fn event(&self, e: &GenerationEvent) {
        let at = self.start.elapsed().as_secs_f64();
        match e {
            GenerationEvent::Synthesized {
                constraints,
                inputs,
                aux,
                entries,
                domain,
                compiled,
            } => eprintln!(
                "[{at:7.1} s] {}: {constraints} constraints (domain {domain}), \
                 {inputs} inputs, {aux} aux, {entries} matrix entries",
                if *compiled {
                    "constraints from the compiled system"
                } else {
                    "synthesized"
                }
            ),
            GenerationEvent::Scalars {
                g1_points,
                g2_points,
            } => eprintln!(
                "[{at:7.1} s] scalars ready: {g1_points} G1 and {g2_points} G2 points to compute"
            ),
            GenerationEvent::Query {
                query,
                done,
                total,
                elapsed,
            } => {
                let now = std::time::Instant::now();
                let due = self
                    .last
                    .get()
                    .is_none_or(|t| (now - t).as_secs_f64() >= PROGRESS_EVERY_S);
                if done == total || due {
                    self.last.set(Some(now));
                    let rate = *done as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6;
                    eprintln!(
                        "[{at:7.1} s] {query}: {done} / {total} points ({:.0}%), {rate:.2} M points/s",
                        100.0 * *done as f64 / (*total).max(1) as f64
                    );
                }
            }
        }
    }
}
