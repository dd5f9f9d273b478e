//! Kernel launches: the launch configuration of a 1-D grid and the one
//! checked launch every kernel goes through.

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use super::CudaDevice;
use crate::error::Result;

pub(super) fn cfg1d(threads: usize, block: u32) -> LaunchConfig {
    let blocks = threads.div_ceil(block as usize).max(1) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl CudaDevice {
    pub(super) fn launch(
        &self,
        f: &CudaFunction,
        kernel: &'static str,
        size: usize,
        cfg: LaunchConfig,
        args: &[&dyn Arg],
    ) -> Result<()> {
        let mut b = self.stream.launch_builder(f);
        for a in args {
            a.push(&mut b);
        }
        // SAFETY: each call site passes the kernel's parameters in order with
        // matching types (u32 / u64 device pointers), and sizes its grid so
        // that the kernel's own bounds checks keep every access in bounds of
        // the buffers passed.
        unsafe { b.launch(cfg) }.map_err(|e| self.err("launch", kernel, size, e))?;
        Ok(())
    }
}

/// A kernel argument: a u32 or a u64 (device pointer).
pub(super) trait Arg {
    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>);
}
impl Arg for u32 {
    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>) {
        b.arg(self);
    }
}
impl Arg for u64 {
    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>) {
        b.arg(self);
    }
}
