//! Witnesses of Filecoin's circuits generated natively: the same values in
//! the same order as storage-proofs' circuits allocate them in a
//! witness-only constraint system, without the linear combinations their
//! hash gadgets build whether or not the system keeps them (bellperson's
//! SHA-256 one for every addition and packed equality, neptune's legacy
//! Poseidon one for every MDS product).
//!
//! - [`porep`]: a PoRep challenge (`StackedCircuit`'s `Proof::synthesize`).
//! - [`post`]: a PoSt sector (`FallbackPoStCircuit`'s `Sector`).
//! - [`snap`]: a SnapDeals partition (`EmptySectorUpdateCircuit`).
//! - [`sha256`], [`poseidon`]: the two hashes, each tested equal to its
//!   gadget on random inputs.
//!
//! Allocations, inputs, bit decompositions and insertions still go through
//! the gadgets (cheap in a witness generator); only the hashes are native.
//! Each module is tested element by element against full synthesis of the
//! circuit it mirrors, written against storage-proofs 19.1: a new version
//! of those circuits must be checked against it again.

pub(crate) mod porep;
mod poseidon;
pub(crate) mod post;
pub(crate) mod sha256;
pub(crate) mod snap;

use crate::circuits::FilTree;
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use bellperson::gadgets::multipack;
use blstrs::Scalar;
use ff::{Field, PrimeField};
use filecoin_hashers::PoseidonArity;
use neptune::poseidon::{Arity, PoseidonConstants};
use sha256::Bit;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::insertion::insert;
use storage_proofs_core::util::reverse_bit_numbering;

pub(crate) fn bit_of(b: &Boolean) -> Bit {
    match b {
        Boolean::Constant(v) => Bit::Const(*v),
        Boolean::Is(a) => Bit::Is(a.get_value().unwrap_or(false)),
        Boolean::Not(a) => Bit::Not(a.get_value().unwrap_or(false)),
    }
}

/// A tree shape's arities: the base tree's, the sub-tree's and the top
/// tree's (0 where the shape has none).
pub(crate) fn arities<Tree: FilTree>() -> [usize; 3] {
    use typenum::Unsigned;
    [
        Tree::Arity::to_usize(),
        Tree::SubTreeArity::to_usize(),
        Tree::TopTreeArity::to_usize(),
    ]
}

/// A Merkle path as `MerkleProofTrait::as_options` gives it: per level the
/// siblings and the index within the node.
pub(crate) type MerklePath = Vec<(Vec<Option<Scalar>>, Option<usize>)>;

