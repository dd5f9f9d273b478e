//! The expansion of a witness piece sent up packed by 0/1 (`expand_z` in
//! kernels/zpack.cuh; the layout and its Rust model are crate::zpack's).
//! It runs on the caller's upload stream, right after the piece's copy.

use cudarc::driver::CudaStream;

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::CudaDevice;
use crate::error::{CudaError, Result};

typed_kernels! {
    /// `expand_z`: one thread per 64-bit limb of the piece's elements.
    ExpandZ["expand_z"](packed: DevPtr, n: u32, z: DevPtr);
}

/// Threads per block of expand_z (its `__launch_bounds__`): the kernel
/// only moves memory, and 256 keeps every SM full at any piece size.
const EXPAND_Z_BLOCK: u32 = 256;

impl CudaDevice {
    /// Enqueues on `stream` the expansion of the packed piece at device
    /// address `packed` (`n` elements, crate::zpack's layout) into the `n`
    /// scalars at device address `z`.
    ///
    /// # Safety
    /// `stream` belongs to this device's context; `packed` holds, by the
    /// time the kernel runs on `stream` (a copy enqueued on it before), a
    /// packed piece of `n` elements whose header names no data past the
    /// buffer's end; `z` has `n * 32` writable bytes; both stay allocated,
    /// and nothing else writes them, until the kernel has run.
    pub unsafe fn expand_z_on(
        &self,
        stream: &CudaStream,
        packed: u64,
        n: usize,
        z: u64,
    ) -> Result<()> {
        const KERNEL: &str = "expand_z";
        if n == 0 {
            return Ok(());
        }
        let n32 = u32::try_from(n).map_err(|_| CudaError::Unsupported {
            kernel: KERNEL,
            size: n,
            limit: u32::MAX as usize,
            device: self.label.clone(),
        })?;
        self.k.expand_z.launch_on(
            self,
            stream,
            KERNEL,
            n,
            cfg1d(4 * n, EXPAND_Z_BLOCK),
            packed,
            n32,
            z,
        )
    }
}
