//! Synthesis rules (densities, input constraints, `extend`), the porep-like
//! family's statistics, and the prover's error paths.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::Scalar;
use common::MixedCircuit;
use cuzk_core::circuits::porep_like::{PorepLikeCircuit, FULL_PUBLIC_INPUTS};
use cuzk_core::generator::generate_random_parameters;
use cuzk_core::prover::{create_proof_batch, prove_assignments, CpuBackend};
use cuzk_core::synthesis::{synthesize, synthesize_batch, ProvingAssignment};
use cuzk_core::verifier::{prepare_verifying_key, verify_proof};
use cuzk_core::{Error, G1Affine, Parameters};
use ff::{Field, PrimeField};

use group::prime::PrimeCurveAffine;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn satisfied(pa: &ProvingAssignment) -> bool {
    pa.a.iter()
        .zip(&pa.b)
        .zip(&pa.c)
        .all(|((a, b), c)| *a * b == *c)
}

#[test]
fn densities_and_input_constraints() {
    struct Small;
    impl Circuit<Scalar> for Small {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let x = cs.alloc_input(|| "x", || Ok(Scalar::from(6u64)))?;
            let a = cs.alloc(|| "a", || Ok(Scalar::from(2u64)))?;
            let b = cs.alloc(|| "b", || Ok(Scalar::from(3u64)))?;
            let c = cs.alloc(|| "c", || Ok(Scalar::from(6u64)))?;
            // a in A, b in B, c in C only; x in C.
            cs.enforce(|| "ab", |l| l + a, |l| l + b, |l| l + c);
            // x in C, one in B, c with zero coefficient in A (not dense).
            cs.enforce(
                || "x",
                |l| l + c + (Scalar::ZERO, b),
                |l| l + CS::one(),
                |l| l + x,
            );
            Ok(())
        }
    }
    let pa = synthesize(Small).unwrap();
    // 2 constraints + one input constraint per input (one and x).
    assert_eq!(pa.num_constraints(), 4);
    assert_eq!(pa.input_assignment, vec![Scalar::ONE, Scalar::from(6u64)]);
    assert_eq!(pa.public_inputs(), &[Scalar::from(6u64)]);
    assert_eq!(pa.a_aux_density.as_slice(), &[true, false, true]);
    assert_eq!(pa.b_aux_density.as_slice(), &[false, true, false]);
    assert_eq!(pa.b_input_density.as_slice(), &[true, false]);
    assert_eq!(&pa.a[2..], &[Scalar::ONE, Scalar::from(6u64)]);
    assert_eq!(&pa.b[2..], &[Scalar::ZERO, Scalar::ZERO]);
    assert_eq!(&pa.c[2..], &[Scalar::ZERO, Scalar::ZERO]);
    assert!(satisfied(&pa));
    assert_eq!(
        pa.a_query_scalars(),
        vec![
            Scalar::ONE,
            Scalar::from(6u64),
            Scalar::from(2u64),
            Scalar::from(6u64)
        ]
    );
    assert_eq!(pa.b_query_scalars(), vec![Scalar::ONE, Scalar::from(3u64)]);
    // Into reused vectors: whatever they held is gone.
    let mut v = vec![Scalar::from(77u64); 9];
    pa.a_query_scalars_into(&mut v);
    assert_eq!(v, pa.a_query_scalars());
    pa.b_query_scalars_into(&mut v);
    assert_eq!(v, vec![Scalar::ONE, Scalar::from(3u64)]);
}

/// Parts synthesized into fresh systems and spliced with `extend`, as
/// Filecoin's circuits do when the system allows it.
#[derive(Clone)]
struct Parts {
    parts: Vec<Vec<u64>>,
    use_extend: bool,
}

fn synth_part<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    vals: &[u64],
) -> Result<(), SynthesisError> {
    let total: u64 = vals.iter().sum();
    let x = cs.alloc_input(|| "sum", || Ok(Scalar::from(total)))?;
    let mut lc = bellpepper_core::LinearCombination::zero();
    for (i, v) in vals.iter().enumerate() {
        let var = cs.alloc(|| format!("v{i}"), || Ok(Scalar::from(*v)))?;
        let sq = cs.alloc(|| format!("sq{i}"), || Ok(Scalar::from(*v * *v)))?;
        cs.enforce(|| "sq", |l| l + var, |l| l + var, |l| l + sq);
        lc = lc + var;
    }
    cs.enforce(|| "sum", |_| lc, |l| l + CS::one(), |l| l + x);
    Ok(())
}

