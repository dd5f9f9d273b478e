//! Typed errors of the Filecoin layer. Each names what it concerns (the
//! file, the registered proof, the partition) so that callers never parse
//! strings. Errors coming out of filecoin-proofs are `anyhow` values; they are
//! kept as the source, under a description of the step that failed.

use std::fmt;
use std::path::PathBuf;

use crate::circuits::{CircuitId, ProofKind};

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

    /// A request carries the wrong number of something (vanilla proofs,
    /// partitions, bytes of a field).
    #[error("{what}: expected {expected}, got {got}")]
    WrongCount {
        what: Counted,
        expected: Expected,
        got: usize,
    },

    /// Text given for `what` (a proof kind, a sector size, a hex field, ...)
    /// could not be read as one.
    #[error("cannot read {what} from {given:?}{}", what.hint())]
    Unreadable { what: Readable, given: String },

    /// Two parts of a request disagree on `fact`: `stated_by` says `stated`,
    /// `found_in` holds `found`.
    #[error("{fact}: {stated} (said by {stated_by}) but {found} (in {found_in})")]
    Disagree {
        fact: Fact,
        stated_by: String,
        stated: String,
        found_in: String,
        found: String,
    },

    /// A registered proof (or a proof kind) `given` where one of `expected`
    /// was asked for.
    #[error("{given} is not a {} proof", kinds(expected))]
    WrongProofKind {
        given: String,
        expected: Vec<ProofKind>,
    },

    /// A partition was named for a kind that has only one (WinningPoSt).
    #[error("a partition is for WindowPoSt; {kind} has one")]
    PartitionNotApplicable { kind: ProofKind },

    /// Partition `index` of `circuit` does not exist (`count`: how many it
    /// has, where known).
    #[error("{circuit}: partition {index} out of range{}", match count {
        Some(n) => format!(" (it has {n})"),
        None => String::new(),
    })]
    PartitionOutOfRange {
        circuit: String,
        index: usize,
        count: Option<usize>,
    },

    /// The vanilla proofs of PoRep partition `partition` cannot make its
    /// circuit.
    #[error("PoRep circuit of partition {partition}: {problem}")]
    PorepPartition {
        partition: usize,
        problem: PartitionProblem,
    },

    /// Requests of different circuits were put in one batch (`circuits`: the
    /// first and the other, where known).
    #[error("{}", match circuits {
        Some((first, other)) => format!("cannot synthesize {other} with {first} in one batch"),
        None => "requests of different proof kinds in one batch".into(),
    })]
    MixedBatch {
        circuits: Option<(CircuitId, CircuitId)>,
    },

    /// `needed_by` (a command, a proof) needs `what`, which was not given.
    #[error("{needed_by} needs {what}")]
    Missing { needed_by: String, what: String },

    /// A field of a request that must not be empty is.
    #[error("{field} is empty")]
    Empty { field: String },

    /// Two fields that say the same thing were both set.
    #[error("both {first} and {second} are set; send one")]
    BothSet {
        first: &'static str,
        second: &'static str,
    },

    /// A field (a commitment, randomness, a CID) holds a value that is not
    /// acceptable; `source` says why (filecoin-proofs' check, whole chain).
    #[error("invalid {field}: {source:#}")]
    InvalidValue {
        field: String,
        #[source]
        source: anyhow::Error,
    },

    /// A field that must not be all zero is.
    #[error("{field} is all zero")]
    AllZero { field: &'static str },

    /// `proof` asks for something cuzk does not do.
    #[error("{proof}: {feature}")]
    Unsupported { proof: String, feature: Feature },

    /// A consistency check of cuzk's own work failed: a bug, not a bad input.
    #[error("internal error: {what}")]
    Internal { what: String },

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

/// What a [`Error::WrongCount`] counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counted {
    /// The vanilla proofs of a PoSt or SnapDeals request for `proof`.
    VanillaProofs { proof: String },
    /// The partitions of vanilla proofs in a C1 output for `proof`.
    PorepPartitions { proof: String },
    /// The sectors one WindowPoSt partition of `proof` was given.
    PartitionSectors { proof: String },
    /// The partition circuits of `circuit`, one per set of public inputs.
    Circuits { circuit: String },
    /// The bytes of a field.
    Bytes { field: String },
}

