//! `cuzk prove --filecoin winning-post` from files, end to end at 2 KiB: a
//! sector sealed by filecoin-proofs (the fixture of cuzk-filecoin's
//! end-to-end tests), its vanilla proof written to a file, the `cuzk`
//! binary proving from the files, and filecoin-proofs' verifier judging
//! the proof it wrote.
//!
//! Parameters are generated once per run into a fresh directory; set
//! `CUZK_FIL_TEST_PARAMS=DIR` to keep and reuse them between runs.

#[path = "../../cuzk-filecoin/tests/fixture/mod.rs"]
mod fixture;

use cuzk_filecoin::filecoin_proofs_api::{post, PublicReplicaInfo, RegisteredPoStProof};
use cuzk_filecoin::CircuitId;
use fixture::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;

#[test]
fn winning_post_from_files_verifies_with_filecoin_proofs() {
    let f = fixture();
    let s = &f.sector;
    let proof_type = RegisteredPoStProof::StackedDrgWinning2KiBV1;
    ensure_params(f, CircuitId::PoSt(proof_type));
    let rand = randomness(&mut ChaCha20Rng::seed_from_u64(11));
    let vanilla = winning_vanilla(s, proof_type, &rand);

    let dir = f.work.join("winning-cli");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("vanilla"), &vanilla).unwrap();
    let hex = |b: &[u8; 32]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["prove", "--filecoin", "winning-post", "--registered-proof"])
        .arg((proof_type as u64).to_string())
        .arg("--vanilla")
        .arg(dir.join("vanilla"))
        .args(["--randomness", &hex(&rand)])
        // The fixture's prover id is miner 1000's.
        .args([
            "--miner-id",
            "1000",
            "--backend",
            "cpu",
            "--synthesis",
            "compiled",
        ])
        .arg("--param-cache")
        .arg(f.params.dir())
        .arg("-o")
        .arg(dir.join("proof"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_cli = std::fs::read(dir.join("proof")).unwrap();
    let replicas = BTreeMap::from([(s.sector_id, PublicReplicaInfo::new(proof_type, s.comm_r))]);
    assert!(
        post::verify_winning_post(&rand, &from_cli, &replicas, s.prover_id).unwrap(),
        "the CLI's proof does not verify"
    );
}
