//! The witness of storage-proofs-update 19.1's `EmptySectorUpdateCircuit`
//! (SnapDeals) as its prefix ([`update_prefix`]) and its challenges
//! ([`update_challenge`], independent parts of one size), in the circuit's
//! order, with its hashes generated natively: Poseidon for the replica
//! trees (TreeR, old and new), for comm_r = H(comm_c, root_r) and for the
//! randomness (phi, each digest of challenge bits, each challenge's rho,
//! with the update's own constants), SHA-256 for the data tree (TreeD: the
//! apex tree, the partition path, each challenge's path to its apex leaf).
//!
//! The small gadgets the update crate keeps private (the challenge's high
//! bits, the new label, a number's bits) are followed here allocation by
//! allocation; their constraints are not formed (a witness generator does
//! not keep them). Checks the circuit makes by panicking (counts, the
//! partition index, `h_select`) are refused with `Unsatisfiable` here.

use super::{arities, poseidon_num, poseidon_with, sha256_num};
use crate::circuits::FilTree;
use bellpepper_core::boolean::{field_into_allocated_bits_le, AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use bellperson::gadgets::multipack::pack_bits;
use blstrs::Scalar;
use ff::{Field, PrimeField, PrimeFieldBits};
use storage_proofs_core::gadgets::insertion::{insert, select};
use storage_proofs_update::circuit::EmptySectorUpdateCircuit;
use storage_proofs_update::constants::{hs, POSEIDON_CONSTANTS_GEN_RANDOMNESS};

type Num = AllocatedNum<Scalar>;

/// Buffers the native hashes reuse.
#[derive(Default)]
pub(crate) struct Scratch {
    aux: Vec<Scalar>,
    bits: Vec<super::sha256::Bit>,
}

/// A tree level's place in its tree's shape (a level's arity follows).
#[derive(Clone, Copy)]
enum Level {
    Base,
    Sub,
    Top,
}

fn unsat<T>() -> Result<T, SynthesisError> {
    Err(SynthesisError::Unsatisfiable)
}

fn value(n: &Num) -> Result<Scalar, SynthesisError> {
    n.get_value().ok_or(SynthesisError::AssignmentMissing)
}

fn alloc<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    v: Option<Scalar>,
) -> Result<Num, SynthesisError> {
    AllocatedNum::alloc(cs.namespace(|| ""), || {
        v.ok_or(SynthesisError::AssignmentMissing)
    })
}

/// The variables of the circuit's prefix (all it allocates before its
/// challenges) that the challenges read. Their indices are the prefix's,
/// which a part generated apart shares (`WitnessPart::skip_prefix`).
pub(crate) struct Prefix {
    phi: Num,
    partition_bits: Vec<AllocatedBit>,
    h_select_bits: Vec<AllocatedBit>,
    apex_leafs: Vec<Num>,
    /// Each challenge's random bits, from the digests of comm_r_new.
    generated: Vec<Vec<AllocatedBit>>,
}

