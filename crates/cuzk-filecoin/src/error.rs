//! Typed errors of the Filecoin layer. Each names what it concerns (the
//! file, the registered proof, the partition) so that callers never parse
//! strings. Errors coming out of filecoin-proofs are `anyhow` values; they are
//! kept as the source, under a description of the step that failed.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The Groth16 layer (synthesis, parameters, proving) failed.
    #[error(transparent)]
    Core(#[from] cuzk_core::Error),

    /// A step delegated to filecoin-proofs / storage-proofs failed (building a
    /// circuit from a vanilla proof, deriving public parameters, ...).
    #[error("{step}: {source:#}")]
    Filecoin {
        step: String,
        #[source]
        source: anyhow::Error,
    },

    /// An input (C1 output, vanilla proof) could not be decoded.
    #[error("cannot decode {what}: {detail}")]
    Decode { what: String, detail: String },

    /// A request could not be serialised into a job's input bytes.
    #[error("cannot encode {what}: {source}")]
    Encode {
        what: String,
        #[source]
        source: serde_json::Error,
    },

    /// An input decoded but is not acceptable (wrong length, zero
    /// commitment, wrong number of proofs, ...).
    #[error("invalid input: {0}")]
    InvalidInput(String),

    #[error(
        "unsupported sector size {0} bytes (Filecoin's are 2KiB, 8MiB, 512MiB, 32GiB and 64GiB)"
    )]
    UnsupportedSectorSize(u64),

    #[error("unknown registered proof {kind} {value}")]
    UnknownRegisteredProof { kind: &'static str, value: u64 },

    /// The parameter file or verifying key of a circuit is not in the cache.
    #[error("no parameters for {circuit} at {} (generate them with `cuzk params gen --filecoin ...` or fetch the production files)", path.display())]
    MissingParameters { circuit: String, path: PathBuf },

    /// A proof cuzk produced did not verify against the circuit's verifying
    /// key and the public inputs filecoin-proofs derives; it is not returned.
    #[error("{circuit}: the {backend} backend produced a proof that does not verify")]
    SelfCheckFailed {
        circuit: String,
        backend: &'static str,
    },

    /// The `.params` and `.vk` files of one circuit disagree, or a file does
    /// not fit its circuit.
    #[error("{}: {what}", path.display())]
    ParametersMismatch { path: PathBuf, what: String },
}

impl Error {
    pub(crate) fn filecoin(step: impl Into<String>, source: anyhow::Error) -> Self {
        Error::Filecoin {
            step: step.into(),
            source,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
