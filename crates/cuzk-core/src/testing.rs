//! Conformance checks for prover backends, so that every backend is held to
//! the same cases: [`check_backend`] compares a backend's H and MSM results
//! with the CPU backend's, field by field, on circuits that exercise each
//! layout rule, and checks that the proofs built from them verify.
//!
//! The cases: a circuit whose constraint count is not a power of two (the
//! domain is padded), with public inputs in B and aux variables in C only;
//! the same in a batch of different witnesses; porep-like at tiny, small
//! and moderate sizes, batched over seeds.

use crate::circuits::PorepLikeCircuit;
use crate::generator::generate_random_parameters;
use crate::prover::{assemble_proof, CpuBackend, ProofRandomness, ProverBackend};
use crate::synthesis::synthesize_batch;
use crate::verifier::{prepare_verifying_key, verify_proof};
use crate::{Error, Parameters, Scalar};
use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

#[derive(Debug, thiserror::Error)]
pub enum ConformanceError {
    #[error("case {case}, circuit {index}: {field} differs from the CPU backend's")]
    Mismatch {
        case: String,
        index: usize,
        field: &'static str,
    },
    #[error("case {case}: the backend returned {got} results for {expected} circuits")]
    Count {
        case: String,
        expected: usize,
        got: usize,
    },
    #[error("case {case}, circuit {index}: the proof does not verify")]
    ProofRejected { case: String, index: usize },
    #[error("case {case}: {source}")]
    Core {
        case: String,
        #[source]
        source: Error,
    },
}

/// A small circuit with every layout feature and any number of rows; its
/// shape depends on (num_inputs, num_rows), its values on `witness`.
///
/// Rows cycle through: `a · x_i = p` (input in B), `w · w = c` (c in C
/// only), a bit check `b · (1 − b) = 0`, and a mix `(k1·y + b) · (k2 + y) = z`
/// with fixed full-width coefficients. A closing row per input,
/// `x_i · 1 = x_i`, puts every input in A and C as well.
#[derive(Clone, Debug)]
pub struct LayoutCircuit {
    pub num_inputs: usize,
    pub num_rows: usize,
    pub witness: u64,
}

impl LayoutCircuit {
    pub fn new(num_inputs: usize, num_rows: usize, witness: u64) -> Self {
        Self {
            num_inputs: num_inputs.max(1),
            num_rows,
            witness,
        }
    }
    /// The public inputs, without the leading one.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        let mut rng = ChaCha20Rng::seed_from_u64(self.witness);
        (0..self.num_inputs)
            .map(|_| Scalar::random(&mut rng))
            .collect()
    }
}

impl Circuit<Scalar> for LayoutCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let inputs = self.public_inputs();
        let mut wrng = ChaCha20Rng::seed_from_u64(self.witness ^ 0x5eed);
        let mut srng = ChaCha20Rng::seed_from_u64(self.num_rows as u64);
        let xs = inputs
            .iter()
            .map(|v| cs.alloc_input(|| "x", || Ok(*v)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut y_val = Scalar::random(&mut wrng);
        let mut y = cs.alloc(|| "y", || Ok(y_val))?;
        // y must occur somewhere even with no rows of the mix kind.
        let y_sq_val = y_val.square();
        let y_sq = cs.alloc(|| "y^2", || Ok(y_sq_val))?;
        cs.enforce(|| "y^2", |l| l + y, |l| l + y, |l| l + y_sq);
        for row in 0..self.num_rows {
            let k = row % xs.len();
            match row % 4 {
                0 => {
                    let a_val = Scalar::random(&mut wrng);
                    let a = cs.alloc(|| "a", || Ok(a_val))?;
                    let p_val = a_val * inputs[k];
                    let p = cs.alloc(|| "p", || Ok(p_val))?;
                    cs.enforce(|| "a·x", |l| l + a, |l| l + xs[k], |l| l + p);
                }
                1 => {
                    let w_val = Scalar::random(&mut wrng);
                    let w = cs.alloc(|| "w", || Ok(w_val))?;
                    let c_val = w_val.square();
                    let c = cs.alloc(|| "c", || Ok(c_val))?;
                    cs.enforce(|| "w·w", |l| l + w, |l| l + w, |l| l + c);
                }
                2 => {
                    let b_val = if wrng.gen() {
                        Scalar::ONE
                    } else {
                        Scalar::ZERO
                    };
                    let b = cs.alloc(|| "b", || Ok(b_val))?;
                    cs.enforce(|| "bit", |l| l + b, |l| l + CS::one() - b, |l| l);
                }
                _ => {
                    let (k1, k2) = (Scalar::random(&mut srng), Scalar::random(&mut srng));
                    let b_val = if wrng.gen() {
                        Scalar::ONE
                    } else {
                        Scalar::ZERO
                    };
                    let b = cs.alloc(|| "b", || Ok(b_val))?;
                    let z_val = (k1 * y_val + b_val) * (k2 + y_val);
                    let z = cs.alloc(|| "z", || Ok(z_val))?;
                    cs.enforce(
                        || "mix",
                        |_| LinearCombination::zero() + (k1, y) + b,
                        |l| l + (k2, CS::one()) + y,
                        |l| l + z,
                    );
                    y = z;
                    y_val = z_val;
                }
            }
        }
        // Inputs in C: x_k · 1 = x_k (a tautology that puts x_k in A and C).
        for x in &xs {
            cs.enforce(|| "x", |l| l + *x, |l| l + CS::one(), |l| l + *x);
        }
        Ok(())
    }
}

