//! Per-phase wall-clock timings of one proving call.

use serde::Serialize;
use std::time::Duration;

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
}

fn ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

impl PhaseTimings {
    /// Adds every phase of `t` but the total (a batch's total is its own
    /// wall time, not the sum of its parts').
    pub fn add(&mut self, t: &PhaseTimings) {
        self.synthesis += t.synthesis;
        self.abc += t.abc;
        self.upload += t.upload;
        self.h_ntt += t.h_ntt;
        self.msm_a += t.msm_a;
        self.msm_b_g1 += t.msm_b_g1;
        self.msm_b_g2 += t.msm_b_g2;
        self.msm_l += t.msm_l;
        self.msm_h += t.msm_h;
        self.readback += t.readback;
    }

    /// The phases in display order, with their names.
    pub fn phases(&self) -> [(&'static str, Duration); 11] {
        [
            ("synthesis", self.synthesis),
            ("abc", self.abc),
            ("upload", self.upload),
            ("h_ntt", self.h_ntt),
            ("msm_a", self.msm_a),
            ("msm_b_g1", self.msm_b_g1),
            ("msm_b_g2", self.msm_b_g2),
            ("msm_l", self.msm_l),
            ("msm_h", self.msm_h),
            ("readback", self.readback),
            ("total", self.total),
        ]
    }
}
