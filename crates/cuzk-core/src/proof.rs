//! Groth16 proofs in bellperson's 192-byte compressed encoding:
//! A (G1, 48 bytes), B (G2, 96 bytes), C (G1, 48 bytes).

use crate::{Error, Result};
use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

pub const PROOF_BYTES: usize = 192;
const G1_COMPRESSED: usize = 48;
const G2_COMPRESSED: usize = 96;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl Proof {
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..G1_COMPRESSED].copy_from_slice(&self.a.to_compressed());
        out[G1_COMPRESSED..G1_COMPRESSED + G2_COMPRESSED].copy_from_slice(&self.b.to_compressed());
        out[G1_COMPRESSED + G2_COMPRESSED..].copy_from_slice(&self.c.to_compressed());
        out
    }
    /// Rejects points off the curve or outside the subgroup, and the point
    /// at infinity (as bellperson's `Proof::read` does).
    pub fn from_bytes(bytes: &[u8]) -> crate::Result<Self> {
        if bytes.len() != PROOF_BYTES {
            return Err(Error::MalformedProof(format!(
                "expected {PROOF_BYTES} bytes, got {}",
                bytes.len()
            )));
        }
        let (a, rest) = bytes.split_at(G1_COMPRESSED);
        let (b, c) = rest.split_at(G2_COMPRESSED);
        Ok(Proof {
            a: g1(a, "A")?,
            b: g2(b, "B")?,
            c: g1(c, "C")?,
        })
    }
    /// Several proofs laid end to end (Filecoin's multi-partition proof).
    pub fn read_many(bytes: &[u8]) -> Result<Vec<Self>> {
        if !bytes.chunks_exact(PROOF_BYTES).remainder().is_empty() {
            return Err(Error::MalformedProof(format!(
                "{} bytes is not a multiple of {PROOF_BYTES}",
                bytes.len()
            )));
        }
        bytes.chunks(PROOF_BYTES).map(Self::from_bytes).collect()
    }
}

fn g1(bytes: &[u8], name: &str) -> Result<G1Affine> {
    let arr: &[u8; G1_COMPRESSED] = bytes.try_into().expect("split at a fixed length");
    let p: G1Affine = Option::from(G1Affine::from_compressed(arr))
        .ok_or_else(|| Error::MalformedProof(format!("{name} is not a valid G1 point")))?;
    if bool::from(p.is_identity()) {
        return Err(Error::MalformedProof(format!(
            "{name} is the point at infinity"
        )));
    }
    Ok(p)
}

fn g2(bytes: &[u8], name: &str) -> Result<G2Affine> {
    let arr: &[u8; G2_COMPRESSED] = bytes.try_into().expect("split at a fixed length");
    let p: G2Affine = Option::from(G2Affine::from_compressed(arr))
        .ok_or_else(|| Error::MalformedProof(format!("{name} is not a valid G2 point")))?;
    if bool::from(p.is_identity()) {
        return Err(Error::MalformedProof(format!(
            "{name} is the point at infinity"
        )));
    }
    Ok(p)
}
