//! The witness of one sector of storage-proofs-post 19.1's
//! `FallbackPoStCircuit` (its `Sector::synthesize`), with the Poseidon
//! hashes generated natively.
//!
//! A sector allocates comm_r_last, comm_c and comm_r, makes comm_r an
//! input, checks comm_r = H(comm_c, comm_r_last) (Poseidon of arity 2),
//! then opens each challenged leaf against comm_r_last, privately:
//! `PoRCircuit` allocates the leaf, then per level the index bits, the
//! siblings, the insertion and the hash, packs the index bits into inputs
//! and checks the root. The sectors of a partition are independent, so
//! the compiled path generates each on its own thread.

use super::{poseidon_num, tree_inclusion, MerklePath};
use crate::circuits::FilTree;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use storage_proofs_core::gadgets::constraint;

/// What a sector's circuit takes: its commitments, the challenged leaves
/// and their paths in the replica tree (`MerkleProofTrait::as_options`).
pub(crate) struct SectorValues<'a> {
    pub comm_r: Option<Scalar>,
    pub comm_c: Option<Scalar>,
    pub comm_r_last: Option<Scalar>,
    pub leafs: &'a [Option<Scalar>],
    pub paths: &'a [MerklePath],
}

/// What `Sector::synthesize` allocates for `s` into `cs`, which must be a
/// witness generator.
pub(crate) fn sector_witness<Tree: FilTree, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    s: &SectorValues<'_>,
) -> Result<(), SynthesisError> {
    if !cs.is_witness_generator() {
        return Err(SynthesisError::AssignmentMissing);
    }
    if s.leafs.len() != s.paths.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let alloc = |cs: &mut CS, v: Option<Scalar>| {
        AllocatedNum::alloc(cs.namespace(|| ""), || {
            v.ok_or(SynthesisError::AssignmentMissing)
        })
    };
    let value = |n: &AllocatedNum<Scalar>| n.get_value().ok_or(SynthesisError::AssignmentMissing);
    let comm_r_last = alloc(cs, s.comm_r_last)?;
    let comm_c = alloc(cs, s.comm_c)?;
    let comm_r = alloc(cs, s.comm_r)?;
    comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
    let mut scratch = Vec::new();
    // `hash2_circuit` of filecoin-hashers' Poseidon: arity 2's constants.
    let hash =
        poseidon_num::<typenum::U2, _>(cs, &[value(&comm_c)?, value(&comm_r_last)?], &mut scratch)?;
    constraint::equal(cs, || "comm_r", &comm_r, &hash);
    for (&leaf, path) in s.leafs.iter().zip(s.paths) {
        let leaf = alloc(cs, leaf)?;
        tree_inclusion::<Tree, _>(cs, path, &comm_r_last, &leaf, &mut scratch)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_same_witness, path_arities};
    use super::*;
    use bellpepper_core::Circuit;
    use cuzk_core::compiled::WitnessCs;
    use ff::Field;
    use rand::{Rng, SeedableRng};
    use storage_proofs_post::fallback::Sector;

    /// A sector of random values (a witness generator checks no
    /// constraint) through the circuit and through this module, for a
    /// tree shape without a sub-tree (2 KiB), with one (32 GiB) and with a
    /// top tree (64 GiB): the same inputs and aux, element by element.
    fn one_sector<Tree: FilTree>(seed: u64) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let arities = path_arities::<Tree>(3);
        let path = |rng: &mut rand_chacha::ChaCha8Rng| -> MerklePath {
            arities
                .iter()
                .map(|&a| {
                    let siblings = (1..a).map(|_| Some(Scalar::random(&mut *rng))).collect();
                    (siblings, Some(rng.gen_range(0..a)))
                })
                .collect()
        };
        let paths: Vec<MerklePath> = (0..3).map(|_| path(&mut rng)).collect();
        let leafs: Vec<Option<Scalar>> = (0..3).map(|_| Some(Scalar::random(&mut rng))).collect();
        let [comm_r, comm_c, comm_r_last] = [0; 3].map(|_| Some(Scalar::random(&mut rng)));
        let sector = Sector::<Tree> {
            comm_r,
            comm_c,
            comm_r_last,
            leafs: leafs.clone(),
            paths: paths.iter().cloned().map(Into::into).collect(),
            id: Some(Scalar::ONE),
        };
        let mut gadget = WitnessCs::with_one();
        (&sector).synthesize(&mut gadget).unwrap();
        let mut native = WitnessCs::with_one();
        let values = SectorValues {
            comm_r,
            comm_c,
            comm_r_last,
            leafs: &leafs,
            paths: &paths,
        };
        sector_witness::<Tree, _>(&mut native, &values).unwrap();
        let shape = std::any::type_name::<Tree>();
        assert_same_witness(shape, gadget.into_witness(), native.into_witness());
    }

    #[test]
    fn one_sector_equals_the_circuit_for_every_tree_shape() {
        one_sector::<filecoin_proofs::SectorShape2KiB>(1);
        one_sector::<filecoin_proofs::SectorShape32GiB>(2);
        one_sector::<filecoin_proofs::SectorShape64GiB>(3);
    }

    /// Leaves and paths of different counts are refused, not zipped short.
    #[test]
    fn a_sector_with_a_missing_path_is_refused() {
        let leafs = [Some(Scalar::ONE); 2];
        let values = SectorValues {
            comm_r: Some(Scalar::ONE),
            comm_c: Some(Scalar::ONE),
            comm_r_last: Some(Scalar::ONE),
            leafs: &leafs,
            paths: &[],
        };
        let mut cs = WitnessCs::with_one();
        let e = sector_witness::<filecoin_proofs::SectorShape2KiB, _>(&mut cs, &values);
        assert!(matches!(e, Err(SynthesisError::Unsatisfiable)));
    }
}