impl fmt::Display for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Counted::VanillaProofs { proof } => write!(f, "vanilla proofs for {proof}"),
            Counted::PorepPartitions { proof } => {
                write!(
                    f,
                    "partitions of vanilla proofs in the C1 output for {proof}"
                )
            }
            Counted::PartitionSectors { proof } => {
                write!(f, "sectors in one partition of {proof}")
            }
            Counted::Circuits { circuit } => {
                write!(
                    f,
                    "{circuit}: partition circuits (one per set of public inputs)"
                )
            }
            Counted::Bytes { field } => write!(f, "{field} bytes"),
        }
    }
}

/// The count a [`Error::WrongCount`] expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    Exactly(usize),
    AtLeast(usize),
    AtMost(usize),
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Exactly(n) => write!(f, "{n}"),
            Expected::AtLeast(n) => write!(f, "at least {n}"),
            Expected::AtMost(n) => write!(f, "at most {n}"),
        }
    }
}

/// What an [`Error::Unreadable`] text was to name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readable {
    ProofKind,
    CircuitId,
    SectorSize,
    SynthesisMode,
    /// 32 bytes as 64 hex digits, for `field`.
    Hex32 {
        field: String,
    },
    /// The `proof_kind` of a Curio request (a number).
    CurioProofKind,
}

impl Readable {
    fn hint(&self) -> &'static str {
        match self {
            Readable::ProofKind => " (porep, winning-post, window-post, snap-deals)",
            Readable::SectorSize => " (e.g. 2KiB, 32GiB)",
            Readable::SynthesisMode => " (full, compiled)",
            Readable::Hex32 { .. } => " (64 hex digits)",
            Readable::CircuitId | Readable::CurioProofKind => "",
        }
    }
}

impl fmt::Display for Readable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Readable::ProofKind => f.write_str("proof kind"),
            Readable::CircuitId => f.write_str("circuit id"),
            Readable::SectorSize => f.write_str("sector size"),
            Readable::SynthesisMode => f.write_str("synthesis mode"),
            Readable::Hex32 { field } => f.write_str(field),
            Readable::CurioProofKind => f.write_str("proof_kind"),
        }
    }
}

/// The fact two parts of a request disagree on ([`Error::Disagree`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    SectorSize,
    RegisteredProof,
    SectorNumber,
    /// The replica id a C1 output was sealed with.
    ReplicaId,
    /// The Merkle tree shape of vanilla proofs.
    TreeShape,
    Circuit,
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fact::SectorSize => "sector size",
            Fact::RegisteredProof => "registered proof",
            Fact::SectorNumber => "sector number",
            Fact::ReplicaId => "replica id",
            Fact::TreeShape => "tree shape",
            Fact::Circuit => "circuit",
        })
    }
}

/// Why a PoRep partition's vanilla proofs cannot make its circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionProblem {
    NoVanillaProofs,
    InconsistentCommRLast,
    InconsistentCommC,
}

impl fmt::Display for PartitionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PartitionProblem::NoVanillaProofs => "no vanilla proofs",
            PartitionProblem::InconsistentCommRLast => {
                "the vanilla proofs have inconsistent comm_r_last"
            }
            PartitionProblem::InconsistentCommC => "the vanilla proofs have inconsistent comm_c",
        })
    }
}

/// What an [`Error::Unsupported`] request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// NI-PoRep's C2, a SnarkPack aggregate of the partition proofs.
    NonInteractivePorep,
    /// A synthetic C1 output of a PoRep kind whose challenges depend on
    /// comm_r.
    SyntheticC1OfNonInteractive,
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Feature::NonInteractivePorep => {
                "non-interactive PoRep (aggregated C2) is not supported"
            }
            Feature::SyntheticC1OfNonInteractive => {
                "synthetic C1 outputs are made for interactive PoRep only \
                 (StackedDrg*V1 / V1_1); this kind's challenges depend on comm_r"
            }
        })
    }
}

