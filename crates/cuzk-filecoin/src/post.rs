//! Winning and Window PoSt from vanilla proofs: the per-sector vanilla
//! proofs (bincode `FallbackPoStSectorProof`s, as filecoin-proofs-api and
//! Curio pass them) are regrouped into partition proofs by filecoin-proofs'
//! own `partition_vanilla_proofs` / `single_partition_vanilla_proofs`, and
//! each partition becomes a `FallbackPoStCircuit` through
//! `FallbackPoStCompound::circuit`, as `generate_*_post_with_vanilla` do.

use crate::circuits::{with_tree_shape, FilTree};
use crate::compiled::Parts;
use crate::native_witness::post::{sector_witness, SectorValues};
use crate::native_witness::MerklePath;
use crate::prover::{guarded, FilecoinProver, ProofCircuits, ProofOutput};
use crate::{CircuitId, Counted, Error, Expected, InputPart, ProofKind, Result};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use cuzk_core::compiled::{Witness, WitnessCs};
use filecoin_proofs::{
    as_safe_commitment, DefaultTreeDomain, FallbackPoStSectorProof, PoStConfig, PoStType,
};
use filecoin_proofs_api::RegisteredPoStProof;
use std::sync::Arc;
use std::time::Instant;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector,
};

type Compound<T> = FallbackPoStCompound<T>;

/// Partition `k`'s circuit as `FallbackPoStCompound::circuit` builds it,
/// with its sectors' paths kept for the native witness.
fn compound_circuit<Tree: FilTree>(
    pub_in: &fallback::PublicInputs<DefaultTreeDomain>,
    proof: &filecoin_proofs::VanillaProof<Tree>,
    pp: &fallback::PublicParams,
    k: usize,
) -> anyhow::Result<PostPartition<Tree>> {
    let circuit = <Compound<Tree> as CompoundProof<
        FallbackPoSt<'_, Tree>,
        FallbackPoStCircuit<Tree>,
    >>::circuit(pub_in, Default::default(), proof, pp, Some(k))?;
    // The compound takes the i-th sector's paths from the i-th sector
    // proof (`Sector::circuit`), in this order.
    let paths = proof.sectors.iter().map(|s| s.as_options()).collect();
    Ok(PostPartition {
        circuit,
        paths: Arc::new(paths),
    })
}

/// A PoSt partition: the circuit (what full synthesis and compiling run)
/// and, per sector and challenge, the Merkle path the circuit holds in a
/// form private to storage-proofs (what the native witness reads).
pub(crate) struct PostPartition<Tree: FilTree> {
    circuit: FallbackPoStCircuit<Tree>,
    paths: Arc<Vec<Vec<MerklePath>>>,
}

impl<Tree: FilTree> Clone for PostPartition<Tree> {
    fn clone(&self) -> Self {
        PostPartition {
            circuit: self.circuit.clone(),
            paths: self.paths.clone(),
        }
    }
}

impl<Tree: FilTree> Circuit<Scalar> for PostPartition<Tree> {
    fn synthesize<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), SynthesisError> {
        self.circuit.synthesize(cs)
    }
}

fn compound_inputs<Tree: FilTree>(
    pub_in: &fallback::PublicInputs<DefaultTreeDomain>,
    pp: &fallback::PublicParams,
    k: usize,
) -> anyhow::Result<Vec<blstrs::Scalar>> {
    <Compound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, FallbackPoStCircuit<Tree>>>::generate_public_inputs(
        pub_in, pp, Some(k),
    )
}

pub(crate) struct PostArgs<'a> {
    pub(crate) registered: RegisteredPoStProof,
    pub(crate) randomness: &'a [u8; 32],
    pub(crate) prover_id: [u8; 32],
    pub(crate) vanilla_proofs: &'a [Vec<u8>],
    /// WindowPoSt only: one partition.
    pub(crate) partition: Option<usize>,
    /// What the request asked for (Winning or Window); `registered` must
    /// be of that type.
    pub(crate) expected: PoStType,
}

/// Proves a WinningPoSt or WindowPoSt request, after checking that its
/// registered proof is of the type the request names.
pub(crate) fn prove(prover: &FilecoinProver, args: &PostArgs<'_>) -> Result<ProofOutput> {
    let registered = args.registered;
    if registered.typ() != args.expected {
        let expected = match args.expected {
            PoStType::Winning => vec![ProofKind::WinningPost],
            PoStType::Window => vec![ProofKind::WindowPost],
        };
        return Err(Error::WrongProofKind {
            given: format!("{registered:?}"),
            expected,
        });
    }
    let size = u64::from(registered.sector_size());
    with_tree_shape!(size, prove_post, prover, args)
}

fn prove_post<Tree: FilTree>(prover: &FilecoinProver, a: &PostArgs<'_>) -> Result<ProofOutput> {
    let start = Instant::now();
    let pc = post_circuits::<Tree>(a)?;
    prover.prove_circuits(pc, start.elapsed())
}

