//! End-to-end at 2 KiB sectors, fully offline: filecoin-proofs seals a
//! sector (pre-commit 1 and 2, commit 1) and makes the vanilla proofs, cuzk
//! generates the parameters and proves, and filecoin-proofs' own verifiers
//! judge the proofs — true for cuzk's proofs, false for tampered ones and
//! for proofs checked against the wrong inputs.
//!
//! Parameters are generated once per run into a fresh directory; set
//! `CUZK_FIL_TEST_PARAMS=DIR` to keep and reuse them between runs.

use cuzk_filecoin::filecoin_proofs_api::{
    post, seal, update, PublicReplicaInfo, RegisteredPoStProof, RegisteredUpdateProof, SectorId,
};
use cuzk_filecoin::{CircuitId, ProofRequest};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;
use std::fs::File;
use std::time::Instant;

mod fixture;
use fixture::*;

/// -A instead of A: still a valid point (so the proof decodes), but no longer
/// a proof. In the compressed encoding the sign is bit 5 of the first byte.
fn negate_a(proof: &[u8], partition: usize) -> Vec<u8> {
    let mut p = proof.to_vec();
    p[partition * 192] ^= 0x20;
    p
}

/// Compiled synthesis (constraints compiled once, witness only, parallel
/// where the circuit allows) gives exactly what full synthesis gives, for
/// every partition of `req`: a/b/c, assignments and densities.
fn assert_synthesis_modes_agree(req: &ProofRequest) {
    use cuzk_filecoin::partitions::{partition_count, synthesize_partitions};
    use cuzk_filecoin::SynthesisMode;
    let n = partition_count(req).unwrap();
    for k in 0..n {
        let t = Instant::now();
        let full = synthesize_partitions(&[(req, k)], SynthesisMode::Full).unwrap();
        let tf = t.elapsed();
        let t = Instant::now();
        let comp = synthesize_partitions(&[(req, k)], SynthesisMode::Compiled).unwrap();
        let tc = t.elapsed();
        let (f, c) = (&full[0], &comp[0]);
        let what = format!("{} partition {k}", req.circuit());
        assert_eq!(f.a.len(), c.a.len(), "{what}: constraints");
        assert!(f.a == c.a, "{what}: a differs");
        assert!(f.b == c.b, "{what}: b differs");
        assert!(f.c == c.c, "{what}: c differs");
        assert_eq!(f.input_assignment, c.input_assignment, "{what}: inputs");
        assert!(f.aux_assignment == c.aux_assignment, "{what}: aux differs");
        assert_eq!(f.a_aux_density, c.a_aux_density, "{what}: A density");
        assert_eq!(
            f.b_input_density, c.b_input_density,
            "{what}: B input density"
        );
        assert_eq!(f.b_aux_density, c.b_aux_density, "{what}: B aux density");
        eprintln!(
            "{what}: full synthesis {tf:.2?}, compiled {tc:.2?} (compile included on first use)"
        );
    }
    let reps = std::env::var("CUZK_SYNTH_BENCH")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    if reps > 0 {
        synthesis_bench(req, n, reps);
    }
}

