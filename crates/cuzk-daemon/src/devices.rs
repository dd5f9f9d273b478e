//! The seam between the engine and the hardware, as the daemon uses it:
//! cuzk-core's accelerator seam ([`cuzk_core::accel`]), re-exported under
//! the daemon's names. cuzk-gpu implements it for GPUs (`GpuDevices`);
//! [`CpuDevices`] is the CPU's, with no devices.

pub use cuzk_core::accel::{
    CpuDevices, DeviceBackend, DeviceError, DeviceInfo, NoPlanFits, PartitionSizes, ResidentParams,
};
