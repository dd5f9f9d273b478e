//! The 0/1 path of the MSM (sum_selected in kernels/zero_one.cuh): the sum of
//! the points whose scalar is 1, and MSMs split into that sum and an indexed
//! MSM over the other scalars.

use blstrs::{G1Projective, G2Projective, Scalar};
use cudarc::driver::CudaSlice;

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::{CudaDevice, DeviceGroup, DevicePoints, Group_};
use crate::error::Result;
use crate::host;

typed_kernels! {
    /// `sum_selected_g1`, `_g2`, `_g1i`: each thread's sum of its equal run
    /// of the selected points, found through the mask's popcount scan;
    /// with `pairs` (not 0) a pair of set bits adds the pair's sum.
    SumSelected["sum_selected_g1", "sum_selected_g2", "sum_selected_g1i"](
        points: DevPtr,
        pairs: DevPtr,
        mask: DevPtr,
        prefix: DevPtr,
        n_words: u32,
        out: DevPtr,
        nthreads: u32,
    );
    /// `pair_sums_g1`, `_g2`: XYZZ sums of consecutive pairs of points.
    PairSums["pair_sums_g1", "pair_sums_g2"](points: DevPtr, n_pairs: u32, out: DevPtr);
    /// `mask_popcount`: additions per mask word (set bits, or with
    /// `paired` pairs with a bit set).
    MaskPopcount["mask_popcount"](mask: DevPtr, n_words: u32, paired: u32, counts: DevPtr);
}

/// Threads of one full wave of each build of `sum_selected`: the blocks of
/// SUM_SELECTED_BLOCK threads its registers leave resident on an SM, times
/// the SMs.
pub(super) fn waves(
    kernels: &[SumSelected; 3],
    sms: usize,
) -> std::result::Result<[usize; 3], cudarc::driver::DriverError> {
    let mut out = [0; 3];
    for (o, k) in out.iter_mut().zip(kernels) {
        let per_sm =
            k.0.occupancy_max_active_blocks_per_multiprocessor(SUM_SELECTED_BLOCK, 0, None)?;
        *o = (per_sm.max(1) as usize * sms * SUM_SELECTED_BLOCK as usize)
            .min(crate::host::SUM_SELECTED_MAX_THREADS);
    }
    Ok(out)
}

/// Threads per block of pair_sums_*.
const PAIR_SUMS_BLOCK: u32 = 128;

/// Pairs per pair_sums launch: the XYZZ scratch of 2^22 pairs is 0.75 GiB
/// for G1, 1.5 GiB for G2.
const PAIR_SUMS_CHUNK: usize = 1 << 22;

/// Threads per block of mask_popcount.
const MASK_POPCOUNT_BLOCK: u32 = 256;

/// Threads per block of sum_selected_*.
const SUM_SELECTED_BLOCK: u32 = 128;

// Fewest points of the range per thread of sum_selected_* (a thread
// with fewer would leave more partial sums to reduce than it saves); the
// host states the 0/1 sum's scratch with it.
use crate::host::SUM_SELECTED_MIN;

impl CudaDevice {
    /// Sum of the points whose bit is set in `mask` (bit i of word i/32);
    /// bits at or past `points.len()` must be clear.
    pub fn sum_selected_g1(&self, points: &DevicePoints, mask: &[u32]) -> Result<G1Projective> {
        self.sum_selected_of(points, None, mask, "sum_selected_g1")
    }
    pub fn sum_selected_g2(&self, points: &DevicePoints, mask: &[u32]) -> Result<G2Projective> {
        self.sum_selected_of(points, None, mask, "sum_selected_g2")
    }

    /// [`Self::sum_selected_g1`] with the points' pair sums resident beside
    /// them (`pairs[i] = points[2i] + points[2i + 1]`, made by
    /// [`Self::pair_sums_device`] or [`host::pair_sums_g1`]): two set bits
    /// of a pair are one addition of their sum, so a random half mask takes
    /// 3/4 of the additions.
    pub fn sum_selected_g1_paired(
        &self,
        points: &DevicePoints,
        pairs: &DevicePoints,
        mask: &[u32],
    ) -> Result<G1Projective> {
        self.sum_selected_of(points, Some(pairs), mask, "sum_selected_g1_paired")
    }
    pub fn sum_selected_g2_paired(
        &self,
        points: &DevicePoints,
        pairs: &DevicePoints,
        mask: &[u32],
    ) -> Result<G2Projective> {
        self.sum_selected_of(points, Some(pairs), mask, "sum_selected_g2_paired")
    }

    fn sum_selected_of<G: DeviceGroup>(
        &self,
        points: &DevicePoints,
        pairs: Option<&DevicePoints>,
        mask: &[u32],
        kernel: &'static str,
    ) -> Result<G> {
        let b = self.sum_selected(G::GROUP, points, pairs, mask, kernel)?;
        Ok(G::from_xyzz(&b))
    }

