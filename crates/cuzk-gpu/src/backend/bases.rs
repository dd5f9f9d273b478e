//! The parameters' point vectors going up to a device, and read on the
//! host by the plans that stream them.
//!
//! Decoded vectors go up in one copy each. Vectors left in a mapped file
//! ([`Parameters::mapped`]) go up a piece at a time: the host's cores
//! decode a piece straight into one of two pinned buffers while the copy
//! engine sends the other, so the whole set is never in host memory (a 32
//! GiB PoRep's 47 GB) and the only host memory the upload takes is the two
//! buffers. The plans that do not keep parameters resident read a mapped
//! vector decoded whole, for the MSM that needs it, and drop it after.

use std::borrow::Cow;
use std::sync::Arc;

use blstrs::{G1Affine, G2Affine};
use cudarc::driver::{result, CudaEvent, CudaStream};
use cuzk_core::points::{FilePoint, Points};
use cuzk_core::{Error as CoreError, Parameters};
use cuzk_cuda::{CudaDevice, DevicePoints};

use super::{CudaBackend, Slot};
use crate::budget::Reservation;
use crate::error::{GpuError, Result};
use crate::pinned::PinnedPool;
use crate::plan::{Footprint, PartitionSizes};
use cuzk_core::points::PointsKey;

/// The parameters' point vectors by storage (a, b_g1, l, b_g2, h: each
/// decoded vector's allocation, or the mapped file and section): a weak
/// reference keeps the address from being reused but not the points, so a
/// resident or named set never holds host memory.
#[derive(Clone)]
pub(super) struct WeakKey(pub(super) [PointsKey; 5]);

impl WeakKey {
    pub(super) fn of(p: &Parameters) -> Self {
        WeakKey([p.a.key(), p.b_g1.key(), p.l.key(), p.b_g2.key(), p.h.key()])
    }
    pub(super) fn holds(&self, p: &Parameters) -> bool {
        let [a, b_g1, l, b_g2, h] = &self.0;
        a.holds(&p.a)
            && b_g1.holds(&p.b_g1)
            && l.holds(&p.l)
            && b_g2.holds(&p.b_g2)
            && h.holds(&p.h)
    }
    /// Whether the parameters are gone from the host.
    pub(super) fn dead(&self) -> bool {
        self.0[4].dead()
    }
}

/// The five point vectors on the device.
pub(super) struct ResidentBases {
    /// Which parameters these are.
    pub(super) key: WeakKey,
    pub(super) a: DevicePoints,
    pub(super) b_g1: DevicePoints,
    pub(super) b_g2: DevicePoints,
    pub(super) l: DevicePoints,
    pub(super) h: DevicePoints,
    // Dropped after the points (fields drop in order).
    pub(super) reservation: Reservation,
}

impl ResidentBases {
    pub(super) fn holds(&self, p: &Parameters) -> bool {
        self.key.holds(p)
    }
}

/// Device bytes of the five point vectors of `params`: the planner's count
/// ([`Footprint::params_bytes`] of their sizes). That count takes B in G2
/// to have as many points as B in G1, so parameters where it has not are
/// refused here, before anything is evicted, reserved or uploaded for them.
pub(super) fn params_bytes(params: &Parameters) -> Result<u64> {
    if params.b_g1.len() != params.b_g2.len() {
        return Err(GpuError::Core(CoreError::InvalidParameters(format!(
            "b_g1 has {} points and b_g2 {}: a parameter set has as many of each",
            params.b_g1.len(),
            params.b_g2.len()
        ))));
    }
    Ok(PartitionSizes::of_params(params).params_bytes())
}

/// An affine point type the upload writes into pinned bytes.
pub(super) trait DevicePoint: FilePoint {
    const G2: bool;
    fn upload(dev: &CudaDevice, v: &[Self]) -> cuzk_cuda::Result<DevicePoints>;
}

impl DevicePoint for G1Affine {
    const G2: bool = false;
    fn upload(dev: &CudaDevice, v: &[Self]) -> cuzk_cuda::Result<DevicePoints> {
        dev.upload_g1(v)
    }
}

impl DevicePoint for G2Affine {
    const G2: bool = true;
    fn upload(dev: &CudaDevice, v: &[Self]) -> cuzk_cuda::Result<DevicePoints> {
        dev.upload_g2(v)
    }
}

/// `bytes` as points to be overwritten; None if misaligned (pinned buffers
/// are page-aligned) or not a whole number of points.
fn as_points_mut<T: DevicePoint>(bytes: &mut [u8]) -> Option<&mut [T]> {
    // SAFETY: T is G1Affine or G2Affine (the only DevicePoint types):
    // #[repr(transparent)] over blst's affine points, #[repr(C)] arrays of
    // u64 without padding, for which every bit pattern is a valid value;
    // align_to_mut hands out only the correctly aligned middle part, and
    // the caller overwrites every point before anything reads it.
    let (head, mid, tail) = unsafe { bytes.align_to_mut::<T>() };
    (head.is_empty() && tail.is_empty()).then_some(mid)
}