/// The circuit up to its challenges: the public inputs and their bits,
/// phi, the private commitments, comm_r's two checks, the apex tree and
/// its path, the challenges' random bits.
pub(crate) fn update_prefix<Tree: FilTree, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    c: &EmptySectorUpdateCircuit<Tree>,
) -> Result<Prefix, SynthesisError> {
    if !cs.is_witness_generator() {
        return Err(SynthesisError::AssignmentMissing);
    }
    let p = &c.pub_params;
    let (challenge_bit_len, partition_bit_len) = (p.challenge_bit_len, p.partition_bit_len);
    let hs = hs(p.sector_nodes);
    let h_select_bit_len = hs.len();
    let (pi, pv) = (&c.pub_inputs, &c.priv_inputs);
    let proofs = &pv.challenge_proofs;
    // The circuit's assertions on its shape.
    if proofs.len() != p.challenge_count
        || proofs.is_empty()
        || pv.apex_leafs.len() != p.apex_leaf_count
        || challenge_bit_len < partition_bit_len + p.apex_leaf_bit_len
        || proofs
            .iter()
            .any(|cp| cp.path_d_new.len() != challenge_bit_len)
    {
        return unsat();
    }
    let partition_path = &proofs[0].path_d_new[challenge_bit_len - partition_bit_len..];
    if partition_path.iter().any(|s| s.len() != 1)
        || proofs[1..]
            .iter()
            .any(|cp| &cp.path_d_new[challenge_bit_len - partition_bit_len..] != partition_path)
    {
        return unsat();
    }
    let mut scratch = Scratch::default();

    // k and h_select: one input, its low bits.
    let k_and_h_select = alloc(cs, pi.k_and_h_select)?;
    k_and_h_select.inputize(cs.namespace(|| ""))?;
    let bit_len = partition_bit_len + h_select_bit_len;
    let bits: Vec<bool> = value(&k_and_h_select)?.to_le_bits().into_iter().collect();
    let k = bits[..partition_bit_len]
        .iter()
        .rev()
        .fold(0usize, |k, &b| (k << 1) | usize::from(b));
    if k >= p.partition_count
        || bits[partition_bit_len..bit_len]
            .iter()
            .filter(|&&b| b)
            .count()
            != 1
        || bits[bit_len..].iter().any(|&b| b)
    {
        return unsat();
    }
    let k_and_h_select_bits = bits[..bit_len]
        .iter()
        .map(|&b| AllocatedBit::alloc(cs.namespace(|| ""), Some(b)))
        .collect::<Result<Vec<_>, _>>()?;
    let partition_bits = &k_and_h_select_bits[..partition_bit_len];
    let partition = pack_bits(
        cs.namespace(|| ""),
        &partition_bits
            .iter()
            .cloned()
            .map(Boolean::from)
            .collect::<Vec<_>>(),
    )?;

    let comm_r_old = alloc(cs, pi.comm_r_old)?;
    comm_r_old.inputize(cs.namespace(|| ""))?;
    let comm_d_new = alloc(cs, pi.comm_d_new)?;
    comm_d_new.inputize(cs.namespace(|| ""))?;
    let comm_r_new = alloc(cs, pi.comm_r_new)?;
    comm_r_new.inputize(cs.namespace(|| ""))?;
    let phi = gen_randomness(cs, &comm_d_new, &comm_r_old, &mut scratch)?;

    let comm_c = alloc(cs, pv.comm_c)?;
    let root_r_old = alloc(cs, pv.root_r_old)?;
    let root_r_new = alloc(cs, pv.root_r_new)?;
    let apex_leafs = pv
        .apex_leafs
        .iter()
        .map(|&l| alloc(cs, l))
        .collect::<Result<Vec<_>, _>>()?;
    let partition_path = partition_path
        .iter()
        .map(|s| alloc(cs, s[0]).map(|n| vec![n]))
        .collect::<Result<Vec<_>, _>>()?;
    // comm_r = H(comm_c, root_r), old and new.
    poseidon_num::<typenum::U2, _>(
        cs,
        &[value(&comm_c)?, value(&root_r_old)?],
        &mut scratch.aux,
    )?;
    poseidon_num::<typenum::U2, _>(
        cs,
        &[value(&comm_c)?, value(&root_r_new)?],
        &mut scratch.aux,
    )?;

    // apex_por: the apex tree over this partition's apex leaves, then its
    // root's path to comm_d.
    if !apex_leafs.len().is_power_of_two() {
        return unsat();
    }
    let mut row = apex_leafs.clone();
    while row.len() > 1 {
        row = row
            .chunks(2)
            .map(|pair| sha256_num(cs, pair, &mut scratch.bits, &mut scratch.aux))
            .collect::<Result<Vec<_>, _>>()?;
    }
    tree_d_por(cs, partition_bits, &row[0], partition_path, &mut scratch)?;

    // gen_challenge_bits: each digest H(comm_r_new, digest index) gives
    // several challenges' random bits.
    let bits_per_challenge = challenge_bit_len - partition_bit_len;
    if bits_per_challenge == 0 {
        return unsat();
    }
    let challenges_per_digest = Scalar::CAPACITY as usize / bits_per_challenge;
    // As the gadget computes it (through f32).
    let digests = (p.challenge_count as f32 / challenges_per_digest as f32).ceil() as u64;
    let k_value = value(&partition)?;
    let mut generated: Vec<Vec<AllocatedBit>> = Vec::with_capacity(p.challenge_count);
    for j in 0..digests {
        let index = k_value * Scalar::from(digests) + Scalar::from(j);
        let digest_index = alloc(cs, Some(index))?;
        let digest = gen_randomness(cs, &comm_r_new, &digest_index, &mut scratch)?;
        let digest_bits = field_into_allocated_bits_le(cs.namespace(|| ""), digest.get_value())?;
        let take = if j == digests - 1 {
            p.challenge_count - generated.len()
        } else {
            challenges_per_digest
        };
        generated.extend(
            digest_bits
                .chunks(bits_per_challenge)
                .take(take)
                .map(<[_]>::to_vec),
        );
    }
    if generated.len() != p.challenge_count {
        return unsat();
    }

    Ok(Prefix {
        phi,
        partition_bits: partition_bits.to_vec(),
        h_select_bits: k_and_h_select_bits[partition_bit_len..].to_vec(),
        apex_leafs,
        generated,
    })
}