impl Circuit<Scalar> for Parts {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for vals in &self.parts {
            if self.use_extend && CS::is_extensible() {
                let mut part = CS::new();
                part.alloc_input(|| "one", || Ok(Scalar::ONE))?;
                synth_part(&mut part, vals)?;
                cs.extend(&part);
            } else {
                synth_part(cs, vals)?;
            }
        }
        Ok(())
    }
}

#[test]
fn extend_matches_sequential_synthesis() {
    let parts = vec![vec![1, 2, 3], vec![4], vec![5, 6, 7, 8, 9]];
    let seq = synthesize(Parts {
        parts: parts.clone(),
        use_extend: false,
    })
    .unwrap();
    let ext = synthesize(Parts {
        parts: parts.clone(),
        use_extend: true,
    })
    .unwrap();
    assert_eq!(seq.a, ext.a);
    assert_eq!(seq.b, ext.b);
    assert_eq!(seq.c, ext.c);
    assert_eq!(seq.input_assignment, ext.input_assignment);
    assert_eq!(seq.aux_assignment, ext.aux_assignment);
    assert_eq!(seq.a_aux_density, ext.a_aux_density);
    assert_eq!(seq.b_input_density, ext.b_input_density);
    assert_eq!(seq.b_aux_density, ext.b_aux_density);

    // Parameters come from a sequential synthesis; the extended one proves.
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let params = generate_random_parameters(
        Parts {
            parts: parts.clone(),
            use_extend: true,
        },
        &mut rng,
    )
    .unwrap();
    let (proofs, _) = create_proof_batch(
        &CpuBackend,
        vec![Parts {
            parts,
            use_extend: true,
        }],
        &params,
        &mut rng,
    )
    .unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let inputs = [6u64, 4, 35].map(Scalar::from);
    assert!(verify_proof(&pvk, &proofs[0], &inputs).unwrap());
}

#[test]
fn unallocated_variable_is_an_error() {
    struct Bad;
    impl Circuit<Scalar> for Bad {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let a = cs.alloc(|| "a", || Ok(Scalar::ONE))?;
            let ghost = Variable::new_unchecked(Index::Aux(99));
            cs.enforce(|| "ghost", |l| l + a, |l| l + ghost, |l| l + a);
            Ok(())
        }
    }
    let r = synthesize_batch(vec![Bad]);
    match r {
        Err(Error::InvalidCircuit { index, what }) => {
            assert_eq!(index, 0);
            assert!(what.contains("aux variable 99"), "{what}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted a circuit using an unallocated variable"),
    }
}

#[test]
fn synthesis_errors_name_the_circuit() {
    struct Failing(bool);
    impl Circuit<Scalar> for Failing {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let v = cs.alloc(
                || "v",
                || {
                    if self.0 {
                        Err(SynthesisError::AssignmentMissing)
                    } else {
                        Ok(Scalar::ONE)
                    }
                },
            )?;
            cs.enforce(|| "v", |l| l + v, |l| l + v, |l| l + v);
            Ok(())
        }
    }
    let r = synthesize_batch(vec![Failing(false), Failing(false), Failing(true)]);
    assert!(matches!(
        r,
        Err(Error::Synthesis {
            index: 2,
            source: SynthesisError::AssignmentMissing
        })
    ));
}

