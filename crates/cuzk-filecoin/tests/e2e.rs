//! End-to-end at 2 KiB sectors, fully offline: filecoin-proofs seals a
//! sector (pre-commit 1 and 2, commit 1) and makes the vanilla proofs, cuzk
//! generates the parameters and proves, and filecoin-proofs' own verifiers
//! judge the proofs — true for cuzk's proofs, false for tampered ones and
//! for proofs checked against the wrong inputs.
//!
//! Parameters are generated once per run into a fresh directory; set
//! `CUZK_FIL_TEST_PARAMS=DIR` to keep and reuse them between runs.

use cuzk_filecoin::filecoin_proofs_api::{
    self as api, post, seal, update, PieceInfo, PrivateReplicaInfo, PublicReplicaInfo,
    RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof, SectorId, UnpaddedBytesAmount,
};
use cuzk_filecoin::{CircuitId, FilecoinProver, ParamCache, ProofRequest};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

const SEAL_PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;
const SECTOR_BYTES: u64 = 2048;

struct Sector {
    sector_id: SectorId,
    prover_id: [u8; 32],
    ticket: [u8; 32],
    seed: [u8; 32],
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    cache_dir: PathBuf,
    sealed_path: PathBuf,
    c1: seal::SealCommitPhase1Output,
}

struct Fixture {
    work: PathBuf,
    params: ParamCache,
    prover: FilecoinProver,
    sector: Sector,
    /// Serializes parameter generation (tests run in parallel).
    gen_lock: Mutex<()>,
}

/// This run's working directory (sealed sector, caches, parameters: about
/// 1.8 GB). The fixture is a static, which is never dropped, so a temporary
/// directory would outlive every run; instead each run works in
/// `target/tmp/cuzk-filecoin-e2e/<pid>` and first removes the directories of
/// runs that have ended. At most one copy per live run is kept, and `cargo
/// clean` removes them all.
fn work_dir() -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuzk-filecoin-e2e");
    if let Ok(entries) = std::fs::read_dir(&base) {
        for e in entries.flatten() {
            let name = e.file_name();
            let ended = match name.to_str().and_then(|n| n.parse::<u32>().ok()) {
                Some(pid) => !Path::new(&format!("/proc/{pid}")).exists(),
                None => true,
            };
            if ended {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let work = base.join(std::process::id().to_string());
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("e2e work directory");
    work
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let work = work_dir();
        let params_dir = std::env::var_os("CUZK_FIL_TEST_PARAMS")
            .map(PathBuf::from)
            .unwrap_or_else(|| work.join("params"));
        std::fs::create_dir_all(&params_dir).unwrap();
        // filecoin-proofs reads its settings once, on first use: set them
        // before any call into it.
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", work.join("parents"));
        std::env::set_var("FIL_PROOFS_CACHE_DIR", work.join("cache"));
        let params = ParamCache::new(&params_dir);
        let prover = FilecoinProver::new(params.clone(), Arc::new(cuzk_core::CpuBackend));
        let t = Instant::now();
        let sector = seal_sector(&work, &mut ChaCha20Rng::seed_from_u64(7));
        eprintln!("sealed a 2 KiB sector in {:.2?}", t.elapsed());
        Fixture {
            work,
            params,
            prover,
            sector,
            gen_lock: Mutex::new(()),
        }
    })
}

/// Generate the circuit's parameters with cuzk's generator unless present,
/// through the `cuzk params gen --filecoin` entry point.
fn ensure_params(f: &Fixture, circuit: CircuitId) {
    let _g = f.gen_lock.lock().unwrap_or_else(|p| p.into_inner());
    let t = Instant::now();
    let args = cuzk_filecoin::cli::FilecoinParamsGenArgs {
        kind: circuit.kind(),
        sector_size: circuit.sector_size(),
        param_cache: Some(f.params.dir().to_path_buf()),
        seed: Some(circuit.sector_size() ^ 0xc0ffee),
        force: false,
        synthesis: cuzk_filecoin::SynthesisMode::Compiled,
    };
    if let Some(g) = cuzk_filecoin::cli::params_gen(&args).unwrap() {
        assert_eq!(g.files, f.params.files(circuit).unwrap());
        eprintln!(
            "generated {circuit} parameters (domain 2^{}, {} public inputs, {} MB) in {:.2?}",
            g.domain_size.trailing_zeros(),
            g.public_inputs,
            g.params_bytes >> 20,
            t.elapsed()
        );
    }
    assert!(f.params.is_present(circuit).unwrap());
}

