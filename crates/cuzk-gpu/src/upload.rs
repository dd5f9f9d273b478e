//! Host-to-device uploads on a worker's own stream, ordered against the
//! kernels on cuzk-cuda's stream by events instead of host synchronisation.
//!
//! a, b and c go up one after the other, each through a ring of a few
//! pinned buffers: every core copies the next piece of a vector into a free
//! ring buffer while the copy engine sends the previous piece, so neither
//! waits for the other and no pinned buffer of the vectors' full size is
//! needed (at 2^27 that would be 12 GiB of page-locked memory). When a
//! vector's last piece is enqueued, an event recorded after it goes to the
//! thread that launches kernels; cuzk-cuda's stream waits for it on the
//! device, so a vector's NTTs start as soon as it has arrived while the next
//! one is still being copied.
//!
//! Without the ring (pinned staging switched off, or the host refusing
//! page-locked memory) the same order holds with pageable copies, which the
//! driver stages itself at a lower rate.
//!
//! Sources of Montgomery scalars (the witness z) may go up packed by 0/1
//! ([`Unpack`], zpack.rs): a piece's copy threads write its compact form
//! into the ring buffer instead of the raw bytes, the copy engine sends it
//! to a device staging buffer, and a kernel enqueued right behind it on the
//! same stream expands it into place. The stream runs them in order, so
//! the next piece's copy into the staging buffer starts only once the
//! previous expansion has read it, and the event recorded after a vector's
//! last piece covers its last expansion.
//!
//! A 0/1 form may also be written into pinned memory ahead of the upload
//! ([`StagedForm`]), before a partition waits for the device: its upload
//! is then the copy engine's alone (no host copy inside the partition's
//! turn on the device, where a busy host stretched the ring's copies to
//! ten times their time).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{result, CudaEvent, CudaStream, DriverError};

use crate::pinned::{PinnedLease, PinnedPool};
use cuzk_core::zero_one::ZeroOneForm;

/// Ring buffers per upload and their size: a 32 MiB piece is about 0.6 ms
/// of copy-engine time at the 55 GB/s measured from pinned memory on the
/// H200, long beside the per-copy overhead, and four of them (128 MiB)
/// keep the host copy and the DMA in flight together.
pub const RING_SLOTS: usize = 4;
pub const RING_SLOT_BYTES: usize = 32 << 20;

/// Piece size for pageable copies (the driver stages them itself).
const PAGEABLE_PIECE: usize = 64 << 20;

/// Device bytes of the staging buffer packed pieces go to: one ring
/// buffer's worth, the most a packed piece may hold (a piece that would
/// not fit goes raw). One buffer is enough: the copies and expansions of
/// all pieces run in order on one stream, so a second could not be in use
/// at the same time.
pub const PACK_STAGING_BYTES: usize = RING_SLOT_BYTES;

/// Scalar sources that may go up packed by 0/1, and what expands a packed
/// piece on the device.
pub struct Unpack<'a> {
    /// The first `parts` sources are Montgomery scalars (z's inputs and
    /// aux); the others (bytes of any kind) always go raw.
    pub parts: usize,
    /// Source k's 0/1 form where the synthesis side made it (cuzk-core's
    /// `zero_one`, checked against the source by the caller), as it is or
    /// already written into pinned memory: its pieces are copied as they
    /// are, with nothing to classify on the way. Missing entries (and None)
    /// are packed as they go up.
    pub forms: &'a [Option<Form<'a>>],
    /// Whether the first `parts` sources without a form are packed as they
    /// go up (where that pays); off, they go raw.
    pub on_the_way: bool,
    /// The device buffer packed pieces are copied to, at least
    /// [`PACK_STAGING_BYTES`] long; the caller keeps it allocated until the
    /// stream has finished.
    pub staging: DeviceDst,
    /// Enqueues on the upload stream the expansion of the packed piece at
    /// device address `packed` (`n` elements) into the `n` scalars at
    /// device address `dst` (cuzk-cuda's `expand_z_on`).
    pub expand: &'a dyn Fn(u64, usize, u64) -> Result<(), cuzk_cuda::CudaError>,
}

/// A source's 0/1 form, as the synthesis side made it or already written
/// into pinned memory as the pieces the upload sends.
#[derive(Clone, Copy)]
pub enum Form<'a> {
    /// Written into the ring's buffers piece by piece as it goes up.
    Made(&'a ZeroOneForm),
    /// Written ahead ([`StagedForm::write`]): only the copies remain.
    Staged(&'a StagedForm<'a>),
}

