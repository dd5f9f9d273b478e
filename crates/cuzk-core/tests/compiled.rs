//! The compiled path (constraints recorded once, witness-only synthesis,
//! a/b/c as sparse products) against full synthesis: equal element by
//! element on fresh witnesses, proofs that verify under bellperson and
//! cuzk, and named errors for damaged files, files of another circuit or
//! parameters, and witnesses of the wrong shape.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use common::MixedCircuit;
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::compiled::{self, CompiledCircuit, Witness};
use cuzk_core::prover::{prove_assignments, CpuBackend};
use cuzk_core::synthesis::{self, ProvingAssignment};
use cuzk_core::verifier::{prepare_verifying_key, verify_proof};
use cuzk_core::{generator, Error};
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn assert_same(full: &ProvingAssignment, comp: &ProvingAssignment, what: &str) {
    assert_eq!(full.a.len(), comp.a.len(), "{what}: constraints");
    for (name, x, y) in [
        ("a", &full.a, &comp.a),
        ("b", &full.b, &comp.b),
        ("c", &full.c, &comp.c),
    ] {
        if let Some(i) = (0..x.len()).find(|&i| x[i] != y[i]) {
            panic!("{what}: {name}[{i}] differs");
        }
    }
    assert_eq!(
        full.input_assignment, comp.input_assignment,
        "{what}: inputs"
    );
    assert_eq!(full.aux_assignment, comp.aux_assignment, "{what}: aux");
    assert_eq!(
        full.a_aux_density, comp.a_aux_density,
        "{what}: A aux density"
    );
    assert_eq!(
        full.b_input_density, comp.b_input_density,
        "{what}: B input density"
    );
    assert_eq!(
        full.b_aux_density, comp.b_aux_density,
        "{what}: B aux density"
    );
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

#[test]
fn porep_like_compiled_equals_full_synthesis() {
    let seed: u64 = rand::random();
    for log in [2u32, 3, 5, 8, 11, 14] {
        // Compiled once from one seed's circuit, used for others.
        let cc = compiled::compile(PorepLikeCircuit::new(log, 0), "porep-like").unwrap();
        assert_eq!(cc.num_constraints(), 1 << log);
        for s in [seed, seed.wrapping_add(1)] {
            let full = synthesis::synthesize(PorepLikeCircuit::new(log, s)).unwrap();
            let comp = cc.synthesize(PorepLikeCircuit::new(log, s)).unwrap();
            assert_same(&full, &comp, &format!("porep-like 2^{log} seed {s}"));
        }
    }
}

#[test]
fn mixed_circuit_compiled_equals_full_synthesis() {
    let seed: u64 = rand::random();
    for (inputs, extra) in [(2usize, 0usize), (3, 1), (7, 40), (30, 300)] {
        let cc = compiled::compile(MixedCircuit::new(seed, inputs, extra), "mixed").unwrap();
        for w in [seed, seed ^ 77] {
            let c = MixedCircuit::with_witness(seed, w, inputs, extra);
            let full = synthesis::synthesize(c.clone()).unwrap();
            let comp = cc.synthesize(c).unwrap();
            assert_same(
                &full,
                &comp,
                &format!("mixed {inputs}/{extra} seed {seed} w {w}"),
            );
        }
    }
}

/// Corner cases: only inputs (no aux at all), aux variables that occur in
/// no constraint, terms that cancel (coefficient zero after merging), a
/// variable repeated in one combination, −1, 2 and full-width
/// coefficients, an input used only in B, and a circuit with no
/// constraints of its own.
#[derive(Clone)]
struct Corners {
    values: Vec<Scalar>,
    with_aux: bool,
    with_constraints: bool,
}

impl Circuit<Scalar> for Corners {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let v = &self.values;
        let x = cs.alloc_input(|| "x", || Ok(v[0]))?;
        let y = cs.alloc_input(|| "y", || Ok(v[1]))?;
        if !self.with_constraints {
            return Ok(());
        }
        // x·y = x·y computed through the constant: (x)·(y) − (x·y)·1 = 0
        // can't be written without aux, so inputs-only circuits use linear
        // relations: (x + x − 2x + y)·1 = y.
        cs.enforce(
            || "lin",
            |l| l + x + x - (Scalar::from(2u64), x) + y,
            |l| l + CS::one(),
            |l| l + y,
        );
        if !self.with_aux {
            return Ok(());
        }
        let unused = cs.alloc(|| "unused", || Ok(v[2]))?;
        let _ = unused;
        let p = cs.alloc(|| "p", || Ok(v[0] * v[1]))?;
        // y only in B here.
        cs.enforce(|| "mul", |l| l + x, |l| l + y, |l| l + p);
        let k = Scalar::from(0x1234_5678_9abc_def0u64).square();
        let q = cs.alloc(|| "q", || Ok(-(v[0] * v[1]) * k))?;
        cs.enforce(|| "neg", |l| l - p, |l| l + (k, CS::one()), |l| l + q);
        let t = cs.alloc(|| "t", || Ok(v[0].double()))?;
        cs.enforce(
            || "two",
            |l| l + (Scalar::from(2u64), x),
            |l| l + CS::one(),
            |l| l + t,
        );
        Ok(())
    }
}