fn piece_file(path: &Path, rng: &mut impl RngCore) -> (PieceInfo, PathBuf) {
    let unpadded = UnpaddedBytesAmount::from(api::PaddedBytesAmount(SECTOR_BYTES));
    let mut data = vec![0u8; u64::from(unpadded) as usize];
    rng.fill_bytes(&mut data);
    let staged = path.to_path_buf();
    let mut out = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&staged)
        .unwrap();
    let (info, _) = seal::add_piece(SEAL_PROOF, &data[..], &mut out, unpadded, &[]).unwrap();
    out.flush().unwrap();
    (info, staged)
}

fn seal_sector(work: &Path, rng: &mut ChaCha20Rng) -> Sector {
    let cache_dir = work.join("sector-cache");
    std::fs::create_dir_all(&cache_dir).unwrap();
    let (piece, staged) = piece_file(&work.join("staged"), rng);
    let sealed_path = work.join("sealed");
    File::create(&sealed_path).unwrap();
    let sector_id = SectorId::from(42);
    let mut prover_id = [0u8; 32];
    prover_id[0] = 0xe8; // miner 1000, as an ID address payload
    prover_id[1] = 0x07;
    let mut ticket = rng.gen::<[u8; 32]>();
    ticket[31] &= 0x3f;
    let mut seed = rng.gen::<[u8; 32]>();
    seed[31] &= 0x3f;

    let pieces = [piece];
    let p1 = seal::seal_pre_commit_phase1(
        SEAL_PROOF,
        &cache_dir,
        &staged,
        &sealed_path,
        prover_id,
        sector_id,
        ticket,
        &pieces,
    )
    .unwrap();
    let p2 = seal::seal_pre_commit_phase2(p1, &cache_dir, &sealed_path).unwrap();
    let (comm_r, comm_d) = (p2.comm_r, p2.comm_d);
    let c1 = seal::seal_commit_phase1(
        &cache_dir,
        &sealed_path,
        prover_id,
        sector_id,
        ticket,
        seed,
        p2,
        &pieces,
    )
    .unwrap();
    Sector {
        sector_id,
        prover_id,
        ticket,
        seed,
        comm_r,
        comm_d,
        cache_dir,
        sealed_path,
        c1,
    }
}

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

fn randomness(rng: &mut impl RngCore) -> [u8; 32] {
    let mut r = [0u8; 32];
    rng.fill_bytes(&mut r);
    r[31] &= 0x3f; // a field element, as the chain's randomness is reduced
    r
}

fn replica(s: &Sector, proof: RegisteredPoStProof) -> PrivateReplicaInfo {
    PrivateReplicaInfo::new(proof, s.comm_r, s.cache_dir.clone(), s.sealed_path.clone())
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
    let challenges =
        post::generate_fallback_sector_challenges(proof_type, &rand, &[s.sector_id], s.prover_id)
            .unwrap();
    let vanilla = post::generate_single_vanilla_proof(
        proof_type,
        s.sector_id,
        &replica(s, proof_type),
        &challenges[&s.sector_id],
    )
    .unwrap();

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

    // The same through `cuzk prove --filecoin winning-post`, from files.
    let dir = f.work.join("winning-cli");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("vanilla"), &vanilla).unwrap();
    let hex = |b: &[u8; 32]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let args = cuzk_filecoin::cli::FilecoinProveArgs {
        kind: cuzk_filecoin::ProofKind::WinningPost,
        c1: None,
        registered_proof: Some(proof_type as u64),
        sector_size: None,
        vanilla: vec![dir.join("vanilla")],
        randomness: Some(hex(&rand)),
        miner_id: Some(1000), // the fixture's prover id is miner 1000's
        prover_id: None,
        partition: None,
        comm_r_old: None,
        comm_r_new: None,
        comm_d_new: None,
        out: dir.join("proof"),
        param_cache: Some(f.params.dir().to_path_buf()),
        no_self_check: false,
        synthesis: cuzk_filecoin::SynthesisMode::Compiled,
    };
    cuzk_filecoin::cli::prove(&args, Arc::new(cuzk_core::CpuBackend)).unwrap();
    let from_cli = std::fs::read(dir.join("proof")).unwrap();
    assert!(
        verify(&from_cli, &rand).unwrap(),
        "the CLI's proof does not verify"
    );

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
        matches!(err, Err(cuzk_filecoin::Error::InvalidInput(_))),
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

