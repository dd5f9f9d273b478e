//! The witness of neptune's legacy Poseidon circuit
//! (`neptune::circuit::poseidon_hash`, which storage-proofs' column hashes
//! and Poseidon Merkle paths call), generated natively: the same values in
//! the same order, without the linear combinations the gadget builds and
//! rescales for every MDS product (its partial rounds' combinations grow by
//! a term a round), which were 78% of an 8 MiB PoRep witness once SHA-256
//! was native.
//!
//! The gadget's state is a vector of elements, each either allocated or a
//! combination (`Elt::Allocated` / `Elt::Num`); an S-box allocates its
//! input if it is a combination, then l², l⁴ and l⁵ (with the round keys
//! folded in as `square_sum` / `mul_sum` do), and every MDS product turns
//! the whole state back into combinations. The result is allocated at the
//! end. Tested equal to the gadget for the arities PoRep uses.

use blstrs::Scalar;
use ff::Field;
use neptune::poseidon::{Arity, PoseidonConstants};

#[derive(Clone, Copy)]
struct Elt {
    v: Scalar,
    allocated: bool,
}

/// The gadget's `ensure_allocated`: a combination becomes a variable.
fn ensure_allocated(aux: &mut Vec<Scalar>, e: Elt) -> Scalar {
    if !e.allocated {
        aux.push(e.v);
    }
    e.v
}

/// `quintic_s_box`: l = e, l², l⁴, l⁵ (+ post).
fn s_box(aux: &mut Vec<Scalar>, e: Elt, post: Option<Scalar>) -> Elt {
    let l = ensure_allocated(aux, e);
    let l2 = l.square();
    aux.push(l2);
    let l4 = l2.square();
    aux.push(l4);
    let mut l5 = l * l4;
    if let Some(k) = post {
        l5 += k;
    }
    aux.push(l5);
    Elt {
        v: l5,
        allocated: true,
    }
}

/// `quintic_s_box_pre_add`: (l + pre)², its square, (l + pre)·l⁴ + post.
fn s_box_pre_add(aux: &mut Vec<Scalar>, e: Elt, pre: Scalar, post: Scalar) -> Elt {
    let l = ensure_allocated(aux, e) + pre;
    let l2 = l.square();
    aux.push(l2);
    let l4 = l2.square();
    aux.push(l4);
    let l5 = l * l4 + post;
    aux.push(l5);
    Elt {
        v: l5,
        allocated: true,
    }
}

