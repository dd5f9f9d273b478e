//! Where the subgroup membership of parameter points is checked.
//!
//! Decoding a point checks that it lies on the curve (a few µs); whether it
//! lies in the prime-order subgroup is the expensive part (tens of µs a
//! point with blst on one core, and a 32 GiB PoRep's file holds about 4.5e8
//! points). The parameter loader ([`crate::params`]) therefore decodes with
//! the curve check only and hands each section's points to a
//! [`SubgroupChecker`]: [`CpuSubgroupChecker`] here (blst's tests on every
//! core), or a GPU's (cuzk-gpu's `GpuSubgroupChecker`, found through
//! [`crate::accel::DeviceBackend::subgroup_checker`]). The loader turns an
//! index the checker reports into an error naming the file, the section,
//! the point and its offset.

use crate::Result;
use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;

/// Checks points already known to lie on the curve for membership of the
/// prime-order subgroup. Implementations may be called from several
/// threads at once (the loader checks sections in parallel).
pub trait SubgroupChecker: Send + Sync {
    /// Where the checks run, for logs and reports ("cpu", "cuda:0 (...)").
    fn name(&self) -> String;
    /// The index of the first point of `points` outside G1, None when all
    /// are in it (the point at infinity is). Err only when the check could
    /// not be made (a device failure), never for a point outside.
    fn first_outside_g1(&self, points: &[G1Affine]) -> Result<Option<usize>>;
    /// The same for G2.
    fn first_outside_g2(&self, points: &[G2Affine]) -> Result<Option<usize>>;
}

/// Points per parallel work item: one check is tens of µs, so 256 points
/// are milliseconds of work, far above rayon's overhead, and a section of
/// a few thousand points still spreads over every core.
const CPU_CHUNK: usize = 256;

/// blst's subgroup tests (`is_torsion_free`) on every core.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuSubgroupChecker;

impl SubgroupChecker for CpuSubgroupChecker {
    fn name(&self) -> String {
        "cpu".into()
    }
    fn first_outside_g1(&self, points: &[G1Affine]) -> Result<Option<usize>> {
        Ok(points
            .par_iter()
            .with_min_len(CPU_CHUNK)
            .position_first(|p| !bool::from(p.is_torsion_free())))
    }
    fn first_outside_g2(&self, points: &[G2Affine]) -> Result<Option<usize>> {
        Ok(points
            .par_iter()
            .with_min_len(CPU_CHUNK)
            .position_first(|p| !bool::from(p.is_torsion_free())))
    }
}