#[test]
fn corner_cases_compiled_equal_full_synthesis() {
    let mut rng = ChaCha20Rng::seed_from_u64(rand::random());
    for (with_aux, with_constraints) in [(false, false), (false, true), (true, true)] {
        let mk = |rng: &mut ChaCha20Rng| Corners {
            values: (0..3).map(|_| Scalar::random(&mut *rng)).collect(),
            with_aux,
            with_constraints,
        };
        let cc = compiled::compile(mk(&mut rng), "corners").unwrap();
        for _ in 0..3 {
            let c = mk(&mut rng);
            let full = synthesis::synthesize(c.clone()).unwrap();
            let comp = cc.synthesize(c).unwrap();
            assert_same(
                &full,
                &comp,
                &format!("corners aux={with_aux} cons={with_constraints}"),
            );
        }
    }
}

#[test]
fn compiled_proofs_verify_under_bellperson_and_cuzk() {
    let mut rng = ChaCha20Rng::seed_from_u64(rand::random());
    let log = 10;
    let params =
        generator::generate_random_parameters(PorepLikeCircuit::new(log, 0), &mut rng).unwrap();
    let cc = compiled::compile(PorepLikeCircuit::new(log, 0), "porep-like-10").unwrap();
    cc.check_params(&params).unwrap();
    let seed: u64 = rng.gen();
    let circuit = PorepLikeCircuit::new(log, seed);
    let inputs = circuit.public_inputs();
    let pa = cc.synthesize(circuit).unwrap();
    let (proofs, _) = prove_assignments(&CpuBackend, &params, &[pa], &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proof(&pvk, &proofs[0], &inputs).unwrap());
    // bellperson reads our key and checks the proof.
    let mut vk_bytes = Vec::new();
    params.vk.write(&mut vk_bytes).unwrap();
    let bp_vk = bp::VerifyingKey::<Bls12>::read(&vk_bytes[..]).unwrap();
    let bp_pvk = bp::prepare_verifying_key(&bp_vk);
    let bp_proof = bp::Proof::<Bls12>::read(&proofs[0].to_bytes()[..]).unwrap();
    assert!(bp::verify_proof(&bp_pvk, &bp_proof, &inputs).unwrap());
    // A wrong public input and a tampered proof fail.
    let mut wrong = inputs.clone();
    wrong[0] += Scalar::ONE;
    assert!(!verify_proof(&pvk, &proofs[0], &wrong).unwrap());
    assert!(!bp::verify_proof(&bp_pvk, &bp_proof, &wrong).unwrap());
    let mut tampered = proofs[0];
    tampered.a = (blstrs::G1Projective::from(tampered.a) + params.vk.alpha_g1).into();
    assert!(!verify_proof(&pvk, &tampered, &inputs).unwrap());
}

#[test]
fn witness_of_the_wrong_shape_is_refused() {
    let cc = compiled::compile(PorepLikeCircuit::new(6, 0), "porep-like-6").unwrap();
    let w = compiled::synthesize_witness(PorepLikeCircuit::new(6, 3)).unwrap();
    let mut short = w.clone();
    short.aux.pop();
    match cc.assign(short) {
        Err(Error::WitnessMismatch {
            expected_aux, aux, ..
        }) => assert_eq!(aux + 1, expected_aux),
        other => panic!("expected WitnessMismatch, got {other:?}"),
    }
    let mut extra = w.clone();
    extra.inputs.push(Scalar::ONE);
    assert!(matches!(
        cc.assign(extra),
        Err(Error::WitnessMismatch { .. })
    ));
    // Another circuit's witness (a larger size) is refused, not proved.
    let other = compiled::synthesize_witness(PorepLikeCircuit::new(7, 3)).unwrap();
    assert!(matches!(
        cc.assign(other),
        Err(Error::WitnessMismatch { .. })
    ));
    let mut no_one = w;
    no_one.inputs[0] = Scalar::ZERO;
    assert!(cc.assign(no_one).is_err());
    let empty = Witness::default();
    assert!(cc.assign(empty).is_err());
}