/// `n` scalars, each 0 with probability `zeros`, 1 with `ones`, else
/// random: a witness-like mix for tests of the 0/1 paths
/// ([`crate::zero_one`], a backend's packed upload).
pub fn zero_one_mix(n: usize, zeros: f64, ones: f64, seed: u64) -> Vec<Scalar> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let u: f64 = rng.gen();
            if u < zeros {
                Scalar::ZERO
            } else if u < zeros + ones {
                Scalar::ONE
            } else {
                Scalar::random(&mut rng)
            }
        })
        .collect()
}

/// Compare `backend` with the CPU backend on every case; see the module
/// documentation for the cases. Takes a few seconds on two cores.
pub fn check_backend(backend: &dyn ProverBackend) -> Result<(), ConformanceError> {
    let mut rng = ChaCha20Rng::seed_from_u64(0xc0ffee);
    let layout = |rows: usize, inputs: usize, w: u64| LayoutCircuit::new(inputs, rows, w);
    check_case(
        backend,
        "layout 1 input, 0 rows",
        vec![layout(0, 1, 1)],
        &mut rng,
    )?;
    check_case(
        backend,
        "layout 3 inputs, 5 rows",
        vec![layout(5, 3, 2)],
        &mut rng,
    )?;
    let batch = (0..3).map(|w| layout(101, 7, 10 + w)).collect();
    check_case(
        backend,
        "layout 7 inputs, 101 rows, batch of 3",
        batch,
        &mut rng,
    )?;
    for log in [2u32, 6, 11] {
        let batch = (0..2)
            .map(|s| PorepLikeCircuit::new(log, 100 + s))
            .collect();
        check_case(
            backend,
            &format!("porep-like 2^{log}, batch of 2"),
            batch,
            &mut rng,
        )?;
    }
    Ok(())
}

fn check_case<C: Circuit<Scalar> + Clone + Send>(
    backend: &dyn ProverBackend,
    case: &str,
    circuits: Vec<C>,
    rng: &mut ChaCha20Rng,
) -> Result<(), ConformanceError> {
    let core = |source| ConformanceError::Core {
        case: case.to_string(),
        source,
    };
    let params: Parameters = generate_random_parameters(circuits[0].clone(), rng).map_err(core)?;
    let assignments = synthesize_batch(circuits).map_err(core)?;
    let (want, _) = CpuBackend.compute(&params, &assignments).map_err(core)?;
    let (got, _) = backend.compute(&params, &assignments).map_err(core)?;
    if got.len() != want.len() {
        return Err(ConformanceError::Count {
            case: case.into(),
            expected: want.len(),
            got: got.len(),
        });
    }
    let pvk = prepare_verifying_key(&params.vk);
    for (index, ((g, w), pa)) in got.iter().zip(&want).zip(&assignments).enumerate() {
        let fields: [(&'static str, bool); 5] = [
            ("h", g.h == w.h),
            ("l", g.l == w.l),
            ("a_g1", g.a_g1 == w.a_g1),
            ("b_g1", g.b_g1 == w.b_g1),
            ("b_g2", g.b_g2 == w.b_g2),
        ];
        if let Some((field, _)) = fields.iter().find(|(_, ok)| !ok) {
            return Err(ConformanceError::Mismatch {
                case: case.into(),
                index,
                field,
            });
        }
        let proof = assemble_proof(&params, g, &ProofRandomness::random(rng));
        if !verify_proof(&pvk, &proof, pa.public_inputs()).map_err(core)? {
            return Err(ConformanceError::ProofRejected {
                case: case.into(),
                index,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prover::MsmResults;
    use crate::synthesis::ProvingAssignment;

    /// A backend that corrupts one field of the CPU backend's results, to show
    /// that [`check_backend`] notices.
    #[derive(Clone, Copy, Debug)]
    struct CorruptingBackend(&'static str);

    impl ProverBackend for CorruptingBackend {
        fn name(&self) -> &'static str {
            "corrupting"
        }
        fn compute(
            &self,
            params: &Parameters,
            assignments: &[ProvingAssignment],
        ) -> crate::Result<(Vec<MsmResults>, crate::PhaseTimings)> {
            let (mut out, t) = CpuBackend.compute(params, assignments)?;
            if let Some(last) = out.last_mut() {
                let g1 = crate::G1Projective::from(params.vk.alpha_g1);
                match self.0 {
                    "h" => last.h += g1,
                    "l" => last.l += g1,
                    "a_g1" => last.a_g1 += g1,
                    "b_g1" => last.b_g1 += g1,
                    _ => last.b_g2 += crate::G2Projective::from(params.vk.beta_g2),
                }
            }
            Ok((out, t))
        }
    }

    #[test]
    fn cpu_backend_conforms() {
        check_backend(&CpuBackend).unwrap();
    }

    #[test]
    fn corrupted_results_are_caught() {
        for field in ["h", "l", "a_g1", "b_g1", "b_g2"] {
            match check_backend(&CorruptingBackend(field)) {
                Err(ConformanceError::Mismatch { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn layout_circuit_shape() {
        let pa = crate::synthesis::synthesize(LayoutCircuit::new(3, 5, 1)).unwrap();
        // 1 + 5 rows + 3 input rows + 4 input constraints: not a power of two.
        assert_eq!(pa.num_constraints(), 13);
        assert!(pa
            .a
            .iter()
            .zip(&pa.b)
            .zip(&pa.c)
            .all(|((a, b), c)| *a * b == *c));
        assert!(pa.b_input_density.count() >= 3);
        let c_only = (0..pa.aux_assignment.len())
            .filter(|&j| !pa.a_aux_density.get(j) && !pa.b_aux_density.get(j))
            .count();
        assert!(c_only >= 1);
    }
}
