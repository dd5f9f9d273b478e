//! The proving seam. A backend computes, for each synthesized circuit of a
//! batch, H and the five multi-scalar multiplications; this module turns
//! those into proofs with fresh randomness r and s.
//!
//! With the MSM results below and randomness r, s the proof is
//!   A  = alpha_g1 + a_g1 + r·delta_g1
//!   B  = beta_g2  + b_g2 + s·delta_g2
//!   B1 = beta_g1  + b_g1 + s·delta_g1
//!   C  = l + h + s·A + r·B1 − r·s·delta_g1

use crate::compiled::{CompiledCircuit, Witness};
use crate::params::Parameters;
use crate::proof::Proof;
use crate::synthesis::ProvingAssignment;
use crate::timing::{Phase, PhaseTimings, SpanOn};
use crate::{domain, msm, synthesis, Error, Result};
use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use rand_core::RngCore;
use std::time::Instant;

/// The five MSMs of one circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmResults {
    /// `Σ input_i·a[i] + Σ_{aux j in A} aux_j·a[..]`: the query points in
    /// the parameters' order (every input, then the A-dense aux).
    pub a_g1: G1Projective,
    /// Σ over B-dense inputs and aux of the assignment times b_g1.
    pub b_g1: G1Projective,
    /// The same scalars times b_g2.
    pub b_g2: G2Projective,
    /// `Σ aux_j·l[j]`
    pub l: G1Projective,
    /// `Σ h_i·h[i]` over H's n − 1 coefficients.
    pub h: G1Projective,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProofRandomness {
    pub r: Scalar,
    pub s: Scalar,
}

impl ProofRandomness {
    pub fn random<R: RngCore>(rng: &mut R) -> Self {
        ProofRandomness {
            r: Scalar::random(&mut *rng),
            s: Scalar::random(&mut *rng),
        }
    }
}

/// What a backend (CPU, CUDA) implements.
pub trait ProverBackend: Send + Sync {
    fn name(&self) -> &'static str;
    /// Whether the backend reads each parameter point once, to keep the
    /// set resident on its device: then callers hand it parameters left in
    /// their mapped file ([`Parameters::mapped`]), which it decodes as it
    /// uploads them, instead of decoding the whole file into host memory
    /// first. The CPU backend reads every point for every proof: false.
    fn keeps_parameters_resident(&self) -> bool {
        false
    }
    /// Whether this backend sends a witness's aux vector in its 0/1 form
    /// ([`Witness::prepare_zero_one`]): the synthesis side then makes the
    /// form right after the witness, on its own time, and the backend only
    /// copies it. By default no (the CPU backend reads the vector itself).
    fn wants_zero_one(&self) -> bool {
        false
    }
    /// H and the five MSMs for every assignment, with the time each phase
    /// took (summed over the batch). All assignments share `params`.
    fn compute(
        &self,
        params: &Parameters,
        assignments: &[ProvingAssignment],
    ) -> Result<(Vec<MsmResults>, PhaseTimings)>;

    /// [`Self::compute`] for witnesses of a compiled circuit, whose a/b/c
    /// the backend forms itself from the matrices (a GPU backend on the
    /// device, from the witness uploaded once). The witnesses have been
    /// checked against `compiled` and `compiled` against `params`
    /// ([`prove_witnesses`]). This default assigns each witness on the
    /// CPU's cores (one at a time, so a batch holds one assignment's a/b/c)
    /// and computes it.
    fn compute_compiled(
        &self,
        params: &Parameters,
        compiled: &CompiledCircuit,
        witnesses: Vec<Witness>,
    ) -> Result<(Vec<MsmResults>, PhaseTimings)> {
        let mut out = Vec::with_capacity(witnesses.len());
        let mut sum = PhaseTimings::default();
        for (i, w) in witnesses.into_iter().enumerate() {
            let clock = Instant::now();
            let pa = compiled.assign(w)?;
            sum.at(SpanOn::default(), i);
            sum.end(Phase::Abc, clock);
            let (mut r, mut t) = self.compute(params, std::slice::from_ref(&pa))?;
            // Its spans are of the call's partition i, not of a call of one.
            for s in &mut t.spans {
                s.partition = i;
            }
            sum.add(&t);
            out.append(&mut r);
        }
        Ok((out, sum))
    }
}

/// Rayon NTT and blst's Pippenger, with the 0/1 scalars summed directly.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

