//! Subgroup checks on the GPU (kernels/subgroup.cuh): which of a run of
//! affine points, already known to lie on the curve, are outside the
//! prime-order subgroup. The constants come from [`crate::subgroup`], the
//! CPU model the kernels are checked against.
//!
//! Three ways in: host slices uploaded whole ([`CudaDevice::subgroup_check_g1`],
//! for tests and small runs), points already resident
//! ([`CudaDevice::subgroup_check_device`]), and raw point bytes streamed
//! through two caller-supplied staging buffers into one caller-supplied
//! device chunk ([`CudaDevice::subgroup_check_staged`]): the host copies
//! the next piece while the GPU checks the previous one, and the device
//! memory held is the chunk plus [`SUBGROUP_SCRATCH_BYTES`], whatever the
//! number of points (the caller reserves both from its budget).
//!
//! A child module of `device`, sharing its private allocation and launch
//! helpers.

use super::launch::{cfg1d, typed_kernels, DevPtr, Lookup};
use super::*;
use crate::subgroup::{constants, X_ABS, X_SQUARED};
use blstrs::{G1Affine, G2Affine};
use cudarc::driver::result;
use cudarc::driver::CudaSlice;
use rayon::prelude::*;

/// Device bytes a check allocates besides the points: the constants (β,
/// or ψ's two Fq2 coefficients: at most 192 bytes) and the two-word tally,
/// each a stream-ordered allocation rounded up by the pool.
pub const SUBGROUP_SCRATCH_BYTES: usize = 1024;

/// Threads per block: one point each. 128 as the MSM kernels use; the G1
/// kernel holds about 200 registers, so two such blocks fit an SM.
const SUBGROUP_BLOCK: u32 = 128;

/// Largest run one check takes: indices (with the caller's base) are u32
/// on the device, and a parameter section's length is a u32 in the file.
pub const SUBGROUP_MAX_POINTS: usize = u32::MAX as usize;

/// What a subgroup check found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubgroupReport {
    /// Points checked.
    pub checked: usize,
    /// Points outside the subgroup.
    pub outside: usize,
    /// The index of the first of them, None when there is none.
    pub first_outside: Option<usize>,
}

typed_kernels! {
    /// `subgroup_g1`: counts the points outside the subgroup (out[0]) and
    /// keeps the least index among them (out[1]); x² split into two words.
    SubgroupG1["subgroup_g1"](
        points: DevPtr,
        n: u32,
        base: u32,
        beta: DevPtr,
        x2_lo: u64,
        x2_hi: u64,
        out: DevPtr,
    );
    /// `subgroup_g2`: the same tally, from ψ's coefficients and |x|.
    SubgroupG2["subgroup_g2"](
        points: DevPtr,
        n: u32,
        base: u32,
        psi: DevPtr,
        x_abs: u64,
        out: DevPtr,
    );
}

pub(super) struct SubgroupKernels {
    g1: SubgroupG1,
    g2: SubgroupG2,
}

impl SubgroupKernels {
    pub(super) fn load(f: &Lookup<'_>) -> Result<Self> {
        Ok(SubgroupKernels {
            g1: SubgroupG1::load(f)?,
            g2: SubgroupG2::load(f)?,
        })
    }
}

/// The tally and constants of one check, on the device.
struct Tally {
    group: Group_,
    consts: CudaSlice<u8>,
    out: CudaSlice<u32>,
}

impl CudaDevice {
    fn subgroup_begin(&self, group: Group_) -> Result<Tally> {
        let kernel = "subgroup";
        let c = constants();
        let bytes: Vec<u8> = match group {
            Group_::G1 => host::fp_raw_bytes(&c.beta).to_vec(),
            Group_::G2 => {
                let mut v = host::fp2_raw_bytes(&c.psi_x).to_vec();
                v.extend_from_slice(&host::fp2_raw_bytes(&c.psi_y));
                v
            }
        };
        Ok(Tally {
            group,
            consts: self.upload(kernel, &bytes)?,
            out: self.upload(kernel, &[0u32, u32::MAX])?,
        })
    }

    /// Enqueues the check of `n` points at device address `points`; their
    /// indices in the tally start at `base`.
    fn subgroup_launch(&self, t: &Tally, points: u64, n: usize, base: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let (lo, hi) = (X_SQUARED as u64, (X_SQUARED >> 64) as u64);
        let cfg = cfg1d(n, SUBGROUP_BLOCK);
        let (n32, base32) = (n as u32, base as u32);
        match t.group {
            Group_::G1 => self.subgroup.g1.launch(
                self,
                "subgroup_g1",
                n,
                cfg,
                points,
                n32,
                base32,
                self.p(&t.consts),
                lo,
                hi,
                self.p(&t.out),
            ),
            Group_::G2 => self.subgroup.g2.launch(
                self,
                "subgroup_g2",
                n,
                cfg,
                points,
                n32,
                base32,
                self.p(&t.consts),
                X_ABS,
                self.p(&t.out),
            ),
        }
    }

    /// Waits for the launches and reads the tally.
    fn subgroup_finish(&self, t: Tally, checked: usize) -> Result<SubgroupReport> {
        let out = self.download("subgroup", &t.out, 2)?;
        self.synchronize()?;
        Ok(SubgroupReport {
            checked,
            outside: out[0] as usize,
            first_outside: (out[0] > 0).then_some(out[1] as usize),
        })
    }