#[test]
fn file_round_trip_and_damage() {
    let dir = tempdir();
    let path = dir.path().join("porep-like-9.r1cs");
    let cc = compiled::compile(PorepLikeCircuit::new(9, 0), "porep-like-9").unwrap();
    cc.write_file(&path).unwrap();
    let back = CompiledCircuit::open(&path, Some("porep-like-9")).unwrap();
    assert_eq!(back.shape(), cc.shape());
    assert_eq!(back.coefficients(), cc.coefficients());
    for (m, n) in [(&cc.a, &back.a), (&cc.b, &back.b), (&cc.c, &back.c)] {
        assert_eq!(m.row_start(), n.row_start());
        assert_eq!(m.cols(), n.cols());
        assert_eq!(m.coefs(), n.coefs());
    }
    let full = synthesis::synthesize(PorepLikeCircuit::new(9, 41)).unwrap();
    let comp = back.synthesize(PorepLikeCircuit::new(9, 41)).unwrap();
    assert_same(&full, &comp, "from the file");

    // Another circuit's name.
    match CompiledCircuit::open(&path, Some("porep-like-10")) {
        Err(Error::CompiledMismatch { path: p, what }) => {
            assert_eq!(p, path);
            assert!(what.contains("porep-like-9"), "{what}");
        }
        other => panic!("expected CompiledMismatch, got {other:?}"),
    }
    // Parameters of another size.
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let other =
        generator::generate_random_parameters(PorepLikeCircuit::new(8, 0), &mut rng).unwrap();
    assert!(matches!(
        back.check_params(&other),
        Err(Error::ShapeMismatch { .. })
    ));

    let bytes = std::fs::read(&path).unwrap();
    let damaged = dir.path().join("damaged.r1cs");
    // Truncations at many points, including inside the header.
    for cut in [0usize, 7, 12, 40, 100, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&damaged, &bytes[..cut]).unwrap();
        match CompiledCircuit::open(&damaged, None) {
            Err(Error::Format { path: p, .. }) => assert_eq!(p, damaged),
            other => panic!("cut at {cut}: expected a Format error, got {other:?}"),
        }
    }
    // Trailing bytes.
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0u8; 8]);
    std::fs::write(&damaged, &longer).unwrap();
    assert!(matches!(
        CompiledCircuit::open(&damaged, None),
        Err(Error::Format { .. })
    ));
    // Single flipped bytes anywhere: the header's or a section's checksum
    // (or a structural check) refuses every one.
    let mut rng = ChaCha20Rng::seed_from_u64(rand::random());
    for _ in 0..60 {
        let mut b = bytes.clone();
        let at = rng.gen_range(0..b.len());
        b[at] ^= 1 << rng.gen_range(0..8);
        std::fs::write(&damaged, &b).unwrap();
        if let Ok(cc2) = CompiledCircuit::open(&damaged, None) {
            // Only the header padding may change harmlessly; then the
            // contents must be identical.
            assert_eq!(cc2.shape(), cc.shape(), "flip at {at}");
            assert_eq!(cc2.a.cols(), cc.a.cols(), "flip at {at}");
            assert_eq!(cc2.c.coefs(), cc.c.coefs(), "flip at {at}");
        }
    }
    // Not a compiled circuit at all; a directory.
    std::fs::write(&damaged, b"hello").unwrap();
    assert!(matches!(
        CompiledCircuit::open(&damaged, None),
        Err(Error::Format { .. })
    ));
    assert!(CompiledCircuit::open(dir.path(), None).is_err());
}

