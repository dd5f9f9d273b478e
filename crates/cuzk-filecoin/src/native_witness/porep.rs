//! The witness of storage-proofs' PoRep circuit (`StackedCircuit`) without
//! the cost of its hash gadgets' linear combinations.
//!
//! Most of a PoRep partition's constraints are SHA-256 (the labels: 20
//! compressions per layer and challenge; the comm_d path: 2 per level) and
//! Poseidon (column hashes, the replica trees' paths). bellperson's SHA-256
//! gadget builds a linear combination for every addition and packed
//! equality (`UInt32::addmany`, `MultiEq`), neptune's legacy Poseidon one
//! for every MDS product, whether or not the constraint system keeps them.
//! [`challenge_witness`] follows storage-proofs' `Proof::synthesize` step
//! by step with the same gadgets for allocations, inputs, bit
//! decompositions, insertions and encoding, and generates both hashes'
//! witness natively ([`sha256`], [`poseidon`]): same values, same order.
//!
//! What it must not do is differ from the circuit: the compiled path's
//! tests compare its assignment with full synthesis element by element
//! (2 KiB in the e2e and synthetic-C1 tests, 8 MiB in the synthetic one),
//! one challenge is compared with the circuit's at 2 KiB, 32 GiB and
//! 64 GiB (every tree shape), and each hash with its gadget on random
//! inputs. It is written against storage-proofs-porep 19.1's circuit; a
//! new version of that circuit must be checked against it again.

use super::sha256::{self, Aux, Bit};
use super::{bit_of, pack_digest, poseidon, sha256_num, tree_inclusion, MerklePath};
use crate::circuits::FilTree;
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use bellperson::gadgets::multipack;
use blstrs::Scalar;
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain};
use storage_proofs_core::gadgets::insertion::insert;
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_core::gadgets::{constraint, encode::encode};
use storage_proofs_core::merkle::{MerkleProof, MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked::{Column, ColumnProof, StackedCircuit, TOTAL_PARENTS};

/// A partition's public values, as `StackedCircuit` takes them.
pub(crate) struct Commitments {
    pub replica_id: DefaultTreeDomain,
    pub comm_d: DefaultPieceDomain,
    pub comm_r: DefaultTreeDomain,
    pub comm_r_last: DefaultTreeDomain,
    pub comm_c: DefaultTreeDomain,
}

/// The circuit's form of a vanilla proof (storage-proofs' `Proof<Tree, G>`
/// of its private `params` module): the type is named by inference from
/// `StackedCircuit::synthesize`, which takes a vector of them.
// The parameter's type is that function's signature, spelled out for the
// inference: a type alias would only move it.
#[allow(clippy::type_complexity)]
fn circuit_proof<CS, A, B, P, V: Into<P>>(
    _synthesize: fn(
        CS,
        Option<A>,
        Option<B>,
        Option<A>,
        Option<A>,
        Option<A>,
        Vec<P>,
    ) -> Result<(), SynthesisError>,
    vanilla: V,
) -> P {
    vanilla.into()
}

/// What `StackedCircuit::synthesize` allocates with these commitments and
/// `proofs`, into `cs`, which must be a witness generator (its
/// constraints are not formed).
pub(crate) fn stacked_witness<Tree: FilTree, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    c: &Commitments,
    proofs: &[filecoin_proofs::VanillaSealProof<Tree>],
) -> Result<(), SynthesisError> {
    if !cs.is_witness_generator() {
        return Err(SynthesisError::AssignmentMissing);
    }
    let alloc = |cs: &mut CS, v: Scalar| AllocatedNum::alloc(cs.namespace(|| ""), || Ok(v));
    let replica_id_num = alloc(cs, c.replica_id.into())?;
    replica_id_num.inputize(cs.namespace(|| "replica_id_input"))?;
    let replica_id_bits =
        reverse_bit_numbering(replica_id_num.to_bits_le(cs.namespace(|| "replica_id_bits"))?);
    let comm_d_num = alloc(cs, c.comm_d.into())?;
    comm_d_num.inputize(cs.namespace(|| "comm_d_input"))?;
    let comm_r_num = alloc(cs, c.comm_r.into())?;
    comm_r_num.inputize(cs.namespace(|| "comm_r_input"))?;
    let comm_r_last_num = alloc(cs, c.comm_r_last.into())?;
    let comm_c_num = alloc(cs, c.comm_c.into())?;
    let hash_num = <<Tree::Hasher as Hasher>::Function as HashFunction<_>>::hash2_circuit(
        cs.namespace(|| "H_comm_c_comm_r_last"),
        &comm_c_num,
        &comm_r_last_num,
    )?;
    constraint::equal(cs, || "comm_r", &comm_r_num, &hash_num);

    let replica_id_bits: Vec<Bit> = replica_id_bits.iter().map(bit_of).collect();
    for proof in proofs {
        challenge_witness::<Tree, _>(
            &mut cs.namespace(|| "challenge"),
            proof,
            &comm_d_num,
            &comm_c_num,
            &comm_r_last_num,
            &replica_id_bits,
        )?;
    }
    Ok(())
}