impl CpuBackend {
    /// H and the MSMs of one circuit, adding each phase's time to `t`.
    /// Mapped parameters are decoded a vector at a time, for the MSM that
    /// reads it (and dropped after it).
    fn compute_one(
        &self,
        params: &Parameters,
        pa: &ProvingAssignment,
        index: usize,
        t: &mut PhaseTimings,
    ) -> Result<MsmResults> {
        t.at(SpanOn::default(), index);
        let clock = Instant::now();
        let h_coeffs = domain::compute_h_from_slices(&pa.a, &pa.b, &pa.c).map_err(|e| match e {
            Error::InvalidCircuit { what, .. } => Error::InvalidCircuit { index, what },
            e => e,
        })?;
        t.end(Phase::HNtt, clock);

        let clock = Instant::now();
        let h = msm::msm_g1(&params.h.read()?, &h_coeffs);
        drop(h_coeffs);
        t.end(Phase::MsmH, clock);

        let clock = Instant::now();
        let l = msm::msm_g1(&params.l.read()?, &pa.aux_assignment);
        t.end(Phase::MsmL, clock);

        let clock = Instant::now();
        let a_g1 = msm::msm_g1(&params.a.read()?, &pa.a_query_scalars());
        t.end(Phase::MsmA, clock);

        let b_scalars = pa.b_query_scalars();
        let clock = Instant::now();
        let b_g1 = msm::msm_g1(&params.b_g1.read()?, &b_scalars);
        t.end(Phase::MsmBG1, clock);

        let clock = Instant::now();
        let b_g2 = msm::msm_g2(&params.b_g2.read()?, &b_scalars);
        t.end(Phase::MsmBG2, clock);

        Ok(MsmResults {
            a_g1,
            b_g1,
            b_g2,
            l,
            h,
        })
    }
}

impl ProverBackend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn compute(
        &self,
        params: &Parameters,
        assignments: &[ProvingAssignment],
    ) -> Result<(Vec<MsmResults>, PhaseTimings)> {
        let start = Instant::now();
        let mut t = PhaseTimings::default();
        // Circuits run one after another: each phase already uses every core,
        // and one at a time keeps a single circuit's temporaries in memory.
        let mut out = Vec::with_capacity(assignments.len());
        for (i, pa) in assignments.iter().enumerate() {
            check_shape(params, pa, i)?;
            out.push(self.compute_one(params, pa, i, &mut t)?);
        }
        t.total = start.elapsed();
        Ok((out, t))
    }
}

/// What the parameters of a circuit are sized by: one owner of the rule
/// that checks parameters against a circuit, whether the circuit comes as
/// a synthesized assignment or as a compiled constraint system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircuitShape {
    /// Constraints, the input constraints included.
    pub constraints: usize,
    /// Inputs, the constant one included.
    pub inputs: usize,
    pub aux: usize,
    /// Aux variables that occur in A.
    pub a_aux: usize,
    /// Inputs and aux variables that occur in B.
    pub b_dense: usize,
}

impl CircuitShape {
    /// The shape of a synthesized assignment, after checking that its
    /// parts agree with each other.
    pub fn of_assignment(pa: &ProvingAssignment, index: usize) -> Result<Self> {
        let mismatch = |what: String| Err(Error::ShapeMismatch { index, what });
        let n = pa.a.len();
        if pa.b.len() != n || pa.c.len() != n {
            return mismatch(format!(
                "a, b, c have lengths {}, {}, {}",
                n,
                pa.b.len(),
                pa.c.len()
            ));
        }
        let num_inputs = pa.input_assignment.len();
        let num_aux = pa.aux_assignment.len();
        if pa.a_aux_density.len() != num_aux
            || pa.b_aux_density.len() != num_aux
            || pa.b_input_density.len() != num_inputs
        {
            return mismatch(format!(
                "density lengths {}/{}/{} do not match {num_inputs} inputs and {num_aux} aux variables",
                pa.a_aux_density.len(),
                pa.b_input_density.len(),
                pa.b_aux_density.len()
            ));
        }
        Ok(CircuitShape {
            constraints: n,
            inputs: num_inputs,
            aux: num_aux,
            a_aux: pa.a_aux_density.count(),
            b_dense: pa.b_input_density.count() + pa.b_aux_density.count(),
        })
    }

