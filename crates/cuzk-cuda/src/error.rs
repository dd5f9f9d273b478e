//! Errors of the CUDA backend. Every failure names the kernel (or driver
//! operation), the problem size and the device, so a log line is enough to
//! know what failed where.

/// The device a failure happened on, as "ordinal (name)".
pub type DeviceLabel = String;

#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// The crate was built without the `cuda` feature.
    #[error("CUDA support was not compiled in: build cuzk with `--features cuda` (cargo install --locked --path crates/cuzk-cli --features cuda)")]
    NotCompiled,
    /// No usable GPU: libcuda absent, no device, or the ordinal out of range.
    #[error("no GPU: {reason}")]
    NoGpu { reason: String },
    /// A CUDA driver call failed.
    #[error("CUDA {op} failed in {kernel} (size {size}) on device {device}: {source}")]
    Driver {
        op: &'static str,
        kernel: &'static str,
        size: usize,
        device: DeviceLabel,
        #[source]
        source: DriverFailure,
    },
    /// Inputs that do not fit together (e.g. fewer points than scalars).
    #[error("{kernel}: {what} (size {size}) on device {device}")]
    BadInput {
        kernel: &'static str,
        what: String,
        size: usize,
        device: DeviceLabel,
    },
    /// A size this backend does not handle.
    #[error("{kernel}: size {size} is not supported (limit {limit}) on device {device}")]
    Unsupported {
        kernel: &'static str,
        size: usize,
        limit: usize,
        device: DeviceLabel,
    },
}

/// The driver's own error, kept typed where the `cuda` feature provides it.
#[derive(Debug, thiserror::Error)]
pub enum DriverFailure {
    #[cfg(feature = "cuda")]
    #[error(transparent)]
    Driver(#[from] cudarc::driver::DriverError),
    #[error("{0}")]
    Other(String),
}

pub type Result<T, E = CudaError> = std::result::Result<T, E>;