#[test]
fn porep_like_statistics() {
    for log in [2u32, 3, 4, 6, 10, 12, 14, 16] {
        let c = PorepLikeCircuit::new(log, 42);
        let pa = synthesize(c.clone()).unwrap();
        let n_aux = pa.aux_assignment.len();
        assert_eq!(
            pa.num_constraints(),
            1 << log,
            "log {log} fills the domain exactly"
        );
        assert_eq!(pa.public_inputs(), c.public_inputs().as_slice());
        assert_eq!(pa.public_inputs().len(), c.num_public_inputs());
        assert!(satisfied(&pa), "log {log} unsatisfied");
        if log < 10 {
            continue;
        }
        let bits = pa
            .aux_assignment
            .iter()
            .filter(|v| **v == Scalar::ZERO || **v == Scalar::ONE)
            .count();
        let wide = pa
            .aux_assignment
            .iter()
            .filter(|v| v.to_repr().as_ref()[16..].iter().any(|b| *b != 0))
            .count();
        let a_cov = pa.a_aux_density.count() as f64 / n_aux as f64;
        let b_cov = pa.b_aux_density.count() as f64 / n_aux as f64;
        let bit_share = bits as f64 / n_aux as f64;
        eprintln!(
            "log {log}: {n_aux} aux, bits {bit_share:.3}, A {a_cov:.3}, B {b_cov:.3}, wide {wide}"
        );
        assert!(bit_share > 0.8, "log {log}: boolean share {bit_share}");
        assert!(a_cov > 0.95, "log {log}: A coverage {a_cov}");
        assert!((0.2..0.3).contains(&b_cov), "log {log}: B coverage {b_cov}");
        assert!(
            wide as f64 > 0.05 * n_aux as f64,
            "log {log}: {wide} full-width values"
        );
    }
    assert_eq!(
        PorepLikeCircuit::new(16, 0).num_public_inputs(),
        FULL_PUBLIC_INPUTS
    );
    assert_eq!(PorepLikeCircuit::new(2, 0).num_public_inputs(), 1);
    // Deterministic from the seed; another seed, another witness and
    // other inputs, but the same shape.
    let a = synthesize(PorepLikeCircuit::new(10, 1)).unwrap();
    let b = synthesize(PorepLikeCircuit::new(10, 1)).unwrap();
    let c = synthesize(PorepLikeCircuit::new(10, 2)).unwrap();
    assert_eq!(a.aux_assignment, b.aux_assignment);
    assert_eq!(a.input_assignment, b.input_assignment);
    assert_ne!(a.aux_assignment, c.aux_assignment);
    assert_ne!(a.input_assignment, c.input_assignment);
    assert_eq!(a.aux_assignment.len(), c.aux_assignment.len());
    assert_eq!(a.a_aux_density, c.a_aux_density);
    assert_eq!(a.b_aux_density, c.b_aux_density);
    assert_eq!(a.b_input_density, c.b_input_density);
    // Outside the supported sizes: an error, not a panic.
    assert!(synthesize(PorepLikeCircuit::new(1, 0)).is_err());
}

/// One set of parameters (made from seed 0) proves every seed of a size,
/// in one batch.
#[test]
fn porep_like_parameters_serve_every_seed() {
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let params = generate_random_parameters(PorepLikeCircuit::new(9, 0), &mut rng).unwrap();
    let circuits: Vec<PorepLikeCircuit> = [3u64, 4, 99]
        .iter()
        .map(|s| PorepLikeCircuit::new(9, *s))
        .collect();
    let (proofs, _) = create_proof_batch(&CpuBackend, circuits.clone(), &params, &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    for (p, c) in proofs.iter().zip(&circuits) {
        assert!(verify_proof(&pvk, p, &c.public_inputs()).unwrap());
    }
    assert!(!verify_proof(&pvk, &proofs[0], &circuits[1].public_inputs()).unwrap());
}

#[test]
fn prover_rejects_mismatched_and_unusable_parameters() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let params = generate_random_parameters(MixedCircuit::new(1, 3, 20), &mut rng).unwrap();
    // Another shape: more constraints and inputs.
    let other = MixedCircuit::new(1, 5, 20);
    let r = create_proof_batch(&CpuBackend, vec![other], &params, &mut rng);
    assert!(
        matches!(r, Err(Error::ShapeMismatch { index: 0, .. })),
        "{r:?}"
    );
    // Same input count, longer chain: a shape mismatch, named.
    let pa = synthesize(MixedCircuit::new(1, 3, 200)).unwrap();
    let ok = synthesize(MixedCircuit::new(1, 3, 20)).unwrap();
    let r = prove_assignments(&CpuBackend, &params, &[ok.clone(), pa], &mut rng);
    assert!(
        matches!(r, Err(Error::ShapeMismatch { index: 1, .. })),
        "{r:?}"
    );
    // Empty batch.
    let r = create_proof_batch::<MixedCircuit, _>(&CpuBackend, vec![], &params, &mut rng);
    assert!(matches!(r, Err(Error::EmptyBatch)));
    // An identity delta.
    let mut bad: Parameters = params.clone();
    bad.vk.delta_g1 = G1Affine::identity();
    let r = prove_assignments(&CpuBackend, &bad, std::slice::from_ref(&ok), &mut rng);
    assert!(matches!(r, Err(Error::InvalidParameters(_))), "{r:?}");
    // A query vector one point short.
    let mut short = params.clone();
    let mut l = short.l.in_memory().unwrap().to_vec();
    l.pop();
    short.l = l.into();
    let r = prove_assignments(&CpuBackend, &short, std::slice::from_ref(&ok), &mut rng);
    assert!(matches!(r, Err(Error::ShapeMismatch { .. })), "{r:?}");
    // And the good path still proves.
    let (p, _) = prove_assignments(&CpuBackend, &params, &[ok], &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proof(&pvk, &p[0], &MixedCircuit::new(1, 3, 20).public_inputs()).unwrap());
}