/// The daemon with the Filecoin kinds and Curio's service, driven by a
/// client generated from Curio's schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curio_client_proves_through_the_daemon() {
    use cuzk_filecoin::curio::pb;
    use pb::proving_engine_client::ProvingEngineClient;

    let f = fixture();
    let s = &f.sector;
    let winning = RegisteredPoStProof::StackedDrgWinning2KiBV1;
    let window = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
    ensure_params(f, CircuitId::PoSt(winning));
    ensure_params(f, CircuitId::PoSt(window));

    let mut cfg = cuzk_daemon::DaemonConfig::default();
    cfg.server.unix_socket = None;
    cfg.server.tcp_listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.server.http_listen = None;
    cfg.params.dir = f.params.dir().to_path_buf();
    cfg.kinds.porep_like_log_sizes = vec![];
    cfg.engine.max_batch_wait_ms = 20;
    cfg.engine.host_memory_budget = Some(cuzk_daemon::config::ByteSize(4 << 30));
    // A small message limit, to send requests just under and over it.
    const LIMIT: usize = 8 << 20;
    let mut builder =
        cuzk_daemon::DaemonBuilder::new(cfg).add_service(cuzk_filecoin::curio::service_hook(LIMIT));
    for kind in
        cuzk_filecoin::daemon::FilecoinKind::all(&[SECTOR_BYTES], false, f.params.dir()).unwrap()
    {
        builder = builder.register_kind(kind);
    }
    let daemon = builder.start().await.unwrap();
    let mut client = ProvingEngineClient::connect(format!("http://{}", daemon.tcp_addr.unwrap()))
        .await
        .unwrap();

    // WinningPoSt: one bincode vanilla proof, the prover id from miner_id.
    let rand = randomness(&mut ChaCha20Rng::seed_from_u64(21));
    let challenges =
        post::generate_fallback_sector_challenges(winning, &rand, &[s.sector_id], s.prover_id)
            .unwrap();
    let vanilla = post::generate_single_vanilla_proof(
        winning,
        s.sector_id,
        &replica(s, winning),
        &challenges[&s.sector_id],
    )
    .unwrap();
    let submit = pb::SubmitProofRequest {
        request_id: "winning-1".into(),
        proof_kind: pb::ProofKind::WinningPost as i32,
        sector_size: SECTOR_BYTES,
        registered_proof: winning as u64,
        vanilla_proof: vanilla,
        sector_number: u64::from(s.sector_id),
        miner_id: 1000,
        randomness: rand.to_vec(),
        ..Default::default()
    };
    let res = client
        .prove(pb::ProveRequest {
            submit: Some(submit.clone()),
        })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert_eq!(
        res.status,
        pb::await_proof_response::Status::Completed as i32,
        "{}",
        res.error_message
    );
    // The request id is the job id, as in Curio's own daemon.
    assert_eq!(res.job_id, "winning-1");
    let replicas = BTreeMap::from([(s.sector_id, PublicReplicaInfo::new(winning, s.comm_r))]);
    assert!(post::verify_winning_post(&rand, &res.proof, &replicas, s.prover_id).unwrap());
    // Proving the same request again returns the completed job's proof.
    let again = client
        .prove(pb::ProveRequest {
            submit: Some(submit.clone()),
        })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert_eq!(again.proof, res.proof);

    // Randomness other than the vanilla proof's: PoSt's vanilla proofs are
    // checked against their challenges at submission (a PoRep C1 output's
    // are not; see curio_porep_with_an_altered_seed_fails_verification).
    let mut altered = submit.clone();
    altered.request_id = "winning-2".into();
    altered.randomness[0] ^= 1;
    let err = client
        .prove(pb::ProveRequest {
            submit: Some(altered),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err}");
    // The refused request left its id free: the right one runs.
    let mut fixed = submit.clone();
    fixed.request_id = "winning-2".into();
    let good = client
        .prove(pb::ProveRequest {
            submit: Some(fixed),
        })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert_eq!(
        good.status,
        pb::await_proof_response::Status::Completed as i32,
        "{}",
        good.error_message
    );
    assert!(post::verify_winning_post(&rand, &good.proof, &replicas, s.prover_id).unwrap());

    // WindowPoSt partitions 0 and 1 of two (sectors 5 and 6, then 7),
    // through SubmitProof and AwaitProof.
    let ids: Vec<SectorId> = [5u64, 6, 7].map(SectorId::from).to_vec();
    let rand = randomness(&mut ChaCha20Rng::seed_from_u64(22));
    let ch = post::generate_fallback_sector_challenges(window, &rand, &ids, s.prover_id).unwrap();
    use base64::Engine as _;
    let list: Vec<String> = ids
        .iter()
        .map(|id| {
            let v = post::generate_single_vanilla_proof(window, *id, &replica(s, window), &ch[id])
                .unwrap();
            base64::engine::general_purpose::STANDARD.encode(v)
        })
        .collect();
    // Partition 0 in the older schema's form (a JSON list in
    // vanilla_proof), partition 1 in the newer one (repeated
    // vanilla_proofs, raw bytes).
    let window_submit = |vanilla: &[String], partition_index| pb::SubmitProofRequest {
        proof_kind: pb::ProofKind::WindowPostPartition as i32,
        registered_proof: window as u64,
        vanilla_proof: if partition_index == 0 {
            serde_json::to_vec(vanilla).unwrap()
        } else {
            Vec::new()
        },
        vanilla_proofs: if partition_index == 0 {
            Vec::new()
        } else {
            vanilla
                .iter()
                .map(|v| base64::engine::general_purpose::STANDARD.decode(v).unwrap())
                .collect()
        },
        miner_id: 1000,
        randomness: rand.to_vec(),
        partition_index,
        ..Default::default()
    };
    let mut parts = Vec::new();
    for (k, vanilla) in [(0u32, &list[..2]), (1, &list[2..])] {
        let job = client
            .submit_proof(window_submit(vanilla, k))
            .await
            .unwrap()
            .into_inner();
        let res = client
            .await_proof(pb::AwaitProofRequest {
                job_id: job.job_id,
                timeout_ms: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            res.status,
            pb::await_proof_response::Status::Completed as i32
        );
        parts.push(res.proof);
    }
    let replicas: BTreeMap<_, _> = ids
        .iter()
        .map(|id| (*id, PublicReplicaInfo::new(window, s.comm_r)))
        .collect();
    let merged = parts.concat();
    assert!(post::verify_window_post(&rand, &[(window, &merged)], &replicas, s.prover_id).unwrap());

    // Bad requests are refused with gRPC status codes, not crashes.
    let mut bad = submit.clone();
    bad.request_id.clear();
    bad.randomness = vec![0; 5];
    let err = client.submit_proof(bad).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    let mut bad = submit.clone();
    bad.request_id.clear();
    bad.vanilla_proof = vec![1, 2, 3];
    let err = client.submit_proof(bad).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err}");
    // An unknown job id is cancelled with nothing running, as Curio's own
    // daemon answers.
    let cancelled = client
        .cancel_proof(pb::CancelProofRequest {
            job_id: "999999".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!cancelled.was_running);

    // Requests just under and over the message limit: the first reaches
    // the service (and is refused as the junk it is), the second is
    // refused at the transport with the limit named.
    let mut junk = submit.clone();
    junk.request_id.clear();
    junk.vanilla_proof = vec![7; LIMIT - 4096];
    let err = client.submit_proof(junk.clone()).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err}");
    junk.vanilla_proof = vec![7; LIMIT + 1];
    let err = client.submit_proof(junk).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::OutOfRange, "{err}");
    assert!(err.message().contains(&LIMIT.to_string()), "{err}");

    // PoRep: registered_proof, sector_size, sector_number and miner_id are
    // checked against the C1 output (no parameters are needed to refuse).
    let api_json = serde_json::to_vec(&s.c1).unwrap();
    let porep = pb::SubmitProofRequest {
        request_id: "porep-1000-42".into(),
        proof_kind: pb::ProofKind::PorepSealCommit as i32,
        sector_size: SECTOR_BYTES,
        registered_proof: SEAL_PROOF as u64,
        vanilla_proof: serde_json::to_vec(&serde_json::json!({
            "SectorNum": u64::from(s.sector_id),
            "Phase1Out": base64::engine::general_purpose::STANDARD.encode(&api_json),
            "SectorSize": SECTOR_BYTES,
        }))
        .unwrap(),
        sector_number: u64::from(s.sector_id),
        miner_id: 1000,
        ..Default::default()
    };
    type Edit = fn(&mut pb::SubmitProofRequest);
    let edits: [(&str, Edit); 4] = [
        ("registered_proof", |r| {
            r.registered_proof = RegisteredSealProof::StackedDrg32GiBV1_1 as u64
        }),
        ("sector_size", |r| r.sector_size = 32 << 30),
        ("sector_number", |r| r.sector_number = 43),
        ("miner_id", |r| r.miner_id = 1001),
    ];
    for (what, edit) in edits {
        let mut r = porep.clone();
        edit(&mut r);
        let err = client.submit_proof(r).await.unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{what}: {err}");
        assert!(err.message().contains(what), "{what}: {err}");
    }
    // The C1 output without Curio's wrapper, sector and miner from the
    // request alone, is checked the same way.
    let mut bare = porep.clone();
    bare.vanilla_proof = api_json.clone();
    bare.sector_number = 43;
    let err = client.submit_proof(bare).await.unwrap_err();
    assert!(err.message().contains("replica id"), "{err}");

    // Status, metrics and the parameter tiers.
    let status = client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.total_proofs_completed, 4);
    assert_eq!(status.total_proofs_failed, 0);
    assert!(status
        .loaded_srs
        .iter()
        .any(|p| p.circuit_id == "winning-2k"));
    let metrics = client
        .get_metrics(pb::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(!metrics.prometheus_text.is_empty());
    let evicted = client
        .evict_srs(pb::EvictSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(evicted.was_loaded && evicted.freed_bytes > 0);
    // Evicted parameters are no longer listed as loaded.
    let status = client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(
        !status
            .loaded_srs
            .iter()
            .any(|p| p.circuit_id == "winning-2k"),
        "{:?}",
        status.loaded_srs
    );
    let loaded = client
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!loaded.already_loaded);
    let err = client
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "porep-3g".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::NotFound);

    daemon.shutdown().await;
}

