//! Synthesize → generate parameters → prove → verify, with cuzk alone.

use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::generator::generate_random_parameters;
use cuzk_core::params::{MappedParameters, Parameters, Section, VerifyingKey};
use cuzk_core::prover::{create_proof_batch, create_random_proof, CpuBackend};
use cuzk_core::verifier::{prepare_verifying_key, verify_proof, verify_proofs_batch};
use cuzk_core::{Proof, Scalar};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

#[test]
fn porep_like_end_to_end() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let circuit = PorepLikeCircuit::new(10, 7);
    let params = generate_random_parameters(circuit.clone(), &mut rng).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let inputs = circuit.public_inputs();

    let proof = create_random_proof(circuit.clone(), &params, &mut rng).unwrap();
    assert!(verify_proof(&pvk, &proof, &inputs).unwrap());
    let bytes = proof.to_bytes();
    assert_eq!(Proof::from_bytes(&bytes).unwrap(), proof);

    // Wrong input.
    let mut bad = inputs.clone();
    bad[0] += Scalar::ONE;
    assert!(!verify_proof(&pvk, &proof, &bad).unwrap());

    // A batch of several circuits of one shape.
    let circuits = vec![circuit.clone(), circuit.clone(), circuit.clone()];
    let (proofs, _t) = create_proof_batch(&CpuBackend, circuits, &params, &mut rng).unwrap();
    assert_eq!(proofs.len(), 3);
    let all_inputs = vec![inputs.clone(); 3];
    assert!(verify_proofs_batch(&pvk, &proofs, &all_inputs, &mut rng).unwrap());
    let mut tampered = proofs.clone();
    tampered[1].c = proofs[0].c;
    assert!(!verify_proofs_batch(&pvk, &tampered, &all_inputs, &mut rng).unwrap());

    // Verifier errors: wrong input count, mismatched batch lengths, empty.
    assert!(matches!(
        verify_proof(&pvk, &proof, &inputs[1..]),
        Err(cuzk_core::Error::PublicInputCount { .. })
    ));
    assert!(matches!(
        verify_proofs_batch(&pvk, &proofs, &all_inputs[1..], &mut rng),
        Err(cuzk_core::Error::BatchLength {
            proofs: 3,
            inputs: 2
        })
    ));
    assert!(matches!(
        verify_proofs_batch(&pvk, &[], &[], &mut rng),
        Err(cuzk_core::Error::EmptyBatch)
    ));
    // A batch of one agrees with single verification.
    assert!(verify_proofs_batch(&pvk, &proofs[..1], &all_inputs[..1], &mut rng).unwrap());
    assert!(
        !verify_proofs_batch(&pvk, &proofs[..1], std::slice::from_ref(&bad), &mut rng).unwrap()
    );

    // File round trip.
    let dir = std::env::temp_dir().join(format!("cuzk-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.params");
    params.write_file(&path).unwrap();
    let back = Parameters::read_file(&path, true).unwrap();
    assert_eq!(back.vk, params.vk);
    assert_eq!(back.h, params.h);
    assert_eq!(back.b_g2, params.b_g2);
    let mapped = MappedParameters::open(&path).unwrap();
    assert_eq!(mapped.len(Section::L), params.l.len());
    let vk_path = dir.join("p.vk");
    params.vk.write_file(&vk_path).unwrap();
    assert_eq!(VerifyingKey::read_file(&vk_path, true).unwrap(), params.vk);
    let proof2 = create_random_proof(circuit, &back, &mut rng).unwrap();
    assert!(verify_proof(&pvk, &proof2, &inputs).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}
