//! The seam between the engine and the hardware: which devices exist, the
//! prover each worker uses, and the VRAM tier of the parameter manager.
//!
//! The CUDA backend (a later crate) implements [`DeviceBackend`]; this
//! module has the CPU implementation, which has no devices, so the VRAM
//! tier stays empty and status says that no GPU backend is present.

use cuzk_core::generator::FixedBaseEngine;
use cuzk_core::params::Parameters;
use cuzk_core::prover::{CpuBackend, ProverBackend};
use std::sync::Arc;

pub type DeviceError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DeviceInfo {
    pub index: u32,
    pub name: String,
    pub vram_total_bytes: u64,
    pub vram_free_bytes: u64,
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
    /// The prover for a worker bound to `device` (None: a CPU worker). The
    /// engine asks once per worker; workers of one device may call it at
    /// the same time, so it must take concurrent calls.
    fn prover(&self, device: Option<u32>) -> Arc<dyn ProverBackend>;
    /// Copy `params` into the device's memory under `id`; returns the bytes
    /// it occupies there. Called only when `gpu_present`.
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError>;
    /// Free what `upload_params` made resident.
    fn release_params(&self, device: u32, id: &str);
    /// Where parameters the daemon generates (kinds with a generator)
    /// have their fixed-base multiplications done: a GPU's engine, or
    /// None for the CPU.
    fn fixed_base_engine(&self) -> Option<Arc<dyn FixedBaseEngine + Send + Sync>> {
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
