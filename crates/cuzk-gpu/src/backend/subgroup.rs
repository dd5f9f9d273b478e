//! Subgroup checks of parameter points on this backend's GPU: the points
//! (decoded on the host, already known to lie on the curve) go up in
//! pieces through two pinned staging buffers into one device chunk, and
//! cuzk-cuda's subgroup kernels tally the points outside. The device
//! memory is one grant from the device's budget (the chunk and the
//! kernels' scratch), taken like a partition's: waited for in the queue,
//! never beside it. A child module of `backend`, sharing its slots,
//! budget and pinned pool.

use super::*;
use cuzk_cuda::SUBGROUP_SCRATCH_BYTES;

/// Points per piece: 2^22 G1 points are 384 MiB (G2 768 MiB) of device
/// chunk and as much in each of the two pinned buffers. At the predicted
/// ~1.8e7 G1 points/s a piece is a quarter of a second of kernel time, far
/// above the per-piece cost (a launch, an event, a 2-word read-back), and
/// the memory held stays bounded whatever the section's size.
pub const SUBGROUP_PIECE_POINTS: usize = 1 << 22;

/// Device bytes a check takes without waiting for more when that much is
/// free: 64 MiB hold 2^19 G1 points (30 ms of kernel), still far above the
/// per-piece cost.
const SUBGROUP_MIN_ROOM: u64 = 64 << 20;

impl CudaBackend {
    /// Device bytes a subgroup check of `points` points holds at most: one
    /// piece of points and the kernels' scratch.
    pub fn subgroup_check_bytes(g2: bool, points: usize) -> u64 {
        let size = if g2 { G2 } else { G1 };
        points.min(SUBGROUP_PIECE_POINTS) as u64 * size + SUBGROUP_SCRATCH_BYTES as u64
    }

    /// The index of the first point outside the prime-order subgroup among
    /// `raw`, the bytes of `g2` (else G1) affine points as blstrs holds
    /// them (Montgomery limbs; [`g1_as_bytes`] / [`g2_as_bytes`]); None
    /// when every point is inside. Waits for its grant like a partition.
    pub fn subgroup_first_outside(&self, g2: bool, raw: &[u8]) -> Result<Option<usize>> {
        self.subgroup_first_outside_in(g2, raw, SUBGROUP_PIECE_POINTS)
    }

    /// [`Self::subgroup_first_outside`] in pieces of at most `piece`
    /// points (smaller still where the budget is smaller than a piece).
    pub fn subgroup_first_outside_in(
        &self,
        g2: bool,
        raw: &[u8],
        piece: usize,
    ) -> Result<Option<usize>> {
        let size = if g2 { G2 } else { G1 } as usize;
        let n = raw.len() / size;
        if n == 0 {
            return Ok(None);
        }
        // A piece fits what is free now where that is at least
        // SUBGROUP_MIN_ROOM (smaller pieces rather than a wait behind
        // partitions), and never more than the whole budget (else the
        // grant could never come); at least one point, whose grant then
        // names the shortfall.
        let room = self
            .budget
            .available()
            .max(SUBGROUP_MIN_ROOM)
            .min(self.budget.capacity())
            .saturating_sub(SUBGROUP_SCRATCH_BYTES as u64)
            / size as u64;
        let per = n.min(piece.max(1)).min((room as usize).max(1));
        let bytes = (per * size + SUBGROUP_SCRATCH_BYTES) as u64;
        let slot = self.acquire_slot();
        let grant = self.budget.grant_waiting(bytes, "a subgroup check")?;
        let _chunk_bytes = grant
            .budget()
            .reserve((per * size) as u64, "subgroup check points")?;
        let chunk = slot.dev.alloc_points(g2, per)?;
        let pinned = (self.pinned.take(per * size), self.pinned.take(per * size));
        let report = match pinned {
            (Ok(mut a), Ok(mut b)) => {
                let a = a.bytes_mut().map_err(|e| self.drv("pinned slice", e))?;
                let b = b.bytes_mut().map_err(|e| self.drv("pinned slice", e))?;
                slot.dev.subgroup_check_staged(&chunk, raw, [a, b])?
            }
            // The host refused to page-lock that much: pageable staging
            // (the driver stages those copies itself, at a lower rate).
            _ => {
                let (mut a, mut b) = (vec![0u8; per * size], vec![0u8; per * size]);
                slot.dev
                    .subgroup_check_staged(&chunk, raw, [&mut a, &mut b])?
            }
        };
        Ok(report.first_outside)
    }
}
