//! The 0/1 path of the MSM (sum_selected in kernels/msm.cuh): the sum of
//! the points whose scalar is 1, and MSMs split into that sum and an indexed
//! MSM over the other scalars.

use blstrs::{G1Projective, G2Projective, Scalar};
use cudarc::driver::CudaSlice;

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::{CudaDevice, DevicePoints, Group_};
use crate::error::Result;
use crate::host;

typed_kernels! {
    /// `sum_selected_g1`, `_g2`, `_g1i`: each thread's sum of the points
    /// selected in its `words` mask words.
    SumSelected["sum_selected_g1", "sum_selected_g2", "sum_selected_g1i"](
        points: DevPtr,
        mask: DevPtr,
        n_words: u32,
        words: u32,
        out: DevPtr,
        nthreads: u32,
    );
}

/// Threads per block of sum_selected_*.
const SUM_SELECTED_BLOCK: u32 = 128;

impl CudaDevice {
    /// Sum of the points whose bit is set in `mask` (bit i of word i/32);
    /// bits at or past `points.len()` must be clear.
    pub fn sum_selected_g1(&self, points: &DevicePoints, mask: &[u32]) -> Result<G1Projective> {
        let b = self.sum_selected(Group_::G1, points, mask, "sum_selected_g1")?;
        Ok(host::g1_from_xyzz(&b))
    }
    pub fn sum_selected_g2(&self, points: &DevicePoints, mask: &[u32]) -> Result<G2Projective> {
        let b = self.sum_selected(Group_::G2, points, mask, "sum_selected_g2")?;
        Ok(host::g2_from_xyzz(&b))
    }

    pub(super) fn sum_selected(
        &self,
        group: Group_,
        points: &DevicePoints,
        mask: &[u32],
        kernel: &'static str,
    ) -> Result<Vec<u8>> {
        let n = points.len;
        if points.group != group {
            return Err(self.bad(kernel, n, "points of the other group".into()));
        }
        if mask.len() != n.div_ceil(32) {
            return Err(self.bad(
                kernel,
                n,
                format!("mask of {} words for {n} points", mask.len()),
            ));
        }
        if !n.is_multiple_of(32) && mask.last().is_some_and(|&w| w >> (n % 32) != 0) {
            return Err(self.bad(kernel, n, "mask bits set past the last point".into()));
        }
        if n == 0 {
            return Ok(vec![0u8; group.xyzz_bytes()]);
        }
        let mbuf = self.upload(kernel, mask)?;
        self.sum_selected_at(group, points, self.p(&mbuf), kernel)
    }

    /// [`Self::sum_selected`] over a mask already on the device:
    /// `points.len().div_ceil(32)` words at `mask`, bits past the last
    /// point clear (the caller's checks, or the kernel that wrote it).
    pub(super) fn sum_selected_at(
        &self,
        group: Group_,
        points: &DevicePoints,
        mask: u64,
        kernel: &'static str,
    ) -> Result<Vec<u8>> {
        let n = points.len;
        if n == 0 {
            return Ok(vec![0u8; group.xyzz_bytes()]);
        }
        // 8 words (256 points) per thread: 2^18 threads at 2^26 points.
        const WORDS: u32 = 8;
        let n_words = n.div_ceil(32);
        let threads = n_words.div_ceil(WORDS as usize);
        let parts: CudaSlice<u8> = self.alloc(kernel, threads * group.xyzz_bytes())?;
        self.k.sum_selected[self.msm_kernel(group)].launch(
            self,
            kernel,
            n,
            cfg1d(threads, SUM_SELECTED_BLOCK),
            self.p(&points.buf),
            mask,
            n_words as u32,
            WORDS,
            self.p(&parts),
            threads as u32,
        )?;
        let cnt = self.upload(kernel, &[threads as u32])?;
        let off = self.upload(kernel, &[0u32, threads as u32])?;
        let (items, _, _, _) =
            self.reduce_segments(group, parts, cnt, off, 1, threads, threads, kernel)?;
        self.download(kernel, &items, group.xyzz_bytes())
    }

    /// sum s_i P_i by the split: the 0/1 part through the 0/1 path, the rest
    /// through an indexed MSM over the same resident points.
    pub fn msm_g1_split(&self, points: &DevicePoints, scalars: &[Scalar]) -> Result<G1Projective> {
        if points.len != scalars.len() {
            return Err(self.bad(
                "msm_g1_split",
                scalars.len(),
                format!("{} points", points.len),
            ));
        }
        let split = host::split_zero_one(scalars);
        let ones = self.sum_selected_g1(points, &split.ones)?;
        let rest_s = self.upload_scalars(&split.rest_scalars)?;
        let rest = self.msm_g1_device(points, &rest_s, Some(&split.rest_ids))?;
        Ok(ones + rest)
    }

    pub fn msm_g2_split(&self, points: &DevicePoints, scalars: &[Scalar]) -> Result<G2Projective> {
        if points.len != scalars.len() {
            return Err(self.bad(
                "msm_g2_split",
                scalars.len(),
                format!("{} points", points.len),
            ));
        }
        let split = host::split_zero_one(scalars);
        let ones = self.sum_selected_g2(points, &split.ones)?;
        let rest_s = self.upload_scalars(&split.rest_scalars)?;
        let rest = self.msm_g2_device(points, &rest_s, Some(&split.rest_ids))?;
        Ok(ones + rest)
    }
}
