//! The witness of storage-proofs' PoRep circuit (`StackedCircuit`) without
//! the cost of its SHA-256 gadget's linear combinations.
//!
//! Three quarters of a PoRep partition's constraints are the labeling
//! function's SHA-256 (20 compressions per layer and challenge at 32 GiB),
//! and bellperson's gadget builds a linear combination for every addition
//! and every packed equality (`UInt32::addmany`, `MultiEq`) whether or not
//! the constraint system keeps them. [`challenge_witness`] follows
//! storage-proofs' `Proof::synthesize` step by step, calling the same
//! gadgets for everything (inclusion proofs, column hashes, bit
//! decompositions, encoding), except `create_label_circuit`, whose witness
//! [`sha256`] generates natively: same values, same order.
//!
//! What it must not do is differ from the circuit: the compiled path's
//! tests compare its assignment with full synthesis element by element
//! (2 KiB in the e2e and synthetic-C1 tests, 8 MiB in the synthetic one),
//! and [`sha256`]'s own test compares it with the gadget on inputs of every
//! kind. It is written against storage-proofs-porep 19.1's circuit; a new
//! version of that circuit must be checked against it again.

pub(crate) mod sha256;

use crate::circuits::FilTree;
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use bellperson::gadgets::multipack;
use blstrs::Scalar;
use ff::{Field, PrimeField};
use filecoin_hashers::{HashFunction, Hasher, PoseidonArity};
use filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher, DefaultTreeDomain};
use sha256::{Aux, Bit};
use storage_proofs_core::gadgets::insertion::insert;
use storage_proofs_core::gadgets::por::{AuthPath, PoRCircuit};
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_core::gadgets::variables::Root;
use storage_proofs_core::gadgets::{constraint, encode::encode};
use storage_proofs_core::merkle::{DiskStore, MerkleProofTrait, MerkleTreeWrapper};
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked::{StackedCircuit, TOTAL_PARENTS};

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

fn bit_of(b: &Boolean) -> Bit {
    match b {
        Boolean::Constant(v) => Bit::Const(*v),
        Boolean::Is(a) => Bit::Is(a.get_value().unwrap_or(false)),
        Boolean::Not(a) => Bit::Not(a.get_value().unwrap_or(false)),
    }
}

/// storage-proofs' `enforce_inclusion` (private there).
fn enforce_inclusion<H, U, V, W, CS>(
    cs: CS,
    path: AuthPath<H, U, V, W>,
    root: &AllocatedNum<Scalar>,
    leaf: &AllocatedNum<Scalar>,
) -> Result<(), SynthesisError>
where
    H: 'static + Hasher,
    U: 'static + PoseidonArity,
    V: 'static + PoseidonArity,
    W: 'static + PoseidonArity,
    CS: ConstraintSystem<Scalar>,
{
    let root = Root::from_allocated::<CS>(root.clone());
    let leaf = Root::from_allocated::<CS>(leaf.clone());
    PoRCircuit::<MerkleTreeWrapper<H, DiskStore<H::Domain>, U, V, W>>::synthesize(
        cs, leaf, path, root, true,
    )
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

    let mut drg_parents = Vec::with_capacity(proof.drg_parents_proofs.len());
    for parent in proof.drg_parents_proofs {
        let (col, path) = parent.alloc(cs.namespace(|| "drg_parent"))?;
        let val = col.hash(cs.namespace(|| "drg_parent_hash"))?;
        enforce_inclusion(cs.namespace(|| "drg_parent_inclusion"), path, comm_c, &val)?;
        drg_parents.push(col);
    }
    let mut exp_parents = Vec::with_capacity(proof.exp_parents_proofs.len());
    for parent in proof.exp_parents_proofs {
        let (col, path) = parent.alloc(cs.namespace(|| "exp_parent"))?;
        let val = col.hash(cs.namespace(|| "exp_parent_hash"))?;
        enforce_inclusion(cs.namespace(|| "exp_parent_inclusion"), path, comm_c, &val)?;
        exp_parents.push(col);
    }

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
            parents.push(bits_of(cs, col.get_value(layer))?);
        }
        if layer > 1 {
            for col in &exp_parents {
                parents.push(bits_of(cs, col.get_value(layer - 1))?);
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
    enforce_inclusion(
        cs.namespace(|| "comm_r_last_data_inclusion"),
        proof.comm_r_last_path,
        comm_r_last,
        &encoded_node,
    )?;
    let column_hash = hash_single_column(cs.namespace(|| "c_x_column_hash"), &column_labels)?;
    enforce_inclusion(
        cs.namespace(|| "c_x_inclusion"),
        proof.comm_c_path,
        comm_c,
        &column_hash,
    )
}

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
        input.clear();
        for node in &inserted {
            let bits = reverse_bit_numbering(node.to_bits_le(cs.namespace(|| "bits"))?);
            input.extend(bits.iter().map(bit_of));
        }
        scratch.clear();
        let digest = sha256::sha256(&mut Aux(scratch), &input);
        cs.extend_aux(scratch);
        let value = pack_digest(&digest);
        cur = AllocatedNum::alloc(cs.namespace(|| "hash"), || Ok(value))?;
    }
    multipack::pack_into_inputs(cs.namespace(|| "path"), &path_bits)?;
    constraint::equal(cs, || "root", &cur, root);
    Ok(())
}

/// `multipack::pack_bits` of a digest as storage-proofs takes it: bits
/// reversed within each byte, the first `CAPACITY` little-endian.
fn pack_digest(digest: &[Bit]) -> Scalar {
    let mut repr = [0u8; 32];
    for (k, b) in digest
        .chunks(8)
        .flat_map(|byte| byte.iter().rev())
        .take(Scalar::CAPACITY as usize)
        .enumerate()
    {
        if b.value() {
            repr[k / 8] |= 1 << (k % 8);
        }
    }
    // Below 2^254, so a canonical representation.
    Scalar::from_repr_vartime(repr).unwrap_or(Scalar::ZERO)
}

/// storage-proofs' `hash_single_column` (private there).
fn hash_single_column<CS: ConstraintSystem<Scalar>>(
    cs: CS,
    column: &[AllocatedNum<Scalar>],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    use filecoin_hashers::{POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2};
    use typenum::{U11, U2};
    match column.len() {
        2 => neptune::circuit::poseidon_hash::<CS, Scalar, U2>(
            cs,
            column.to_vec(),
            &POSEIDON_CONSTANTS_2,
        ),
        11 => neptune::circuit::poseidon_hash::<CS, Scalar, U11>(
            cs,
            column.to_vec(),
            &POSEIDON_CONSTANTS_11,
        ),
        _ => Err(SynthesisError::Unsatisfiable),
    }
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
