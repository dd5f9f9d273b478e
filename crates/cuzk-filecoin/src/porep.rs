//! PoRep commit phase 2: the C1 output (`SealCommitPhase1Output`) becomes
//! one `StackedCircuit` per partition, built exactly as filecoin-proofs'
//! `seal_commit_phase2_circuit_proofs` builds them (same public inputs, same
//! `CompoundProof::circuit` call per partition), and is proved in one batch.
//!
//! The C1 output is accepted in the three forms it travels in:
//! - filecoin-proofs-api's JSON (`registered_proof`, `vanilla_proofs` tagged
//!   by sector shape, ...), which filecoin-ffi hands to Lotus;
//! - Curio's wrapper `{"SectorNum", "Phase1Out": base64 of the above,
//!   "SectorSize"}`;
//! - filecoin-proofs' own `SealCommitPhase1Output<Tree>` JSON, which carries
//!   no registered proof, so the caller names it.

use crate::circuits::{with_tree_shape, FilTree, ProofKind};
use crate::compiled::PorepPartition;
use crate::prover::{guarded, FilecoinProver, ProofCircuits, ProofOutput};
use crate::{
    CircuitId, Counted, Error, Expected, Fact, Feature, InputPart, PartitionProblem, Result,
};
use base64::Engine as _;
use filecoin_proofs::{
    as_safe_commitment, DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain, PoRepConfig,
};
use filecoin_proofs::{
    SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB, SectorShape8MiB,
};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use filecoin_proofs_api::RegisteredSealProof;
use std::time::Instant;
use storage_proofs_core::api_version::ApiFeature;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_porep::stacked::{self, StackedCompound, StackedDrg};

/// Curio's C1 file: Go's `encoding/json` writes the `[]byte` C1 output as
/// base64.
#[derive(serde::Deserialize)]
struct CurioC1 {
    #[serde(rename = "SectorNum")]
    sector_num: u64,
    #[serde(rename = "Phase1Out")]
    phase1_out: String,
    #[serde(rename = "SectorSize")]
    sector_size: u64,
}

/// A decoded C1 output.
#[derive(Clone, Debug)]
pub struct C1Output {
    pub output: SealCommitPhase1Output,
    /// The sector number, where the file carries it (Curio's wrapper).
    pub sector_num: Option<u64>,
}

