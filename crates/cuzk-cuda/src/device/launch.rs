//! Kernel launches: typed launchers and the launch configuration of a 1-D
//! grid.
//!
//! Each kernel family declares its kernels with [`typed_kernels!`] next to
//! its host code, copying the parameter list of the `extern "C"` signature
//! in kernels/: the macro makes a handle type per kernel whose `launch`
//! takes exactly those parameters, in that order, with those types, so a
//! call site that passes them otherwise does not compile. The one `unsafe`
//! launch lives in the macro. Block sizes are named constants beside the
//! declarations (`*_BLOCK`).

use cudarc::driver::{CudaFunction, LaunchArgs, LaunchConfig, PushKernelArg};

use crate::error::Result;

/// A device address passed as a kernel's pointer parameter (`T*`).
pub(super) type DevPtr = u64;

/// The types a kernel parameter can have on the Rust side: `uint32_t`,
/// `uint64_t` and device pointers ([`DevPtr`]).
pub(super) trait Param {
    fn push<'a>(&'a self, b: &mut LaunchArgs<'a>);
}
impl Param for u32 {
    fn push<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        b.arg(self);
    }
}
impl Param for u64 {
    fn push<'a>(&'a self, b: &mut LaunchArgs<'a>) {
        b.arg(self);
    }
}

/// Looks a kernel up by its symbol in the loaded module.
pub(super) type Lookup<'a> = dyn Fn(&'static str) -> Result<CudaFunction> + 'a;

/// Declares typed kernel handles. Each entry is
/// `Name(param: Type, ...);` with the kernel's parameters in order, as the
/// `extern "C"` signature has them (a pointer is a [`DevPtr`], `uint32_t` a
/// `u32`, `uint64_t` a `u64`). One handle type serves every build of a
/// family that shares the signature (G1 / G2 / G1 inlined): `load` takes
/// the symbol.
///
/// `launch(dev, kernel, size, cfg, params...)` enqueues the kernel on the
/// device's stream; `kernel` and `size` name the failure in the error.
macro_rules! typed_kernels {
    ($(
        $(#[$doc:meta])*
        $name:ident($($arg:ident: $ty:ty),* $(,)?);
    )*) => {$(
        $(#[$doc])*
        pub(in crate::device) struct $name(cudarc::driver::CudaFunction);

        impl $name {
            pub(in crate::device) fn load(
                lookup: &$crate::device::launch::Lookup<'_>,
                symbol: &'static str,
            ) -> $crate::error::Result<Self> {
                lookup(symbol).map($name)
            }

            #[allow(clippy::too_many_arguments)]
            pub(in crate::device) fn launch(
                &self,
                dev: &$crate::device::CudaDevice,
                kernel: &'static str,
                size: usize,
                cfg: cudarc::driver::LaunchConfig,
                $($arg: $ty),*
            ) -> $crate::error::Result<()> {
                let mut b = dev.stream.launch_builder(&self.0);
                $($crate::device::launch::Param::push(&$arg, &mut b);)*
                // SAFETY: the parameters pushed are the kernel's, in order,
                // with its types (this declaration copies its signature, and
                // the compiler holds every call to the declaration); the
                // caller sizes the grid so that the kernel's own bounds
                // checks keep every access inside the buffers passed.
                unsafe { b.launch(cfg) }
                    .map_err(|e| dev.err("launch", kernel, size, e))?;
                Ok(())
            }
        }
    )*};
}
pub(super) use typed_kernels;

/// A 1-D grid of `block`-thread blocks covering `threads` threads (at least
/// one block).
pub(super) fn cfg1d(threads: usize, block: u32) -> LaunchConfig {
    let blocks = threads.div_ceil(block as usize).max(1) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}
