//! Fixed-base multiplication for parameter generation (kernels/fixed.cuh):
//! scalars times one base through its window table, then the batched
//! conversion to affine, in chunks whose device bytes are stated here.

use blstrs::{G1Affine, G2Affine, Scalar};
use cudarc::driver::CudaSlice;

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::{CudaDevice, Group_};
use crate::error::Result;
use crate::host::{self, FR_BYTES};

typed_kernels! {
    /// `fixed_base_g1`, `_g2`: out[i] = scalars[i]·B in XYZZ, from B's
    /// window table.
    FixedBase["fixed_base_g1", "fixed_base_g2"](
        table: DevPtr,
        window: u32,
        windows: u32,
        scalars: DevPtr,
        out: DevPtr,
        n: u32,
    );
    /// `to_affine_g1`, `_g2`: XYZZ to affine, `per` points per inversion,
    /// striding by the whole grid.
    ToAffine["to_affine_g1", "to_affine_g2"](input: DevPtr, out: DevPtr, n: u32, per: u32);
}

/// Threads per block of fixed_base_*.
const FIXED_BASE_BLOCK: u32 = 128;
/// Threads per block of to_affine_*.
const TO_AFFINE_BLOCK: u32 = 128;

/// Points per fixed-base launch: 4 Mi points hold 2.2 GiB of G2 scratch
/// (scalars, XYZZ and affine results), 1.3 GiB of G1.
const FIXED_BASE_CHUNK: usize = 1 << 22;
/// Points each to_affine thread converts with one inversion (~570 Fq
/// products, against ~3 products per point for the batching).
const TO_AFFINE_PER: u32 = 32;

impl CudaDevice {
    /// out[i] = scalars[i] · B in affine form, for the base B whose
    /// fixed-base table of window `window` is `table`
    /// (table[w·2^(c−1) + d − 1] = d·2^(c·w)·B, cuzk-core's layout).
    /// Parameter generation's bulk: every query point is such a multiple.
    pub fn fixed_base_g1(
        &self,
        table: &[G1Affine],
        window: u32,
        scalars: &[Scalar],
        out: &mut [G1Affine],
    ) -> Result<()> {
        self.fixed_base_g1_in(table, window, scalars, out, FIXED_BASE_CHUNK)
    }
    pub fn fixed_base_g2(
        &self,
        table: &[G2Affine],
        window: u32,
        scalars: &[Scalar],
        out: &mut [G2Affine],
    ) -> Result<()> {
        self.fixed_base_g2_in(table, window, scalars, out, FIXED_BASE_CHUNK)
    }
    /// [`Self::fixed_base_g1`] in chunks of at most `chunk` points (at
    /// least 1), so that its device memory is
    /// [`Self::fixed_base_bytes`]`(false, table.len(), chunk)`.
    pub fn fixed_base_g1_in(
        &self,
        table: &[G1Affine],
        window: u32,
        scalars: &[Scalar],
        out: &mut [G1Affine],
        chunk: usize,
    ) -> Result<()> {
        self.fixed_base(
            Group_::G1,
            host::g1_as_bytes(table),
            window,
            scalars,
            host::g1_as_bytes_mut(out),
            chunk,
        )
    }
    /// [`Self::fixed_base_g2`] in chunks of at most `chunk` points.
    pub fn fixed_base_g2_in(
        &self,
        table: &[G2Affine],
        window: u32,
        scalars: &[Scalar],
        out: &mut [G2Affine],
        chunk: usize,
    ) -> Result<()> {
        self.fixed_base(
            Group_::G2,
            host::g2_as_bytes(table),
            window,
            scalars,
            host::g2_as_bytes_mut(out),
            chunk,
        )
    }

    /// Device bytes one fixed-base chunk holds besides its table: scalars,
    /// XYZZ results and affine results.
    pub fn fixed_base_scratch_bytes(g2: bool, points: usize) -> usize {
        points.min(FIXED_BASE_CHUNK) * Self::fixed_base_bytes_per_point(g2)
    }

    /// Device bytes per point of a fixed-base chunk (scalar, XYZZ result,
    /// affine result).
    pub fn fixed_base_bytes_per_point(g2: bool) -> usize {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        FR_BYTES + group.xyzz_bytes() + group.affine_bytes()
    }

    /// Every device byte a fixed-base call over `points` points with a
    /// table of `table_points` points allocates at once when it runs in
    /// chunks of at most `chunk` points: the table and one chunk's scratch
    /// (the allocations of [`Self::fixed_base_g1_in`] and `_g2_in`).
    pub fn fixed_base_bytes(g2: bool, table_points: usize, points: usize, chunk: usize) -> usize {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let chunk = points.min(chunk.clamp(1, FIXED_BASE_CHUNK));
        table_points * group.affine_bytes() + chunk * Self::fixed_base_bytes_per_point(g2)
    }

