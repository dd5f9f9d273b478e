//! A machine's GPUs behind cuzk-core's accelerator seam
//! ([`cuzk_core::accel::DeviceBackend`]): one [`CudaBackend`] per GPU, each
//! with its VRAM budget and its residency table (the one account of what
//! each device holds), GPU 0's fixed-base engine for parameters the
//! daemon generates, and the subgroup checker for parameters it loads.
//! The daemon drives it; this crate does not know the daemon.

use crate::{CudaBackend, GpuConfig, GpuError};
use cuzk_core::accel::{
    DeviceBackend, DeviceError, DeviceInfo, NoPlanFits, PartitionSizes, ResidentParams,
};
use cuzk_core::generator::FixedBaseEngine;
use cuzk_core::params::Parameters;
use cuzk_core::prover::{CpuBackend, ProverBackend};
use cuzk_core::subgroup::SubgroupChecker;
use std::sync::{Arc, OnceLock};

/// Opening one of the machine's GPUs failed.
#[derive(Debug, thiserror::Error)]
#[error("opening GPU {device}: {source}")]
pub struct OpenError {
    pub device: usize,
    #[source]
    pub source: GpuError,
}

pub struct GpuDevices {
    backends: Vec<Arc<CudaBackend>>,
    /// GPU 0's fixed-base engine for parameters the daemon generates,
    /// opened on first use (None after a failed open: the CPU then).
    fixed_base: OnceLock<Option<Arc<crate::GpuFixedBase>>>,
}

impl GpuDevices {
    /// Every GPU of the machine, each opened with `template`'s settings
    /// (its `device` replaced by the GPU's ordinal); None where there is
    /// none (no libcuda, or no device), so the caller proves on the CPU.
    pub fn open_all(template: GpuConfig) -> Result<Option<Self>, OpenError> {
        Self::open(template, None)
    }

    /// The GPUs of `select` (CUDA ordinals, in that order: the daemon's
    /// devices 0, 1, .. are these), or every GPU (None); None where
    /// `select` is empty, or none is selected and the machine has none. An
    /// ordinal the driver does not report (on a machine without GPUs, any),
    /// or one given twice, is refused by name.
    pub fn open(template: GpuConfig, select: Option<&[usize]>) -> Result<Option<Self>, OpenError> {
        if select.is_some_and(|s| s.is_empty()) {
            return Ok(None);
        }
        let count = crate::device_count().map_err(|source| OpenError { device: 0, source })?;
        if count == 0 && select.is_none() {
            return Ok(None);
        }
        let ordinals = crate::select_ordinals(count, select).map_err(|source| OpenError {
            device: match &source {
                GpuError::NoSuchDevice { ordinal, .. } => *ordinal,
                _ => 0,
            },
            source,
        })?;
        let backends = ordinals
            .into_iter()
            .map(|device| {
                CudaBackend::open(GpuConfig { device, ..template })
                    .map(Arc::new)
                    .map_err(|source| OpenError { device, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(Self {
            backends,
            fixed_base: OnceLock::new(),
        }))
    }

    /// The backends, one per GPU in ordinal order.
    pub fn backends(&self) -> &[Arc<CudaBackend>] {
        &self.backends
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
                // Under a selection the daemon's index and the CUDA
                // ordinal differ: the name says which card it is.
                let name = if b.device_ordinal() == i {
                    name
                } else {
                    format!("{name} (CUDA {})", b.device_ordinal())
                };
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
    fn keeps_parameters_resident(&self) -> bool {
        !self.backends.is_empty() && self.backends.iter().all(|b| b.keeps_parameters_resident())
    }
    fn wants_zero_one(&self) -> bool {
        self.backends.iter().any(|b| b.wants_zero_one())
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
        crate::error::is_context_fatal_error(error)
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
    /// The device's planner with its whole budget ([`CudaBackend::best_plan`]):
    /// the same arithmetic that admits a partition when it is proved, so a
    /// partition accepted here is never refused by the planner later
    /// (unless the budget shrinks meanwhile: other processes took memory).
    fn check_fits(&self, device: u32, sizes: &PartitionSizes) -> Result<(), NoPlanFits> {
        let Some(b) = self.backends.get(device as usize) else {
            return Ok(());
        };
        b.best_plan(sizes).map(|_| ()).map_err(|e| NoPlanFits {
            device,
            needed: e.needed,
            capacity: e.available,
        })
    }
    fn set_resident_cap(&self, cap: Option<u64>) {
        for b in &self.backends {
            b.set_resident_cap(cap);
        }
    }
    fn fixed_base_engine(&self) -> Option<Arc<dyn FixedBaseEngine + Send + Sync>> {
        let e = self.fixed_base.get_or_init(|| {
            // Under GPU 0's budget, so generation waits for room like a
            // partition instead of allocating beside what the budget has
            // promised.
            crate::GpuFixedBase::for_prover(self.backends[0].clone())
                .map_err(|e| eprintln!("cuzk daemon: parameter generation stays on the CPU: {e}"))
                .ok()
                .map(Arc::new)
        });
        e.clone()
            .map(|e| e as Arc<dyn FixedBaseEngine + Send + Sync>)
    }
    /// Every GPU, in turn per section: each check takes a grant from its
    /// GPU's budget like a partition.
    fn subgroup_checker(&self) -> Option<Arc<dyn SubgroupChecker>> {
        crate::GpuSubgroupChecker::new(self.backends.clone())
            .map(|c| Arc::new(c) as Arc<dyn SubgroupChecker>)
    }
}