/// Challenge `k` of the circuit, after its prefix: the challenge's high
/// bits and rho, its leaves and new label, its openings in the old and
/// new replica trees and its path to its apex leaf.
pub(crate) fn update_challenge<Tree: FilTree, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    c: &EmptySectorUpdateCircuit<Tree>,
    prefix: &Prefix,
    k: usize,
    scratch: &mut Scratch,
) -> Result<(), SynthesisError> {
    let p = &c.pub_params;
    let (Some(cp), Some(random_bits)) = (
        c.priv_inputs.challenge_proofs.get(k),
        prefix.generated.get(k),
    ) else {
        return unsat();
    };
    let hs = hs(p.sector_nodes);
    let c_bits: Vec<AllocatedBit> = random_bits
        .iter()
        .chain(&prefix.partition_bits)
        .cloned()
        .collect();
    let c_high = challenge_high_bits(cs, &c_bits, &prefix.h_select_bits, &hs)?;
    let rho = gen_randomness(cs, &prefix.phi, &c_high, scratch)?;
    let leaf_r_old = alloc(cs, cp.leaf_r_old)?;
    let leaf_d_new = alloc(cs, cp.leaf_d_new)?;
    // label_r_new = label_r_old + label_d_new * rho
    let d_rho = leaf_d_new.mul(cs.namespace(|| ""), &rho)?;
    let leaf_r_new = alloc(cs, Some(value(&leaf_r_old)? + value(&d_rho)?))?;
    if cp.leaf_r_new != Some(value(&leaf_r_new)?) {
        return unsat();
    }
    let alloc_path = |cs: &mut CS, path: &[Vec<Option<Scalar>>]| {
        path.iter()
            .map(|s| {
                s.iter()
                    .map(|&v| alloc(cs, v))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let path_r_old = alloc_path(cs, &cp.path_r_old)?;
    tree_r_por::<Tree, _>(cs, &c_bits, &leaf_r_old, path_r_old, scratch)?;
    let path_r_new = alloc_path(cs, &cp.path_r_new)?;
    tree_r_por::<Tree, _>(cs, &c_bits, &leaf_r_new, path_r_new, scratch)?;

    let to_apex = p.challenge_bit_len - p.partition_bit_len - p.apex_leaf_bit_len;
    let apex_bits: Vec<Boolean> = c_bits[to_apex..to_apex + p.apex_leaf_bit_len]
        .iter()
        .cloned()
        .map(Into::into)
        .collect();
    // The root the path to the apex leaf must reach (an equality, which a
    // witness generator does not keep).
    select(cs.namespace(|| ""), &prefix.apex_leafs, &apex_bits)?;
    let path_to_apex = cp.path_d_new[..to_apex]
        .iter()
        .map(|s| alloc(cs, s[0]).map(|n| vec![n]))
        .collect::<Result<Vec<_>, _>>()?;
    tree_d_por(cs, &c_bits[..to_apex], &leaf_d_new, path_to_apex, scratch)
}

/// One of the update's randomness hashes (phi, a digest of challenge
/// bits, rho): Poseidon of two with the update's own constants.
fn gen_randomness<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    a: &Num,
    b: &Num,
    scratch: &mut Scratch,
) -> Result<Num, SynthesisError> {
    poseidon_with(
        cs,
        &[value(a)?, value(b)?],
        &POSEIDON_CONSTANTS_GEN_RANDOMNESS,
        &mut scratch.aux,
    )
}

/// The update's `get_challenge_high_bits`: per allowed h, the challenge's
/// h high bits packed and that number or zero (by its h_select bit), then
/// their sum.
fn challenge_high_bits<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    c_bits: &[AllocatedBit],
    h_select_bits: &[AllocatedBit],
    hs: &[usize],
) -> Result<Num, SynthesisError> {
    if h_select_bits.len() != hs.len() || hs.iter().any(|&h| h > c_bits.len()) {
        return unsat();
    }
    let bits: Vec<Boolean> = c_bits.iter().cloned().map(Into::into).collect();
    let mut sum = Scalar::ZERO;
    for (&h, sel) in hs.iter().zip(h_select_bits) {
        let c_high = pack_bits(cs.namespace(|| ""), &bits[bits.len() - h..])?;
        let selected = sel.get_value().ok_or(SynthesisError::AssignmentMissing)?;
        let v = if selected {
            value(&c_high)?
        } else {
            Scalar::ZERO
        };
        alloc(cs, Some(v))?;
        sum += v;
    }
    alloc(cs, Some(sum))
}

/// storage-proofs' `por_no_challenge_input` over a tree of `arity(level)`
/// with `hash` for each level: the path's siblings are allocated by the
/// caller, the insertion indexes are the challenge's bits; each level's
/// insertion by the gadget, its hash by `hash`.
fn por_levels<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    arities: [usize; 3],
    bits: &[AllocatedBit],
    leaf: &Num,
    path: Vec<Vec<Num>>,
    mut hash: impl FnMut(&mut CS, Level, &[Num]) -> Result<Num, SynthesisError>,
) -> Result<(), SynthesisError> {
    let [_, sub, top] = arities;
    let extra = usize::from(sub > 0) + usize::from(top > 0);
    if (top > 0 && sub == 0) || path.len() < extra {
        return unsat();
    }
    let base_len = path.len() - extra;
    let mut bits = bits.iter().cloned().map(Boolean::from);
    let mut cur = leaf.clone();
    for (i, siblings) in path.into_iter().enumerate() {
        let level = if i < base_len {
            Level::Base
        } else if i == base_len && sub > 0 {
            Level::Sub
        } else {
            Level::Top
        };
        let arity = arities[level as usize];
        if !arity.is_power_of_two() || siblings.len() + 1 != arity {
            return unsat();
        }
        let index: Vec<Boolean> = (0..arity.trailing_zeros())
            .map(|_| bits.next().ok_or(SynthesisError::Unsatisfiable))
            .collect::<Result<_, _>>()?;
        let preimage = insert(cs, &cur, &index, &siblings)?;
        cur = hash(cs, level, &preimage)?;
    }
    if bits.next().is_some() {
        return unsat();
    }
    Ok(())
}