impl Form<'_> {
    /// Elements of the vector the form stands for.
    pub fn len(&self) -> usize {
        match self {
            Form::Made(f) => f.len(),
            Form::Staged(s) => s.len,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A 0/1 form written into one pinned buffer as the packed pieces the
/// upload sends (each at most the device staging buffer's size, the
/// layout `expand_z` reads), so that sending it is copies alone. At 2^27
/// porep-like that is ~652 MB of page-locked memory for the partition's
/// life (the pool keeps it for the next one where its cache has room).
pub struct StagedForm<'a> {
    buf: PinnedLease<'a>,
    pieces: Vec<crate::zpack::StagedPiece>,
    /// Elements of the vector.
    len: usize,
}

/// A staged piece's start in the pinned buffer is aligned to this (the
/// copy engine reads whole 256-byte lines).
const STAGED_ALIGN: usize = 256;

impl<'a> StagedForm<'a> {
    /// `form` written into a buffer from `pool` in pieces of at most
    /// `room` bytes (each at least one group: `room` must hold one), on
    /// the copy pool; None where the pool cannot hand out that much
    /// page-locked memory (the form then goes through the ring as it is
    /// sent).
    pub fn write(pool: &'a PinnedPool, form: &ZeroOneForm, room: usize) -> Option<Self> {
        let (pieces, total) = crate::zpack::staged_layout(form, room, STAGED_ALIGN);
        let mut buf = pool.take(total.max(1)).ok()?;
        crate::zpack::write_staged(form, &pieces, buf.bytes_mut().ok()?);
        Some(StagedForm {
            buf,
            pieces,
            len: form.len(),
        })
    }
}

/// Why an upload stopped.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// A copy, an event or the context binding failed.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// A packed piece's expansion could not be launched.
    #[error(transparent)]
    Expand(#[from] cuzk_cuda::CudaError),
}

/// What an upload did: the host time it took and the bytes it sent over
/// the link (packed pieces count their packed size).
#[derive(Clone, Copy, Debug, Default)]
pub struct Uploaded {
    pub time: Duration,
    pub sent: u64,
}

/// A device destination: its address and its length in bytes.
#[derive(Clone, Copy, Debug)]
pub struct DeviceDst {
    pub ptr: u64,
    pub len: usize,
}

/// Pinned buffers the uploads go through, each with the event recorded
/// after the last copy that read it.
pub struct Ring<'a> {
    slots: Vec<(PinnedLease<'a>, Option<CudaEvent>)>,
    next: usize,
}

impl<'a> Ring<'a> {
    /// `slots` buffers of `bytes` each from the pool, or None when the host
    /// will not page-lock that much (the caller then copies pageable).
    pub fn take(pool: &'a PinnedPool, slots: usize, bytes: usize) -> Option<Self> {
        let slots = (0..slots.max(1))
            .map(|_| pool.take(bytes.max(1)).ok().map(|l| (l, None)))
            .collect::<Option<Vec<_>>>()?;
        Some(Ring { slots, next: 0 })
    }

    fn slot_bytes(&self) -> usize {
        self.slots[0].0.len()
    }

    /// The next buffer, once the copy engine has finished reading it, and
    /// where to put the event of the copy that reads it next.
    fn next_slot(&mut self) -> Result<(&mut [u8], &mut Option<CudaEvent>), UploadError> {
        let k = self.next;
        self.next = (k + 1) % self.slots.len();
        let (lease, done) = &mut self.slots[k];
        if let Some(ev) = done.take() {
            ev.synchronize()?;
        }
        Ok((lease.bytes_mut()?, done))
    }
}

impl Drop for Ring<'_> {
    fn drop(&mut self) {
        // A buffer goes back to the pool (and to the next user) only once
        // the copy engine has finished reading it. A failed wait means the
        // context is broken; nothing can be copied from it any more.
        for (_, ev) in self.slots.iter_mut() {
            if let Some(ev) = ev.take() {
                let _ = ev.synchronize();
            }
        }
    }
}

/// What the upload thread reports for each vector: its index and an event
/// recorded on the upload stream after its last copy (and expansion), or
/// the first error.
pub type Arrived = Result<(usize, CudaEvent), UploadError>;