impl CudaBackend {
    /// Reserves and uploads the five point vectors of `params`.
    pub(super) fn upload_bases(&self, slot: &Slot, params: &Parameters) -> Result<ResidentBases> {
        // Room was made for them: taken at once, never waited for.
        let reservation = self
            .budget
            .reserve_persistent(params_bytes(params)?, "resident parameters")?;
        let bases = ResidentBases {
            key: WeakKey::of(params),
            a: self.upload_points(slot, &params.a)?,
            b_g1: self.upload_points(slot, &params.b_g1)?,
            b_g2: self.upload_points(slot, &params.b_g2)?,
            l: self.upload_points(slot, &params.l)?,
            h: self.upload_points(slot, &params.h)?,
            reservation,
        };
        slot.dev.synchronize()?;
        self.uploads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(bases)
    }

    /// One vector to the device: in one copy when decoded, else decoded
    /// from its file a piece at a time through two pinned buffers (or,
    /// where the host will not pin them, a piece at a time through the
    /// driver's own staging).
    fn upload_points<T: DevicePoint>(
        &self,
        slot: &Slot,
        points: &Points<T>,
    ) -> Result<DevicePoints> {
        if let Some(v) = points.in_memory() {
            return Ok(T::upload(&slot.dev, v)?);
        }
        let n = points.len();
        let dst = slot.dev.alloc_points(T::G2, n)?;
        let base = slot.dev.points_address(&dst);
        let size = std::mem::size_of::<T>();
        let per = (self.config.file_piece_bytes / size).max(1);
        match two_buffers(&self.pinned, per * size) {
            Some(mut bufs) => {
                let r = self.upload_pieces(slot, points, base, per, &mut bufs);
                // A buffer returns to the pool only once the copy engine
                // has read it, whatever happened above.
                for (_, ev) in bufs.iter_mut() {
                    if let Some(ev) = ev.take() {
                        let _ = ev.synchronize();
                    }
                }
                r?;
            }
            None => {
                let mut piece = vec![T::default(); per.min(n)];
                for lo in (0..n).step_by(per) {
                    let hi = (lo + per).min(n);
                    let out = &mut piece[..hi - lo];
                    points.decode_into(lo, out)?;
                    // SAFETY: `lo..hi` lies inside `dst`, allocated above
                    // for `n` points and alive until this returns; the
                    // copy is synchronous (pageable memory), so `piece` may
                    // be overwritten once it returns.
                    unsafe { result::memcpy_htod_sync(base + (lo * size) as u64, &*out) }
                        .map_err(|e| self.drv("copy to device (parameters from a file)", e))?;
                }
            }
        }
        Ok(dst)
    }

    fn upload_pieces<T: DevicePoint>(
        &self,
        slot: &Slot,
        points: &Points<T>,
        base: u64,
        per: usize,
        bufs: &mut [(crate::pinned::PinnedLease<'_>, Option<CudaEvent>); 2],
    ) -> Result<()> {
        let stream: &Arc<CudaStream> = &slot.stream;
        let size = std::mem::size_of::<T>();
        let n = points.len();
        for (i, lo) in (0..n).step_by(per).enumerate() {
            let hi = (lo + per).min(n);
            let (lease, done) = &mut bufs[i % 2];
            if let Some(ev) = done.take() {
                ev.synchronize()
                    .map_err(|e| self.drv("event wait (parameters from a file)", e))?;
            }
            let bytes = &mut lease
                .bytes_mut()
                .map_err(|e| self.drv("pinned buffer", e))?[..(hi - lo) * size];
            let out = as_points_mut::<T>(bytes).ok_or_else(|| {
                GpuError::Core(cuzk_core::Error::InvalidParameters(
                    "pinned buffer not aligned for points".into(),
                ))
            })?;
            points.decode_into(lo, out)?;
            // SAFETY: the destination `lo..hi` lies inside the caller's
            // allocation of `n` points, alive until it returns; the pinned
            // source is not written again before the event recorded just
            // below has completed (waited for above, or by the caller).
            unsafe {
                result::memcpy_htod_async(base + (lo * size) as u64, &*bytes, stream.cu_stream())
            }
            .map_err(|e| self.drv("copy to device (parameters from a file)", e))?;
            *done = Some(
                stream
                    .record_event(None)
                    .map_err(|e| self.drv("record event", e))?,
            );
        }
        stream
            .synchronize()
            .map_err(|e| self.drv("synchronize (parameters from a file)", e))
    }
}

/// Two pinned buffers of `bytes` from the pool, or None.
fn two_buffers(
    pool: &PinnedPool,
    bytes: usize,
) -> Option<[(crate::pinned::PinnedLease<'_>, Option<CudaEvent>); 2]> {
    let a = pool.take(bytes).ok()?;
    let b = pool.take(bytes).ok()?;
    Some([(a, None), (b, None)])
}

/// The points a host-side plan reads: borrowed when decoded, decoded now
/// (whole) when they are in a mapped file; nothing when the plan reads
/// the resident copy instead.
pub(super) fn host_points<T: FilePoint>(
    points: &Points<T>,
    resident: bool,
) -> Result<Cow<'_, [T]>> {
    if resident {
        return Ok(Cow::Borrowed(&[]));
    }
    Ok(points.read()?)
}
