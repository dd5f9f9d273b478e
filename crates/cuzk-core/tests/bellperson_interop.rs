//! Interoperability with the real peer, bellperson 0.27: parameter files,
//! proofs and verification in both directions, byte-for-byte equality of
//! the generator and prover given the same randomness, and rejection of
//! tampered proofs, wrong inputs and foreign verifying keys.

mod common;

use bellperson::groth16 as bp;
use blstrs::{Bls12, G1Projective, G2Projective, Scalar};
use common::MixedCircuit;
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::params::{Parameters, VerifyingKey};
use cuzk_core::prover::{
    assemble_proof, create_proof_batch, create_random_proof, CpuBackend, ProofRandomness,
    ProverBackend,
};
use cuzk_core::verifier::{prepare_verifying_key, verify_proof, verify_proofs_batch};
use cuzk_core::{generator, synthesis, Proof};
use ff::Field;
use group::{Curve, Group};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::path::Path;

fn bp_params_bytes(p: &bp::Parameters<Bls12>) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).unwrap();
    v
}

fn cuzk_params_bytes(p: &Parameters) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).unwrap();
    v
}

fn to_bp_proof(p: &Proof) -> bp::Proof<Bls12> {
    bp::Proof::read(&p.to_bytes()[..]).unwrap()
}

fn from_bp_proof(p: &bp::Proof<Bls12>) -> Proof {
    let mut v = Vec::new();
    p.write(&mut v).unwrap();
    Proof::from_bytes(&v).unwrap()
}