pub(crate) fn post_circuits<Tree: FilTree>(
    a: &PostArgs<'_>,
) -> Result<ProofCircuits<PostPartition<Tree>>> {
    let config: PoStConfig = a.registered.as_v1_config();
    if a.vanilla_proofs.is_empty() {
        return Err(Error::WrongCount {
            what: Counted::VanillaProofs {
                proof: format!("{:?}", a.registered),
            },
            expected: Expected::AtLeast(1),
            got: 0,
        });
    }
    let mut sectors: Vec<FallbackPoStSectorProof<Tree>> =
        Vec::with_capacity(a.vanilla_proofs.len());
    for (i, bytes) in a.vanilla_proofs.iter().enumerate() {
        let p: FallbackPoStSectorProof<Tree> = bincode::deserialize(bytes).map_err(|e| {
            Error::decode(
                InputPart::VanillaProof(i),
                format!("bincode FallbackPoStSectorProof for {:?}", a.registered),
                e,
            )
        })?;
        // filecoin-proofs indexes the first inclusion proof of each sector.
        if p.vanilla_proof.sectors.is_empty() {
            return Err(Error::InvalidPart {
                part: InputPart::VanillaProof(i),
                file: None,
                reason: "proves no sector".into(),
            });
        }
        sectors.push(p);
    }
    let randomness: DefaultTreeDomain = as_safe_commitment(a.randomness, "randomness")
        .map_err(|e| Error::invalid_value("randomness", e))?;
    let prover_id: DefaultTreeDomain = as_safe_commitment(&a.prover_id, "prover_id")
        .map_err(|e| Error::invalid_value("prover_id", e))?;
    let pub_sectors: Vec<PublicSector<DefaultTreeDomain>> = sectors
        .iter()
        .map(|p| PublicSector {
            id: p.sector_id,
            comm_r: p.comm_r,
        })
        .collect();

    let (partitions, vanilla_params) = match (config.typ.clone(), a.partition) {
        (PoStType::Winning, _) => {
            if sectors.len() != config.sector_count {
                return Err(Error::WrongCount {
                    what: Counted::VanillaProofs {
                        proof: format!("{:?}", a.registered),
                    },
                    expected: Expected::Exactly(config.sector_count),
                    got: sectors.len(),
                });
            }
            let vp = guarded("WinningPoSt setup parameters", || {
                filecoin_proofs::parameters::winning_post_setup_params(&config)
            })?;
            (None, vp)
        }
        (PoStType::Window, partition) => {
            let vp = filecoin_proofs::parameters::window_post_setup_params(&config);
            // As filecoin-proofs' get_partitions_for_window_post.
            let n = sectors.len().div_ceil(config.sector_count);
            if partition.is_some() && sectors.len() > config.sector_count {
                return Err(Error::WrongCount {
                    what: Counted::PartitionSectors {
                        proof: format!("{:?}", a.registered),
                    },
                    expected: Expected::AtMost(config.sector_count),
                    got: sectors.len(),
                });
            }
            (if n > 1 { Some(n) } else { None }, vp)
        }
    };
    let pp = guarded("PoSt public parameters", || {
        let setup = compound_proof::SetupParams {
            vanilla_params,
            partitions,
            priority: config.priority,
        };
        <Compound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, FallbackPoStCircuit<Tree>>>::setup(
            &setup,
        )
    })?;
    let vp = &pp.vanilla_params;

    let mut circuits = Vec::new();
    let mut inputs = Vec::new();
    match a.partition {
        None => {
            let pub_in = fallback::PublicInputs {
                randomness,
                prover_id,
                sectors: pub_sectors,
                k: None,
            };
            let partitioned = guarded("partitioning PoSt vanilla proofs", || {
                filecoin_proofs::partition_vanilla_proofs(
                    &config,
                    vp,
                    &pub_in,
                    partitions.unwrap_or(1),
                    &sectors,
                )
            })?;
            // The inputs filecoin-proofs' verifier derives: WinningPoSt's
            // verifier lists the sectors once per challenge slot (its circuit
            // proves one challenge per "sector"), WindowPoSt's once.
            let verifier_in = match config.typ {
                PoStType::Winning => fallback::PublicInputs {
                    sectors: (0..vp.sector_count)
                        .flat_map(|_| pub_in.sectors.iter().cloned())
                        .collect(),
                    ..pub_in.clone()
                },
                PoStType::Window => pub_in.clone(),
            };
            for (k, proof) in partitioned.iter().enumerate() {
                let step = format!("PoSt circuit of partition {k}");
                circuits.push(guarded(&step, || {
                    compound_circuit::<Tree>(&pub_in, proof, vp, k)
                })?);
                let step = format!("PoSt public inputs of partition {k}");
                inputs.push(guarded(&step, || {
                    compound_inputs::<Tree>(&verifier_in, vp, k)
                })?);
            }
        }
        Some(index) => {
            let pub_in = fallback::PublicInputs {
                randomness,
                prover_id,
                sectors: pub_sectors.clone(),
                k: Some(index),
            };
            let proof = guarded("PoSt partition vanilla proof", || {
                filecoin_proofs::single_partition_vanilla_proofs(&config, vp, &pub_in, &sectors)
            })?;
            let step = format!("WindowPoSt circuit of partition {index}");
            circuits.push(guarded(&step, || {
                compound_circuit::<Tree>(&pub_in, &proof, vp, 0)
            })?);
            // The verifier derives partition k's inputs from the k-th chunk
            // of all sectors; sectors before this partition only fill the
            // chunks that are not read.
            let filler = index.checked_mul(config.sector_count).ok_or_else(|| {
                Error::PartitionOutOfRange {
                    circuit: format!("{:?}", a.registered),
                    index,
                    count: None,
                }
            })?;
            let mut all = vec![pub_sectors[0].clone(); filler];
            all.extend(pub_sectors);
            let verifier_in = fallback::PublicInputs {
                randomness,
                prover_id,
                sectors: all,
                k: None,
            };
            let step = format!("WindowPoSt public inputs of partition {index}");
            inputs.push(guarded(&step, || {
                compound_inputs::<Tree>(&verifier_in, vp, index)
            })?);
        }
    }
    Ok(ProofCircuits::built(
        CircuitId::PoSt(a.registered),
        circuits,
        inputs,
    ))
}

