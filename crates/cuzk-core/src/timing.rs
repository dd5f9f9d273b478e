//! Per-phase wall-clock timings of one proving call.

use serde::Serialize;
use std::time::{Duration, Instant};

/// A phase of a proving call, one of [`PhaseTimings`]' fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Abc,
    Upload,
    HNtt,
    MsmA,
    MsmBG1,
    MsmBG2,
    MsmL,
    MsmH,
    Readback,
    /// Density selection and the 0/1 splits, on the thread beside the
    /// stream (no field: it overlaps the phases above).
    HostPrep,
}

impl Phase {
    /// The phases with a total in [`PhaseTimings`], in display order (the
    /// host preparation overlaps them and has none).
    pub const TIMED: [Phase; 9] = [
        Phase::Abc,
        Phase::Upload,
        Phase::HNtt,
        Phase::MsmA,
        Phase::MsmBG1,
        Phase::MsmBG2,
        Phase::MsmL,
        Phase::MsmH,
        Phase::Readback,
    ];

    /// The name the timings and the trace use.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Abc => "abc",
            Phase::Upload => "upload",
            Phase::HNtt => "h_ntt",
            Phase::MsmA => "msm_a",
            Phase::MsmBG1 => "msm_b_g1",
            Phase::MsmBG2 => "msm_b_g2",
            Phase::MsmL => "msm_l",
            Phase::MsmH => "msm_h",
            Phase::Readback => "readback",
            Phase::HostPrep => "host_prep",
        }
    }
}

/// Where a span ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanOn {
    /// The calling thread (the daemon's worker). On a GPU it issues the
    /// copies and kernels of the backend's stream `stream` in order and
    /// waits for them, so this is that stream's timeline; None where no
    /// stream is involved (the CPU backend, work on the host).
    Caller { stream: Option<u32> },
    /// The host-preparation thread beside the caller.
    Beside { stream: Option<u32> },
}

impl Default for SpanOn {
    fn default() -> Self {
        SpanOn::Caller { stream: None }
    }
}

/// One phase as it happened: when it started and how long it took, for a
/// timeline (the daemon's Chrome trace). Spans on one lane may nest (an
/// MSM's upload inside the MSM).
#[derive(Clone, Debug)]
pub struct PhaseSpan {
    pub phase: Phase,
    pub on: SpanOn,
    /// The partition's index within the call.
    pub partition: usize,
    pub start: Instant,
    pub dur: Duration,
}

/// Wall-clock time of each proving phase. Phases a backend does not have
/// (the CPU has no upload) stay zero. Serialized as milliseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhaseTimings {
    #[serde(serialize_with = "ms")]
    pub synthesis: Duration,
    /// a, b and c from a compiled system's sparse products (zero for full
    /// synthesis, which evaluates them while it records the constraints).
    #[serde(serialize_with = "ms")]
    pub abc: Duration,
    #[serde(serialize_with = "ms")]
    pub upload: Duration,
    #[serde(serialize_with = "ms")]
    pub h_ntt: Duration,
    #[serde(serialize_with = "ms")]
    pub msm_a: Duration,
    #[serde(serialize_with = "ms")]
    pub msm_b_g1: Duration,
    #[serde(serialize_with = "ms")]
    pub msm_b_g2: Duration,
    #[serde(serialize_with = "ms")]
    pub msm_l: Duration,
    #[serde(serialize_with = "ms")]
    pub msm_h: Duration,
    #[serde(serialize_with = "ms")]
    pub readback: Duration,
    #[serde(serialize_with = "ms")]
    pub total: Duration,
    /// Each phase as it happened, in the order recorded (not serialized:
    /// the fields above are the totals).
    #[serde(skip)]
    pub spans: Vec<PhaseSpan>,
    /// Where the next spans run, and their partition ([`Self::at`]).
    #[serde(skip)]
    context: (SpanOn, usize),
}

fn ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

impl PhaseTimings {
    /// Adds every phase of `t` but the total (a batch's total is its own
    /// wall time, not the sum of its parts').
    pub fn add(&mut self, t: &PhaseTimings) {
        self.synthesis += t.synthesis;
        for phase in Phase::TIMED {
            if let (Some(total), Some(more)) = (self.slot(phase), t.total_of(phase)) {
                *total += more;
            }
        }
        self.spans.extend(t.spans.iter().cloned());
    }

