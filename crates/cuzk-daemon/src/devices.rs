//! The seam between the engine and the hardware, as the daemon uses it:
//! cuzk-core's accelerator seam ([`cuzk_core::accel`]), re-exported under
//! the daemon's names. cuzk-gpu implements it for GPUs (`GpuDevices`);
//! [`CpuDevices`] is the CPU's, with no devices. [`open_devices`] opens
//! the machine's GPUs for the daemon.

pub use cuzk_core::accel::{
    CpuDevices, DeviceBackend, DeviceError, DeviceInfo, NoPlanFits, PartitionSizes, ResidentParams,
};

/// The machine's GPUs (every one, or `engine.gpu_devices`) behind the
/// accelerator seam, each with the engine's
/// `gpu_workers_per_device` slots and GPU budget settings
/// (`gpu_vram_margin`, `gpu_vram_limit`, `gpu_reuse_host_buffers`); the
/// CPU where there is none (no libcuda, no device) or the build has no
/// CUDA (the `cuda` feature).
pub fn open_devices(
    engine: &crate::config::EngineConfig,
) -> anyhow::Result<std::sync::Arc<dyn DeviceBackend>> {
    #[cfg(feature = "cuda")]
    {
        use anyhow::Context;
        let template = cuzk_gpu::GpuConfig {
            workers_per_device: engine.gpu_workers_per_device.max(1),
            budget: cuzk_gpu::BudgetConfig {
                safety_margin: engine.gpu_vram_margin.0,
                vram_limit: engine.gpu_vram_limit.map(|b| b.0),
            },
            reuse_host_buffers: engine.gpu_reuse_host_buffers,
            ..cuzk_gpu::GpuConfig::default()
        };
        let select = engine.gpu_devices.as_deref();
        if let Some(gpus) = cuzk_gpu::GpuDevices::open(template, select)
            .context("opening the GPUs for the daemon (engine.gpu_devices)")?
        {
            return Ok(std::sync::Arc::new(gpus));
        }
        if select.is_some_and(|s| s.is_empty()) {
            eprintln!("cuzk daemon: engine.gpu_devices is empty: proving on the CPU");
        }
    }
    #[cfg(not(feature = "cuda"))]
    if engine.gpu_devices.as_ref().is_some_and(|s| !s.is_empty()) {
        eprintln!(
            "cuzk daemon: engine.gpu_devices is set, but this build has no CUDA \
             (the `cuda` feature): proving on the CPU"
        );
    }
    Ok(std::sync::Arc::new(CpuDevices))
}