/// A registered PoSt proof by its number (filecoin-ffi's and Curio's
/// numbering: 0-4 Winning, 5-9 Window V1, 10-14 Window V1_2).
pub fn post_proof_from_u64(v: u64) -> Result<RegisteredPoStProof> {
    use RegisteredPoStProof::*;
    const ALL: [RegisteredPoStProof; 15] = [
        StackedDrgWinning2KiBV1,
        StackedDrgWinning8MiBV1,
        StackedDrgWinning512MiBV1,
        StackedDrgWinning32GiBV1,
        StackedDrgWinning64GiBV1,
        StackedDrgWindow2KiBV1,
        StackedDrgWindow8MiBV1,
        StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1,
        StackedDrgWindow64GiBV1,
        StackedDrgWindow2KiBV1_2,
        StackedDrgWindow8MiBV1_2,
        StackedDrgWindow512MiBV1_2,
        StackedDrgWindow32GiBV1_2,
        StackedDrgWindow64GiBV1_2,
    ];
    ALL.get(v as usize)
        .copied()
        .filter(|p| *p as u64 == v)
        .ok_or(Error::UnknownRegisteredProof {
            kind: "PoSt proof",
            value: v,
        })
}

/// A partition's sectors are independent parts of one size, each
/// generated natively on its own thread ([`Parts`]); the circuit allocates
/// nothing before them, so the shared prefix is the constant one alone.
impl<Tree: FilTree> crate::compiled::PartitionCircuit for PostPartition<Tree> {
    fn shape_sample(&self) -> Self {
        self.clone()
    }

    fn clone_circuit(&self) -> Self {
        self.clone()
    }

    fn parallel_parts(&self) -> usize {
        self.circuit.sectors.len()
    }

    fn witness(self, inputs: usize, aux: usize) -> cuzk_core::Result<Witness> {
        let sectors = &self.circuit.sectors;
        if sectors.len() != self.paths.len() {
            return Err(cuzk_core::Error::InvalidCircuit {
                index: 0,
                what: format!(
                    "the PoSt circuit has {} sectors and {} sectors' paths",
                    sectors.len(),
                    self.paths.len()
                ),
            });
        }
        let parts = Parts {
            what: "PoSt",
            part: "sector",
            count: sectors.len(),
            inputs,
            aux,
        };
        parts.generate(WitnessCs::with_one().into_witness(), |k, cs| {
            let s = &sectors[k];
            let values = SectorValues {
                comm_r: s.comm_r,
                comm_c: s.comm_c,
                comm_r_last: s.comm_r_last,
                leafs: &s.leafs,
                paths: &self.paths[k],
            };
            sector_witness::<Tree, _>(cs, &values)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_proof_numbers() {
        assert_eq!(
            post_proof_from_u64(3).unwrap(),
            RegisteredPoStProof::StackedDrgWinning32GiBV1
        );
        assert_eq!(
            post_proof_from_u64(8).unwrap(),
            RegisteredPoStProof::StackedDrgWindow32GiBV1
        );
        assert_eq!(
            post_proof_from_u64(13).unwrap(),
            RegisteredPoStProof::StackedDrgWindow32GiBV1_2
        );
        assert!(post_proof_from_u64(15).is_err());
    }
}
