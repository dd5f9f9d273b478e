//! Device memory: the allocation, copy and address helpers every kernel
//! family uses, resident points and scalars ([`DevicePoints`],
//! [`DeviceScalars`]) and pinned host memory for streaming points.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, ValidAsZeroBits};

use super::{CudaDevice, DeviceGroup, Group_};
use crate::error::Result;
use crate::host::{self, FR_BYTES};

/// Scalars as they lie in memory: blstrs' Montgomery limbs, or the canonical
/// little-endian integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarForm {
    Montgomery,
    Canonical,
}

/// Points resident in device memory, for repeated MSMs over one base.
pub struct DevicePoints {
    pub(super) group: Group_,
    pub(super) len: usize,
    pub(super) buf: CudaSlice<u8>,
}

impl DevicePoints {
    pub fn len(&self) -> usize {
        self.len
    }
    /// Treats the first `len` points of the buffer as the vector (a
    /// streamed chunk shorter than the buffer); false, and unchanged, if
    /// the buffer holds fewer.
    pub fn set_len(&mut self, len: usize) -> bool {
        if len * self.group.affine_bytes() > self.buf.len() {
            return false;
        }
        self.len = len;
        true
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Scalars resident in device memory.
pub struct DeviceScalars {
    pub(super) len: usize,
    pub(super) form: ScalarForm,
    pub(super) buf: CudaSlice<u8>,
}

impl DeviceScalars {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

fn ptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    // Event tracking is off (see device/mod.rs), so the guard does nothing.
    let (p, _guard) = s.device_ptr(stream);
    p
}

impl CudaDevice {
    pub(super) fn alloc<T: DeviceRepr>(
        &self,
        kernel: &'static str,
        len: usize,
    ) -> Result<CudaSlice<T>> {
        // SAFETY: every buffer from here is written by a kernel or a copy
        // before it is read (the kernels' index bounds guarantee it).
        unsafe { self.stream.alloc::<T>(len.max(1)) }.map_err(|e| self.err("alloc", kernel, len, e))
    }

    pub(super) fn zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        kernel: &'static str,
        len: usize,
    ) -> Result<CudaSlice<T>> {
        self.stream
            .alloc_zeros::<T>(len.max(1))
            .map_err(|e| self.err("alloc_zeros", kernel, len, e))
    }

    pub(super) fn upload<T: DeviceRepr>(
        &self,
        kernel: &'static str,
        data: &[T],
    ) -> Result<CudaSlice<T>> {
        if data.is_empty() {
            return self.alloc(kernel, 1);
        }
        self.stream
            .clone_htod(data)
            .map_err(|e| self.err("copy to device", kernel, data.len(), e))
    }

    pub(super) fn download<T: DeviceRepr + Default + Clone>(
        &self,
        kernel: &'static str,
        src: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>> {
        let mut out = vec![T::default(); len];
        if len > 0 {
            self.stream
                .memcpy_dtoh(&src.slice(0..len), &mut out)
                .map_err(|e| self.err("copy to host", kernel, len, e))?;
        }
        Ok(out)
    }

    pub(super) fn p<T>(&self, s: &CudaSlice<T>) -> u64 {
        ptr(s, &self.stream)
    }

    pub fn upload_g1(&self, points: &[G1Affine]) -> Result<DevicePoints> {
        self.upload_points::<G1Projective>(points)
    }
    pub fn upload_g2(&self, points: &[G2Affine]) -> Result<DevicePoints> {
        self.upload_points::<G2Projective>(points)
    }
    /// Resident points back to the host.
    pub fn download_g1(&self, points: &DevicePoints) -> Result<Vec<G1Affine>> {
        self.download_points::<G1Projective>(points)
    }
    pub fn download_g2(&self, points: &DevicePoints) -> Result<Vec<G2Affine>> {
        self.download_points::<G2Projective>(points)
    }
    fn download_points<G: DeviceGroup>(&self, points: &DevicePoints) -> Result<Vec<G::Affine>>
    where
        G::Affine: Default + Clone,
    {
        let kernel = "download_points";
        if points.group != G::GROUP {
            return Err(self.bad(kernel, points.len, "points of the other group".into()));
        }
        let mut out = vec![G::Affine::default(); points.len];
        if points.len > 0 {
            let bytes = points.len * G::GROUP.affine_bytes();
            self.stream
                .memcpy_dtoh(&points.buf.slice(0..bytes), G::as_bytes_mut(&mut out))
                .map_err(|e| self.err("copy to host", kernel, points.len, e))?;
        }
        Ok(out)
    }
    pub(super) fn upload_points<G: DeviceGroup>(
        &self,
        points: &[G::Affine],
    ) -> Result<DevicePoints> {
        Ok(DevicePoints {
            group: G::GROUP,
            len: points.len(),
            buf: self.upload(G::UPLOAD, G::as_bytes(points))?,
        })
    }
    /// Uploads points from any host buffer holding their raw bytes (e.g.
    /// pinned memory); `bytes.len()` must be a whole number of points.
    pub fn upload_points_raw(&self, g2: bool, bytes: &[u8]) -> Result<DevicePoints> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        if !bytes.len().is_multiple_of(group.affine_bytes()) {
            return Err(self.bad(
                "upload_points",
                bytes.len(),
                "not a whole number of affine points".into(),
            ));
        }
        Ok(DevicePoints {
            group,
            len: bytes.len() / group.affine_bytes(),
            buf: self.upload("upload_points", bytes)?,
        })
    }
    pub fn upload_scalars(&self, scalars: &[Scalar]) -> Result<DeviceScalars> {
        Ok(DeviceScalars {
            len: scalars.len(),
            form: ScalarForm::Montgomery,
            buf: self.upload("upload_scalars", host::scalars_as_bytes(scalars))?,
        })
    }
    /// Canonical scalars as little-endian u64 limbs (any 256-bit value; the
    /// kernels reduce it mod r).
    pub fn upload_scalars_canonical(&self, limbs: &[[u64; 4]]) -> Result<DeviceScalars> {
        let bytes: Vec<u8> = limbs
            .iter()
            .flatten()
            .flat_map(|l| l.to_le_bytes())
            .collect();
        let buf = self.upload("upload_scalars", &bytes)?;
        Ok(DeviceScalars {
            len: limbs.len(),
            form: ScalarForm::Canonical,
            buf,
        })
    }

    /// Room for `len` affine points on the device, uninitialised, for a
    /// caller that fills it from another stream of this context (with
    /// [`Self::points_address`]) and makes this device's stream wait for
    /// that copy ([`Self::wait_event`]) before an MSM reads it. The
    /// allocation has completed when this returns.
    pub fn alloc_points(&self, g2: bool, len: usize) -> Result<DevicePoints> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let buf: CudaSlice<u8> = self.alloc("alloc_points", len * group.affine_bytes())?;
        self.synchronize()?;
        Ok(DevicePoints { group, len, buf })
    }

