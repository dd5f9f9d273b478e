//! Verification: e(A, B) = e(alpha, beta) · e(Σ x_i·ic_i, gamma) · e(C, delta).

use crate::params::VerifyingKey;
use crate::proof::Proof;
use crate::Result;
use blstrs::{G1Affine, G2Prepared, Gt, Scalar};
use rand_core::RngCore;

pub struct PreparedVerifyingKey {
    pub alpha_g1_beta_g2: Gt,
    pub neg_gamma_g2: G2Prepared,
    pub neg_delta_g2: G2Prepared,
    pub ic: Vec<G1Affine>,
}

pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    let _ = vk;
    todo!()
}

/// Ok(false) for a proof that does not verify; Err for a wrong number of
/// public inputs.
pub fn verify_proof(pvk: &PreparedVerifyingKey, proof: &Proof, public_inputs: &[Scalar]) -> Result<bool> {
    let _ = (pvk, proof, public_inputs);
    todo!()
}

/// All proofs at once, with random linear combination (one final
/// exponentiation). True only if every proof verifies.
pub fn verify_proofs_batch<R: RngCore>(
    pvk: &PreparedVerifyingKey,
    proofs: &[Proof],
    public_inputs: &[Vec<Scalar>],
    rng: &mut R,
) -> Result<bool> {
    let _ = (pvk, proofs, public_inputs, rng);
    todo!()
}