/// A C1 output whose seed was changed after commit phase 1, as Curio sends
/// it: its circuit is satisfied by the vanilla proofs' paths, so it proves,
/// but the proof does not verify against the challenges filecoin-proofs'
/// verifier derives from the seed. The job fails with that reason instead
/// of returning a proof the chain would reject. The request's other fields
/// (miner 1000, sector 42) match the C1 output, so this also checks that a
/// right request passes the replica-id check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curio_porep_with_an_altered_seed_fails_verification() {
    use base64::Engine as _;
    use cuzk_filecoin::curio::pb;
    use pb::proving_engine_client::ProvingEngineClient;

    let f = fixture();
    let s = &f.sector;
    ensure_params(f, CircuitId::PoRep(SEAL_PROOF));
    let mut cfg = cuzk_daemon::DaemonConfig::default();
    cfg.server.unix_socket = None;
    cfg.server.tcp_listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.params.dir = f.params.dir().to_path_buf();
    // The subgroup checks of the 1.1 GB file take minutes on CI's two
    // cores; the daemon's parameter tests cover them.
    cfg.params.check_points = false;
    cfg.kinds.porep_like_log_sizes = vec![];
    cfg.engine.max_batch_wait_ms = 20;
    cfg.engine.host_memory_budget = Some(cuzk_daemon::config::ByteSize(4 << 30));
    let max_message = cfg.server.max_message_bytes.0 as usize;
    let mut builder = cuzk_daemon::DaemonBuilder::new(cfg)
        .add_service(cuzk_filecoin::curio::service_hook(max_message));
    for kind in
        cuzk_filecoin::daemon::FilecoinKind::all(&[SECTOR_BYTES], false, f.params.dir()).unwrap()
    {
        builder = builder.register_kind(kind);
    }
    let daemon = builder.start().await.unwrap();
    let mut client = ProvingEngineClient::connect(format!("http://{}", daemon.tcp_addr.unwrap()))
        .await
        .unwrap();

    let mut c1 = s.c1.clone();
    c1.seed[0] ^= 1;
    let api_json = serde_json::to_vec(&c1).unwrap();
    let submit = pb::SubmitProofRequest {
        request_id: format!("porep-1000-{}", u64::from(s.sector_id)),
        proof_kind: pb::ProofKind::PorepSealCommit as i32,
        sector_size: SECTOR_BYTES,
        registered_proof: SEAL_PROOF as u64,
        vanilla_proof: serde_json::to_vec(&serde_json::json!({
            "SectorNum": u64::from(s.sector_id),
            "Phase1Out": base64::engine::general_purpose::STANDARD.encode(&api_json),
            "SectorSize": SECTOR_BYTES,
        }))
        .unwrap(),
        sector_number: u64::from(s.sector_id),
        miner_id: 1000,
        ..Default::default()
    };
    let res = client
        .prove(pb::ProveRequest {
            submit: Some(submit),
        })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap();
    assert_eq!(
        res.status,
        pb::await_proof_response::Status::Failed as i32,
        "{res:?}"
    );
    assert!(res.proof.is_empty());
    assert!(
        res.error_message.contains("does not verify"),
        "{}",
        res.error_message
    );
    let metrics = client
        .get_metrics(pb::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .prometheus_text;
    let failures: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("cuzk_proof_verification_failures_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no verification failure count in {metrics}"));
    assert!(failures >= 1.0, "{metrics}");
    daemon.shutdown().await;
}
