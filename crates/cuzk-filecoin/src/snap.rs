//! SnapDeals (empty-sector update) from its partition vanilla proofs
//! (bincode `PartitionProof`s, as filecoin-proofs-api and Curio pass them):
//! one `EmptySectorUpdateCircuit` per partition, built as
//! `generate_empty_sector_update_proof_with_vanilla` builds them.

use crate::circuits::{with_tree_shape, FilTree};
use crate::prover::{guarded, FilecoinProver, ProofCircuits, ProofOutput};
use crate::{CircuitId, Counted, Error, Expected, InputPart, Result};
use filecoin_hashers::Domain;
use filecoin_proofs::{DefaultPieceDomain, SectorUpdateConfig};
use filecoin_proofs_api::RegisteredUpdateProof;
use std::time::Instant;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_update::constants::TreeRDomain;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PartitionProof,
};

pub(crate) struct SnapArgs<'a> {
    pub(crate) registered: RegisteredUpdateProof,
    pub(crate) vanilla_proofs: &'a [Vec<u8>],
    pub(crate) comm_r_old: [u8; 32],
    pub(crate) comm_r_new: [u8; 32],
    pub(crate) comm_d_new: [u8; 32],
}

pub(crate) fn prove(prover: &FilecoinProver, args: &SnapArgs<'_>) -> Result<ProofOutput> {
    with_tree_shape!(
        u64::from(args.registered.sector_size()),
        prove_snap,
        prover,
        args
    )
}

fn prove_snap<Tree: FilTree>(prover: &FilecoinProver, a: &SnapArgs<'_>) -> Result<ProofOutput> {
    let start = Instant::now();
    let pc = snap_circuits::<Tree>(a)?;
    prover.prove_circuits(pc, start.elapsed())
}

type Compound<T> = EmptySectorUpdateCompound<T>;

pub(crate) fn snap_circuits<Tree: FilTree>(
    a: &SnapArgs<'_>,
) -> Result<ProofCircuits<EmptySectorUpdateCircuit<Tree>>> {
    let commitment = |bytes: &[u8; 32], name: &str| -> Result<TreeRDomain> {
        TreeRDomain::try_from_bytes(bytes).map_err(|e| Error::invalid_value(name, e))
    };
    let comm_r_old = commitment(&a.comm_r_old, "comm_r_old")?;
    let comm_r_new = commitment(&a.comm_r_new, "comm_r_new")?;
    let comm_d_new = DefaultPieceDomain::try_from_bytes(&a.comm_d_new)
        .map_err(|e| Error::invalid_value("comm_d_new", e))?;

    let config = SectorUpdateConfig::from_porep_config(&a.registered.as_v1_config());
    let partitions = usize::from(config.update_partitions);
    if a.vanilla_proofs.len() != partitions {
        return Err(Error::WrongCount {
            what: Counted::VanillaProofs {
                proof: format!("{:?}", a.registered),
            },
            expected: Expected::Exactly(partitions),
            got: a.vanilla_proofs.len(),
        });
    }
    let mut proofs: Vec<PartitionProof<Tree>> = Vec::with_capacity(partitions);
    for (i, bytes) in a.vanilla_proofs.iter().enumerate() {
        proofs.push(bincode::deserialize(bytes).map_err(|e| {
            Error::decode(
                InputPart::VanillaProof(i),
                format!("bincode PartitionProof for {:?}", a.registered),
                e,
            )
        })?);
    }
    let public_inputs = storage_proofs_update::PublicInputs {
        k: partitions,
        comm_r_old,
        comm_d_new,
        comm_r_new,
        h: config.h,
    };
    let pp = guarded("SnapDeals public parameters", || {
        let setup = compound_proof::SetupParams {
            vanilla_params: storage_proofs_update::SetupParams {
                sector_bytes: u64::from(config.sector_size),
            },
            partitions: Some(partitions),
            priority: false,
        };
        <Compound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, EmptySectorUpdateCircuit<Tree>>>::setup(&setup)
    })?;
    let vp = &pp.vanilla_params;
    let mut circuits = Vec::with_capacity(partitions);
    let mut inputs = Vec::with_capacity(partitions);
    for (k, proof) in proofs.iter().enumerate() {
        circuits.push(guarded(
            &format!("SnapDeals circuit of partition {k}"),
            || {
                <Compound<Tree> as CompoundProof<
                    EmptySectorUpdate<Tree>,
                    EmptySectorUpdateCircuit<Tree>,
                >>::circuit(&public_inputs, (), proof, vp, Some(k))
            },
        )?);
        inputs.push(guarded(
            &format!("SnapDeals public inputs of partition {k}"),
            || {
                <Compound<Tree> as CompoundProof<
                    EmptySectorUpdate<Tree>,
                    EmptySectorUpdateCircuit<Tree>,
                >>::generate_public_inputs(&public_inputs, vp, Some(k))
            },
        )?);
    }
    Ok(ProofCircuits::built(
        CircuitId::SnapDeals(a.registered),
        circuits,
        inputs,
    ))
}