/// bellperson's parameters, read by cuzk (through a real file), prove with
/// cuzk; the proofs verify under bellperson and cuzk. Then the reverse:
/// cuzk's parameters, read by bellperson, prove with bellperson; cuzk
/// verifies.
fn both_directions<C>(circuit: C, inputs: &[Scalar], seed: u64)
where
    C: bellpepper_core::Circuit<Scalar> + Clone + Send,
{
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let dir = tempdir(seed);

    // bellperson → cuzk
    let bp_params =
        bp::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng).unwrap();
    let path = dir.join("bp.params");
    std::fs::write(&path, bp_params_bytes(&bp_params)).unwrap();
    let params = Parameters::read_file(&path, true).unwrap();
    assert_eq!(
        cuzk_params_bytes(&params),
        std::fs::read(&path).unwrap(),
        "re-encoding is byte-identical"
    );
    let proof = create_random_proof(circuit.clone(), &params, &mut rng).unwrap();
    let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
    assert!(bp::verify_proof(&bp_pvk, &to_bp_proof(&proof), inputs).unwrap());
    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proof(&pvk, &proof, inputs).unwrap());
    // bellperson's own proof verifies under cuzk too.
    let bp_proof = bp::create_random_proof(circuit.clone(), &bp_params, &mut rng).unwrap();
    assert!(verify_proof(&pvk, &from_bp_proof(&bp_proof), inputs).unwrap());

    // cuzk → bellperson
    let params2 = generator::generate_random_parameters(circuit.clone(), &mut rng).unwrap();
    let path2 = dir.join("cuzk.params");
    params2.write_file(&path2).unwrap();
    let bytes2 = std::fs::read(&path2).unwrap();
    let bp_params2 = bp::Parameters::<Bls12>::read(&bytes2[..], true).unwrap();
    let vk_path = dir.join("cuzk.vk");
    params2.vk.write_file(&vk_path).unwrap();
    let bp_vk2 = bp::VerifyingKey::<Bls12>::read(&std::fs::read(&vk_path).unwrap()[..]).unwrap();
    assert!(bp_vk2 == bp_params2.vk);
    let bp_proof2 = bp::create_random_proof(circuit.clone(), &bp_params2, &mut rng).unwrap();
    let pvk2 = prepare_verifying_key(&params2.vk);
    let proof2 = from_bp_proof(&bp_proof2);
    assert!(verify_proof(&pvk2, &proof2, inputs).unwrap());
    let bp_pvk2 = bp::prepare_verifying_key(&bp_vk2);
    assert!(bp::verify_proof(&bp_pvk2, &bp_proof2, inputs).unwrap());

    // Negative cases, under both verifiers.
    // A proof checked against the other verifying key.
    assert!(!verify_proof(&pvk2, &proof, inputs).unwrap());
    assert!(!bp::verify_proof(&bp_pvk2, &to_bp_proof(&proof), inputs).unwrap());
    // A wrong public input (each position in turn, up to a few).
    for i in 0..inputs.len().min(3) {
        let mut bad = inputs.to_vec();
        bad[i] += Scalar::ONE;
        assert!(!verify_proof(&pvk, &proof, &bad).unwrap());
        assert!(!bp::verify_proof(&bp_pvk, &to_bp_proof(&proof), &bad).unwrap());
    }
    // Tampered proofs: each element replaced by another valid point.
    let mut t = proof;
    t.a = (G1Projective::from(t.a) + G1Projective::generator()).to_affine();
    assert!(!verify_proof(&pvk, &t, inputs).unwrap());
    assert!(!bp::verify_proof(&bp_pvk, &to_bp_proof(&t), inputs).unwrap());
    let mut t = proof;
    t.b = (G2Projective::from(t.b).double()).to_affine();
    assert!(!verify_proof(&pvk, &t, inputs).unwrap());
    let mut t = proof;
    t.c = proof.a;
    assert!(!verify_proof(&pvk, &t, inputs).unwrap());
    // A flipped byte either fails to decode or fails to verify.
    let mut bytes = proof.to_bytes();
    bytes[150] ^= 0x01;
    if let Ok(p) = Proof::from_bytes(&bytes) {
        assert!(!verify_proof(&pvk, &p, inputs).unwrap());
    }
    // Wrong number of inputs is an error, not a false.
    assert!(verify_proof(&pvk, &proof, &inputs[1..]).is_err());

    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempdir(seed: u64) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("cuzk-interop-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn several_public_inputs_and_c_only_aux() {
    let c = MixedCircuit::new(11, 6, 40);
    let inputs = c.public_inputs();
    // The circuit really has aux variables in neither A nor B, and inputs in B.
    let pa = synthesis::synthesize(c.clone()).unwrap();
    let lonely = (0..pa.aux_assignment.len())
        .filter(|&j| !pa.a_aux_density.get(j) && !pa.b_aux_density.get(j))
        .count();
    assert!(lonely >= 3, "{lonely} aux variables outside A and B");
    assert!(pa.b_input_density.count() >= 5);
    both_directions(c, &inputs, 1);
}

#[test]
fn porep_like_2_14_both_directions() {
    let c = PorepLikeCircuit::new(14, 3);
    let pa = synthesis::synthesize(c.clone()).unwrap();
    assert_eq!(pa.num_constraints(), 1 << 14);
    let inputs = c.public_inputs();
    both_directions(c, &inputs, 2);
}

/// Same toxic waste → byte-identical parameters; same r, s → identical
/// proofs. This pins every layout rule (input constraints, densities,
/// identity filtering, h length) to bellperson's.
#[test]
fn identical_to_bellperson_given_same_randomness() {
    let mixed = [
        MixedCircuit::new(5, 3, 0),
        MixedCircuit::new(6, 9, 77),
        MixedCircuit::new(7, 2, 300),
    ];
    for (i, circuit) in mixed.into_iter().enumerate() {
        assert_identical(circuit, 100 + i as u64);
    }
    assert_identical(PorepLikeCircuit::new(8, 5), 200);
    assert_identical(cuzk_core::testing::LayoutCircuit::new(4, 37, 1), 300);
}