    /// Check that parameters were made for a circuit of this shape;
    /// `index` names the circuit in errors.
    pub fn check_params(&self, params: &Parameters, index: usize) -> Result<()> {
        let mismatch = |what: String| Err(Error::ShapeMismatch { index, what });
        let (n, num_inputs, num_aux) = (self.constraints, self.inputs, self.aux);
        if num_inputs == 0 {
            return mismatch("no inputs (input 0 must be the constant one)".into());
        }
        if params.vk.ic.len() != num_inputs {
            return mismatch(format!(
                "vk has {} ic points, circuit has {num_inputs} inputs",
                params.vk.ic.len()
            ));
        }
        let log = domain::log_domain_size(n);
        if log >= domain::MAX_LOG_DOMAIN {
            return Err(Error::TooLarge {
                constraints: n,
                max_log: domain::MAX_LOG_DOMAIN - 1,
            });
        }
        let h_len = (1usize << log) - 1;
        if params.h.len() != h_len {
            return mismatch(format!(
                "h has {} points, the 2^{log} domain of {n} constraints needs {h_len}",
                params.h.len()
            ));
        }
        if params.l.len() != num_aux {
            return mismatch(format!(
                "l has {} points, circuit has {num_aux} aux variables",
                params.l.len()
            ));
        }
        let a_len = num_inputs + self.a_aux;
        if params.a.len() != a_len {
            return mismatch(format!(
                "a has {} points, the A density needs {a_len}",
                params.a.len()
            ));
        }
        let b_len = self.b_dense;
        if params.b_g1.len() != b_len || params.b_g2.len() != b_len {
            return mismatch(format!(
                "b_g1/b_g2 have {}/{} points, the B density needs {b_len}",
                params.b_g1.len(),
                params.b_g2.len()
            ));
        }
        Ok(())
    }
}

/// Check that an assignment fits the parameters (query lengths against the
/// densities and the domain); `index` names the circuit in errors.
pub fn check_shape(
    params: &Parameters,
    assignment: &ProvingAssignment,
    index: usize,
) -> Result<()> {
    CircuitShape::of_assignment(assignment, index)?.check_params(params, index)
}

pub fn assemble_proof(params: &Parameters, msm: &MsmResults, rnd: &ProofRandomness) -> Proof {
    let vk = &params.vk;
    let (r, s) = (rnd.r, rnd.s);
    let a = msm.a_g1 + vk.alpha_g1 + vk.delta_g1 * r;
    let b = msm.b_g2 + vk.beta_g2 + vk.delta_g2 * s;
    let b1 = msm.b_g1 + vk.beta_g1 + vk.delta_g1 * s;
    let c = msm.l + msm.h + a * s + b1 * r - vk.delta_g1 * (r * s);
    Proof {
        a: a.to_affine(),
        b: b.to_affine(),
        c: c.to_affine(),
    }
}

fn check_delta(params: &Parameters) -> Result<()> {
    if bool::from(params.vk.delta_g1.is_identity()) || bool::from(params.vk.delta_g2.is_identity())
    {
        return Err(Error::InvalidParameters(
            "delta is the point at infinity".into(),
        ));
    }
    Ok(())
}

/// Proofs for already-synthesized circuits.
pub fn prove_assignments<R: RngCore>(
    backend: &dyn ProverBackend,
    params: &Parameters,
    assignments: &[ProvingAssignment],
    rng: &mut R,
) -> Result<(Vec<Proof>, PhaseTimings)> {
    let start = Instant::now();
    if assignments.is_empty() {
        return Err(Error::EmptyBatch);
    }
    check_delta(params)?;
    for (i, pa) in assignments.iter().enumerate() {
        check_shape(params, pa, i)?;
    }
    let (msms, timings) = backend.compute(params, assignments)?;
    finish(
        backend,
        params,
        msms,
        assignments.len(),
        "circuits",
        timings,
        start,
        rng,
    )
}

/// The proofs from a backend's MSM results (one per circuit asked for,
/// `what` naming them in the error when the count is wrong), each with
/// fresh randomness; the timings' total is the call's wall time.
#[allow(clippy::too_many_arguments)]
fn finish<R: RngCore>(
    backend: &dyn ProverBackend,
    params: &Parameters,
    msms: Vec<MsmResults>,
    count: usize,
    what: &str,
    mut timings: PhaseTimings,
    start: Instant,
    rng: &mut R,
) -> Result<(Vec<Proof>, PhaseTimings)> {
    if msms.len() != count {
        return Err(Error::Backend {
            backend: backend.name(),
            source: format!("returned {} results for {count} {what}", msms.len()).into(),
        });
    }
    let proofs = msms
        .iter()
        .map(|m| assemble_proof(params, m, &ProofRandomness::random(rng)))
        .collect();
    timings.total = start.elapsed();
    Ok((proofs, timings))
}