/// A registered update proof by its number (0-4: 2KiB, 8MiB, 512MiB,
/// 32GiB, 64GiB).
pub fn update_proof_from_u64(v: u64) -> Result<RegisteredUpdateProof> {
    use RegisteredUpdateProof::*;
    const ALL: [RegisteredUpdateProof; 5] = [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
    ];
    ALL.get(v as usize)
        .copied()
        .filter(|p| *p as u64 == v)
        .ok_or(Error::UnknownRegisteredProof {
            kind: "update proof",
            value: v,
        })
}

impl<Tree: FilTree> crate::compiled::PartitionCircuit
    for storage_proofs_update::circuit::EmptySectorUpdateCircuit<Tree>
{
    /// The circuit is not `Clone`; its blank form (what parameters are
    /// generated from) has the same constraints.
    fn shape_sample(&self) -> Self {
        storage_proofs_update::circuit::EmptySectorUpdateCircuit::blank(self.pub_params.clone())
    }

    /// Field by field: the private inputs derive `Clone` only for a tree
    /// type that is `Clone`, which filecoin-proofs' are not (their
    /// challenge proofs implement it by hand for that reason).
    fn clone_circuit(&self) -> Self {
        let p = &self.priv_inputs;
        storage_proofs_update::circuit::EmptySectorUpdateCircuit {
            pub_params: self.pub_params.clone(),
            pub_inputs: self.pub_inputs.clone(),
            priv_inputs: storage_proofs_update::circuit::PrivateInputs {
                comm_c: p.comm_c,
                root_r_old: p.root_r_old,
                root_r_new: p.root_r_new,
                apex_leafs: p.apex_leafs.clone(),
                challenge_proofs: p.challenge_proofs.clone(),
            },
        }
    }

    fn parallel_parts(&self) -> usize {
        self.priv_inputs.challenge_proofs.len()
    }

    /// Generated natively (`native_witness::snap`: the same values without
    /// the hash gadgets' linear combinations): the prefix once, then the
    /// challenges, independent parts of one size, each on its own thread
    /// ([`Parts`](crate::compiled::Parts)) reading the prefix's variables
    /// instead of allocating them again.
    fn witness(self, inputs: usize, aux: usize) -> cuzk_core::Result<cuzk_core::compiled::Witness> {
        use crate::native_witness::snap::{update_challenge, update_prefix, Scratch};
        let synth_err = |source| cuzk_core::Error::Synthesis { index: 0, source };
        let mut cs = cuzk_core::compiled::WitnessCs::with_one();
        let prefix = update_prefix(&mut cs, &self).map_err(synth_err)?;
        let parts = crate::compiled::Parts {
            what: "SnapDeals",
            part: "challenge",
            count: self.priv_inputs.challenge_proofs.len(),
            inputs,
            aux,
        };
        parts.generate(cs.into_witness(), |k, part| {
            part.skip_prefix();
            update_challenge(part, &self, &prefix, k, &mut Scratch::default())
        })
    }
}