    /// The largest chunk (at most the default of 2^22 points, at least 1)
    /// whose [`Self::fixed_base_bytes`] fit `room` bytes; None when not even
    /// one point does.
    pub fn fixed_base_chunk_for(g2: bool, table_points: usize, room: usize) -> Option<usize> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let left = room.checked_sub(table_points * group.affine_bytes())?;
        let chunk = (left / Self::fixed_base_bytes_per_point(g2)).min(FIXED_BASE_CHUNK);
        (chunk >= 1).then_some(chunk)
    }

    fn fixed_base(
        &self,
        group: Group_,
        table: &[u8],
        window: u32,
        scalars: &[Scalar],
        out: &mut [u8],
        max_chunk: usize,
    ) -> Result<()> {
        let kernel = "fixed_base";
        let n = scalars.len();
        if !(2..=20).contains(&window) {
            return Err(self.bad(kernel, n, format!("window {window} outside 2..=20")));
        }
        let windows = host::fixed_base_windows(window);
        let want = windows as usize * (1usize << (window - 1)) * group.affine_bytes();
        if table.len() != want {
            return Err(self.bad(
                kernel,
                n,
                format!(
                    "table of {} bytes, window {window} needs {want}",
                    table.len()
                ),
            ));
        }
        if out.len() != n * group.affine_bytes() {
            return Err(self.bad(
                kernel,
                n,
                format!("output of {} bytes for {n} points", out.len()),
            ));
        }
        if n == 0 {
            return Ok(());
        }
        let gi = (group == Group_::G2) as usize;
        let dtable = self.upload(kernel, table)?;
        // Device memory: the table and one chunk's scalars, XYZZ and affine
        // results, as `fixed_base_bytes` states.
        let chunk = n.min(max_chunk.clamp(1, FIXED_BASE_CHUNK));
        let xyzz: CudaSlice<u8> = self.alloc(kernel, chunk * group.xyzz_bytes())?;
        let affine: CudaSlice<u8> = self.alloc(kernel, chunk * group.affine_bytes())?;
        let mut dscalars: CudaSlice<u8> = self.alloc(kernel, chunk * FR_BYTES)?;
        let ab = group.affine_bytes();
        for (s, o) in scalars.chunks(chunk).zip(out.chunks_mut(chunk * ab)) {
            let m = s.len();
            self.stream
                .memcpy_htod(
                    host::scalars_as_bytes(s),
                    &mut dscalars.slice_mut(0..m * FR_BYTES),
                )
                .map_err(|e| self.err("copy to device", kernel, m, e))?;
            self.k.fixed_base[gi].launch(
                self,
                kernel,
                m,
                cfg1d(m, FIXED_BASE_BLOCK),
                self.p(&dtable),
                window,
                windows,
                self.p(&dscalars),
                self.p(&xyzz),
                m as u32,
            )?;
            self.to_affine(group, self.p(&xyzz), self.p(&affine), m)?;
            self.stream
                .memcpy_dtoh(&affine.slice(0..m * ab), o)
                .map_err(|e| self.err("copy to host", kernel, m, e))?;
        }
        self.synchronize()
    }
}

impl CudaDevice {
    /// `m` XYZZ points at `xyzz` to affine at `out` (to_affine_*: one
    /// inversion per TO_AFFINE_PER points).
    pub(super) fn to_affine(&self, group: Group_, xyzz: u64, out: u64, m: usize) -> Result<()> {
        let threads = m.div_ceil(TO_AFFINE_PER as usize);
        let cfg = cfg1d(threads, TO_AFFINE_BLOCK);
        // The kernel strides by the whole grid: size `per` from it so
        // that every point is covered.
        let grid = cfg.grid_dim.0 as usize * cfg.block_dim.0 as usize;
        let per = m.div_ceil(grid) as u32;
        self.k.to_affine[(group == Group_::G2) as usize].launch(
            self,
            "to_affine",
            m,
            cfg,
            xyzz,
            out,
            m as u32,
            per,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunk picked for a room is the largest whose stated bytes fit
    /// it; a room below the table and one point gives none.
    #[test]
    fn fixed_base_chunks_fit_their_room() {
        for g2 in [false, true] {
            let per = CudaDevice::fixed_base_bytes_per_point(g2);
            let table = 1000;
            let t_bytes = CudaDevice::fixed_base_bytes(g2, table, 0, 1);
            assert_eq!(CudaDevice::fixed_base_chunk_for(g2, table, t_bytes), None);
            assert_eq!(
                CudaDevice::fixed_base_chunk_for(g2, table, t_bytes + per - 1),
                None
            );
            for room in [t_bytes + per, t_bytes + 7 * per + 3, 1 << 30, 1 << 40] {
                let c = CudaDevice::fixed_base_chunk_for(g2, table, room).unwrap();
                assert!((1..=FIXED_BASE_CHUNK).contains(&c));
                let n = 1 << 30;
                assert!(
                    CudaDevice::fixed_base_bytes(g2, table, n, c) <= room,
                    "{room}"
                );
                if c < FIXED_BASE_CHUNK {
                    assert!(CudaDevice::fixed_base_bytes(g2, table, n, c + 1) > room);
                }
            }
            // Fewer points than the chunk: only those points' scratch.
            assert_eq!(
                CudaDevice::fixed_base_bytes(g2, table, 5, 1 << 20),
                t_bytes + 5 * per
            );
        }
    }
}
