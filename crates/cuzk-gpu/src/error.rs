//! Errors of the GPU prover. Each names the device and what was being done;
//! they reach cuzk-core's callers as `Error::Backend { backend: "cuda" }`
//! with this error as the typed source.

use crate::budget::BudgetError;
use crate::plan::PlanError;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The crate was built without the `cuda` feature.
    #[error("CUDA support was not compiled in: build cuzk with `--features cuda` (cargo install --locked --path crates/cuzk-cli --features cuda)")]
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
    /// A GPU asked for by ordinal (the daemon's `engine.gpu_devices`) that
    /// the driver does not report, or one asked for twice.
    #[error("GPU {ordinal} {why} (the driver reports {count} GPU(s), ordinals 0..{count}; CUDA_VISIBLE_DEVICES renumbers them)")]
    NoSuchDevice {
        ordinal: usize,
        count: usize,
        why: &'static str,
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

impl GpuError {
    /// The CUDA driver's result code (`CUresult`) this error carries, where
    /// a driver call failed and the `cuda` feature kept the driver's error
    /// typed; None for every other error.
    pub fn driver_code(&self) -> Option<u32> {
        match self {
            GpuError::Cuda(cuzk_cuda::CudaError::Driver { source, .. }) => {
                driver_failure_code(source)
            }
            GpuError::Driver { source, .. } => boxed_driver_code(&**source),
            _ => None,
        }
    }

    /// Whether the device's context is unusable after this error (every
    /// later call on it would fail too): a driver call failed with a code
    /// of [`is_context_fatal_code`]. Out of memory, a partition that fits
    /// no staging plan, a refused input, a budget refusal or a panic are
    /// the partition's, not the device's.
    pub fn is_context_fatal(&self) -> bool {
        self.driver_code().is_some_and(is_context_fatal_code)
    }
}

/// Whether `error` (a prover's error, as cuzk-core returns it) contains a
/// [`GpuError`] that [`GpuError::is_context_fatal`]; the daemon's CUDA
/// devices take the device out of service on it.
pub fn is_context_fatal_error(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(error);
    while let Some(e) = at {
        if let Some(g) = e.downcast_ref::<GpuError>() {
            return g.is_context_fatal();
        }
        at = e.source();
    }
    false
}

/// CUDA driver result codes after which the context cannot be used again
/// (the driver documents them as leaving it in an error state that only
/// destroying it clears), or the device is gone:
///
/// - 3 `NOT_INITIALIZED`, 4 `DEINITIALIZED`, 46 `DEVICE_UNAVAILABLE`,
///   100 `NO_DEVICE`: the driver or the device went away after the backend
///   opened it (it only proves on an opened device, so these come after
///   initialisation);
/// - 214 `ECC_UNCORRECTABLE`, 220 `NVLINK_UNCORRECTABLE`, 226 `CONTAINED`:
///   hardware errors;
/// - 700 `ILLEGAL_ADDRESS`, 702 `LAUNCH_TIMEOUT`, 709
///   `CONTEXT_IS_DESTROYED`, 710 `ASSERT`, 714 `HARDWARE_STACK_ERROR`, 715
///   `ILLEGAL_INSTRUCTION`, 716 `MISALIGNED_ADDRESS`, 717
///   `INVALID_ADDRESS_SPACE`, 718 `INVALID_PC`, 719 `LAUNCH_FAILED`: a
///   kernel faulted, which poisons the context (also what an Xid such as a
///   GPU fallen off the bus shows as);
/// - 999 `UNKNOWN`: what the driver answers for failures it does not name,
///   Xid-type faults among them. Counted as lost because the other choice
///   is worse: a dead device left in service fails every job sent to it,
///   while a live one taken out only waits for its probe.
///
/// Not counted: 2 `OUT_OF_MEMORY` (the budget's margin was short; the next
/// partition may fit), 1 `INVALID_VALUE` and the other argument errors (a
/// bug or a bad input, the same on any device), 701
/// `LAUNCH_OUT_OF_RESOURCES` (a launch configuration this device refuses).
pub fn is_context_fatal_code(code: u32) -> bool {
    matches!(
        code,
        3 | 4 | 46 | 100 | 214 | 220 | 226 | 700 | 702 | 709 | 710 | 714..=719 | 999
    )
}

#[cfg(feature = "cuda")]
fn driver_failure_code(f: &cuzk_cuda::error::DriverFailure) -> Option<u32> {
    match f {
        cuzk_cuda::error::DriverFailure::Driver(e) => Some(e.0 as u32),
        cuzk_cuda::error::DriverFailure::Other(_) => None,
    }
}

#[cfg(not(feature = "cuda"))]
fn driver_failure_code(_: &cuzk_cuda::error::DriverFailure) -> Option<u32> {
    None
}

#[cfg(feature = "cuda")]
fn boxed_driver_code(e: &(dyn std::error::Error + Send + Sync + 'static)) -> Option<u32> {
    e.downcast_ref::<cudarc::driver::DriverError>()
        .map(|d| d.0 as u32)
}

#[cfg(not(feature = "cuda"))]
fn boxed_driver_code(_: &(dyn std::error::Error + Send + Sync + 'static)) -> Option<u32> {
    None
}

pub type Result<T, E = GpuError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn budget_refusal() -> GpuError {
        GpuError::Budget(BudgetError::Exhausted {
            device: "0 (test)".into(),
            what: "a/b/c",
            bytes: 1 << 30,
            available: 1 << 20,
            capacity: 1 << 34,
            reserved: 1 << 33,
        })
    }

    #[test]
    fn fatal_codes_are_the_sticky_ones() {
        // ILLEGAL_ADDRESS, LAUNCH_FAILED, ECC_UNCORRECTABLE,
        // HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION, MISALIGNED_ADDRESS,
        // INVALID_PC, DEVICE_UNAVAILABLE, NOT_INITIALIZED, DEINITIALIZED.
        for code in [700, 719, 214, 714, 715, 716, 718, 46, 3, 4, 999] {
            assert!(is_context_fatal_code(code), "{code} should be fatal");
        }
        // SUCCESS, INVALID_VALUE, OUT_OF_MEMORY, INVALID_HANDLE, NOT_READY,
        // LAUNCH_OUT_OF_RESOURCES, COOPERATIVE_LAUNCH_TOO_LARGE,
        // NOT_SUPPORTED.
        for code in [0, 1, 2, 400, 600, 701, 720, 801] {
            assert!(!is_context_fatal_code(code), "{code} should not be fatal");
        }
    }

    #[test]
    fn errors_without_a_driver_code_are_not_fatal() {
        let plan = GpuError::Plan {
            device: "0 (test)".into(),
            index: 3,
            source: PlanError {
                available: 5,
                needed: 10,
            },
        };
        let panicked = GpuError::Panicked {
            device: "0 (test)".into(),
            index: 1,
            message: "boom".into(),
        };
        let bad_input = GpuError::Core(cuzk_core::Error::PublicInputCount {
            expected: 2,
            got: 1,
        });
        let cuda_bad_input = GpuError::Cuda(cuzk_cuda::CudaError::BadInput {
            kernel: "msm",
            what: "fewer points than scalars".into(),
            size: 4,
            device: "0 (test)".into(),
        });
        // A driver-call error whose source is a message, not the driver's.
        let stopped = GpuError::Driver {
            op: "copy to device (a/b/c)",
            device: "0 (test)".into(),
            source: "upload thread stopped before vector 1".into(),
        };
        let other = GpuError::Cuda(cuzk_cuda::CudaError::Driver {
            op: "launch",
            kernel: "ntt",
            size: 1 << 10,
            device: "0 (test)".into(),
            source: cuzk_cuda::error::DriverFailure::Other("CUDA_ERROR_ILLEGAL_ADDRESS".into()),
        });
        for e in [
            budget_refusal(),
            plan,
            panicked,
            bad_input,
            cuda_bad_input,
            stopped,
            other,
            GpuError::NotCompiled,
        ] {
            assert_eq!(e.driver_code(), None, "{e}");
            assert!(!e.is_context_fatal(), "{e}");
            let core = e.into_core();
            assert!(!is_context_fatal_error(&core), "{core}");
        }
    }

    #[test]
    fn the_chain_is_searched_for_the_gpu_error() {
        // Not a GpuError anywhere: not fatal.
        let io = cuzk_core::Error::Io {
            path: "/x".into(),
            source: std::io::Error::other("gone"),
        };
        assert!(!is_context_fatal_error(&io));
        let core = budget_refusal().into_core();
        assert!(matches!(
            core,
            cuzk_core::Error::Backend {
                backend: "cuda",
                ..
            }
        ));
        assert!(!is_context_fatal_error(&core));
    }

    /// Errors carrying the driver's own code (only constructible with the
    /// `cuda` feature; constructing a `DriverError` touches no driver).
    #[cfg(feature = "cuda")]
    mod driver {
        use super::super::*;
        use cudarc::driver::sys::CUresult;
        use cudarc::driver::DriverError;

        fn via_cuda(code: CUresult) -> GpuError {
            GpuError::Cuda(cuzk_cuda::CudaError::Driver {
                op: "launch",
                kernel: "msm",
                size: 1 << 20,
                device: "0 (test)".into(),
                source: cuzk_cuda::error::DriverFailure::Driver(DriverError(code)),
            })
        }

        fn via_gpu(code: CUresult) -> GpuError {
            GpuError::Driver {
                op: "synchronize (z)",
                device: "0 (test)".into(),
                source: Box::new(DriverError(code)),
            }
        }

        #[test]
        fn sticky_driver_errors_are_fatal_through_every_wrapping() {
            for code in [
                CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
                CUresult::CUDA_ERROR_LAUNCH_FAILED,
                CUresult::CUDA_ERROR_ECC_UNCORRECTABLE,
                CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR,
                CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION,
                CUresult::CUDA_ERROR_MISALIGNED_ADDRESS,
                CUresult::CUDA_ERROR_INVALID_PC,
                CUresult::CUDA_ERROR_DEVICE_UNAVAILABLE,
                CUresult::CUDA_ERROR_NOT_INITIALIZED,
                CUresult::CUDA_ERROR_DEINITIALIZED,
            ] {
                for e in [via_cuda(code), via_gpu(code)] {
                    assert_eq!(e.driver_code(), Some(code as u32));
                    assert!(e.is_context_fatal(), "{code:?}");
                    assert!(is_context_fatal_error(&e.into_core()), "{code:?}");
                }
            }
        }

        #[test]
        fn out_of_memory_and_bad_arguments_are_not_fatal() {
            for code in [
                CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                CUresult::CUDA_ERROR_INVALID_VALUE,
                CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            ] {
                for e in [via_cuda(code), via_gpu(code)] {
                    assert_eq!(e.driver_code(), Some(code as u32));
                    assert!(!e.is_context_fatal(), "{code:?}");
                    assert!(!is_context_fatal_error(&e.into_core()), "{code:?}");
                }
            }
        }
    }
}