/// Enqueues the copy of every `srcs[k]` to the start of `dsts[k]` on
/// `stream`, in order, reporting each vector on `arrived` as soon as its
/// last piece is enqueued. With `unpack`, the first `unpack.parts` sources
/// go through the ring packed by 0/1 where that pays. Stops early (without
/// error) once `cancel` is set, and after the first error (which it
/// reports). Returns the host time it took and the bytes it sent.
///
/// The destinations must stay allocated until the events have completed
/// and nothing else may write them meanwhile; the caller owns them and
/// joins this function's thread before freeing them.
pub fn upload_all(
    stream: &Arc<CudaStream>,
    mut ring: Option<Ring<'_>>,
    srcs: &[&[u8]],
    dsts: &[DeviceDst],
    unpack: Option<&Unpack<'_>>,
    cancel: &AtomicBool,
    arrived: &Sender<Arrived>,
) -> Uploaded {
    let clock = Instant::now();
    let mut sent = 0u64;
    let mut run = || -> Result<(), UploadError> {
        stream.context().bind_to_thread()?;
        for (k, (src, dst)) in srcs.iter().zip(dsts).enumerate() {
            assert!(
                src.len() <= dst.len,
                "upload of {} bytes into {}",
                src.len(),
                dst.len
            );
            let unpack = unpack.filter(|u| k < u.parts);
            let form = unpack.and_then(|u| u.forms.get(k).copied().flatten());
            if let Some(form) = form {
                assert_eq!(form.len() * cuzk_cuda::host::FR_BYTES, src.len());
            }
            match (ring.as_mut(), unpack, form) {
                (_, Some(u), Some(Form::Staged(staged))) => {
                    sent += staged_up(stream, staged, dst.ptr, u, cancel)?
                }
                (Some(ring), Some(u), Some(Form::Made(form))) => {
                    sent += form_through_ring(stream, ring, form, dst.ptr, u, cancel)?
                }
                (Some(ring), _, _) => {
                    let unpack = unpack.filter(|u| u.on_the_way);
                    sent += through_ring(stream, ring, src, dst.ptr, unpack, cancel)?
                }
                (None, _, _) => {
                    for (i, piece) in src.chunks(PAGEABLE_PIECE).enumerate() {
                        if cancel.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        // SAFETY: the destination range lies inside a live
                        // device allocation (asserted above, kept alive by
                        // the caller); a pageable source is staged by the
                        // driver before this call returns, so `src` may go
                        // away afterwards.
                        unsafe {
                            result::memcpy_htod_async(
                                dst.ptr + (i * PAGEABLE_PIECE) as u64,
                                piece,
                                stream.cu_stream(),
                            )
                        }?;
                        sent += piece.len() as u64;
                    }
                }
            }
            if cancel.load(Ordering::Relaxed) {
                return Ok(());
            }
            let ev = stream.record_event(None)?;
            if arrived.send(Ok((k, ev))).is_err() {
                return Ok(()); // the launching side has given up
            }
        }
        Ok(())
    };
    if let Err(e) = run() {
        let _ = arrived.send(Err(e));
    }
    Uploaded {
        time: clock.elapsed(),
        sent,
    }
}

/// One vector through the ring: wait for the oldest buffer's last copy,
/// fill it on the copy pool (copy.rs) with the piece, packed where
/// `unpack` allows and it pays (zpack.rs), enqueue its copy (and the
/// packed piece's expansion), record its event. Returns the bytes sent.
fn through_ring(
    stream: &Arc<CudaStream>,
    ring: &mut Ring<'_>,
    src: &[u8],
    dst: u64,
    unpack: Option<&Unpack<'_>>,
    cancel: &AtomicBool,
) -> Result<u64, UploadError> {
    let piece_bytes = ring.slot_bytes();
    let mut sent = 0u64;
    for (i, piece) in src.chunks(piece_bytes).enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Ok(sent);
        }
        let (buf, done) = ring.next_slot()?;
        let at = dst + (i * piece_bytes) as u64;
        let packed = unpack.and_then(|u| {
            let room = buf.len().min(u.staging.len);
            crate::zpack::pack_piece(piece, &mut buf[..room]).map(|len| (u, len))
        });
        match packed {
            Some((u, len)) => {
                // SAFETY: the staging buffer is a live device allocation of
                // at least `len` bytes (pack_piece wrote at most its room),
                // kept alive by the caller until the stream has finished;
                // the copy into it is ordered after the previous piece's
                // expansion, which read it, by this one stream. The pinned
                // source is not written again before the event recorded
                // below completes.
                unsafe {
                    result::memcpy_htod_async(u.staging.ptr, &buf[..len], stream.cu_stream())
                }?;
                (u.expand)(u.staging.ptr, piece.len() / cuzk_cuda::host::FR_BYTES, at)?;
                sent += len as u64;
            }
            None => {
                let buf = &mut buf[..piece.len()];
                crate::copy::parallel_copy(buf, piece);
                // SAFETY: the destination range lies inside a live device
                // allocation (the caller's contract); the pinned source is
                // not written again before the event recorded just below
                // completes (waited for above, or by the ring's drop).
                unsafe { result::memcpy_htod_async(at, &*buf, stream.cu_stream()) }?;
                sent += piece.len() as u64;
            }
        }
        *done = Some(stream.record_event(None)?);
    }
    Ok(sent)
}