/// One challenge: storage-proofs-porep 19.1's `Proof::synthesize`, in the
/// same order, with the labels' SHA-256 generated natively.
fn challenge_witness<Tree: FilTree, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    vanilla: &filecoin_proofs::VanillaSealProof<Tree>,
    comm_d: &AllocatedNum<Scalar>,
    comm_c: &AllocatedNum<Scalar>,
    comm_r_last: &AllocatedNum<Scalar>,
    replica_id: &[Bit],
) -> Result<(), SynthesisError> {
    let num_layers = vanilla.labeling_proofs.len();
    let proof = circuit_proof(
        StackedCircuit::<Tree, DefaultPieceHasher>::synthesize::<&mut CS>,
        vanilla.clone(),
    );
    let data_leaf = proof.data_leaf;
    let data_leaf_num = AllocatedNum::alloc(cs.namespace(|| "data_leaf"), || {
        data_leaf.ok_or(SynthesisError::AssignmentMissing)
    })?;
    let mut scratch = Vec::new();
    comm_d_inclusion(
        cs,
        vanilla.comm_d_proofs.as_options(),
        comm_d,
        &data_leaf_num,
        &mut scratch,
    )?;

    // Each parent's column (its rows allocated, as `Column::alloc`), its
    // hash and its inclusion in comm_c's tree.
    let mut parent_cols = |proofs: &[ColumnProof<TreeProof<Tree>>]| {
        let mut cols = Vec::with_capacity(proofs.len());
        for p in proofs {
            let (rows, path) = column_parts::<Tree>(p)?;
            let nums = rows
                .iter()
                .map(|&v| AllocatedNum::alloc(cs.namespace(|| "row"), || Ok(v)))
                .collect::<Result<Vec<_>, _>>()?;
            let val = hash_single_column(cs, &rows, &mut scratch)?;
            tree_inclusion::<Tree, _>(cs, &path, comm_c, &val, &mut scratch)?;
            cols.push(nums);
        }
        Ok::<_, SynthesisError>(cols)
    };
    let drg_parents = parent_cols(&vanilla.replica_column_proofs.drg_parents)?;
    let exp_parents = parent_cols(&vanilla.replica_column_proofs.exp_parents)?;
    let row = |col: &[AllocatedNum<Scalar>], layer: usize| {
        col.get(layer - 1)
            .cloned()
            .ok_or(SynthesisError::Unsatisfiable)
    };

    let challenge_num = UInt64::alloc(cs.namespace(|| "challenge"), proof.challenge)?;
    challenge_num.pack_into_input(cs.namespace(|| "challenge input"))?;
    let node_bits: Vec<Bit> = challenge_num.to_bits_be().iter().map(bit_of).collect();

    let mut column_labels = Vec::with_capacity(num_layers);
    for layer in 1..=num_layers {
        let bits_of = |cs: &mut CS, num: &AllocatedNum<Scalar>| -> Result<Vec<Bit>, _> {
            let bits = reverse_bit_numbering(num.to_bits_le(cs.namespace(|| "bits"))?);
            Ok::<_, SynthesisError>(bits.iter().map(bit_of).collect())
        };
        let mut parents = Vec::with_capacity(drg_parents.len() + exp_parents.len());
        for col in &drg_parents {
            parents.push(bits_of(cs, &row(col, layer)?)?);
        }
        if layer > 1 {
            for col in &exp_parents {
                parents.push(bits_of(cs, &row(col, layer - 1)?)?);
            }
        }
        // The labeling hashes 37 parents: the 14 (layer 1: 6) repeated.
        let expanded: Vec<&[Bit]> = parents
            .iter()
            .cycle()
            .take(TOTAL_PARENTS)
            .map(Vec::as_slice)
            .collect();
        if parents.len() != if layer > 1 { 14 } else { 6 } {
            // storage-proofs' expansion (28 + 9, or 6 × 6 + 1) assumes
            // these counts; anything else is not the circuit this mirrors.
            return Err(SynthesisError::Unsatisfiable);
        }
        scratch.clear();
        let label = create_label(
            &mut Aux(&mut scratch),
            replica_id,
            &expanded,
            layer as u32,
            &node_bits,
        );
        cs.extend_aux(&scratch);
        column_labels.push(AllocatedNum::alloc(cs.namespace(|| "label"), || Ok(label))?);
    }

    let key = &column_labels[column_labels.len() - 1];
    let encoded_node = encode(cs.namespace(|| "encode_node"), key, &data_leaf_num)?;
    tree_inclusion::<Tree, _>(
        cs,
        &vanilla.comm_r_last_proof.as_options(),
        comm_r_last,
        &encoded_node,
        &mut scratch,
    )?;
    let labels: Vec<Scalar> = column_labels
        .iter()
        .map(|l| l.get_value().ok_or(SynthesisError::AssignmentMissing))
        .collect::<Result<_, _>>()?;
    let column_hash = hash_single_column(cs, &labels, &mut scratch)?;
    let (_, c_x_path) = column_parts::<Tree>(&vanilla.replica_column_proofs.c_x)?;
    tree_inclusion::<Tree, _>(cs, &c_x_path, comm_c, &column_hash, &mut scratch)
}