/// `enforce_inclusion` of a Poseidon tree of `Tree`'s shape: storage-proofs'
/// `PoRCircuit` (private), each level's `insert` by the gadget and its hash
/// natively.
pub(crate) fn tree_inclusion<Tree: FilTree, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    path: &[(Vec<Option<Scalar>>, Option<usize>)],
    root: &AllocatedNum<Scalar>,
    leaf: &AllocatedNum<Scalar>,
    scratch: &mut Vec<Scalar>,
) -> Result<(), SynthesisError> {
    let [base, sub, top] = arities::<Tree>();
    // AuthPath::from: the last element is the top tree's, the one before
    // it the sub-tree's, where the shape has them.
    let extra = if top > 0 { 2 } else { usize::from(sub > 0) };
    let n = path.len();
    if n < extra {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut cur = leaf.clone();
    let mut path_bits = Vec::new();
    for (k, (hashes, index)) in path.iter().enumerate() {
        let index = *index;
        let arity = if k < n - extra {
            base
        } else if extra == 2 && k == n - 1 {
            top
        } else {
            sub
        };
        if arity < 2 || !arity.is_power_of_two() || hashes.len() + 1 != arity {
            return Err(SynthesisError::Unsatisfiable);
        }
        // SubPath::synthesize: the index bits, the siblings, the insertion.
        let mut bits = Vec::with_capacity(arity.trailing_zeros() as usize);
        for i in 0..arity.trailing_zeros() {
            let b = AllocatedBit::alloc(
                cs.namespace(|| "index bit"),
                index.map(|ix| (ix >> i) & 1 == 1),
            )?;
            bits.push(Boolean::from(b));
        }
        path_bits.extend_from_slice(&bits);
        let siblings = hashes
            .iter()
            .map(|h| {
                AllocatedNum::alloc(cs.namespace(|| "path element"), || {
                    h.ok_or(SynthesisError::AssignmentMissing)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inserted = insert(cs, &cur, &bits, &siblings)?;
        let values: Vec<Scalar> = inserted
            .iter()
            .map(|x| x.get_value().ok_or(SynthesisError::AssignmentMissing))
            .collect::<Result<_, _>>()?;
        cur = if k < n - extra {
            poseidon_num::<Tree::Arity, _>(cs, &values, scratch)?
        } else if extra == 2 && k == n - 1 {
            poseidon_num::<Tree::TopTreeArity, _>(cs, &values, scratch)?
        } else {
            poseidon_num::<Tree::SubTreeArity, _>(cs, &values, scratch)?
        };
    }
    multipack::pack_into_inputs(cs.namespace(|| "path"), &path_bits)?;
    constraint::equal(cs, || "root", &cur, root);
    Ok(())
}

/// `hash_multi_leaf_circuit` of filecoin-hashers' Poseidon: the gadget's
/// allocations, then its result as a variable.
pub(crate) fn poseidon_num<A: PoseidonArity, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    preimage: &[Scalar],
    scratch: &mut Vec<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    poseidon_with(cs, preimage, A::PARAMETERS(), scratch)
}

/// neptune's `poseidon_hash` gadget with constants `c`: its allocations,
/// then its result as a variable.
pub(crate) fn poseidon_with<A: Arity<Scalar>, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    preimage: &[Scalar],
    c: &PoseidonConstants<Scalar, A>,
    scratch: &mut Vec<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    if preimage.len() + 1 != c.width() {
        return Err(SynthesisError::Unsatisfiable);
    }
    scratch.clear();
    let r = poseidon::poseidon_hash(scratch, preimage, c);
    cs.extend_aux(scratch);
    AllocatedNum::alloc(cs.namespace(|| "hash"), || Ok(r))
}

/// `hash_multi_leaf_circuit` (and `hash2_circuit`) of filecoin-hashers'
/// SHA-256: each node's bits by the gadget (`to_bits_le`, bit-reversed per
/// byte), the hash natively, its digest packed into a variable. `input`
/// and `scratch` are buffers kept between calls.
pub(crate) fn sha256_num<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    nodes: &[AllocatedNum<Scalar>],
    input: &mut Vec<Bit>,
    scratch: &mut Vec<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    input.clear();
    for node in nodes {
        let bits = reverse_bit_numbering(node.to_bits_le(cs.namespace(|| "bits"))?);
        input.extend(bits.iter().map(bit_of));
    }
    scratch.clear();
    let digest = sha256::sha256(&mut sha256::Aux(scratch), input);
    cs.extend_aux(scratch);
    let value = pack_digest(&digest);
    AllocatedNum::alloc(cs.namespace(|| "hash"), || Ok(value))
}

/// `multipack::pack_bits` of a digest as storage-proofs takes it: bits
/// reversed within each byte, the first `CAPACITY` little-endian.
pub(crate) fn pack_digest(digest: &[Bit]) -> Scalar {
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

/// What the modules' tests share.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use cuzk_core::compiled::Witness;

    /// The arities of a path of `Tree`'s shape with `base_levels` levels in
    /// the base tree.
    pub fn path_arities<Tree: FilTree>(base_levels: usize) -> Vec<usize> {
        let [base, sub, top] = arities::<Tree>();
        let mut a = vec![base; base_levels];
        a.extend([sub, top].into_iter().filter(|&a| a > 0));
        a
    }

    /// The gadget's witness and the native one are the same, element by
    /// element (the first aux that differs is named).
    pub fn assert_same_witness(what: &str, gadget: Witness, native: Witness) {
        assert_eq!(gadget.inputs, native.inputs, "{what}: inputs");
        assert_eq!(gadget.aux.len(), native.aux.len(), "{what}: aux count");
        if let Some(i) = (0..gadget.aux.len()).find(|&i| gadget.aux[i] != native.aux[i]) {
            panic!("{what}: aux {i} differs");
        }
    }
}