/// A prepared 0/1 form through the ring: each ring buffer takes as many
/// groups as fit it (and the device staging buffer) as one packed piece,
/// written from the form (its header words and big values copied, nothing
/// classified), sent, and expanded into its place at `dst`. Returns the
/// bytes sent.
fn form_through_ring(
    stream: &Arc<CudaStream>,
    ring: &mut Ring<'_>,
    form: &ZeroOneForm,
    dst: u64,
    unpack: &Unpack<'_>,
    cancel: &AtomicBool,
) -> Result<u64, UploadError> {
    let room = ring.slot_bytes().min(unpack.staging.len);
    let mut sent = 0u64;
    let mut g = 0;
    while g < form.groups() {
        if cancel.load(Ordering::Relaxed) {
            return Ok(sent);
        }
        // A group is at most 32 elements and its 12 header bytes: far below
        // a ring buffer.
        let end = crate::zpack::form_piece_end(form, g, room)
            .expect("a ring buffer holds one group of a packed piece");
        let (buf, done) = ring.next_slot()?;
        let (len, n) = crate::zpack::write_form_piece(form, g, end, &mut buf[..room]);
        let at = dst + (g * cuzk_core::zero_one::GROUP * cuzk_cuda::host::FR_BYTES) as u64;
        // SAFETY: as for a piece packed on the way (through_ring): the
        // staging buffer is a live device allocation of at least `room`
        // bytes, kept alive by the caller until the stream has finished,
        // and the copy into it is ordered after the previous expansion by
        // this one stream; the pinned source is not written again before
        // the event recorded below completes.
        unsafe { result::memcpy_htod_async(unpack.staging.ptr, &buf[..len], stream.cu_stream()) }?;
        (unpack.expand)(unpack.staging.ptr, n, at)?;
        sent += len as u64;
        *done = Some(stream.record_event(None)?);
        g = end;
    }
    Ok(sent)
}

/// A form written ahead into pinned memory ([`StagedForm`]): each piece
/// copied to the device staging buffer and expanded into its place at
/// `dst`, in order on the one stream (a piece's copy starts once the
/// previous expansion has read the staging buffer). Returns the bytes
/// sent. The caller keeps `staged` until the stream has finished.
fn staged_up(
    stream: &Arc<CudaStream>,
    staged: &StagedForm<'_>,
    dst: u64,
    unpack: &Unpack<'_>,
    cancel: &AtomicBool,
) -> Result<u64, UploadError> {
    let buf = staged.buf.bytes()?;
    let mut sent = 0u64;
    for &crate::zpack::StagedPiece {
        at, len, n, first, ..
    } in &staged.pieces
    {
        if cancel.load(Ordering::Relaxed) {
            return Ok(sent);
        }
        assert!(
            len <= unpack.staging.len,
            "a staged piece of {len} bytes for a staging buffer of {}",
            unpack.staging.len
        );
        // SAFETY: the staging buffer is a live device allocation of at
        // least `len` bytes (asserted), kept alive by the caller until the
        // stream has finished, and the copy into it is ordered after the
        // previous piece's expansion, which read it, by this one stream;
        // the pinned source is neither written nor freed before the stream
        // has finished (the caller holds `staged` until then).
        unsafe {
            result::memcpy_htod_async(unpack.staging.ptr, &buf[at..at + len], stream.cu_stream())
        }?;
        (unpack.expand)(
            unpack.staging.ptr,
            n,
            dst + (first * cuzk_cuda::host::FR_BYTES) as u64,
        )?;
        sent += len as u64;
    }
    Ok(sent)
}
