//! Built-in circuits for demos and benchmarks.

pub mod porep_like;

pub use porep_like::PorepLikeCircuit;
