//! Refusing what no GPU can prove: a partition that fits no plan on any GPU
//! in service, even with a GPU's whole budget to itself, can never be
//! proved (a partition that does fit waits for memory or takes a smaller
//! plan), so its job is refused when it is submitted, with the sizes named,
//! instead of failing when proving starts.
//!
//! The sizes come from the kind's parameter file's section headers (read
//! once per file, nothing decoded); a kind whose file does not exist yet
//! (parameters the daemon generates on first use) is checked when the
//! engine has leased its parameters, before anything is synthesized. The
//! rule itself is the backend's planner ([`DeviceBackend::check_fits`]);
//! this module only asks it, for every GPU in service.

use crate::devices::{DeviceBackend, NoPlanFits, PartitionSizes};
use cuzk_core::params::MappedParameters;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

/// A kind's partitions fit no plan on any GPU in service.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "kind {kind}: a partition ({sizes}) fits no plan on any GPU, even with a GPU's whole budget \
     to itself: {}; a GPU's budget is its free memory less engine.gpu_vram_margin, capped by \
     engine.gpu_vram_limit",
    each(.devices)
)]
pub struct NoGpuFits {
    pub kind: String,
    pub sizes: PartitionSizes,
    /// Every GPU in service, with what it lacks.
    pub devices: Vec<NoPlanFits>,
}

fn each(devices: &[NoPlanFits]) -> String {
    devices
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Ok when some GPU of `in_service` fits a partition of `sizes` (or none
/// is in service: the engine reports that itself), else the refusal
/// naming every GPU.
pub fn check(
    devices: &dyn DeviceBackend,
    in_service: &[u32],
    kind: &str,
    sizes: &PartitionSizes,
) -> Result<(), NoGpuFits> {
    let mut refusals = Vec::with_capacity(in_service.len());
    for &d in in_service {
        match devices.check_fits(d, sizes) {
            Ok(()) => return Ok(()),
            Err(e) => refusals.push(e),
        }
    }
    if refusals.is_empty() {
        return Ok(());
    }
    Err(NoGpuFits {
        kind: kind.to_owned(),
        sizes: *sizes,
        devices: refusals,
    })
}

/// The sizes each parameter file's headers give, by path, kept while the
/// file's length and modification time stay the same.
#[derive(Default)]
pub struct SizesByFile {
    known: Mutex<HashMap<std::path::PathBuf, (FileStamp, PartitionSizes)>>,
}

/// A file's length and modification time: a file replaced since is read
/// again.
type FileStamp = (u64, Option<SystemTime>);

impl SizesByFile {
    /// The partition sizes of the parameter file at `path`; None when it
    /// does not exist or cannot be read as parameters (loading it reports
    /// why, later).
    pub fn of(&self, path: &Path) -> Option<PartitionSizes> {
        let meta = std::fs::metadata(path).ok()?;
        let stamp: FileStamp = (meta.len(), meta.modified().ok());
        let lock = || self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&(known, sizes)) = lock().get(path) {
            if known == stamp {
                return Some(sizes);
            }
        }
        // Maps the file and reads its verifying key and section headers
        // (outside the lock: other kinds' submissions do not wait).
        let sizes = PartitionSizes::of_layout(&MappedParameters::open(path).ok()?.layout);
        lock().insert(path.to_path_buf(), (stamp, sizes));
        Some(sizes)
    }
}