    /// Refuses `pairs` that are not `points`' pair sums by shape: of the
    /// other group, or not `points.len() / 2` of them. `size` names the
    /// failing call's size.
    pub(super) fn check_pairs(
        &self,
        kernel: &'static str,
        size: usize,
        points: &DevicePoints,
        pairs: Option<&DevicePoints>,
    ) -> Result<()> {
        match pairs {
            Some(p) if p.group != points.group => {
                Err(self.bad(kernel, size, "pair sums of the other group".into()))
            }
            Some(p) if p.len != points.len / 2 => Err(self.bad(
                kernel,
                size,
                format!(
                    "{} pair sums for {} points (want {})",
                    p.len,
                    points.len,
                    points.len / 2
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The pair sums of resident points made on the device (what
    /// [`host::pair_sums_g1`] makes on the host): `pairs[i] = points[2i] +
    /// points[2i + 1]`, affine, for [`Self::sum_selected_g1_paired`] and
    /// `_g2_paired`. Device memory: the result (half the points' bytes)
    /// and an XYZZ scratch of at most PAIR_SUMS_CHUNK pairs.
    pub fn pair_sums_device(&self, points: &DevicePoints) -> Result<DevicePoints> {
        let kernel = "pair_sums";
        let group = points.group;
        let pairs = points.len / 2;
        let (ab, xb) = (group.affine_bytes(), group.xyzz_bytes());
        let buf: CudaSlice<u8> = self.alloc(kernel, pairs.max(1) * ab)?;
        if pairs > 0 {
            let chunk = pairs.min(PAIR_SUMS_CHUNK);
            let xyzz: CudaSlice<u8> = self.alloc(kernel, chunk * xb)?;
            let gi = (group == Group_::G2) as usize;
            for first in (0..pairs).step_by(chunk) {
                let m = chunk.min(pairs - first);
                self.k.pair_sums[gi].launch(
                    self,
                    kernel,
                    m,
                    cfg1d(m, PAIR_SUMS_BLOCK),
                    self.p(&points.buf) + (2 * first * ab) as u64,
                    m as u32,
                    self.p(&xyzz),
                )?;
                self.to_affine(group, self.p(&xyzz), self.p(&buf) + (first * ab) as u64, m)?;
            }
        }
        Ok(DevicePoints {
            group,
            len: pairs,
            buf,
        })
    }

    pub(super) fn sum_selected(
        &self,
        group: Group_,
        points: &DevicePoints,
        pairs: Option<&DevicePoints>,
        mask: &[u32],
        kernel: &'static str,
    ) -> Result<Vec<u8>> {
        let n = points.len;
        if points.group != group {
            return Err(self.bad(kernel, n, "points of the other group".into()));
        }
        self.check_pairs(kernel, n, points, pairs)?;
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
        self.sum_selected_at(group, points, pairs, self.p(&mbuf), kernel)
    }

    /// [`Self::sum_selected`] over a mask already on the device:
    /// `points.len().div_ceil(32)` words at `mask`, bits past the last
    /// point clear (the caller's checks, or the kernel that wrote it).
    /// `pairs`: as in [`Self::sum_selected_g1_paired`], checked by the
    /// caller.
    pub(super) fn sum_selected_at(
        &self,
        group: Group_,
        points: &DevicePoints,
        pairs: Option<&DevicePoints>,
        mask: u64,
        kernel: &'static str,
    ) -> Result<Vec<u8>> {
        let n = points.len;
        if n == 0 {
            return Ok(vec![0u8; group.xyzz_bytes()]);
        }
        let n_words = n.div_ceil(32);
        let counts: CudaSlice<u32> = self.alloc(kernel, n_words)?;
        self.k.mask_popcount.launch(
            self,
            kernel,
            n,
            cfg1d(n_words, MASK_POPCOUNT_BLOCK),
            mask,
            n_words as u32,
            pairs.is_some() as u32,
            self.p(&counts),
        )?;
        let prefix: CudaSlice<u32> = self.alloc(kernel, n_words + 1)?;
        self.scan(&counts, &prefix, n_words)?;
        drop(counts);
        let build = self.zero_one_kernel(group);
        let sum = &self.k.sum_selected[build];
        // About one wave of threads, each with at least SUM_SELECTED_MIN
        // points of the range, so that small sums do not pay for a wide
        // final reduction.
        let wave = self.sum_selected_wave[build];
        let threads = n.div_ceil(SUM_SELECTED_MIN).clamp(1, wave);
        let parts: CudaSlice<u8> = self.alloc(kernel, threads * group.xyzz_bytes())?;
        sum.launch(
            self,
            kernel,
            n,
            cfg1d(threads, SUM_SELECTED_BLOCK),
            self.p(&points.buf),
            pairs.map_or(0, |p| self.p(&p.buf)),
            mask,
            self.p(&prefix),
            n_words as u32,
            self.p(&parts),
            threads as u32,
        )?;
        drop(prefix);
        let cnt = self.upload(kernel, &[threads as u32])?;
        let off = self.upload(kernel, &[0u32, threads as u32])?;
        let (items, _, _, _) = self.reduce_segments(
            group,
            parts,
            cnt,
            off,
            1,
            threads,
            threads,
            host::MSM_CHUNK_MIN,
            kernel,
        )?;
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
