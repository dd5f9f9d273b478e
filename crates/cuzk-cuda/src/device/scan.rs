//! The exclusive u32 scan (scan_block, scan_add in kernels/cuzk.cu) that
//! the MSM's counting sort and the compactions of `spmv` build on.

use cudarc::driver::{CudaSlice, LaunchConfig};

use super::launch::cfg1d;
use super::CudaDevice;
use crate::error::Result;

impl CudaDevice {
    /// Exclusive scan of `input[0..n]` into `out[0..=n]` (out[n] = total).
    pub(super) fn scan(
        &self,
        input: &CudaSlice<u32>,
        out: &CudaSlice<u32>,
        n: usize,
    ) -> Result<()> {
        let blocks = n.div_ceil(1024).max(1);
        let sums: CudaSlice<u32> = self.alloc("scan", blocks + 1)?;
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 0,
        };
        if blocks == 1 {
            // The block total lands straight in out[n].
            let total_ptr = self.p(out) + 4 * n as u64;
            self.launch(
                &self.k.scan_block,
                "scan_block",
                n,
                cfg,
                &[&self.p(input), &self.p(out), &(n as u32), &total_ptr],
            )?;
            return Ok(());
        }
        self.launch(
            &self.k.scan_block,
            "scan_block",
            n,
            cfg,
            &[&self.p(input), &self.p(out), &(n as u32), &self.p(&sums)],
        )?;
        let sums_scanned: CudaSlice<u32> = self.alloc("scan", blocks + 1)?;
        self.scan(&sums, &sums_scanned, blocks)?;
        let total_ptr = self.p(&sums_scanned) + 4 * blocks as u64;
        self.launch(
            &self.k.scan_add,
            "scan_add",
            n,
            cfg1d(n, 256),
            &[
                &self.p(out),
                &(n as u32),
                &self.p(&sums_scanned),
                &total_ptr,
            ],
        )?;
        Ok(())
    }
}