static C1_DECODES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Calls of [`decode_c1`] in this process so far: a C1 output is tens of
/// megabytes, and a test counts that a submission decodes it once.
pub fn c1_decodes() -> u64 {
    C1_DECODES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Decode a C1 output in any of the forms above. `registered_proof` is
/// needed only for filecoin-proofs' own form (and, if given, must agree with
/// the other forms).
pub fn decode_c1(bytes: &[u8], registered_proof: Option<RegisteredSealProof>) -> Result<C1Output> {
    C1_DECODES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let api_err = match serde_json::from_slice::<SealCommitPhase1Output>(bytes) {
        Ok(output) => return checked(output, None, registered_proof),
        Err(e) => e,
    };
    let curio_err = match serde_json::from_slice::<CurioC1>(bytes) {
        Ok(w) => {
            let inner = base64::engine::general_purpose::STANDARD
                .decode(w.phase1_out.as_bytes())
                .map_err(|e| {
                    Error::decode(
                        InputPart::C1Output,
                        "the Phase1Out (base64) of a Curio C1 file",
                        e,
                    )
                })?;
            let output: SealCommitPhase1Output = serde_json::from_slice(&inner).map_err(|e| {
                Error::decode(
                    InputPart::C1Output,
                    "the SealCommitPhase1Output inside a Curio C1 file",
                    e,
                )
            })?;
            if u64::from(output.registered_proof.sector_size()) != w.sector_size {
                return Err(Error::disagree(
                    Fact::SectorSize,
                    "the Curio C1 file's SectorSize",
                    w.sector_size,
                    "its SealCommitPhase1Output",
                    format!("{:?}", output.registered_proof),
                ));
            }
            return checked(output, Some(w.sector_num), registered_proof);
        }
        Err(e) => e,
    };
    let Some(rp) = registered_proof else {
        return Err(Error::decode(
            InputPart::C1Output,
            "filecoin-proofs-api JSON or a Curio C1 file",
            format!(
                "not filecoin-proofs-api JSON ({api_err}) nor a Curio C1 file ({curio_err}); \
                 filecoin-proofs' own SealCommitPhase1Output needs the registered proof named"
            ),
        ));
    };
    let raw = |e: serde_json::Error| {
        Error::decode(
            InputPart::C1Output,
            format!("filecoin-proofs SealCommitPhase1Output for {rp:?}"),
            e,
        )
    };
    // filecoin-proofs' form: the same fields, the vanilla proofs untagged.
    macro_rules! raw_as {
        ($shape:ty, $variant:ident) => {{
            let o: filecoin_proofs::SealCommitPhase1Output<$shape> =
                serde_json::from_slice(bytes).map_err(raw)?;
            SealCommitPhase1Output {
                registered_proof: rp,
                vanilla_proofs: VanillaSealProof::$variant(o.vanilla_proofs),
                comm_r: o.comm_r,
                comm_d: o.comm_d,
                replica_id: o.replica_id,
                seed: o.seed,
                ticket: o.ticket,
            }
        }};
    }
    use crate::circuits::shapes::*;
    let output = match u64::from(rp.sector_size()) {
        SECTOR_SIZE_2_KIB => raw_as!(SectorShape2KiB, StackedDrg2KiBV1),
        SECTOR_SIZE_8_MIB => raw_as!(SectorShape8MiB, StackedDrg8MiBV1),
        SECTOR_SIZE_512_MIB => raw_as!(SectorShape512MiB, StackedDrg512MiBV1),
        SECTOR_SIZE_32_GIB => raw_as!(SectorShape32GiB, StackedDrg32GiBV1),
        SECTOR_SIZE_64_GIB => raw_as!(SectorShape64GiB, StackedDrg64GiBV1),
        other => return Err(Error::UnsupportedSectorSize(other)),
    };
    checked(output, None, None)
}

fn checked(
    output: SealCommitPhase1Output,
    sector_num: Option<u64>,
    expected: Option<RegisteredSealProof>,
) -> Result<C1Output> {
    if let Some(rp) = expected {
        if rp != output.registered_proof {
            return Err(Error::disagree(
                Fact::RegisteredProof,
                "the request",
                format!("{rp:?}"),
                "the C1 output",
                format!("{:?}", output.registered_proof),
            ));
        }
    }
    Ok(C1Output { output, sector_num })
}

/// Prove C2 for a C1 output.
pub(crate) fn prove_c2(
    prover: &FilecoinProver,
    c1: &SealCommitPhase1Output,
) -> Result<ProofOutput> {
    let size = u64::from(c1.registered_proof.sector_size());
    with_tree_shape!(size, prove_c2_typed, prover, c1)
}

fn prove_c2_typed<Tree: FilTree>(
    prover: &FilecoinProver,
    c1: &SealCommitPhase1Output,
) -> Result<ProofOutput> {
    let start = Instant::now();
    let pc = c2_circuits::<Tree>(c1)?;
    prover.prove_circuits(pc, start.elapsed())
}

/// The vanilla proofs' sector size, from their tag.
fn tagged_size(p: &VanillaSealProof) -> u64 {
    use crate::circuits::shapes::*;
    match p {
        VanillaSealProof::StackedDrg2KiBV1(_) => SECTOR_SIZE_2_KIB,
        VanillaSealProof::StackedDrg8MiBV1(_) => SECTOR_SIZE_8_MIB,
        VanillaSealProof::StackedDrg512MiBV1(_) => SECTOR_SIZE_512_MIB,
        VanillaSealProof::StackedDrg32GiBV1(_) => SECTOR_SIZE_32_GIB,
        VanillaSealProof::StackedDrg64GiBV1(_) => SECTOR_SIZE_64_GIB,
    }
}

/// The circuits of a C1 output, with the tree shape `Tree` (which must be
/// the shape of the output's sector size).
pub(crate) fn c2_circuits<Tree: FilTree>(
    c1: &SealCommitPhase1Output,
) -> Result<ProofCircuits<PorepPartition<Tree>>> {
    use std::any::Any;
    let rp = c1.registered_proof;
    // The shape comes from the proofs' own tag; it must agree with the
    // registered proof's sector size (or the circuits would not fit the
    // parameters).
    if tagged_size(&c1.vanilla_proofs) != u64::from(rp.sector_size()) {
        return Err(Error::disagree(
            Fact::SectorSize,
            "the C1 output's registered proof",
            format!("{rp:?}"),
            "its vanilla proofs",
            format!("{} bytes", tagged_size(&c1.vanilla_proofs)),
        ));
    }
    let proofs: &dyn Any = match &c1.vanilla_proofs {
        VanillaSealProof::StackedDrg2KiBV1(p) => p,
        VanillaSealProof::StackedDrg8MiBV1(p) => p,
        VanillaSealProof::StackedDrg512MiBV1(p) => p,
        VanillaSealProof::StackedDrg32GiBV1(p) => p,
        VanillaSealProof::StackedDrg64GiBV1(p) => p,
    };
    let proofs = proofs
        .downcast_ref::<Vec<Vec<filecoin_proofs::VanillaSealProof<Tree>>>>()
        .ok_or_else(|| {
            Error::disagree(
                Fact::TreeShape,
                "the C1 output's registered proof",
                format!("{rp:?}"),
                "its vanilla proofs",
                "another",
            )
        })?;
    porep_circuits::<Tree>((rp, c1.comm_r, c1.comm_d, c1.replica_id, c1.seed), proofs)
}

type C2Args = (
    RegisteredSealProof,
    [u8; 32],
    [u8; 32],
    DefaultTreeDomain,
    [u8; 32],
);

/// The circuits and public inputs of every partition.
pub(crate) fn porep_circuits<Tree: FilTree>(
    (rp, comm_r, comm_d, replica_id, seed): C2Args,
    vanilla_proofs: &[Vec<filecoin_proofs::VanillaSealProof<Tree>>],
) -> Result<ProofCircuits<PorepPartition<Tree>>> {
    let config: PoRepConfig = rp.as_v1_config();
    if config.feature_enabled(ApiFeature::NonInteractivePoRep) {
        // NI-PoRep's C2 output is a SnarkPack aggregate of the partition
        // proofs, which cuzk does not produce.
        return Err(Error::Unsupported {
            proof: format!("{rp:?}"),
            feature: Feature::NonInteractivePorep,
        });
    }
    // The checks seal_commit_phase2 makes before building circuits.
    for (field, value) in [("comm_d", &comm_d), ("comm_r", &comm_r), ("seed", &seed)] {
        if *value == [0; 32] {
            return Err(Error::AllZero { field });
        }
    }
    let partitions = usize::from(config.partitions);
    if vanilla_proofs.len() != partitions {
        return Err(Error::WrongCount {
            what: Counted::PorepPartitions {
                proof: format!("{rp:?}"),
            },
            expected: Expected::Exactly(partitions),
            got: vanilla_proofs.len(),
        });
    }
    if let Some(partition) = vanilla_proofs.iter().position(|p| p.is_empty()) {
        return Err(Error::PorepPartition {
            partition,
            problem: PartitionProblem::NoVanillaProofs,
        });
    }
    let comm_r_safe: DefaultTreeDomain =
        as_safe_commitment(&comm_r, "comm_r").map_err(|e| Error::invalid_value("comm_r", e))?;
    let comm_d_safe: DefaultPieceDomain =
        as_safe_commitment(&comm_d, "comm_d").map_err(|e| Error::invalid_value("comm_d", e))?;

    let public_inputs = stacked::PublicInputs {
        replica_id,
        tau: Some(stacked::Tau {
            comm_d: comm_d_safe,
            comm_r: comm_r_safe,
        }),
        k: None,
        seed: Some(seed),
    };
    type Compound<T> = StackedCompound<T, DefaultPieceHasher>;
    type Scheme<'a, T> = StackedDrg<'a, T, DefaultPieceHasher>;
    let pp = guarded("PoRep public parameters", || {
        let setup = compound_proof::SetupParams {
            vanilla_params: filecoin_proofs::parameters::setup_params(&config)?,
            partitions: Some(partitions),
            priority: false,
        };
        <Compound<Tree> as CompoundProof<Scheme<'_, Tree>, _>>::setup(&setup)
    })?;

    let mut circuits = Vec::with_capacity(partitions);
    let mut inputs = Vec::with_capacity(partitions);
    for (k, proof) in vanilla_proofs.iter().enumerate() {
        // What `StackedCompound::circuit` builds, kept apart so that the
        // challenges can be synthesized in parallel.
        circuits.push(PorepPartition::new(
            k,
            replica_id,
            comm_d_safe,
            comm_r_safe,
            proof,
        )?);
        inputs.push(guarded(
            &format!("PoRep public inputs of partition {k}"),
            || {
                <Compound<Tree> as CompoundProof<Scheme<'_, Tree>, _>>::generate_public_inputs(
                    &public_inputs,
                    &pp.vanilla_params,
                    Some(k),
                )
            },
        )?);
    }
    Ok(ProofCircuits::built(CircuitId::PoRep(rp), circuits, inputs))
}