#[test]
fn open_or_compile_makes_the_file_once() {
    let dir = tempdir();
    let path = dir.path().join("x.r1cs");
    let (a, made) =
        CompiledCircuit::open_or_compile(&path, "porep-like-7", || PorepLikeCircuit::new(7, 0))
            .unwrap();
    assert!(made);
    let (b, made) =
        CompiledCircuit::open_or_compile(&path, "porep-like-7", || PorepLikeCircuit::new(7, 0))
            .unwrap();
    assert!(!made);
    assert_eq!(a.shape(), b.shape());
    // A file of another circuit under the name is an error, not silently
    // replaced.
    assert!(matches!(
        CompiledCircuit::open_or_compile(&path, "porep-like-8", || PorepLikeCircuit::new(8, 0)),
        Err(Error::CompiledMismatch { .. })
    ));
}

/// A circuit that synthesizes parts into fresh systems (`CS::new()` plus
/// its own constant one, as storage-proofs' WindowPoSt does) and splices
/// them in with `extend` when the system is extensible.
#[derive(Clone)]
struct Parts {
    values: Vec<Scalar>,
}

impl Circuit<Scalar> for Parts {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let part = |cs: &mut CS, v: &[Scalar]| -> Result<(), SynthesisError> {
            for (i, x) in v.iter().enumerate() {
                let input = cs.alloc_input(|| format!("in{i}"), || Ok(*x))?;
                let sq = cs.alloc(|| format!("sq{i}"), || Ok(x.square()))?;
                cs.enforce(|| "sq", |l| l + input, |l| l + input, |l| l + sq);
            }
            Ok(())
        };
        let chunks: Vec<&[Scalar]> = self.values.chunks(3).collect();
        if CS::is_extensible() {
            for c in chunks {
                let mut sub = CS::new();
                sub.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
                part(&mut sub, c)?;
                cs.extend(&sub);
            }
        } else {
            for c in chunks {
                part(cs, c)?;
            }
        }
        Ok(())
    }
}

#[test]
fn extended_parts_compiled_equal_full_synthesis() {
    let mut rng = ChaCha20Rng::seed_from_u64(rand::random());
    let mk = |rng: &mut ChaCha20Rng| Parts {
        values: (0..8).map(|_| Scalar::random(&mut *rng)).collect(),
    };
    let cc = compiled::compile(mk(&mut rng), "parts").unwrap();
    let c = mk(&mut rng);
    let full = synthesis::synthesize(c.clone()).unwrap();
    let comp = cc.synthesize(c).unwrap();
    assert_eq!(comp.input_assignment.len(), 9);
    assert_same(&full, &comp, "extended parts");
}