/// A vanilla column proof's rows and inclusion path. storage-proofs keeps
/// both fields crate-private; its serialized form, (column, proof), is
/// public, and this reads them from it (a few kB per parent).
fn column_parts<Tree: FilTree>(
    p: &ColumnProof<TreeProof<Tree>>,
) -> Result<(Vec<Scalar>, MerklePath), SynthesisError> {
    let bytes = bincode::serialize(p).map_err(|_| SynthesisError::AssignmentMissing)?;
    let (column, proof): (Column<Tree::Hasher>, TreeProof<Tree>) =
        bincode::deserialize(&bytes).map_err(|_| SynthesisError::AssignmentMissing)?;
    let rows = column.rows().iter().map(|&d| d.into()).collect();
    Ok((rows, proof.as_options()))
}

/// The vanilla proofs' Merkle proof type of a tree shape.
type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

/// `enforce_inclusion` of the data tree (comm_d): storage-proofs'
/// `PoRCircuit` over a binary SHA-256 tree, private, with each level's
/// hash (`Sha256Function::hash_multi_leaf_circuit`) generated natively.
fn comm_d_inclusion<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    path: Vec<(Vec<Option<Scalar>>, Option<usize>)>,
    root: &AllocatedNum<Scalar>,
    leaf: &AllocatedNum<Scalar>,
    scratch: &mut Vec<Scalar>,
) -> Result<(), SynthesisError> {
    let mut cur = leaf.clone();
    let mut path_bits = Vec::with_capacity(path.len());
    let mut input = Vec::with_capacity(512);
    for (hashes, index) in path {
        let [sibling] = hashes[..] else {
            return Err(SynthesisError::Unsatisfiable);
        };
        // SubPath::synthesize: the index bit, the sibling, the insertion.
        let bit = AllocatedBit::alloc(cs.namespace(|| "index bit"), index.map(|i| i & 1 == 1))?;
        let bit = Boolean::from(bit);
        path_bits.push(bit.clone());
        let sibling = AllocatedNum::alloc(cs.namespace(|| "path element"), || {
            sibling.ok_or(SynthesisError::AssignmentMissing)
        })?;
        let inserted = insert(cs, &cur, &[bit], &[sibling])?;
        cur = sha256_num(cs, &inserted, &mut input, scratch)?;
    }
    multipack::pack_into_inputs(cs.namespace(|| "path"), &path_bits)?;
    constraint::equal(cs, || "root", &cur, root);
    Ok(())
}

/// storage-proofs' `hash_single_column` (private there): Poseidon of the
/// column's values with the column constants, natively.
fn hash_single_column<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    column: &[Scalar],
    scratch: &mut Vec<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    use filecoin_hashers::{POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2};
    scratch.clear();
    let r = match column.len() {
        2 => poseidon::poseidon_hash(scratch, column, &POSEIDON_CONSTANTS_2),
        11 => poseidon::poseidon_hash(scratch, column, &POSEIDON_CONSTANTS_11),
        _ => return Err(SynthesisError::Unsatisfiable),
    };
    cs.extend_aux(scratch);
    AllocatedNum::alloc(cs.namespace(|| "column hash"), || Ok(r))
}

