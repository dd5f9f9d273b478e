//! The exclusive u32 scan (scan_block, scan_add in kernels/cuzk.cu) that
//! the MSM's counting sort and the compactions of `spmv` build on.

use cudarc::driver::{CudaSlice, LaunchConfig};

use super::launch::{cfg1d, typed_kernels, DevPtr};
use super::CudaDevice;
use crate::error::Result;

typed_kernels! {
    /// `scan_block`: the exclusive scan of each block of [`SCAN_BLOCK`]
    /// inputs, and each block's total.
    ScanBlock["scan_block"](input: DevPtr, out: DevPtr, n: u32, block_sums: DevPtr);
    /// `scan_add`: adds each block's offset back, and copies the total to
    /// out[n].
    ScanAdd["scan_add"](out: DevPtr, n: u32, offsets: DevPtr, total: DevPtr);
}

/// Threads per block of scan_block, which scans one block's worth of
/// inputs: its `__launch_bounds__(1024)`, and the 1024 (`>> 10`) of
/// scan_add's offsets.
const SCAN_BLOCK: u32 = 1024;
/// Threads per block of scan_add.
const SCAN_ADD_BLOCK: u32 = 256;

impl CudaDevice {
    /// Exclusive scan of `input[0..n]` into `out[0..=n]` (out[n] = total).
    pub(super) fn scan(
        &self,
        input: &CudaSlice<u32>,
        out: &CudaSlice<u32>,
        n: usize,
    ) -> Result<()> {
        let blocks = n.div_ceil(SCAN_BLOCK as usize).max(1);
        let sums: CudaSlice<u32> = self.alloc("scan", blocks + 1)?;
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (SCAN_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // With one block its total lands straight in out[n].
        let block_sums = if blocks == 1 {
            self.p(out) + 4 * n as u64
        } else {
            self.p(&sums)
        };
        self.k.scan_block.launch(
            self,
            "scan_block",
            n,
            cfg,
            self.p(input),
            self.p(out),
            n as u32,
            block_sums,
        )?;
        if blocks == 1 {
            return Ok(());
        }
        let sums_scanned: CudaSlice<u32> = self.alloc("scan", blocks + 1)?;
        self.scan(&sums, &sums_scanned, blocks)?;
        let total_ptr = self.p(&sums_scanned) + 4 * blocks as u64;
        self.k.scan_add.launch(
            self,
            "scan_add",
            n,
            cfg1d(n, SCAN_ADD_BLOCK),
            self.p(out),
            n as u32,
            self.p(&sums_scanned),
            total_ptr,
        )?;
        Ok(())
    }
}