/// Witnesses proved through the backend seam (`prove_witnesses`, the CPU
/// default of `compute_compiled`) and mixed with full assignments
/// (`prove_synthesized`): every proof verifies, each against its own
/// inputs only; a witness of the wrong shape is refused before proving.
#[test]
fn witnesses_prove_through_the_seam_alone_and_mixed() {
    use cuzk_core::prover::{prove_synthesized, prove_witnesses, Synthesized};
    use std::sync::Arc;
    let mut rng = ChaCha20Rng::seed_from_u64(rand::random());
    let log = 9;
    let params =
        generator::generate_random_parameters(PorepLikeCircuit::new(log, 0), &mut rng).unwrap();
    let cc = Arc::new(compiled::compile(PorepLikeCircuit::new(log, 0), "porep-like-9").unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    let seeds: Vec<u64> = (0..3).map(|_| rng.gen()).collect();
    let circuits: Vec<_> = seeds
        .iter()
        .map(|&s| PorepLikeCircuit::new(log, s))
        .collect();
    let inputs: Vec<Vec<Scalar>> = circuits.iter().map(|c| c.public_inputs()).collect();
    let witnesses = cc.witness_batch(circuits.clone()).unwrap();
    let (proofs, t) =
        prove_witnesses(&CpuBackend, &params, &cc, witnesses.clone(), &mut rng).unwrap();
    assert_eq!(proofs.len(), 3);
    assert!(
        t.abc > std::time::Duration::ZERO,
        "the a/b/c phase is timed"
    );
    for (i, p) in proofs.iter().enumerate() {
        assert!(verify_proof(&pvk, p, &inputs[i]).unwrap(), "proof {i}");
        assert!(!verify_proof(&pvk, p, &inputs[(i + 1) % 3]).unwrap());
    }
    // Mixed: witness, assignment, witness, in order.
    let pa = synthesis::synthesize(circuits[1].clone()).unwrap();
    let parts = vec![
        Synthesized::Witness {
            compiled: cc.clone(),
            witness: witnesses[0].clone(),
        },
        Synthesized::Assignment(pa),
        Synthesized::Witness {
            compiled: cc.clone(),
            witness: witnesses[2].clone(),
        },
    ];
    assert_eq!(parts[0].public_inputs(), &inputs[0][..]);
    assert_eq!(parts[1].public_inputs(), &inputs[1][..]);
    let (mixed, _) = prove_synthesized(&CpuBackend, &params, parts, &mut rng).unwrap();
    for (i, p) in mixed.iter().enumerate() {
        assert!(
            verify_proof(&pvk, p, &inputs[i]).unwrap(),
            "mixed proof {i}"
        );
    }
    // A witness of another size: a named error, no proof.
    let other = compiled::synthesize_witness(PorepLikeCircuit::new(log + 1, 1)).unwrap();
    assert!(matches!(
        prove_witnesses(
            &CpuBackend,
            &params,
            &cc,
            vec![witnesses[0].clone(), other],
            &mut rng
        ),
        Err(Error::WitnessMismatch { .. })
    ));
    // Another circuit's parameters: refused before proving.
    let small =
        generator::generate_random_parameters(PorepLikeCircuit::new(log - 1, 0), &mut rng).unwrap();
    assert!(prove_witnesses(&CpuBackend, &small, &cc, witnesses, &mut rng).is_err());
}

/// A circuit of a shared prefix and `parts` parts of one shape, each
/// part also synthesizable alone after the prefix (as PoRep's challenges).
#[derive(Clone)]
struct Prefixed {
    prefix: Vec<Scalar>,
    parts: Vec<Vec<Scalar>>,
}

impl Circuit<Scalar> for Prefixed {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for v in &self.prefix {
            let x = cs.alloc(|| "p", || Ok(*v))?;
            cs.enforce(|| "p", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + x);
        }
        for part in &self.parts {
            cs.alloc_input(|| "in", || Ok(part[0]))?;
            let vals: Vec<Scalar> = part.iter().map(|v| v.square()).collect();
            if cs.is_witness_generator() {
                // The bulk hooks, as neptune's Poseidon uses them.
                cs.extend_aux(&vals[..vals.len() / 2]);
                let rest = cs.allocate_empty_aux(vals.len() - vals.len() / 2);
                rest.copy_from_slice(&vals[vals.len() / 2..]);
            } else {
                for v in vals {
                    cs.alloc(|| "x", || Ok(v))?;
                }
            }
        }
        Ok(())
    }
}