/// The registered proof of a PoRep circuit of this size (see
/// [`CircuitId::current`]).
pub fn current_seal_proof(sector_size: u64) -> Result<RegisteredSealProof> {
    match CircuitId::current(ProofKind::Porep, sector_size)? {
        CircuitId::PoRep(p) => Ok(p),
        _ => Err(Error::UnsupportedSectorSize(sector_size)),
    }
}

/// Whether `c1` was sealed by `prover_id` for `sector`: its replica id
/// is the one filecoin-proofs derives from them, the ticket, CommD and the
/// registered proof's PoRep id. A C1 output of another sector or miner
/// fails.
pub fn sealed_for(
    c1: &SealCommitPhase1Output,
    proof: RegisteredSealProof,
    prover_id: &[u8; 32],
    sector: u64,
) -> bool {
    let replica_id = stacked::generate_replica_id::<filecoin_proofs::constants::DefaultTreeHasher, _>(
        prover_id,
        sector,
        &c1.ticket,
        c1.comm_d,
        &proof.as_v1_config().porep_id,
    );
    replica_id == c1.replica_id
}

/// A registered seal proof by its number (the chain's, filecoin-ffi's and
/// Curio's numbering).
pub fn seal_proof_from_u64(v: u64) -> Result<RegisteredSealProof> {
    use RegisteredSealProof::*;
    const ALL: [RegisteredSealProof; 20] = [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ];
    // The enum is append-only and numbered in declaration order.
    ALL.get(v as usize)
        .copied()
        .filter(|p| *p as u64 == v)
        .ok_or(Error::UnknownRegisteredProof {
            kind: "seal proof",
            value: v,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_proof_numbers_match_the_api() {
        for v in 0..20u64 {
            let p = seal_proof_from_u64(v).unwrap();
            assert_eq!(p as u64, v);
        }
        assert_eq!(
            seal_proof_from_u64(5).unwrap(),
            RegisteredSealProof::StackedDrg2KiBV1_1
        );
        assert_eq!(
            seal_proof_from_u64(18).unwrap(),
            RegisteredSealProof::StackedDrg32GiBV1_2_Feat_NonInteractivePoRep
        );
        assert!(seal_proof_from_u64(20).is_err());
        assert!(seal_proof_from_u64(u64::MAX).is_err());
    }

    #[test]
    fn garbage_c1_is_a_decode_error() {
        for bytes in [&b""[..], b"{}", b"[1,2,3]", b"{\"Phase1Out\": 5}"] {
            assert!(matches!(
                decode_c1(bytes, None),
                Err(Error::Decode {
                    part: InputPart::C1Output,
                    ..
                })
            ));
            assert!(matches!(
                decode_c1(bytes, Some(RegisteredSealProof::StackedDrg2KiBV1_1)),
                Err(Error::Decode {
                    part: InputPart::C1Output,
                    ..
                })
            ));
        }
        let bad_b64 = br#"{"SectorNum": 1, "Phase1Out": "!!!", "SectorSize": 2048}"#;
        assert!(matches!(
            decode_c1(bad_b64, None),
            Err(Error::Decode {
                part: InputPart::C1Output,
                ..
            })
        ));
    }
}
