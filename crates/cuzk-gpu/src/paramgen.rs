//! Parameter generation on the GPU: the fixed-base multiplications that
//! are nearly all of `cuzk params gen`'s work (one multiple of g1 or g2 per
//! query point: about 4.3 n G1 and 0.25 n G2 points for a porep-like
//! circuit of n constraints) run on cuzk-cuda's `fixed_base_*` kernels from
//! the tables cuzk-core builds, so the parameters are the CPU generator's
//! bit for bit. Synthesis of the constraint matrices and the query scalars
//! stay on the CPU.

use crate::{BackendChoice, Result};
use cuzk_core::generator::{CpuFixedBase, FixedBaseEngine};

#[cfg(feature = "cuda")]
pub use imp::GpuFixedBase;

#[cfg(feature = "cuda")]
mod imp {
    use crate::budget::Grant;
    use crate::{CudaBackend, GpuError, Result};
    use cuzk_core::generator::{FixedBaseEngine, FixedBaseTable};
    use cuzk_core::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
    use cuzk_cuda::CudaDevice;
    use group::prime::PrimeCurveAffine;
    use rayon::prelude::*;
    use std::sync::Arc;

    /// An output vector for the device to fill, initialised on every core:
    /// at 2^27 a query is 12 GiB, which one thread takes seconds to write.
    fn output<A: Copy + Send + Sync>(n: usize, fill: A) -> Vec<A> {
        let mut v = Vec::with_capacity(n);
        v.par_extend(rayon::iter::repeat_n(fill, n));
        v
    }

    /// Fixed-base multiplications on one GPU. Its device memory is the
    /// table (≤ 16 MiB) and one chunk of scratch (≤ 2.2 GiB for G2, see
    /// [`CudaDevice::fixed_base_bytes`]), taken from the driver's pool for
    /// the call and given back after it. Opened for a prover
    /// ([`GpuFixedBase::for_prover`], as the daemon does), those bytes are
    /// a grant of the prover's VRAM budget, with chunks small enough to fit
    /// it: parameter generation then waits for room like a partition and
    /// never takes memory the budget has promised to one.
    pub struct GpuFixedBase {
        dev: CudaDevice,
        prover: Option<Arc<CudaBackend>>,
    }

    impl GpuFixedBase {
        pub fn open(ordinal: usize) -> Result<Self> {
            let dev = CudaDevice::open(ordinal).map_err(GpuError::from)?;
            Ok(GpuFixedBase { dev, prover: None })
        }
        /// On `prover`'s device, under its VRAM budget.
        pub fn for_prover(prover: Arc<CudaBackend>) -> Result<Self> {
            let dev = CudaDevice::open(prover.device_ordinal()).map_err(GpuError::from)?;
            Ok(GpuFixedBase {
                dev,
                prover: Some(prover),
            })
        }
        pub fn device(&self) -> &CudaDevice {
            &self.dev
        }

        /// The chunk for `points` multiplications with a table of
        /// `table_points`, and the grant that covers them when under a
        /// prover's budget: chunks of at most half the budget's capacity,
        /// so partitions keep room beside a long generation.
        fn budgeted(
            &self,
            g2: bool,
            table_points: usize,
            points: usize,
        ) -> cuzk_core::Result<(usize, Option<Grant>)> {
            let Some(p) = &self.prover else {
                return Ok((usize::MAX, None));
            };
            let room = (p.budget().capacity() / 2) as usize;
            let chunk = CudaDevice::fixed_base_chunk_for(g2, table_points, room)
                .or_else(|| {
                    CudaDevice::fixed_base_chunk_for(
                        g2,
                        table_points,
                        p.budget().capacity() as usize,
                    )
                })
                .unwrap_or(1);
            let bytes = CudaDevice::fixed_base_bytes(g2, table_points, points, chunk) as u64;
            let grant = p
                .grant_outside(bytes, "parameter generation's fixed-base table and chunk")
                .map_err(|e| cuzk_core::Error::Backend {
                    backend: "cuda",
                    source: Box::new(e),
                })?;
            Ok((chunk, Some(grant)))
        }
    }

    fn core_err(e: cuzk_cuda::CudaError) -> cuzk_core::Error {
        cuzk_core::Error::Backend {
            backend: "cuda",
            source: Box::new(e),
        }
    }

    impl FixedBaseEngine for GpuFixedBase {
        fn name(&self) -> String {
            format!("cuda:{} ({})", self.dev.ordinal(), self.dev.name())
        }
        fn mul_g1(
            &self,
            table: &FixedBaseTable<G1Projective>,
            scalars: &[Scalar],
        ) -> cuzk_core::Result<Vec<G1Affine>> {
            let (chunk, _grant) = self.budgeted(false, table.points().len(), scalars.len())?;
            let mut out = output(scalars.len(), G1Affine::identity());
            self.dev
                .fixed_base_g1_in(
                    table.points(),
                    table.window() as u32,
                    scalars,
                    &mut out,
                    chunk,
                )
                .map_err(core_err)?;
            Ok(out)
        }
        fn mul_g2(
            &self,
            table: &FixedBaseTable<G2Projective>,
            scalars: &[Scalar],
        ) -> cuzk_core::Result<Vec<G2Affine>> {
            let (chunk, _grant) = self.budgeted(true, table.points().len(), scalars.len())?;
            let mut out = output(scalars.len(), G2Affine::identity());
            self.dev
                .fixed_base_g2_in(
                    table.points(),
                    table.window() as u32,
                    scalars,
                    &mut out,
                    chunk,
                )
                .map_err(core_err)?;
            Ok(out)
        }
    }
}

/// The engine for a `--backend` choice: `Cpu` the CPU, `Cuda` GPU
/// `device` or an error, `Auto` that GPU where usable, else the CPU with
/// the reason in the second value.
pub fn select_fixed_base(
    choice: BackendChoice,
    device: usize,
) -> Result<(Box<dyn FixedBaseEngine>, Option<String>)> {
    match choice {
        BackendChoice::Cpu => Ok((Box::new(CpuFixedBase), None)),
        BackendChoice::Cuda => open_gpu(device).map(|e| (e, None)),
        BackendChoice::Auto => match open_gpu(device) {
            Ok(e) => Ok((e, None)),
            Err(e) => Ok((
                Box::new(CpuFixedBase),
                Some(format!("generating on the CPU: {e}")),
            )),
        },
    }
}

#[cfg(feature = "cuda")]
fn open_gpu(device: usize) -> Result<Box<dyn FixedBaseEngine>> {
    Ok(Box::new(GpuFixedBase::open(device)?))
}

#[cfg(not(feature = "cuda"))]
fn open_gpu(_device: usize) -> Result<Box<dyn FixedBaseEngine>> {
    Err(crate::GpuError::NotCompiled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_and_fallback() {
        let (e, why) = select_fixed_base(BackendChoice::Cpu, 0).unwrap();
        assert_eq!(e.name(), "cpu");
        assert!(why.is_none());
        match select_fixed_base(BackendChoice::Cuda, 0) {
            Ok((e, _)) => {
                assert!(e.name().starts_with("cuda:0"));
                let (auto, why) = select_fixed_base(BackendChoice::Auto, 0).unwrap();
                assert!(auto.name().starts_with("cuda:0") && why.is_none());
            }
            Err(err) => {
                let (auto, why) = select_fixed_base(BackendChoice::Auto, 0).unwrap();
                assert_eq!(auto.name(), "cpu");
                assert!(why.unwrap().contains(&err.to_string()));
            }
        }
    }
}