/// Issue 12's synthesis benchmark, run only when `CUZK_SYNTH_BENCH=N` is
/// set (CI leaves it unset): each partition of `req` synthesized N times
/// in each mode after the first run above (which compiled the system),
/// full and compiled on one thread, compiled on every thread of rayon's
/// pool; the medians on one line `synthesis bench: ...` each. No timing
/// is asserted.
fn synthesis_bench(req: &ProofRequest, n: usize, reps: usize) {
    use cuzk_filecoin::partitions::synthesize_partitions;
    use cuzk_filecoin::SynthesisMode;
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let median_ms = |k: usize, mode: SynthesisMode| {
        let mut v: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                synthesize_partitions(&[(req, k)], mode).unwrap();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for k in 0..n {
        let full = one.install(|| median_ms(k, SynthesisMode::Full));
        let comp1 = one.install(|| median_ms(k, SynthesisMode::Compiled));
        let compn = median_ms(k, SynthesisMode::Compiled);
        eprintln!(
            "synthesis bench: {} partition {k}: full (1 thread) {full:.1} ms, compiled (1 thread) {comp1:.1} ms = {:.3} of full, compiled ({} threads) {compn:.1} ms = {:.3} of full ({reps} runs each, medians)",
            req.circuit(),
            comp1 / full,
            rayon::current_num_threads(),
            compn / full,
        );
    }
}

#[test]
fn porep_c2_verifies_with_filecoin_proofs() {
    let f = fixture();
    let s = &f.sector;
    let circuit = CircuitId::PoRep(SEAL_PROOF);
    ensure_params(f, circuit);

    // Curio hands the C1 output over as JSON, base64 inside its wrapper.
    use base64::Engine as _;
    let api_json = serde_json::to_vec(&s.c1).unwrap();
    let curio = serde_json::to_vec(&serde_json::json!({
        "SectorNum": u64::from(s.sector_id),
        "Phase1Out": base64::engine::general_purpose::STANDARD.encode(&api_json),
        "SectorSize": SECTOR_BYTES,
    }))
    .unwrap();
    let decoded = cuzk_filecoin::porep::decode_c1(&curio, None).unwrap();
    assert_eq!(decoded.sector_num, Some(42));
    let decoded2 = cuzk_filecoin::porep::decode_c1(&api_json, Some(SEAL_PROOF)).unwrap();
    assert_eq!(serde_json::to_vec(&decoded2.output).unwrap(), api_json);

    let req = ProofRequest::PoRepC2(Box::new(decoded.output));
    assert_synthesis_modes_agree(&req);
    let t = Instant::now();
    let out = f.prover.prove(&req).unwrap();
    eprintln!(
        "PoRep C2 (2 KiB, {} partition): {:.2?} total; synthesis {:.2?}, prover total {:.2?}",
        out.partitions,
        t.elapsed(),
        out.timings.synthesis,
        out.timings.total
    );
    assert_eq!(out.proof.len(), 192 * out.partitions);

    let verify = |proof: &[u8], seed: [u8; 32]| {
        seal::verify_seal(
            SEAL_PROOF,
            s.comm_r,
            s.comm_d,
            s.prover_id,
            s.sector_id,
            s.ticket,
            seed,
            proof,
        )
    };
    assert!(
        verify(&out.proof, s.seed).unwrap(),
        "verify_seal rejected cuzk's proof"
    );
    assert!(!verify(&negate_a(&out.proof, 0), s.seed).unwrap());
    let mut other_seed = s.seed;
    other_seed[0] ^= 1;
    assert!(!verify(&out.proof, other_seed).unwrap());
    // A corrupted encoding is rejected one way or the other, never accepted.
    let mut corrupt = out.proof.clone();
    corrupt[100] ^= 0x55;
    assert!(!matches!(verify(&corrupt, s.seed), Ok(true)));
}

#[test]
fn winning_post_verifies_with_filecoin_proofs() {
    let f = fixture();
    let s = &f.sector;
    let proof_type = RegisteredPoStProof::StackedDrgWinning2KiBV1;
    ensure_params(f, CircuitId::PoSt(proof_type));
    let rand = randomness(&mut ChaCha20Rng::seed_from_u64(11));

    // The chain picks the challenged sector; with one sector it is ours.
    let picked =
        post::generate_winning_post_sector_challenge(proof_type, &rand, 1, s.prover_id).unwrap();
    assert_eq!(picked, vec![0]);
    let vanilla = winning_vanilla(s, proof_type, &rand);

    let req = ProofRequest::WinningPost {
        registered_proof: proof_type,
        randomness: rand,
        prover_id: s.prover_id,
        vanilla_proofs: vec![vanilla.clone()],
    };
    assert_synthesis_modes_agree(&req);
    let out = f.prover.prove(&req).unwrap();
    eprintln!(
        "WinningPoSt (2 KiB): prover total {:.2?}",
        out.timings.total
    );
    assert_eq!(out.proof.len(), 192);

    let replicas = BTreeMap::from([(s.sector_id, PublicReplicaInfo::new(proof_type, s.comm_r))]);
    let verify = |proof: &[u8], rand: &[u8; 32]| {
        post::verify_winning_post(rand, proof, &replicas, s.prover_id)
    };
    assert!(
        verify(&out.proof, &rand).unwrap(),
        "verify_winning_post rejected cuzk's proof"
    );
    assert!(!verify(&negate_a(&out.proof, 0), &rand).unwrap());
    let mut other = rand;
    other[0] ^= 1;
    assert!(!verify(&out.proof, &other).unwrap());

    // Wrong inputs are typed errors, not panics.
    let err = f.prover.prove(&ProofRequest::WinningPost {
        registered_proof: proof_type,
        randomness: rand,
        prover_id: s.prover_id,
        vanilla_proofs: vec![vanilla[..vanilla.len() / 2].to_vec()],
    });
    assert!(
        matches!(
            err,
            Err(cuzk_filecoin::Error::Decode {
                part: cuzk_filecoin::InputPart::VanillaProof(0),
                ..
            })
        ),
        "{err:?}"
    );
    let err = f.prover.prove(&ProofRequest::WinningPost {
        registered_proof: proof_type,
        randomness: rand,
        prover_id: s.prover_id,
        vanilla_proofs: vec![vanilla.clone(), vanilla],
    });
    assert!(
        matches!(
            err,
            Err(cuzk_filecoin::Error::WrongCount {
                what: cuzk_filecoin::Counted::VanillaProofs { .. },
                got: 2,
                ..
            })
        ),
        "{err:?}"
    );
}

#[test]
fn window_post_verifies_with_filecoin_proofs() {
    let f = fixture();
    let s = &f.sector;
    let proof_type = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
    ensure_params(f, CircuitId::PoSt(proof_type));
    let rand = randomness(&mut ChaCha20Rng::seed_from_u64(12));

    // Three sectors (the one replica under three sector numbers: PoSt binds
    // a sector number only to its challenges) fill two partitions of two.
    let ids: Vec<SectorId> = [5u64, 6, 7].map(SectorId::from).to_vec();
    let challenges =
        post::generate_fallback_sector_challenges(proof_type, &rand, &ids, s.prover_id).unwrap();
    let vanilla: Vec<Vec<u8>> = ids
        .iter()
        .map(|id| {
            post::generate_single_vanilla_proof(
                proof_type,
                *id,
                &replica(s, proof_type),
                &challenges[id],
            )
            .unwrap()
        })
        .collect();

    let request = |vanilla_proofs: Vec<Vec<u8>>, partition| ProofRequest::WindowPost {
        registered_proof: proof_type,
        randomness: rand,
        prover_id: s.prover_id,
        vanilla_proofs,
        partition,
    };
    assert_synthesis_modes_agree(&request(vanilla.clone(), None));
    let all = f.prover.prove(&request(vanilla.clone(), None)).unwrap();
    eprintln!(
        "WindowPoSt (2 KiB, {} partitions in one batch): prover total {:.2?}",
        all.partitions, all.timings.total
    );
    assert_eq!(all.partitions, 2);

    let replicas: BTreeMap<_, _> = ids
        .iter()
        .map(|id| (*id, PublicReplicaInfo::new(proof_type, s.comm_r)))
        .collect();
    let verify = |proof: &[u8]| {
        post::verify_window_post(&rand, &[(proof_type, proof)], &replicas, s.prover_id)
    };
    assert!(
        verify(&all.proof).unwrap(),
        "verify_window_post rejected cuzk's proof"
    );
    assert!(!verify(&negate_a(&all.proof, 1)).unwrap());
    // Partitions swapped: each proof is valid, but for the other partition.
    let swapped = [&all.proof[192..], &all.proof[..192]].concat();
    assert!(!verify(&swapped).unwrap());

    // Curio proves one partition per request; the concatenation is the proof.
    let p0 = f
        .prover
        .prove(&request(vanilla[..2].to_vec(), Some(0)))
        .unwrap();
    let p1 = f
        .prover
        .prove(&request(vanilla[2..].to_vec(), Some(1)))
        .unwrap();
    let merged = [p0.proof, p1.proof].concat();
    assert!(
        verify(&merged).unwrap(),
        "per-partition proofs do not merge into a valid proof"
    );
}

#[test]
fn snap_deals_verifies_with_filecoin_proofs() {
    let f = fixture();
    let s = &f.sector;
    let proof_type = RegisteredUpdateProof::StackedDrg2KiBV1;
    ensure_params(f, CircuitId::SnapDeals(proof_type));

    let dir = f.work.join("snap");
    let new_cache = dir.join("cache");
    std::fs::create_dir_all(&new_cache).unwrap();
    let (piece, staged) = piece_file(&dir.join("staged"), &mut ChaCha20Rng::seed_from_u64(13));
    let new_replica = dir.join("replica");
    // The encoder writes into a replica file of the sector's size.
    File::create(&new_replica)
        .unwrap()
        .set_len(SECTOR_BYTES)
        .unwrap();
    let encoded = update::empty_sector_update_encode_into(
        proof_type,
        &new_replica,
        &new_cache,
        &s.sealed_path,
        &s.cache_dir,
        &staged,
        &[piece],
    )
    .unwrap();
    let vanilla = update::generate_partition_proofs(
        proof_type,
        s.comm_r,
        encoded.comm_r_new,
        encoded.comm_d_new,
        &s.sealed_path,
        &s.cache_dir,
        &new_replica,
        &new_cache,
    )
    .unwrap();

    let req = ProofRequest::SnapDeals {
        registered_proof: proof_type,
        vanilla_proofs: vanilla.iter().map(|p| p.0.clone()).collect(),
        comm_r_old: s.comm_r,
        comm_r_new: encoded.comm_r_new,
        comm_d_new: encoded.comm_d_new,
    };
    assert_synthesis_modes_agree(&req);
    let out = f.prover.prove(&req).unwrap();
    eprintln!(
        "SnapDeals (2 KiB, {} partition): prover total {:.2?}",
        out.partitions, out.timings.total
    );

    let verify = |proof: &[u8], comm_d_new: [u8; 32]| {
        update::verify_empty_sector_update_proof(
            proof_type,
            proof,
            s.comm_r,
            encoded.comm_r_new,
            comm_d_new,
        )
    };
    assert!(
        verify(&out.proof, encoded.comm_d_new).unwrap(),
        "verify rejected cuzk's proof"
    );
    assert!(!verify(&negate_a(&out.proof, 0), encoded.comm_d_new).unwrap());
    assert!(!verify(&out.proof, s.comm_d).unwrap());
}