    fn subgroup_len_ok(&self, kernel: &'static str, n: usize) -> Result<()> {
        if n > SUBGROUP_MAX_POINTS {
            return Err(CudaError::Unsupported {
                kernel,
                size: n,
                limit: SUBGROUP_MAX_POINTS,
                device: self.label.clone(),
            });
        }
        Ok(())
    }

    /// Checks resident points. Allocates [`SUBGROUP_SCRATCH_BYTES`].
    pub fn subgroup_check_device(&self, points: &DevicePoints) -> Result<SubgroupReport> {
        self.subgroup_len_ok("subgroup_check_device", points.len)?;
        let t = self.subgroup_begin(points.group)?;
        self.subgroup_launch(&t, self.p(&points.buf), points.len, 0)?;
        self.subgroup_finish(t, points.len)
    }

    /// Checks G1 points on the host, uploaded whole: allocates the points
    /// (96 bytes each) and [`SUBGROUP_SCRATCH_BYTES`].
    pub fn subgroup_check_g1(&self, points: &[G1Affine]) -> Result<SubgroupReport> {
        self.subgroup_check_device(&self.upload_g1(points)?)
    }

    /// Checks G2 points on the host, uploaded whole (192 bytes each, and
    /// [`SUBGROUP_SCRATCH_BYTES`]).
    pub fn subgroup_check_g2(&self, points: &[G2Affine]) -> Result<SubgroupReport> {
        self.subgroup_check_device(&self.upload_g2(points)?)
    }

    /// Checks the points whose raw bytes (blst's affine layout, as
    /// [`host::g1_as_bytes`] gives them) are `raw`, streamed through
    /// `staging` into `chunk`: each piece is copied by every core into a
    /// staging buffer while the GPU checks the previous piece, then sent
    /// to `chunk` on this device's stream (which orders it after the
    /// previous piece's check). Staging buffers should be page-locked (a
    /// pageable one works, at the driver's lower copy rate); a piece is
    /// as many points as `chunk` and the smaller staging buffer hold.
    /// Allocates only [`SUBGROUP_SCRATCH_BYTES`].
    pub fn subgroup_check_staged(
        &self,
        chunk: &DevicePoints,
        raw: &[u8],
        staging: [&mut [u8]; 2],
    ) -> Result<SubgroupReport> {
        let kernel = "subgroup_check_staged";
        let size = chunk.group.affine_bytes();
        if !raw.len().is_multiple_of(size) {
            return Err(self.bad(
                kernel,
                raw.len(),
                format!(
                    "{} bytes are not a whole number of {size}-byte points",
                    raw.len()
                ),
            ));
        }
        let n = raw.len() / size;
        self.subgroup_len_ok(kernel, n)?;
        let per = (chunk.buf.len() / size)
            .min(staging[0].len() / size)
            .min(staging[1].len() / size);
        if per == 0 && n > 0 {
            return Err(self.bad(
                kernel,
                n,
                format!(
                    "a device chunk of {} bytes and staging buffers of {} and {} bytes hold no point",
                    chunk.buf.len(),
                    staging[0].len(),
                    staging[1].len()
                ),
            ));
        }
        // The raw copies below need this context current on this thread.
        self.ctx
            .bind_to_thread()
            .map_err(|e| self.err("binding the context", kernel, n, e))?;
        let t = self.subgroup_begin(chunk.group)?;
        let dst = self.p(&chunk.buf);
        let [s0, s1] = staging;
        let mut slots: [(&mut [u8], Option<cudarc::driver::CudaEvent>); 2] =
            [(s0, None), (s1, None)];
        let run = |slots: &mut [(&mut [u8], Option<cudarc::driver::CudaEvent>); 2]| -> Result<()> {
            for (k, piece) in raw.chunks((per * size).max(1)).enumerate() {
                let (buf, copied) = &mut slots[k % 2];
                // The buffer's previous piece must have left it before it
                // is written again.
                if let Some(ev) = copied.take() {
                    ev.synchronize()
                        .map_err(|e| self.err("event synchronize", kernel, n, e))?;
                }
                let buf = &mut buf[..piece.len()];
                buf.par_chunks_mut(1 << 20)
                    .zip(piece.par_chunks(1 << 20))
                    .for_each(|(d, s)| d.copy_from_slice(s));
                // SAFETY: `dst` is `chunk`'s allocation, which holds `per`
                // points (so this piece) and outlives the call (borrowed);
                // this stream runs the copy after the previous piece's
                // check, which read the chunk. The staging buffer is not
                // written again until the event recorded just below has
                // completed (waited for above, or at the end of the call).
                unsafe { result::memcpy_htod_async(dst, &*buf, self.stream.cu_stream()) }
                    .map_err(|e| self.err("copy to device", kernel, piece.len(), e))?;
                *copied = Some(
                    self.stream
                        .record_event(None)
                        .map_err(|e| self.err("event", kernel, n, e))?,
                );
                self.subgroup_launch(&t, dst, piece.len() / size, k * per)?;
            }
            Ok(())
        };
        let ran = run(&mut slots);
        if let Err(e) = ran {
            // Whatever was enqueued still reads the staging buffers: wait
            // for it before they go back to the caller.
            let _ = self.synchronize();
            return Err(e);
        }
        self.subgroup_finish(t, n)
    }
}
