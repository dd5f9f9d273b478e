//! cuzk-core's [`SubgroupChecker`] on the GPUs: the parameter loader hands
//! each decoded section to [`GpuSubgroupChecker`], which checks it on one
//! of the machine's GPUs ([`CudaBackend`]'s `subgroup_first_outside`:
//! pieces through pinned staging, device memory from the GPU's budget).
//! Sections the loader checks at once go to the GPUs in turn.
//! [`select_subgroup_checker`] picks the GPU or the CPU for a `--backend`
//! choice, as [`crate::select_fixed_base`] does for parameter generation.

use crate::{BackendChoice, Result};
use cuzk_core::subgroup::{CpuSubgroupChecker, SubgroupChecker};

#[cfg(feature = "cuda")]
pub use imp::GpuSubgroupChecker;

#[cfg(feature = "cuda")]
mod imp {
    use crate::{CudaBackend, GpuConfig, Result};
    use cuzk_core::subgroup::SubgroupChecker;
    use cuzk_core::{G1Affine, G2Affine};
    use cuzk_cuda::host::{g1_as_bytes, g2_as_bytes};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Subgroup checks on the GPUs of `backends`, one call on one GPU,
    /// successive calls on the next GPU in turn.
    pub struct GpuSubgroupChecker {
        backends: Vec<Arc<CudaBackend>>,
        next: AtomicUsize,
        name: String,
    }

    impl GpuSubgroupChecker {
        /// Checks on these backends' GPUs (at least one).
        pub fn new(backends: Vec<Arc<CudaBackend>>) -> Option<Self> {
            // The budget's label names the GPU ("0 (NVIDIA H200)") without
            // a driver call (which would wait for a worker slot).
            let first = backends.first()?.budget().device();
            let name = if backends.len() == 1 {
                format!("cuda:{first}")
            } else {
                format!("cuda:{first} and {} more GPUs", backends.len() - 1)
            };
            Some(GpuSubgroupChecker {
                backends,
                next: AtomicUsize::new(0),
                name,
            })
        }

        /// Opens GPU `device` with the default settings for the checks
        /// alone (`cuzk params info --check`).
        pub fn open(device: usize) -> Result<Self> {
            let b = CudaBackend::open(GpuConfig {
                device,
                workers_per_device: 1,
                ..GpuConfig::default()
            })?;
            Ok(Self::new(vec![Arc::new(b)]).expect("one backend"))
        }

        fn run(&self, g2: bool, raw: &[u8]) -> cuzk_core::Result<Option<usize>> {
            let i = self.next.fetch_add(1, Ordering::Relaxed) % self.backends.len();
            self.backends[i]
                .subgroup_first_outside(g2, raw)
                .map_err(|e| e.into_core())
        }
    }

    impl SubgroupChecker for GpuSubgroupChecker {
        fn name(&self) -> String {
            self.name.clone()
        }
        fn first_outside_g1(&self, points: &[G1Affine]) -> cuzk_core::Result<Option<usize>> {
            self.run(false, g1_as_bytes(points))
        }
        fn first_outside_g2(&self, points: &[G2Affine]) -> cuzk_core::Result<Option<usize>> {
            self.run(true, g2_as_bytes(points))
        }
    }
}

/// The checker for a `--backend` choice: `Cpu` the CPU, `Cuda` GPU
/// `device` or an error, `Auto` that GPU where usable, else the CPU with
/// the reason in the second value.
pub fn select_subgroup_checker(
    choice: BackendChoice,
    device: usize,
) -> Result<(Box<dyn SubgroupChecker>, Option<String>)> {
    match choice {
        BackendChoice::Cpu => Ok((Box::new(CpuSubgroupChecker), None)),
        BackendChoice::Cuda => open_gpu(device).map(|c| (c, None)),
        BackendChoice::Auto => match open_gpu(device) {
            Ok(c) => Ok((c, None)),
            Err(e) => Ok((
                Box::new(CpuSubgroupChecker),
                Some(format!("checking points on the CPU: {e}")),
            )),
        },
    }
}

#[cfg(feature = "cuda")]
fn open_gpu(device: usize) -> Result<Box<dyn SubgroupChecker>> {
    Ok(Box::new(GpuSubgroupChecker::open(device)?))
}

#[cfg(not(feature = "cuda"))]
fn open_gpu(_device: usize) -> Result<Box<dyn SubgroupChecker>> {
    Err(crate::GpuError::NotCompiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_and_fallback() {
        let (c, why) = select_subgroup_checker(BackendChoice::Cpu, 0).unwrap();
        assert_eq!(c.name(), "cpu");
        assert!(why.is_none());
        match select_subgroup_checker(BackendChoice::Cuda, 0) {
            Ok((c, _)) => assert!(c.name().starts_with("cuda")),
            Err(err) => {
                let (auto, why) = select_subgroup_checker(BackendChoice::Auto, 0).unwrap();
                assert_eq!(auto.name(), "cpu");
                assert!(why.unwrap().contains(&err.to_string()));
            }
        }
    }
}
