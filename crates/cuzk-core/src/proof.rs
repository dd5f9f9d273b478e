//! Groth16 proofs in bellperson's 192-byte compressed encoding:
//! A (G1, 48 bytes), B (G2, 96 bytes), C (G1, 48 bytes).

use blstrs::{G1Affine, G2Affine};

pub const PROOF_BYTES: usize = 192;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl Proof {
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        todo!()
    }
    /// Rejects points off the curve or outside the subgroup.
    pub fn from_bytes(bytes: &[u8]) -> crate::Result<Self> {
        let _ = bytes;
        todo!()
    }
}