    /// The total of `phase` (None for the host preparation, which has no
    /// field).
    pub fn total_of(&self, phase: Phase) -> Option<Duration> {
        // Read through a copy of the totals (not the spans), so that one
        // match, `slot`'s, owns which field holds which phase.
        let mut copy = PhaseTimings {
            spans: Vec::new(),
            ..*self
        };
        copy.slot(phase).map(|d| *d)
    }

    /// The total of `phase`, to add to (None for the host preparation,
    /// which has no field).
    fn slot(&mut self, phase: Phase) -> Option<&mut Duration> {
        Some(match phase {
            Phase::Abc => &mut self.abc,
            Phase::Upload => &mut self.upload,
            Phase::HNtt => &mut self.h_ntt,
            Phase::MsmA => &mut self.msm_a,
            Phase::MsmBG1 => &mut self.msm_b_g1,
            Phase::MsmBG2 => &mut self.msm_b_g2,
            Phase::MsmL => &mut self.msm_l,
            Phase::MsmH => &mut self.msm_h,
            Phase::Readback => &mut self.readback,
            Phase::HostPrep => return None,
        })
    }

    /// Where the spans recorded next run, and for which partition of the
    /// call (set when a partition starts on a stream).
    pub fn at(&mut self, on: SpanOn, partition: usize) {
        self.context = (on, partition);
    }

    /// Ends `phase`, started at `start`: adds its time to the phase's
    /// total and records its span where [`at`](Self::at) said. Returns
    /// the time.
    pub fn end(&mut self, phase: Phase, start: Instant) -> Duration {
        let dur = start.elapsed();
        self.add_span(phase, start, dur);
        dur
    }

    /// Records `dur` of `phase` from `start` (a step measured elsewhere,
    /// or a part of a longer one): adds it to the phase's total and
    /// records its span where [`at`](Self::at) said; the host preparation
    /// goes on the lane beside that stream.
    pub fn add_span(&mut self, phase: Phase, start: Instant, dur: Duration) {
        if let Some(total) = self.slot(phase) {
            *total += dur;
        }
        let (mut on, partition) = self.context;
        if phase == Phase::HostPrep {
            if let SpanOn::Caller { stream } = on {
                on = SpanOn::Beside { stream };
            }
        }
        self.spans.push(PhaseSpan {
            phase,
            on,
            partition,
            start,
            dur,
        });
    }

    /// The phases in display order, with their names.
    pub fn phases(&self) -> [(&'static str, Duration); 11] {
        let mut out = [("synthesis", self.synthesis); 11];
        for (o, phase) in out[1..10].iter_mut().zip(Phase::TIMED) {
            *o = (phase.name(), self.total_of(phase).unwrap_or_default());
        }
        out[10] = ("total", self.total);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every timed phase lands in its own field, shows under its own name
    /// in `phases`, and `add` sums each (the host preparation only as a
    /// span).
    #[test]
    fn each_phase_has_its_field_and_name() {
        let mut t = PhaseTimings::default();
        let start = Instant::now();
        for (i, phase) in Phase::TIMED.into_iter().enumerate() {
            t.add_span(phase, start, Duration::from_millis(i as u64 + 1));
        }
        t.add_span(Phase::HostPrep, start, Duration::from_millis(100));
        t.synthesis = Duration::from_millis(50);
        t.total = Duration::from_millis(60);
        let shown = t.phases();
        assert_eq!(shown[0], ("synthesis", Duration::from_millis(50)));
        assert_eq!(shown[10], ("total", Duration::from_millis(60)));
        for (i, phase) in Phase::TIMED.into_iter().enumerate() {
            let want = Duration::from_millis(i as u64 + 1);
            assert_eq!(shown[i + 1], (phase.name(), want));
            assert_eq!(t.total_of(phase), Some(want));
        }
        assert_eq!(t.total_of(Phase::HostPrep), None);
        let mut sum = PhaseTimings::default();
        sum.add(&t);
        sum.add(&t);
        for phase in Phase::TIMED {
            assert_eq!(sum.total_of(phase), t.total_of(phase).map(|d| d * 2));
        }
        assert_eq!(sum.synthesis, Duration::from_millis(100));
        assert_eq!(sum.total, Duration::ZERO);
        assert_eq!(sum.spans.len(), 2 * t.spans.len());
    }
}