/// `por_no_challenge_input` of the replica tree (Poseidon, `Tree`'s shape).
fn tree_r_por<Tree: FilTree, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    bits: &[AllocatedBit],
    leaf: &Num,
    path: Vec<Vec<Num>>,
    scratch: &mut Scratch,
) -> Result<(), SynthesisError> {
    por_levels(
        cs,
        arities::<Tree>(),
        bits,
        leaf,
        path,
        |cs, level, preimage| {
            let values = preimage.iter().map(value).collect::<Result<Vec<_>, _>>()?;
            match level {
                Level::Base => poseidon_num::<Tree::Arity, _>(cs, &values, &mut scratch.aux),
                Level::Sub => poseidon_num::<Tree::SubTreeArity, _>(cs, &values, &mut scratch.aux),
                Level::Top => poseidon_num::<Tree::TopTreeArity, _>(cs, &values, &mut scratch.aux),
            }
        },
    )
}

/// `por_no_challenge_input` of the data tree (binary SHA-256).
fn tree_d_por<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    bits: &[AllocatedBit],
    leaf: &Num,
    path: Vec<Vec<Num>>,
    scratch: &mut Scratch,
) -> Result<(), SynthesisError> {
    por_levels(cs, [2, 0, 0], bits, leaf, path, |cs, _, preimage| {
        sha256_num(cs, preimage, &mut scratch.bits, &mut scratch.aux)
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_same_witness, path_arities};
    use super::*;
    use cuzk_core::compiled::{Witness, WitnessCs};
    use rand::{Rng, SeedableRng};

    /// A replica tree's path opened from random values by
    /// storage-proofs' `por_no_challenge_input` and by `tree_r_por`, for
    /// the shapes the 2 KiB end-to-end test does not reach (a sub-tree at
    /// 32 GiB, a top tree at 64 GiB): the same witness.
    fn replica_path<Tree: FilTree>(seed: u64) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let arities = path_arities::<Tree>(4);
        let nbits: u32 = arities.iter().map(|a| a.trailing_zeros()).sum();
        let bits: Vec<bool> = (0..nbits).map(|_| rng.gen()).collect();
        let path: Vec<Vec<Scalar>> = arities
            .iter()
            .map(|&a| (1..a).map(|_| Scalar::random(&mut rng)).collect())
            .collect();
        let (leaf, root) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let run = |native: bool| -> Witness {
            let mut cs = WitnessCs::with_one();
            let c_bits = bits
                .iter()
                .map(|&b| AllocatedBit::alloc(cs.namespace(|| ""), Some(b)))
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            let leaf = alloc(&mut cs, Some(leaf)).unwrap();
            let nums: Vec<Vec<Num>> = path
                .iter()
                .map(|s| {
                    s.iter()
                        .map(|&v| alloc(&mut cs, Some(v)).unwrap())
                        .collect()
                })
                .collect();
            let root = alloc(&mut cs, Some(root)).unwrap();
            if native {
                tree_r_por::<Tree, _>(&mut cs, &c_bits, &leaf, nums, &mut Scratch::default())
                    .unwrap();
            } else {
                storage_proofs_core::gadgets::por::por_no_challenge_input::<Tree, _>(
                    cs.namespace(|| "por"),
                    c_bits,
                    leaf,
                    nums,
                    root,
                )
                .unwrap();
            }
            cs.into_witness()
        };
        assert_same_witness(std::any::type_name::<Tree>(), run(false), run(true));
    }

    #[test]
    fn replica_paths_equal_the_gadget_for_every_tree_shape() {
        replica_path::<filecoin_proofs::SectorShape2KiB>(1);
        replica_path::<filecoin_proofs::SectorShape32GiB>(2);
        replica_path::<filecoin_proofs::SectorShape64GiB>(3);
    }

    /// A path with one bit too many or too few is refused, not truncated.
    #[test]
    fn a_path_and_bits_that_disagree_are_refused() {
        let mut cs = WitnessCs::with_one();
        let leaf = alloc(&mut cs, Some(Scalar::ONE)).unwrap();
        let sib = alloc(&mut cs, Some(Scalar::ONE)).unwrap();
        for n in [0, 2] {
            let bits = (0..n)
                .map(|_| AllocatedBit::alloc(cs.namespace(|| ""), Some(true)).unwrap())
                .collect::<Vec<_>>();
            let e = tree_d_por(
                &mut cs,
                &bits,
                &leaf,
                vec![vec![sib.clone()]],
                &mut Scratch::default(),
            );
            assert!(matches!(e, Err(SynthesisError::Unsatisfiable)), "{n} bits");
        }
    }
}