/// `create_label_circuit`'s witness: the SHA-256 of the replica id, the
/// layer and node, and the 37 parents, then the digest's first 254 bits
/// (bit-reversed per byte) packed into one number, whose value it returns
/// (the caller allocates it, as `multipack::pack_bits` does).
fn create_label(
    aux: &mut Aux,
    replica_id: &[Bit],
    parents: &[&[Bit]],
    layer: u32,
    node_be: &[Bit],
) -> Scalar {
    let mut input: Vec<Bit> = Vec::with_capacity((2 + TOTAL_PARENTS) * 256);
    input.extend_from_slice(replica_id);
    input.resize(256, Bit::Const(false));
    input.extend((0..32).rev().map(|i| Bit::Const((layer >> i) & 1 == 1)));
    input.extend_from_slice(node_be);
    input.resize(512, Bit::Const(false));
    for p in parents {
        input.extend_from_slice(p);
        let padded = input.len().div_ceil(256) * 256;
        input.resize(padded, Bit::Const(false));
    }
    pack_digest(&sha256::sha256(aux, &input))
}

#[cfg(test)]
mod tests {
    use super::super::testing::assert_same_witness;
    use super::*;
    use crate::compiled::PorepPartition;
    use crate::synth_c1::{self, SynthSpec};
    use bellpepper_core::Circuit;
    use cuzk_core::compiled::WitnessCs;
    use filecoin_proofs_api::RegisteredSealProof;

    /// One challenge of a synthetic C1's first partition, through the
    /// circuit and through this module, at sector sizes whose trees have
    /// no sub-tree (2 KiB), a sub-tree (32 GiB: the production shape, too
    /// large to compile in a test) and a top tree (64 GiB): the same
    /// inputs and aux, element by element.
    fn one_challenge<Tree: FilTree>(rp: RegisteredSealProof) {
        let c1 = synth_c1::synthesize(&SynthSpec::new(rp, 5)).unwrap();
        let mut pc = crate::porep::c2_circuits::<Tree>(&c1.output).unwrap();
        let part: PorepPartition<Tree> = pc.circuits.swap_remove(0);
        let one = PorepPartition {
            proofs: part.proofs[..1].to_vec(),
            ..part.clone()
        };
        let mut gadget = WitnessCs::with_one();
        one.clone().synthesize(&mut gadget).unwrap();
        let mut native = WitnessCs::with_one();
        let c = Commitments {
            replica_id: part.replica_id,
            comm_d: part.comm_d,
            comm_r: part.comm_r,
            comm_r_last: part.comm_r_last,
            comm_c: part.comm_c,
        };
        stacked_witness(&mut native, &c, &part.proofs[..1]).unwrap();
        let what = format!("{rp:?}");
        assert_same_witness(&what, gadget.into_witness(), native.into_witness());
    }

    /// Counts that do not make the prefix plus equal challenge parts, or
    /// parts larger than the challenges fill, are refused by name.
    #[test]
    fn porep_witness_of_the_wrong_shape_is_refused() {
        use crate::compiled::PartitionCircuit;
        type Tree = filecoin_proofs::SectorShape2KiB;
        let c1 = synth_c1::synthesize(&SynthSpec::new(RegisteredSealProof::StackedDrg2KiBV1_1, 6))
            .unwrap();
        let part = crate::porep::c2_circuits::<Tree>(&c1.output)
            .unwrap()
            .circuits
            .swap_remove(0);
        let n = part.proofs.len();
        let mut cs = WitnessCs::with_one();
        part.clone().synthesize(&mut cs).unwrap();
        let w = cs.into_witness();
        let (i, a) = (w.inputs.len(), w.aux.len());
        assert_eq!(part.clone().witness(i, a).unwrap(), w);
        for (inputs, aux, says) in [
            (i, a + 1, "equal challenge parts"),
            (i + n, a, "the part's room"),
            (i, a + n, "the part's room"),
            (i, a - n, "more aux"),
        ] {
            let e = part.clone().witness(inputs, aux).unwrap_err();
            assert!(
                matches!(&e, cuzk_core::Error::InvalidCircuit { what, .. } if what.contains(says)),
                "{inputs} inputs, {aux} aux: {e}"
            );
        }
    }

    #[test]
    fn one_challenge_equals_the_circuit_for_every_tree_shape() {
        one_challenge::<filecoin_proofs::SectorShape2KiB>(RegisteredSealProof::StackedDrg2KiBV1_1);
        one_challenge::<filecoin_proofs::SectorShape32GiB>(
            RegisteredSealProof::StackedDrg32GiBV1_1,
        );
        one_challenge::<filecoin_proofs::SectorShape64GiB>(
            RegisteredSealProof::StackedDrg64GiBV1_1,
        );
    }
}
