//! Typed errors for the protocol layer. Every error names what it concerns
//! (the file, the section, the circuit index) so callers never parse strings.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("synthesis of circuit {index} failed: {source}")]
    Synthesis {
        index: usize,
        #[source]
        source: bellpepper_core::SynthesisError,
    },

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A parameter, verifying-key or proof file is truncated or corrupt.
    #[error("{}: {what}", path.display())]
    Format { path: PathBuf, what: String },

    /// Parameters and circuit do not fit together (lengths differ).
    #[error("parameters do not match circuit {index}: {what}")]
    ShapeMismatch { index: usize, what: String },

    #[error("expected {expected} public inputs, got {got}")]
    PublicInputCount { expected: usize, got: usize },

    #[error("malformed proof: {0}")]
    MalformedProof(String),

    #[error("the batch is empty")]
    EmptyBatch,

    #[error(
        "the circuit has {constraints} constraints; the largest supported domain is 2^{max_log}"
    )]
    TooLarge { constraints: usize, max_log: u32 },

    /// The circuit referenced a variable it never allocated, or is otherwise
    /// not a well-formed R1CS.
    #[error("circuit {index} is malformed: {what}")]
    InvalidCircuit { index: usize, what: String },

    /// Parameters that must not be used: an identity delta (the
    /// subversion-CRS attack bellman guards against) or similar.
    #[error("unusable parameters: {0}")]
    InvalidParameters(String),

    /// A batch call got a different number of proofs and input vectors.
    #[error("{proofs} proofs but {inputs} public-input vectors")]
    BatchLength { proofs: usize, inputs: usize },

    /// A witness whose shape is not the compiled circuit's: never proved.
    #[error(
        "the witness has {inputs} inputs and {aux} aux values; compiled circuit {circuit:?} \
         has {expected_inputs} inputs and {expected_aux} aux variables"
    )]
    WitnessMismatch {
        circuit: String,
        expected_inputs: usize,
        expected_aux: usize,
        inputs: usize,
        aux: usize,
    },

    /// A compiled-circuit file made for another circuit or other parameters.
    #[error("{}: {what}", path.display())]
    CompiledMismatch { path: PathBuf, what: String },

    #[error("backend {backend}: {source}")]
    Backend {
        backend: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
