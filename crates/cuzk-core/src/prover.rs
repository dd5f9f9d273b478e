//! The proving seam. A backend computes, for each synthesized circuit of a
//! batch, H and the five multi-scalar multiplications; this module turns
//! those into proofs with fresh randomness r and s.
//!
//! With the MSM results below and randomness r, s the proof is
//!   A  = alpha_g1 + a_g1 + r·delta_g1
//!   B  = beta_g2  + b_g2 + s·delta_g2
//!   B1 = beta_g1  + b_g1 + s·delta_g1
//!   C  = l + h + s·A + r·B1 − r·s·delta_g1

use crate::params::Parameters;
use crate::proof::Proof;
use crate::synthesis::ProvingAssignment;
use crate::timing::PhaseTimings;
use crate::Result;
use blstrs::{G1Projective, G2Projective, Scalar};
use rand_core::RngCore;

/// The five MSMs of one circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmResults {
    /// Σ input_i·a[i] + Σ_{aux in A} aux_j·a[..]
    pub a_g1: G1Projective,
    /// Σ over B-dense inputs and aux of the assignment times b_g1.
    pub b_g1: G1Projective,
    pub b_g2: G2Projective,
    /// Σ aux_j·l[j]
    pub l: G1Projective,
    /// Σ h_i·h[i]
    pub h: G1Projective,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProofRandomness {
    pub r: Scalar,
    pub s: Scalar,
}

impl ProofRandomness {
    pub fn random<R: RngCore>(rng: &mut R) -> Self {
        let _ = rng;
        todo!()
    }
}

/// What a backend (CPU, CUDA) implements.
pub trait ProverBackend: Send + Sync {
    fn name(&self) -> &'static str;
    /// H and the five MSMs for every assignment, with the time each phase
    /// took (summed over the batch). All assignments share `params`.
    fn compute(
        &self,
        params: &Parameters,
        assignments: &[ProvingAssignment],
    ) -> Result<(Vec<MsmResults>, PhaseTimings)>;
}

/// Rayon NTT and blst's Pippenger, with the 0/1 scalars summed directly.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

impl ProverBackend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn compute(
        &self,
        params: &Parameters,
        assignments: &[ProvingAssignment],
    ) -> Result<(Vec<MsmResults>, PhaseTimings)> {
        let _ = (params, assignments);
        todo!()
    }
}

/// Check that an assignment fits the parameters (query lengths against the
/// densities and the domain); `index` names the circuit in errors.
pub fn check_shape(params: &Parameters, assignment: &ProvingAssignment, index: usize) -> Result<()> {
    let _ = (params, assignment, index);
    todo!()
}

pub fn assemble_proof(params: &Parameters, msm: &MsmResults, rnd: &ProofRandomness) -> Proof {
    let _ = (params, msm, rnd);
    todo!()
}

/// Proofs for already-synthesized circuits.
pub fn prove_assignments<R: RngCore>(
    backend: &dyn ProverBackend,
    params: &Parameters,
    assignments: &[ProvingAssignment],
    rng: &mut R,
) -> Result<(Vec<Proof>, PhaseTimings)> {
    let _ = (backend, params, assignments, rng);
    todo!()
}

/// Synthesize and prove a batch of circuits of one shape.
pub fn create_proof_batch<C, R>(
    backend: &dyn ProverBackend,
    circuits: Vec<C>,
    params: &Parameters,
    rng: &mut R,
) -> Result<(Vec<Proof>, PhaseTimings)>
where
    C: bellpepper_core::Circuit<Scalar> + Send,
    R: RngCore,
{
    let _ = (backend, circuits, params, rng);
    todo!()
}

/// One circuit on the CPU backend.
pub fn create_random_proof<C, R>(circuit: C, params: &Parameters, rng: &mut R) -> Result<Proof>
where
    C: bellpepper_core::Circuit<Scalar> + Send,
    R: RngCore,
{
    let (proofs, _) = create_proof_batch(&CpuBackend, vec![circuit], params, rng)?;
    Ok(proofs[0])
}