/// The hash of `preimage` (allocated variables' values), as the gadget
/// allocates it: every intermediate allocation is pushed to `aux` except
/// the last, the result, which is returned (the caller allocates it, so
/// that it has the variable later gadgets take).
pub(crate) fn poseidon_hash<A: Arity<Scalar>>(
    aux: &mut Vec<Scalar>,
    preimage: &[Scalar],
    c: &PoseidonConstants<Scalar, A>,
) -> Scalar {
    let width = c.width();
    debug_assert_eq!(preimage.len() + 1, width);
    let mut el: Vec<Elt> = Vec::with_capacity(width);
    el.push(Elt {
        v: c.domain_tag,
        allocated: false,
    });
    el.extend(preimage.iter().map(|&v| Elt { v, allocated: true }));
    let mut offset = 0usize;
    let mut round = 0usize;
    let mut next = vec![Scalar::ZERO; width];

    let mds = |el: &mut Vec<Elt>, round: &mut usize, next: &mut Vec<Scalar>| {
        let sparse_offset = c.half_full_rounds - 1;
        if *round > sparse_offset && *round < c.half_full_rounds + c.partial_rounds {
            let m = &c.sparse_matrixes[*round - sparse_offset - 1];
            let e0 = el[0].v;
            next[0] = el.iter().zip(&m.w_hat).map(|(e, w)| e.v * w).sum();
            for j in 1..width {
                next[j] = el[j].v + e0 * m.v_rest[j - 1];
            }
        } else {
            let m = if *round == sparse_offset {
                &c.pre_sparse_matrix
            } else {
                &c.mds_matrices.m
            };
            for (j, n) in next.iter_mut().enumerate() {
                *n = el.iter().enumerate().map(|(i, e)| e.v * m[i][j]).sum();
            }
        }
        for (e, &n) in el.iter_mut().zip(next.iter()) {
            *e = Elt {
                v: n,
                allocated: false,
            };
        }
        *round += 1;
    };

    // First full round: round keys added before and after the S-boxes; the
    // domain tag (a constant) goes through the S-box without allocating.
    let pre = &c.compressed_round_constants[offset..offset + width];
    let post = &c.compressed_round_constants[offset + width..offset + 2 * width];
    offset += 2 * width;
    for i in 0..width {
        el[i] = if i == 0 {
            let mut t = el[0].v + pre[0];
            t = t * t.square().square() + post[0];
            Elt {
                v: t,
                allocated: false,
            }
        } else {
            s_box_pre_add(aux, el[i], pre[i], post[i])
        };
    }
    mds(&mut el, &mut round, &mut next);

    let full = |aux: &mut Vec<Scalar>, el: &mut Vec<Elt>, offset: &mut usize, last: bool| {
        for (i, e) in el.iter_mut().enumerate() {
            let post = (!last).then(|| c.compressed_round_constants[*offset + i]);
            *e = s_box(aux, *e, post);
        }
        if !last {
            *offset += width;
        }
    };
    for _ in 1..c.full_rounds / 2 {
        full(aux, &mut el, &mut offset, false);
        mds(&mut el, &mut round, &mut next);
    }
    for _ in 0..c.partial_rounds {
        let rk = c.compressed_round_constants[offset];
        offset += 1;
        el[0] = s_box(aux, el[0], Some(rk));
        mds(&mut el, &mut round, &mut next);
    }
    for _ in 0..(c.full_rounds / 2) - 1 {
        full(aux, &mut el, &mut offset, false);
        mds(&mut el, &mut round, &mut next);
    }
    full(aux, &mut el, &mut offset, true);
    mds(&mut el, &mut round, &mut next);
    // The result: element 1, a combination after the last product.
    el[1].v
}

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::num::AllocatedNum;
    use bellpepper_core::ConstraintSystem;
    use cuzk_core::compiled::WitnessCs;
    use rand::SeedableRng;

    fn check<A: Arity<Scalar>>(c: &PoseidonConstants<Scalar, A>, rng: &mut impl rand::RngCore) {
        let n = c.width() - 1;
        let values: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut *rng)).collect();
        let mut cs = WitnessCs::with_one();
        let nums: Vec<_> = values
            .iter()
            .map(|&v| AllocatedNum::alloc(&mut cs, || Ok(v)).unwrap())
            .collect();
        let before = cs.aux_slice().len();
        let out = neptune::circuit::poseidon_hash(cs.namespace(|| "h"), nums, c).unwrap();
        let gadget = cs.aux_slice()[before..].to_vec();
        let mut native = Vec::new();
        let r = poseidon_hash(&mut native, &values, c);
        native.push(r);
        assert_eq!(native.len(), gadget.len(), "arity {n}: allocations");
        assert!(native == gadget, "arity {n}: values differ");
        assert_eq!(Some(r), out.get_value(), "arity {n}: result");
    }

    /// Equal to neptune's legacy gadget for the arities of PoRep's trees
    /// (8), its column hashes (2 and 11) and the other tree shapes (4, 16).
    #[test]
    fn native_poseidon_witness_equals_the_gadget() {
        use filecoin_hashers::PoseidonArity;
        use typenum::{U11, U16, U2, U4, U8};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        for _ in 0..3 {
            check(U2::PARAMETERS(), &mut rng);
            check(U4::PARAMETERS(), &mut rng);
            check(U8::PARAMETERS(), &mut rng);
            check(U11::PARAMETERS(), &mut rng);
            check(U16::PARAMETERS(), &mut rng);
            check(&filecoin_hashers::POSEIDON_CONSTANTS_11, &mut rng);
            check(&filecoin_hashers::POSEIDON_CONSTANTS_2, &mut rng);
        }
    }
}