fn assert_identical<C>(circuit: C, seed: u64)
where
    C: bellpepper_core::Circuit<Scalar> + Clone + Send,
{
    let i = seed;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let g1 = G1Projective::random(&mut rng);
    let g2 = G2Projective::random(&mut rng);
    let w: Vec<Scalar> = (0..5).map(|_| Scalar::random(&mut rng)).collect();
    let bp_params =
        bp::generate_parameters::<Bls12, _>(circuit.clone(), g1, g2, w[0], w[1], w[2], w[3], w[4])
            .unwrap();
    let params =
        generator::generate_parameters(circuit.clone(), g1, g2, w[0], w[1], w[2], w[3], w[4])
            .unwrap();
    assert_eq!(
        cuzk_params_bytes(&params),
        bp_params_bytes(&bp_params),
        "case {i}: parameters differ"
    );

    let r = Scalar::random(&mut rng);
    let s = Scalar::random(&mut rng);
    let bp_proof = bp::create_proof(circuit.clone(), &bp_params, r, s).unwrap();
    let pa = synthesis::synthesize(circuit).unwrap();
    let (msm, _) = CpuBackend
        .compute(&params, std::slice::from_ref(&pa))
        .unwrap();
    let proof = assemble_proof(&params, &msm[0], &ProofRandomness { r, s });
    assert_eq!(proof, from_bp_proof(&bp_proof), "case {i}: proofs differ");
}

#[test]
fn batch_of_circuits_both_ways() {
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    // One shape, several witnesses: the same structure with different seeds.
    let circuits: Vec<MixedCircuit> = (0..4)
        .map(|k| MixedCircuit::with_witness(20, 30 + k, 5, 60))
        .collect();
    let inputs: Vec<Vec<Scalar>> = circuits.iter().map(|c| c.public_inputs()).collect();

    let bp_params =
        bp::generate_random_parameters::<Bls12, _, _>(circuits[0].clone(), &mut rng).unwrap();
    let params = Parameters::read_bytes(
        &bp_params_bytes(&bp_params),
        Path::new("<bellperson>"),
        true,
    )
    .unwrap();
    let (proofs, _) = create_proof_batch(&CpuBackend, circuits.clone(), &params, &mut rng).unwrap();
    let bp_pvk = bp::prepare_verifying_key(&bp_params.vk);
    for (p, x) in proofs.iter().zip(&inputs) {
        assert!(bp::verify_proof(&bp_pvk, &to_bp_proof(p), x).unwrap());
    }
    let bp_proofs: Vec<_> = proofs.iter().map(to_bp_proof).collect();
    let refs: Vec<_> = bp_proofs.iter().collect();
    assert!(bp::verify_proofs_batch(&bp_pvk, &mut rng, &refs, &inputs).unwrap());

    let bp_batch = bp::create_random_proof_batch(circuits.clone(), &bp_params, &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let ours: Vec<Proof> = bp_batch.iter().map(from_bp_proof).collect();
    assert!(verify_proofs_batch(&pvk, &ours, &inputs, &mut rng).unwrap());
    // Swapping two proofs' inputs breaks the batch.
    let mut swapped = inputs.clone();
    swapped.swap(0, 1);
    assert!(!verify_proofs_batch(&pvk, &ours, &swapped, &mut rng).unwrap());
    let mut bad = ours.clone();
    bad[2].a = bad[3].a;
    assert!(!verify_proofs_batch(&pvk, &bad, &inputs, &mut rng).unwrap());
}

#[test]
fn cuzk_vk_file_reads_in_bellperson_and_back() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let c = MixedCircuit::new(1, 4, 10);
    let bp_params = bp::generate_random_parameters::<Bls12, _, _>(c, &mut rng).unwrap();
    let mut v = Vec::new();
    bp_params.vk.write(&mut v).unwrap();
    let (vk, used) = VerifyingKey::read_bytes(&v, Path::new("<vk>"), true).unwrap();
    assert_eq!(used, v.len());
    let mut back = Vec::new();
    vk.write(&mut back).unwrap();
    assert_eq!(back, v);
}
