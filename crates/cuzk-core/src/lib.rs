//! cuzk-core: the Groth16 protocol over BLS12-381 (blstrs).
//!
//! This crate owns the protocol maths and the file formats, and knows nothing
//! of GPUs. Backends (the CPU one here, the CUDA one in `cuzk-cuda`) plug in
//! through [`prover::ProverBackend`]: they compute H and the five MSMs for a
//! batch of synthesized circuits, and this crate turns the results into
//! proofs.
//!
//! Layers, in the order data flows:
//! - [`synthesis`]: a `bellpepper_core` circuit becomes a [`synthesis::ProvingAssignment`]
//!   (a/b/c evaluations, input and aux assignments, densities).
//! - [`compiled`]: a circuit's constraints recorded once (sparse A, B, C),
//!   witness-only synthesis, and a/b/c as sparse products.
//! - [`domain`]: the radix-2 NTT over Fr and the H polynomial.
//! - [`msm`]: blst's Pippenger with the 0/1 scalars split off.
//! - [`params`]: bellperson/Filecoin `.params` and `.vk` files, memory-mapped.
//! - [`points`]: a query vector, decoded in memory or left in its mapped file.
//! - [`subgroup`]: the subgroup check of decoded parameter points, behind
//!   a seam (the CPU's here, a GPU's in cuzk-gpu).
//! - [`prover`]: the backend seam, the CPU backend, proof assembly.
//! - [`accel`]: the accelerator seam a daemon drives: devices, each
//!   worker's prover, resident parameters, fixed-base generation.
//! - [`verifier`]: single and batched verification with prepared keys.
//! - [`generator`]: random (insecure, development-only) parameters.
//! - [`circuits`]: built-in benchmark circuits (`porep-like`).
//! - [`testing`]: the conformance check every backend must pass.
//! - [`zero_one`]: a witness vector as 0/1 masks and its other values, as a
//!   GPU backend sends it.

//!
//! Unsafe code is denied crate-wide. The exceptions, each with its
//! `// SAFETY:` note: the file mapping in [`params::MappedParameters::open`],
//! and the slice casts in [`msm`] that hand blstrs' points to blst without
//! copying them (guarded by compile-time layout assertions), and the cache
//! prefetch hints in porep-like's witness replay, and the huge-page advice
//! on witness vectors in [`compiled`].

#![deny(unsafe_code)]

pub mod accel;
pub mod circuits;
pub mod compiled;
pub mod domain;
pub mod error;
pub mod generator;
pub mod msm;
pub mod params;
pub mod points;
pub mod proof;
pub mod prover;
pub mod subgroup;
pub mod synthesis;
pub mod testing;
pub mod timing;
pub mod verifier;
pub mod zero_one;

pub use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
pub use error::{Error, Result};
pub use params::{MappedParameters, Parameters, VerifyingKey};
pub use points::Points;
pub use proof::Proof;
pub use prover::{CpuBackend, MsmResults, ProofRandomness, ProverBackend};
pub use synthesis::ProvingAssignment;
pub use timing::{Phase, PhaseSpan, PhaseTimings, SpanOn};
pub use verifier::PreparedVerifyingKey;