fn kinds(expected: &[ProofKind]) -> String {
    expected
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(" or ")
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

    /// Whether the request is at fault (its sender must change it), as
    /// against the prover's own files, parameters or code. filecoin-proofs'
    /// failures count as the input's: they come from checking or
    /// synthesizing the proofs a request carries.
    pub fn caused_by_input(&self) -> bool {
        match self {
            Error::Decode { .. }
            | Error::InvalidPart { .. }
            | Error::Filecoin { .. }
            | Error::WrongCount { .. }
            | Error::Unreadable { .. }
            | Error::Disagree { .. }
            | Error::WrongProofKind { .. }
            | Error::PartitionNotApplicable { .. }
            | Error::PartitionOutOfRange { .. }
            | Error::PorepPartition { .. }
            | Error::MixedBatch { .. }
            | Error::Missing { .. }
            | Error::Empty { .. }
            | Error::BothSet { .. }
            | Error::InvalidValue { .. }
            | Error::AllZero { .. }
            | Error::Unsupported { .. }
            | Error::UnsupportedSectorSize(_)
            | Error::UnknownRegisteredProof { .. } => true,
            Error::Io { .. }
            | Error::Core(_)
            | Error::Encode { .. }
            | Error::Internal { .. }
            | Error::MissingParameters { .. }
            | Error::SelfCheckFailed { .. }
            | Error::ParametersMismatch { .. } => false,
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

    /// `field` holds an unacceptable value; `source` says why.
    pub fn invalid_value(field: impl Into<String>, source: anyhow::Error) -> Self {
        Error::InvalidValue {
            field: field.into(),
            source,
        }
    }

    /// Two parts of a request disagree on `fact`.
    pub fn disagree(
        fact: Fact,
        stated_by: impl Into<String>,
        stated: impl fmt::Display,
        found_in: impl Into<String>,
        found: impl fmt::Display,
    ) -> Self {
        Error::Disagree {
            fact,
            stated_by: stated_by.into(),
            stated: stated.to_string(),
            found_in: found_in.into(),
            found: found.to_string(),
        }
    }

    pub(crate) fn internal(what: impl Into<String>) -> Self {
        Error::Internal { what: what.into() }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_errors_say_what_went_wrong() {
        let e = Error::WrongCount {
            what: Counted::VanillaProofs {
                proof: "StackedDrgWinning2KiBV1".into(),
            },
            expected: Expected::Exactly(1),
            got: 2,
        };
        assert_eq!(
            e.to_string(),
            "vanilla proofs for StackedDrgWinning2KiBV1: expected 1, got 2"
        );
        let e = Error::Unreadable {
            what: Readable::SectorSize,
            given: "32X".into(),
        };
        assert_eq!(
            e.to_string(),
            "cannot read sector size from \"32X\" (e.g. 2KiB, 32GiB)"
        );
        let e = Error::disagree(Fact::SectorNumber, "sector_number", 5, "the C1 file", 7);
        assert_eq!(
            e.to_string(),
            "sector number: 5 (said by sector_number) but 7 (in the C1 file)"
        );
        let e = Error::WrongProofKind {
            given: "porep".into(),
            expected: vec![ProofKind::WinningPost, ProofKind::WindowPost],
        };
        assert_eq!(
            e.to_string(),
            "porep is not a winning-post or window-post proof"
        );
        let e = Error::PartitionOutOfRange {
            circuit: "c".into(),
            index: 3,
            count: Some(2),
        };
        assert_eq!(e.to_string(), "c: partition 3 out of range (it has 2)");
        // A filecoin-proofs error keeps its whole chain in the message.
        let e = Error::invalid_value(
            "comm_r",
            anyhow::anyhow!("not in the field").context("comm_r"),
        );
        assert_eq!(e.to_string(), "invalid comm_r: comm_r: not in the field");
    }
}
