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

    /// A part of a request (its C1 output, a vanilla proof, a daemon job's
    /// input) could not be decoded as `form`. `file` names the file it was
    /// read from, where a front end knows it.
    #[error("cannot decode {part} ({form}){}: {source}", in_file(file))]
    Decode {
        part: InputPart,
        form: String,
        file: Option<PathBuf>,
        #[source]
        source: BoxError,
    },

    /// A part of a request decoded but cannot be proved (a vanilla proof of
    /// no sector, ...).
    #[error("invalid {part}{}: {reason}", in_file(file))]
    InvalidPart {
        part: InputPart,
        file: Option<PathBuf>,
        reason: String,
    },

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

/// The error a decoder gave (serde_json, bincode, base64), or a sentence
/// where several attempts failed.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The part of a proof request an input error concerns, so that a front end
/// names the file or field it came from without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputPart {
    /// The C1 output of a PoRep request.
    C1Output,
    /// Vanilla proof `k` (from 0) of a PoSt or SnapDeals request.
    VanillaProof(usize),
    /// A daemon job's input bytes (a request as the daemon stores it).
    JobInput,
}

impl std::fmt::Display for InputPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputPart::C1Output => f.write_str("C1 output"),
            InputPart::VanillaProof(k) => write!(f, "vanilla proof {k}"),
            InputPart::JobInput => f.write_str("job input"),
        }
    }
}

fn in_file(file: &Option<PathBuf>) -> String {
    match file {
        Some(f) => format!(" in {}", f.display()),
        None => String::new(),
    }
}

impl Error {
    /// `part` could not be decoded as `form`.
    pub fn decode(part: InputPart, form: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Decode {
            part,
            form: form.into(),
            file: None,
            source: source.into(),
        }
    }

    /// The part of the request this error concerns, if it is an input error
    /// about one part.
    pub fn input_part(&self) -> Option<InputPart> {
        match self {
            Error::Decode { part, .. } | Error::InvalidPart { part, .. } => Some(*part),
            _ => None,
        }
    }

    /// This error with the file its part was read from (input errors about
    /// one part; any other error is returned as it is).
    pub fn in_file(self, path: PathBuf) -> Self {
        match self {
            Error::Decode {
                part, form, source, ..
            } => Error::Decode {
                part,
                form,
                file: Some(path),
                source,
            },
            Error::InvalidPart { part, reason, .. } => Error::InvalidPart {
                part,
                file: Some(path),
                reason,
            },
            e => e,
        }
    }

    pub(crate) fn filecoin(step: impl Into<String>, source: anyhow::Error) -> Self {
        Error::Filecoin {
            step: step.into(),
            source,
        }
    }

    /// Reading or writing `path` failed.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
