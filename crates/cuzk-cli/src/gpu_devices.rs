//! The daemon's devices on the GPU prover: one `cuzk_gpu::CudaBackend` per
//! GPU (with its VRAM budget and its residency table, the one account of
//! what each device holds), adapted to cuzk-daemon's `DeviceBackend` seam. Lives here because the `cuzk` binary
//! is where the daemon and the GPU prover meet; neither crate knows the
//! other.

use anyhow::Context;
use cuzk_core::params::Parameters;
use cuzk_core::prover::{CpuBackend, ProverBackend};
use cuzk_daemon::devices::{DeviceBackend, DeviceError, DeviceInfo, ResidentParams};
use cuzk_gpu::{CudaBackend, GpuConfig};
use std::sync::Arc;

pub struct GpuDevices {
    backends: Vec<Arc<CudaBackend>>,
    /// GPU 0's fixed-base engine for parameters the daemon generates,
    /// opened on first use (None after a failed open: the CPU then).
    fixed_base: std::sync::OnceLock<Option<Arc<cuzk_gpu::GpuFixedBase>>>,
}

impl GpuDevices {
    /// Every GPU of the machine, each with the engine's
    /// `gpu_workers_per_device` slots and its GPU budget settings
    /// (`gpu_vram_margin`, `gpu_vram_limit`, `gpu_reuse_host_buffers`);
    /// None where there is none (no libcuda, or no device), so the daemon
    /// proves on the CPU.
    pub fn open_all(engine: &cuzk_daemon::config::EngineConfig) -> anyhow::Result<Option<Self>> {
        let count = cuzk_gpu::device_count().context("counting GPUs")?;
        if count == 0 {
            return Ok(None);
        }
        let backends = (0..count)
            .map(|device| {
                CudaBackend::open(GpuConfig {
                    device,
                    workers_per_device: engine.gpu_workers_per_device.max(1),
                    budget: cuzk_gpu::BudgetConfig {
                        safety_margin: engine.gpu_vram_margin.0,
                        vram_limit: engine.gpu_vram_limit.map(|b| b.0),
                    },
                    reuse_host_buffers: engine.gpu_reuse_host_buffers,
                    ..GpuConfig::default()
                })
                .map(Arc::new)
                .with_context(|| format!("opening GPU {device} for the daemon"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Some(Self {
            backends,
            fixed_base: std::sync::OnceLock::new(),
        }))
    }
}

impl DeviceBackend for GpuDevices {
    fn name(&self) -> &'static str {
        "cuda"
    }
    fn gpu_present(&self) -> bool {
        true
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        self.backends
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let (name, total, free) = b.memory_info().ok()?;
                Some(DeviceInfo {
                    index: i as u32,
                    name,
                    vram_total_bytes: total,
                    vram_free_bytes: free,
                    pool_high_bytes: b.pool_high_water(),
                    param_uploads: b.parameter_uploads(),
                })
            })
            .collect()
    }
    fn prover(&self, device: Option<u32>) -> Arc<dyn ProverBackend> {
        match device.and_then(|d| self.backends.get(d as usize)) {
            Some(b) => b.clone(),
            None => Arc::new(CpuBackend),
        }
    }
    fn device_count(&self) -> u32 {
        self.backends.len() as u32
    }
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError> {
        let b = self
            .backends
            .get(device as usize)
            .ok_or_else(|| format!("no GPU {device}"))?;
        Ok(b.make_resident_as(id, params)?)
    }
    fn release_params(&self, device: u32, id: &str) {
        if let Some(b) = self.backends.get(device as usize) {
            b.evict_resident(id);
        }
    }
    fn resident_params(&self, device: u32) -> Vec<ResidentParams> {
        let Some(b) = self.backends.get(device as usize) else {
            return Vec::new();
        };
        b.resident()
            .into_iter()
            .map(|r| ResidentParams {
                id: r.id,
                bytes: r.bytes,
                in_use: r.in_use as u32,
                idle_ms: r.idle.as_millis() as u64,
            })
            .collect()
    }
    fn holds_params(&self, device: u32, id: &str) -> bool {
        self.backends
            .get(device as usize)
            .is_some_and(|b| b.is_resident(id))
    }
    /// Lost: a driver call of the prover failed with a code that leaves
    /// the context unusable (`cuzk_gpu::error::is_context_fatal_code`:
    /// a kernel fault, an ECC or other hardware error, the device or
    /// driver gone). Out of memory, a partition no staging plan fits and
    /// refused inputs are the partition's and leave the GPU in service.
    fn is_device_lost(&self, _device: u32, error: &cuzk_core::Error) -> bool {
        cuzk_gpu::error::is_context_fatal_error(error)
    }
    /// Passes when the GPU's stream synchronizes and the driver answers a
    /// memory query (`CudaBackend::probe`): a context left unusable fails
    /// both with its sticky error and stays out of service, a GPU whose
    /// error did not stick returns.
    fn probe(&self, device: u32) -> Result<(), DeviceError> {
        let b = self
            .backends
            .get(device as usize)
            .ok_or_else(|| format!("no GPU {device}"))?;
        Ok(b.probe()?)
    }
    fn set_resident_cap(&self, cap: Option<u64>) {
        for b in &self.backends {
            b.set_resident_cap(cap);
        }
    }
    fn fixed_base_engine(
        &self,
    ) -> Option<Arc<dyn cuzk_core::generator::FixedBaseEngine + Send + Sync>> {
        let e = self.fixed_base.get_or_init(|| {
            cuzk_gpu::GpuFixedBase::open(0)
                .map_err(|e| eprintln!("cuzk daemon: parameter generation stays on the CPU: {e}"))
                .ok()
                .map(Arc::new)
        });
        e.clone()
            .map(|e| e as Arc<dyn cuzk_core::generator::FixedBaseEngine + Send + Sync>)
    }
}
