//! The parameters' pinned mirror: their point vectors page-locked in host
//! memory (or copied into pinned buffers), for the plans that stream them
//! to the device per MSM or in chunks instead of keeping them resident.
//!
//! One mirror per parameter set in the process, whichever GPU made it:
//! page-locked once, portable to every device's context, and shared by
//! every backend that streams those parameters (`SHARED`). It goes, and
//! its pages are unlocked, when the last backend using it lets it go.

use std::sync::{Arc, Mutex, Weak};

use cudarc::driver::PinnedHostSlice;
use cuzk_core::Parameters;
use cuzk_cuda::host::{g1_as_bytes, g2_as_bytes};

use super::{relock, CudaBackend, WeakKey};
use crate::pinned::HostRegistration;

/// One parameter vector made pinned: page-locked where it lies (no extra
/// host memory), or, where the driver refuses that, copied into a pinned
/// buffer when the host has the memory to spare.
pub(super) enum MirrorPart {
    /// Held for its drop, which unregisters.
    Registered {
        _registration: Option<HostRegistration>,
    },
    Copied(PinnedHostSlice<u8>),
}

impl MirrorPart {
    /// The pinned bytes of `src` (the vector this part mirrors).
    pub(super) fn bytes<'a>(&'a self, src: &'a [u8]) -> Option<&'a [u8]> {
        match self {
            MirrorPart::Registered { .. } => Some(src),
            MirrorPart::Copied(p) => p.as_slice().ok().map(|s| &s[..src.len().min(s.len())]),
        }
    }
}

/// The parameters' point vectors in pinned host memory, for the plans that
/// stream them (per MSM or in chunks), keyed like [`ResidentBases`]; `of`,
/// a handle on the (decoded) parameters, keeps registered vectors alive
/// while registered.
pub(super) struct PinnedMirror {
    pub(super) of: Parameters,
    pub(super) a: MirrorPart,
    pub(super) b_g1: MirrorPart,
    pub(super) b_g2: MirrorPart,
    pub(super) l: MirrorPart,
    pub(super) h: MirrorPart,
}

impl PinnedMirror {
    fn holds(&self, p: &Parameters) -> bool {
        WeakKey::of(&self.of).holds(p)
    }
}

/// Every live mirror of the process, by any backend. Held while a mirror
/// is made, so that two GPUs reaching the same parameters at once make
/// one (a second registration of the same pages would be refused by the
/// driver, and the first owner's unlock would pull them from under the
/// second). Lock order: a backend's `mirror` slot, then this.
static SHARED: Mutex<Vec<Weak<PinnedMirror>>> = Mutex::new(Vec::new());

/// The live mirror of `params` another backend made, if any (dead entries
/// are dropped on the way).
fn shared_mirror(
    all: &mut Vec<Weak<PinnedMirror>>,
    params: &Parameters,
) -> Option<Arc<PinnedMirror>> {
    all.retain(|w| w.strong_count() > 0);
    all.iter()
        .filter_map(Weak::upgrade)
        .find(|m| m.holds(params))
}

/// Pinned mirrors alive in the process (any device's), for tests and
/// reports: two GPUs streaming the same parameters count one.
pub fn live_mirrors() -> usize {
    let mut all = relock(&SHARED);
    all.retain(|w| w.strong_count() > 0);
    all.len()
}

/// Host memory a pinned copy of the parameters must leave free: a copy
/// that would eat into it is not made (the pageable vectors serve), so a
/// large proof never pushes the host out of memory.
const HOST_RESERVE: u64 = 8 << 30;

impl CudaBackend {
    /// The pinned mirror of `params`, made on first use; None when pinned
    /// memory is off or short (the pageable vectors serve then).
    pub(super) fn mirror_of(&self, params: &Parameters) -> Option<Arc<PinnedMirror>> {
        if !self.config.pinned_staging {
            return None;
        }
        let mut m = relock(&self.mirror);
        if let Some(x) = &*m {
            if x.holds(params) {
                return Some(x.clone());
            }
        }
        *m = None;
        let mut all = relock(&SHARED);
        if let Some(x) = shared_mirror(&mut all, params) {
            *m = Some(x.clone());
            return Some(x);
        }
        // Points left in a mapped file have no host vectors to lock: the
        // plans decode them a vector at a time (`host_points`).
        let (Some(a), Some(b_g1), Some(b_g2), Some(l), Some(h)) = (
            params.a.in_memory(),
            params.b_g1.in_memory(),
            params.b_g2.in_memory(),
            params.l.in_memory(),
            params.h.in_memory(),
        ) else {
            return None;
        };
        // Page-lock in place; where refused (a locked-memory limit), copy
        // into pinned buffers only if the host keeps HOST_RESERVE free.
        let part = |b: &[u8]| -> Option<MirrorPart> {
            match HostRegistration::register(&self.ctx, b) {
                Ok(r) => Some(MirrorPart::Registered { _registration: r }),
                Err(_) => {
                    let avail = crate::pinned::host_memory_available().unwrap_or(u64::MAX);
                    if avail < b.len() as u64 + HOST_RESERVE {
                        return None;
                    }
                    crate::pinned::pinned_copy(&self.ctx, b)
                        .ok()
                        .map(MirrorPart::Copied)
                }
            }
        };
        let made = PinnedMirror {
            of: params.clone(),
            a: part(g1_as_bytes(a))?,
            b_g1: part(g1_as_bytes(b_g1))?,
            b_g2: part(g2_as_bytes(b_g2))?,
            l: part(g1_as_bytes(l))?,
            h: part(g1_as_bytes(h))?,
        };
        let made = Arc::new(made);
        all.push(Arc::downgrade(&made));
        *m = Some(made.clone());
        Some(made)
    }
}