/// Proofs for witnesses of a compiled circuit: the compiled system is
/// checked against the parameters and every witness against the compiled
/// system (a wrong shape is [`Error::WitnessMismatch`], never proved), then
/// the backend forms a/b/c and proves ([`ProverBackend::compute_compiled`]).
pub fn prove_witnesses<R: RngCore>(
    backend: &dyn ProverBackend,
    params: &Parameters,
    compiled: &CompiledCircuit,
    witnesses: Vec<Witness>,
    rng: &mut R,
) -> Result<(Vec<Proof>, PhaseTimings)> {
    let start = Instant::now();
    if witnesses.is_empty() {
        return Err(Error::EmptyBatch);
    }
    check_delta(params)?;
    compiled.check_params(params)?;
    for w in &witnesses {
        compiled.check_witness(w)?;
    }
    let count = witnesses.len();
    let (msms, timings) = backend.compute_compiled(params, compiled, witnesses)?;
    finish(
        backend,
        params,
        msms,
        count,
        "witnesses",
        timings,
        start,
        rng,
    )
}

/// One partition ready to prove: full synthesis's assignment, or the
/// witness of a compiled circuit, whose a/b/c the backend forms from the
/// matrices (on the GPU for the CUDA backend).
#[derive(Clone, Debug)]
pub enum Synthesized {
    Assignment(ProvingAssignment),
    Witness {
        compiled: std::sync::Arc<CompiledCircuit>,
        witness: Witness,
    },
}

impl Synthesized {
    /// A witness's 0/1 form ([`Witness::prepare_zero_one`]), for a backend
    /// that [wants it](ProverBackend::wants_zero_one); an assignment has
    /// none.
    pub fn prepare_zero_one(&mut self) {
        if let Synthesized::Witness { witness, .. } = self {
            witness.prepare_zero_one();
        }
    }
    /// Public inputs as the verifier sees them (without the leading one).
    pub fn public_inputs(&self) -> &[Scalar] {
        match self {
            Synthesized::Assignment(pa) => pa.public_inputs(),
            Synthesized::Witness { witness, .. } => &witness.inputs[1.min(witness.inputs.len())..],
        }
    }
}

/// Proofs for partitions sharing `params`, in order: each run of
/// consecutive assignments by [`prove_assignments`], each run of witnesses
/// of one compiled circuit by [`prove_witnesses`]. The timings are summed
/// over the runs.
pub fn prove_synthesized<R: RngCore>(
    backend: &dyn ProverBackend,
    params: &Parameters,
    parts: Vec<Synthesized>,
    rng: &mut R,
) -> Result<(Vec<Proof>, PhaseTimings)> {
    let start = Instant::now();
    if parts.is_empty() {
        return Err(Error::EmptyBatch);
    }
    let mut proofs = Vec::with_capacity(parts.len());
    let mut sum = PhaseTimings::default();
    let mut it = parts.into_iter().peekable();
    while let Some(first) = it.next() {
        let (mut p, t) = match first {
            Synthesized::Assignment(pa) => {
                let mut run = vec![pa];
                while let Some(Synthesized::Assignment(_)) = it.peek() {
                    if let Some(Synthesized::Assignment(pa)) = it.next() {
                        run.push(pa);
                    }
                }
                prove_assignments(backend, params, &run, rng)?
            }
            Synthesized::Witness { compiled, witness } => {
                let mut run = vec![witness];
                while let Some(Synthesized::Witness { compiled: c, .. }) = it.peek() {
                    if !std::sync::Arc::ptr_eq(c, &compiled) {
                        break;
                    }
                    if let Some(Synthesized::Witness { witness, .. }) = it.next() {
                        run.push(witness);
                    }
                }
                prove_witnesses(backend, params, &compiled, run, rng)?
            }
        };
        proofs.append(&mut p);
        sum.add(&t);
    }
    sum.total = start.elapsed();
    Ok((proofs, sum))
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
    let start = Instant::now();
    if circuits.is_empty() {
        return Err(Error::EmptyBatch);
    }
    let assignments = synthesis::synthesize_batch(circuits)?;
    let synthesis = start.elapsed();
    let (proofs, mut timings) = prove_assignments(backend, params, &assignments, rng)?;
    timings.synthesis = synthesis;
    timings.total = start.elapsed();
    Ok((proofs, timings))
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