    /// The device address of `points`' first byte, for copies into it.
    pub fn points_address(&self, points: &DevicePoints) -> u64 {
        self.p(&points.buf)
    }

    /// An uninitialised buffer of `len` Montgomery scalars for copies from
    /// another stream of this context ([`Self::scalars_address`]); the
    /// caller fills every element before a kernel reads it (ordered by an
    /// event this device's stream waits for).
    pub fn alloc_scalars(&self, len: usize) -> Result<DeviceScalars> {
        let buf: CudaSlice<u8> = self.alloc("alloc_scalars", len * FR_BYTES)?;
        self.synchronize()?;
        Ok(DeviceScalars {
            len,
            form: ScalarForm::Montgomery,
            buf,
        })
    }

    /// The device address of `scalars`' first byte, for copies into it.
    pub fn scalars_address(&self, scalars: &DeviceScalars) -> u64 {
        self.p(&scalars.buf)
    }

    /// Makes this device's stream wait (on the device, not the host) for
    /// `event`, recorded on another stream of the same context: work
    /// enqueued here afterwards starts only once the event has completed.
    pub fn wait_event(&self, event: &cudarc::driver::CudaEvent) -> Result<()> {
        self.stream
            .wait(event)
            .map_err(|e| self.err("stream wait", "wait_event", 0, e))
    }

    /// An event recorded on this device's stream now: another stream that
    /// waits for it waits for everything enqueued here so far.
    pub fn record_event(&self) -> Result<cudarc::driver::CudaEvent> {
        self.stream
            .record_event(None)
            .map_err(|e| self.err("record event", "record_event", 0, e))
    }

    /// Pinned (page-locked) host memory of `len` bytes on this device's
    /// context, for streaming points at full PCIe/NVLink-C2C speed.
    pub fn alloc_pinned(&self, len: usize) -> Result<cudarc::driver::PinnedHostSlice<u8>> {
        // SAFETY: the memory is uninitialised; callers fill it before use
        // (the bench writes every byte before the first copy).
        unsafe { self.ctx.alloc_pinned_with_flags::<u8>(len.max(1), 0) }
            .map_err(|e| self.err("cuMemHostAlloc", "pinned", len, e))
    }

    /// Copies raw point bytes from pinned memory into a new device buffer.
    pub fn upload_points_pinned(
        &self,
        g2: bool,
        src: &cudarc::driver::PinnedHostSlice<u8>,
        len: usize,
    ) -> Result<DevicePoints> {
        let group = if g2 { Group_::G2 } else { Group_::G1 };
        let bytes = len * group.affine_bytes();
        let mut buf: CudaSlice<u8> = self.alloc("upload_points_pinned", bytes)?;
        let host = src
            .as_slice()
            .map_err(|e| self.err("pinned slice", "upload_points_pinned", len, e))?;
        self.stream
            .memcpy_htod(&host[..bytes], &mut buf)
            .map_err(|e| self.err("copy to device", "upload_points_pinned", len, e))?;
        Ok(DevicePoints { group, len, buf })
    }
}
