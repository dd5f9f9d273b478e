//! Verification: e(A, B) = e(alpha, beta) · e(Σ x_i·ic_i, gamma) · e(C, delta).
//!
//! Rearranged as e(A, B) · e(acc, −gamma) · e(C, −delta) = e(alpha, beta) so
//! that one multi-Miller loop and one final exponentiation suffice.

use crate::params::VerifyingKey;
use crate::proof::Proof;
use crate::{msm, Error, Result};
use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar};
use ff::PrimeField;
use group::Curve;
use pairing::{MillerLoopResult, MultiMillerLoop};
use rand_core::RngCore;
use rayon::prelude::*;

pub struct PreparedVerifyingKey {
    pub alpha_g1_beta_g2: Gt,
    pub neg_gamma_g2: G2Prepared,
    pub neg_delta_g2: G2Prepared,
    pub ic: Vec<G1Affine>,
}

pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    PreparedVerifyingKey {
        alpha_g1_beta_g2: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
        neg_gamma_g2: G2Prepared::from(-vk.gamma_g2),
        neg_delta_g2: G2Prepared::from(-vk.delta_g2),
        ic: vk.ic.clone(),
    }
}

/// ic[0] + Σ x_i·ic[i+1].
fn input_accumulator(pvk: &PreparedVerifyingKey, public_inputs: &[Scalar]) -> Result<G1Projective> {
    if public_inputs.len() + 1 != pvk.ic.len() {
        return Err(Error::PublicInputCount {
            expected: pvk.ic.len().saturating_sub(1),
            got: public_inputs.len(),
        });
    }
    Ok(msm::msm_g1(&pvk.ic[1..], public_inputs) + pvk.ic[0])
}

/// Ok(false) for a proof that does not verify; Err for a wrong number of
/// public inputs.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    public_inputs: &[Scalar],
) -> Result<bool> {
    let acc = input_accumulator(pvk, public_inputs)?.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma_g2),
        (&proof.c, &pvk.neg_delta_g2),
    ]);
    Ok(ml.final_exponentiation() == pvk.alpha_g1_beta_g2)
}

/// All proofs at once, with random linear combination (one final
/// exponentiation). True only if every proof verifies.
///
/// With random z_i: Π e(z_i·A_i, B_i) · e(Σ z_i·acc_i, −gamma) ·
/// e(Σ z_i·C_i, −delta) = e(alpha, beta)^(Σ z_i). A false proof passes only
/// with probability about 2^-128 (the z_i are 128-bit).
pub fn verify_proofs_batch<R: RngCore>(
    pvk: &PreparedVerifyingKey,
    proofs: &[Proof],
    public_inputs: &[Vec<Scalar>],
    rng: &mut R,
) -> Result<bool> {
    if proofs.len() != public_inputs.len() {
        return Err(Error::BatchLength {
            proofs: proofs.len(),
            inputs: public_inputs.len(),
        });
    }
    if proofs.is_empty() {
        return Err(Error::EmptyBatch);
    }
    let z: Vec<Scalar> = (0..proofs.len())
        .map(|_| {
            let v = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
            Scalar::from_u128(v.max(1))
        })
        .collect();

    let accs = public_inputs
        .par_iter()
        .map(|x| input_accumulator(pvk, x))
        .collect::<Result<Vec<_>>>()?;
    let acc: G1Projective = accs.iter().zip(&z).map(|(a, z)| a * z).sum();
    let c: G1Projective = proofs.iter().zip(&z).map(|(p, z)| p.c * z).sum();
    let za: Vec<G1Affine> = proofs
        .par_iter()
        .zip(&z)
        .map(|(p, z)| (p.a * z).to_affine())
        .collect();
    let bs: Vec<G2Prepared> = proofs.par_iter().map(|p| G2Prepared::from(p.b)).collect();
    let (acc, c) = (acc.to_affine(), c.to_affine());

    let mut terms: Vec<(&G1Affine, &G2Prepared)> = za.iter().zip(&bs).collect();
    terms.push((&acc, &pvk.neg_gamma_g2));
    terms.push((&c, &pvk.neg_delta_g2));
    let lhs = Bls12::multi_miller_loop(&terms).final_exponentiation();
    let z_sum: Scalar = z.iter().sum();
    Ok(lhs == pvk.alpha_g1_beta_g2 * z_sum)
}