/// Parts written in place (`WitnessPart`) give what sequential synthesis
/// gives; a part whose prefix differs, that allocates more or less than
/// its room, is refused by name.
#[test]
fn witness_parts_in_place_equal_sequential_synthesis() {
    use cuzk_core::compiled::{synthesize_witness, WitnessCs, WitnessPart};
    let mut rng = ChaCha20Rng::seed_from_u64(rand::random());
    for (np, nparts, len) in [(0usize, 1usize, 1usize), (3, 4, 7), (5, 3, 64)] {
        let c = Prefixed {
            prefix: (0..np).map(|_| Scalar::random(&mut rng)).collect(),
            parts: (0..nparts)
                .map(|_| (0..len).map(|_| Scalar::random(&mut rng)).collect())
                .collect(),
        };
        let whole = synthesize_witness(c.clone()).unwrap();
        let prefix = synthesize_witness(Prefixed {
            parts: Vec::new(),
            ..c.clone()
        })
        .unwrap();
        let (pi, pa) = (prefix.inputs.len(), prefix.aux.len());
        let mut out = Witness::new(whole.inputs[..pi].to_vec(), whole.aux[..pa].to_vec());
        out.inputs.resize(whole.inputs.len(), Scalar::ZERO);
        out.aux.resize(whole.aux.len(), Scalar::ZERO);
        let part = |k: usize| Prefixed {
            parts: vec![c.parts[k].clone()],
            ..c.clone()
        };
        let ins = out.inputs[pi..].chunks_mut(1);
        let auxs = out.aux[pa..].chunks_mut(len);
        for (k, (i, a)) in ins.zip(auxs).enumerate() {
            let mut cs = WitnessPart::new(&prefix.inputs, &prefix.aux, i, a);
            part(k).synthesize(&mut cs).unwrap();
            cs.finish().unwrap();
        }
        assert_eq!(out, whole, "prefix {np}, {nparts} parts of {len}");
        // Parts whose generator holds the prefix already skip it: the same.
        let mut skipped = Witness::new(whole.inputs[..pi].to_vec(), whole.aux[..pa].to_vec());
        skipped.inputs.resize(whole.inputs.len(), Scalar::ZERO);
        skipped.aux.resize(whole.aux.len(), Scalar::ZERO);
        let ins = skipped.inputs[pi..].chunks_mut(1);
        let auxs = skipped.aux[pa..].chunks_mut(len);
        for (k, (i, a)) in ins.zip(auxs).enumerate() {
            let mut cs = WitnessPart::new(&prefix.inputs, &prefix.aux, i, a);
            cs.skip_prefix();
            let alone = Prefixed {
                prefix: Vec::new(),
                parts: vec![c.parts[k].clone()],
            };
            alone.synthesize(&mut cs).unwrap();
            cs.finish().unwrap();
        }
        assert_eq!(
            skipped, whole,
            "prefix {np} skipped, {nparts} parts of {len}"
        );

        let (mut i, mut a) = (vec![Scalar::ZERO; 1], vec![Scalar::ZERO; len + 1]);
        // The room exactly, then one aux short and one too many.
        let mut cs = WitnessPart::new(&prefix.inputs, &prefix.aux, &mut i, &mut a[..len]);
        part(0).synthesize(&mut cs).unwrap();
        cs.finish().unwrap();
        let mut cs = WitnessPart::new(&prefix.inputs, &prefix.aux, &mut i, &mut a[..len - 1]);
        part(0).synthesize(&mut cs).unwrap();
        let e = cs.finish().unwrap_err();
        assert!(e.contains("more aux") || e.contains("does not fit"), "{e}");
        let mut cs = WitnessPart::new(&prefix.inputs, &prefix.aux, &mut i, &mut a);
        part(0).synthesize(&mut cs).unwrap();
        let e = cs.finish().unwrap_err();
        assert!(e.contains("the part's room make"), "{e}");
        // A prefix that differs.
        if np > 0 {
            let mut other = prefix.aux.clone();
            other[np - 1] += Scalar::ONE;
            let mut cs = WitnessPart::new(&prefix.inputs, &other, &mut i, &mut a[..len]);
            part(0).synthesize(&mut cs).unwrap();
            let e = cs.finish().unwrap_err();
            assert!(e.contains("differs from the shared prefix"), "{e}");
        }
        // Skipping the prefix after an allocation is refused.
        let mut cs = WitnessPart::new(&prefix.inputs, &prefix.aux, &mut i, &mut a[..len]);
        cs.alloc_input(|| "in", || Ok(Scalar::ONE)).unwrap();
        cs.skip_prefix();
        let e = cs.finish().unwrap_err();
        assert!(e.contains("skipped after allocations"), "{e}");
        // The sequential system agrees with itself as the reference.
        let mut w = WitnessCs::with_one();
        c.clone().synthesize(&mut w).unwrap();
        assert_eq!(w.into_witness(), whole);
    }
}

#[test]
fn witness_reserved_at_the_compiled_sizes_equals_the_grown_one() {
    for log in [4u32, 9, 12] {
        let cc = compiled::compile(PorepLikeCircuit::new(log, 0), "porep-like").unwrap();
        let grown = compiled::synthesize_witness(PorepLikeCircuit::new(log, 5)).unwrap();
        let reserved = cc.witness(PorepLikeCircuit::new(log, 5)).unwrap();
        assert_eq!(reserved.inputs, grown.inputs, "2^{log}");
        assert_eq!(reserved.aux, grown.aux, "2^{log}");
        // Reserved once, never grown.
        assert_eq!(reserved.aux.capacity(), cc.num_aux(), "2^{log}");
        assert_eq!(reserved.inputs.capacity(), cc.num_inputs(), "2^{log}");
        cc.check_witness(&reserved).unwrap();
        // A circuit of another size still yields a witness, which the check refuses.
        let other = cc.witness(PorepLikeCircuit::new(log + 1, 5)).unwrap();
        assert!(cc.check_witness(&other).is_err());
    }
}
