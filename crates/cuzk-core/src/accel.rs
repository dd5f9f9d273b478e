//! The accelerator seam: which devices exist, the prover each of the
//! daemon's workers uses, what parameters each device holds resident,
//! where generated parameters get their fixed-base multiplications done,
//! and where loaded parameters get their subgroup checks.
//!
//! The backend owns each device's VRAM: what is resident there is what
//! [`DeviceBackend::resident_params`] says (the GPU backend evicts unused
//! sets itself, least recently used first, when a partition needs room),
//! and the daemon's parameter manager asks instead of keeping its own
//! account.
//!
//! Implemented by cuzk-gpu's `GpuDevices` (one CUDA backend per GPU) and,
//! here, by [`CpuDevices`], which has no devices: the VRAM tier stays empty
//! and status says that no GPU backend is present. The daemon (cuzk-daemon)
//! drives it; neither implementation knows the daemon.

use crate::generator::FixedBaseEngine;
use crate::params::Parameters;
use crate::prover::{CpuBackend, ProverBackend};
use crate::subgroup::SubgroupChecker;
use std::sync::Arc;

pub type DeviceError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceInfo {
    pub index: u32,
    pub name: String,
    pub vram_total_bytes: u64,
    pub vram_free_bytes: u64,
    /// The most device memory the driver's pool held at once since the
    /// backend opened (what partitions really allocated, beside the
    /// budget's account); 0 where the backend does not measure it.
    pub pool_high_bytes: u64,
    /// Parameter sets uploaded to the device since it opened (each upload
    /// of a resident set; a kind kept resident is uploaded once).
    pub param_uploads: u64,
}

/// A parameter set resident on a device, as the backend lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ResidentParams {
    /// The parameter id it was made resident under (the kind's
    /// `params_id`, or the backend's own id for sets it was not told).
    pub id: String,
    pub bytes: u64,
    /// Partitions in flight proving with it.
    pub in_use: u32,
    /// Milliseconds since it was last used.
    pub idle_ms: u64,
}

pub trait DeviceBackend: Send + Sync + 'static {
    /// The prover backend's name ("cpu", "cuda").
    fn name(&self) -> &'static str;
    /// True when devices are GPUs; the engine then runs
    /// `gpu_workers_per_device` proving workers per device (sharing that
    /// device's prover) and uses the VRAM tier.
    fn gpu_present(&self) -> bool;
    /// The devices, with their memory as of now.
    fn devices(&self) -> Vec<DeviceInfo>;
    /// How many devices there are (indices 0..count), without measuring
    /// their memory.
    fn device_count(&self) -> u32 {
        self.devices().len() as u32
    }
    /// The prover for a worker bound to `device` (None: a CPU worker). The
    /// engine asks once per worker; workers of one device may call it at
    /// the same time, so it must take concurrent calls.
    fn prover(&self, device: Option<u32>) -> Arc<dyn ProverBackend>;
    /// Copy `params` into the device's memory under `id`; returns the bytes
    /// it occupies there. The backend makes room by evicting sets no
    /// partition uses; it may refuse when there is none now (then the
    /// prover uploads them when its plan wants them, still under `id`).
    /// Called only when `gpu_present`.
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError>;
    /// Free what `upload_params` made resident (once no partition uses it).
    fn release_params(&self, device: u32, id: &str);
    /// The parameter sets resident on `device` now, as its owner knows
    /// them; empty for a backend without VRAM.
    fn resident_params(&self, _device: u32) -> Vec<ResidentParams> {
        Vec::new()
    }
    /// Whether `device` holds `id` now (asked for every ready chunk when a
    /// worker picks one, so a backend may answer cheaper than the list).
    fn holds_params(&self, device: u32, id: &str) -> bool {
        self.resident_params(device).iter().any(|r| r.id == id)
    }
    /// Caps the bytes of parameters kept resident per device (`[params]
    /// vram_budget`) inside the device's budget; None: the budget alone.
    fn set_resident_cap(&self, _cap: Option<u64>) {}
    /// Whether `error`, returned by `device`'s prover, means the device is
    /// lost (its context unusable: every later call would fail too). The
    /// engine then takes the device out of service and proves the
    /// partitions on the others (`engine.partition_retries`). Any other
    /// error (a partition that fits no staging plan, a refused input) is
    /// the partition's, fails its job and leaves the device in service.
    /// Only the backend can tell them apart (it owns the error's source);
    /// by default no error is a lost device.
    fn is_device_lost(&self, _device: u32, _error: &crate::Error) -> bool {
        false
    }
    /// Whether `device`, taken out of service as lost, works again: the
    /// engine asks every `engine.device_probe_interval_s` while it is out
    /// and returns it to service when this is Ok. A backend that cannot
    /// tell answers Err (the default), and its lost devices stay out until
    /// the daemon restarts.
    fn probe(&self, device: u32) -> Result<(), DeviceError> {
        Err(format!("backend {} cannot probe gpu {device}", self.name()).into())
    }
    /// Where parameters the daemon generates (kinds with a generator)
    /// have their fixed-base multiplications done: a GPU's engine, or
    /// None for the CPU.
    fn fixed_base_engine(&self) -> Option<Arc<dyn FixedBaseEngine + Send + Sync>> {
        None
    }
    /// Where the subgroup checks of parameter points run when the daemon
    /// checks a parameter file: a GPU's checker, or None for the CPU's
    /// ([`crate::subgroup::CpuSubgroupChecker`]).
    fn subgroup_checker(&self) -> Option<Arc<dyn SubgroupChecker>> {
        None
    }
}

/// No devices; every worker proves on the CPU.
#[derive(Clone, Debug, Default)]
pub struct CpuDevices;

impl DeviceBackend for CpuDevices {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn gpu_present(&self) -> bool {
        false
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        Vec::new()
    }
    fn prover(&self, _device: Option<u32>) -> Arc<dyn ProverBackend> {
        Arc::new(CpuBackend)
    }
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        _params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError> {
        Err(format!("the CPU backend has no device {device} to hold parameters {id}").into())
    }
    fn release_params(&self, _device: u32, _id: &str) {}
}
