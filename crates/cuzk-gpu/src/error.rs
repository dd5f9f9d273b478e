//! Errors of the GPU prover. Each names the device and what was being done;
//! they reach cuzk-core's callers as `Error::Backend { backend: "cuda" }`
//! with this error as the typed source.

use crate::budget::BudgetError;
use crate::plan::PlanError;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The crate was built without the `cuda` feature.
    #[error("CUDA support was not compiled in (build cuzk-gpu with the `cuda` feature)")]
    NotCompiled,
    /// A kernel, copy or driver call of cuzk-cuda failed.
    #[error(transparent)]
    Cuda(#[from] cuzk_cuda::CudaError),
    /// A driver call made here (pool trimming, raw staging buffers).
    #[error("CUDA {op} failed on device {device}: {source}")]
    Driver {
        op: &'static str,
        device: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A reservation did not fit the device's VRAM budget (or the fault
    /// hook refused it).
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// A parameter set cannot be made resident (too large, or no room now).
    #[error("device {device}: {source}")]
    Residency {
        device: String,
        #[source]
        source: crate::residency::ResidencyError,
    },
    /// Not even the streaming path fits the budget.
    #[error("device {device}, circuit {index}: {source}")]
    Plan {
        device: String,
        index: usize,
        #[source]
        source: PlanError,
    },
    /// The protocol layer refused the input (shape mismatch, bad circuit).
    #[error(transparent)]
    Core(#[from] cuzk_core::Error),
    /// The host-preparation thread of a partition could not be started.
    #[error("device {device}: starting the host-preparation thread failed: {source}")]
    Thread {
        device: String,
        #[source]
        source: std::io::Error,
    },
    /// A worker panicked while proving circuit `index`; every buffer it held
    /// was released while unwinding.
    #[error("device {device}: proving circuit {index} panicked: {message}")]
    Panicked {
        device: String,
        index: usize,
        message: String,
    },
}

impl GpuError {
    /// As cuzk-core's backend error; protocol errors pass through as they are.
    pub fn into_core(self) -> cuzk_core::Error {
        match self {
            GpuError::Core(e) => e,
            e => cuzk_core::Error::Backend {
                backend: "cuda",
                source: Box::new(e),
            },
        }
    }
}

pub type Result<T, E = GpuError> = std::result::Result<T, E>;
