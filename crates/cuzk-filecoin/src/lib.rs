//! cuzk-filecoin: Filecoin's SNARKs — PoRep C2, WinningPoSt, WindowPoSt and
//! SnapDeals — proved by cuzk and byte-compatible with filecoin-proofs 19.1.
//!
//! This crate owns the bridge between filecoin-proofs and cuzk-core: it
//! decodes the inputs Lotus and Curio hand over (C1 outputs, vanilla
//! proofs), builds the real circuits with storage-proofs' own
//! `CompoundProof::circuit` (so they are the circuits filecoin-proofs
//! proves), proves every partition of a proof in one batch on a cuzk
//! backend, and writes proofs in filecoin-proofs' format (192-byte Groth16
//! proofs, concatenated in partition order). It also names, generates and
//! loads parameter files in filecoin-proofs' cache layout.
//!
//! It does not touch GPUs (backends come in as `cuzk_core::ProverBackend`)
//! nor schedule work, nor serve requests: the daemon (cuzk-daemon) does,
//! and holds the Filecoin kinds and Curio's service built on this crate.
//!
//! - [`circuits`]: circuit identities (registered proofs), tree shapes,
//!   blank circuits for parameter generation.
//! - [`paramcache`]: the `FIL_PROOFS_PARAMETER_CACHE` directory.
//! - [`prover`]: [`FilecoinProver`], proof requests and outputs.
//! - [`porep`], [`post`], [`snap`]: the circuits of each proof.
//! - `native_witness`: PoRep's and PoSt's witnesses with their hashes
//!   generated natively (the compiled path's).
//! - [`partitions`]: requests prepared once (every partition's circuit
//!   built and kept) and partitions synthesized from them, for the daemon.
//! - [`ids`]: 32-byte values in hex, a miner's prover id.
//! - [`synth_c1`]: synthetic C1 outputs (valid vanilla proofs over sparse
//!   trees, no sealed sector) for tests and benchmarks; `cuzk c1 synth`.
//! - [`progress`]: parameter generation's progress on stderr, for front ends.

pub mod circuits;
pub mod compiled;
pub mod error;
pub mod ids;
mod native_witness;
pub mod paramcache;
pub mod partitions;
pub mod porep;
pub mod post;
pub mod progress;
pub mod prover;
pub mod snap;
pub mod synth_c1;

pub use circuits::{CircuitId, ProofKind};
pub use compiled::SynthesisMode;
pub use error::{
    BoxError, Counted, Error, Expected, Fact, Feature, InputPart, PartitionProblem, Readable,
    Result,
};
pub use paramcache::{CircuitFiles, LoadedParameters, ParamCache};
pub use prover::{FilecoinProver, ProofOutput, ProofRequest};

/// Re-exported so that callers name registered proofs and decode inputs
/// with the same types as this crate.
pub use filecoin_proofs_api;
