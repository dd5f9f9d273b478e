//! Random Groth16 parameters for a circuit: insecure (the toxic waste is
//! known to this process), for development, tests and benchmarks only.
//!
//! The output matches bellperson's `generate_random_parameters` in layout:
//! the same QAP (the circuit's constraints, then `input_i * 0 = 0` per
//! input), h of length n − 1 over the padded domain, a/b_g1/b_g2 with the
//! points at infinity (variables absent from that column) filtered out, and
//! an error for an aux variable that occurs in no constraint.
//!
//! Speed comes from fixed-base tables: every query point is a multiple of
//! one of two bases (g1, g2), so each is a sum of 17 to 22 precomputed
//! affine points with no doublings, computed in parallel chunks and
//! normalised with one inversion per chunk.

use crate::params::{Parameters, VerifyingKey};
use crate::{domain, msm, Error, Result};
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;
use std::ops::{AddAssign, SubAssign};
use std::sync::Arc;

/// One nonzero coefficient of a QAP matrix.
#[derive(Clone, Copy)]
struct Entry {
    coeff: Scalar,
    var: u32,
    row: u32,
    input: bool,
}

/// The constraint system parameters are generated from: the matrices, as
/// flat lists of entries.
#[derive(Default)]
struct KeypairAssembly {
    num_inputs: usize,
    num_aux: usize,
    num_constraints: usize,
    at: Vec<Entry>,
    bt: Vec<Entry>,
    ct: Vec<Entry>,
    /// Variables beyond u32 or rows beyond u32: the format cannot hold them.
    too_large: bool,
}

impl KeypairAssembly {
    fn record(
        list: &mut Vec<Entry>,
        lc: &LinearCombination<Scalar>,
        row: usize,
        too_large: &mut bool,
    ) {
        let Ok(row) = u32::try_from(row) else {
            *too_large = true;
            return;
        };
        for (v, coeff) in lc.iter() {
            let (idx, input) = match v.get_unchecked() {
                Index::Input(i) => (i, true),
                Index::Aux(i) => (i, false),
            };
            let Ok(var) = u32::try_from(idx) else {
                *too_large = true;
                continue;
            };
            list.push(Entry {
                coeff: *coeff,
                var,
                row,
                input,
            });
        }
    }
}

impl ConstraintSystem<Scalar> for KeypairAssembly {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        // No assignment is needed (nor computed) for the keys.
        self.num_aux += 1;
        Ok(Variable(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_inputs += 1;
        Ok(Variable(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let row = self.num_constraints;
        Self::record(
            &mut self.at,
            &a(LinearCombination::zero()),
            row,
            &mut self.too_large,
        );
        Self::record(
            &mut self.bt,
            &b(LinearCombination::zero()),
            row,
            &mut self.too_large,
        );
        Self::record(
            &mut self.ct,
            &c(LinearCombination::zero()),
            row,
            &mut self.too_large,
        );
        self.num_constraints += 1;
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    // Like bellperson: parameters come from a sequential synthesis only.
    fn is_extensible() -> bool {
        false
    }
}

/// Evaluations of a matrix's columns at tau: Σ_rows coeff·L_row(tau), for
/// inputs and aux variables.
fn eval_columns(
    entries: &[Entry],
    lagrange: &[Scalar],
    num_inputs: usize,
    num_aux: usize,
) -> (Vec<Scalar>, Vec<Scalar>) {
    let mut inputs = vec![Scalar::ZERO; num_inputs];
    let mut aux = vec![Scalar::ZERO; num_aux];
    for e in entries {
        let t = e.coeff * lagrange[e.row as usize];
        if e.input {
            inputs[e.var as usize] += t;
        } else {
            aux[e.var as usize] += t;
        }
    }
    (inputs, aux)
}

/// Window widths the fixed-base tables may use, in bits. With signed
/// digits a c-bit table holds ⌈256/c⌉ rows of 2^(c−1) points and a multiple
/// costs ⌈256/c⌉ mixed additions; [`best_window`] weighs building the table
/// against using it. The cap keeps the G1 table within 8 MiB (G2: 16 MiB):
/// measured on 100k G1 multiples (2 threads), windows 11 to 14 ran within
/// noise of each other and 15 was 15% slower, its table build and cache
/// misses eating the saved additions.
const MIN_WINDOW: usize = 4;
const MAX_WINDOW: usize = 13;

/// The window minimising table building plus `count` multiples, both
/// counted in point additions.
fn best_window(count: usize) -> usize {
    (MIN_WINDOW..=MAX_WINDOW)
        .min_by_key(|&c| 256usize.div_ceil(c) * ((1usize << (c - 1)) + count))
        .unwrap_or(MIN_WINDOW)
}

/// Points per parallel work item (and per batch normalisation): the
/// inversion is amortised over this many points.
const FIXED_BASE_CHUNK: usize = 512;

/// The group operations the fixed-base table needs.
trait FixedBaseGroup:
    Curve
    + Group<Scalar = Scalar>
    + Send
    + Sync
    + for<'a> AddAssign<&'a <Self as Curve>::AffineRepr>
    + for<'a> SubAssign<&'a <Self as Curve>::AffineRepr>
where
    <Self as Curve>::AffineRepr: Send + Sync + Copy,
{
    fn normalize(points: &[Self]) -> Vec<Self::AffineRepr>;
}

impl FixedBaseGroup for G1Projective {
    fn normalize(points: &[Self]) -> Vec<G1Affine> {
        msm::batch_normalize_g1(points)
    }
}

impl FixedBaseGroup for G2Projective {
    fn normalize(points: &[Self]) -> Vec<G2Affine> {
        msm::batch_normalize_g2(points)
    }
}

/// table[w·half + d − 1] = d·2^(c·w)·base for d in 1..=half, half = 2^(c−1).
struct FixedBase<G: FixedBaseGroup>
where
    G::AffineRepr: Send + Sync + Copy,
{
    window: usize,
    windows: usize,
    table: Vec<G::AffineRepr>,
}

impl<G: FixedBaseGroup> FixedBase<G>
where
    G::AffineRepr: Send + Sync + Copy,
{
    /// A table for about `count` multiples of `base`.
    fn new(base: G, count: usize) -> Self {
        Self::with_window(base, best_window(count))
    }

    fn with_window(base: G, window: usize) -> Self {
        assert!((MIN_WINDOW..=MAX_WINDOW).contains(&window));
        let half = 1usize << (window - 1);
        // windows·c ≥ 256 > bit length of any scalar, so the last window's
        // digit never carries out.
        let windows = 256usize.div_ceil(window);
        let two_pow_c = Scalar::from(1u64 << window);
        let table = (0..windows)
            .into_par_iter()
            .flat_map_iter(|w| {
                let wbase = base * two_pow_c.pow_vartime([w as u64]);
                let mut row = Vec::with_capacity(half);
                let mut acc = wbase;
                for _ in 0..half {
                    row.push(acc);
                    acc += wbase;
                }
                G::normalize(&row)
            })
            .collect();
        FixedBase {
            window,
            windows,
            table,
        }
    }

    fn mul(&self, s: &Scalar) -> G {
        let mut bytes = [0u8; 36];
        bytes[..32].copy_from_slice(&s.to_bytes_le());
        let c = self.window;
        let half = 1usize << (c - 1);
        let mask = (1u32 << c) - 1;
        let mut acc = G::identity();
        let mut carry = 0u32;
        for w in 0..self.windows {
            let bit = w * c;
            let b = bit / 8;
            let word = u32::from_le_bytes([bytes[b], bytes[b + 1], bytes[b + 2], bytes[b + 3]]);
            let d = ((word >> (bit % 8)) & mask) + carry;
            let row = &self.table[w * half..];
            if d as usize > half {
                // d − 2^c in [−half, 0): subtract, carry into the next window
                // (d = 2^c, from a full window plus carry, is digit 0).
                let neg = (1u32 << c) - d;
                if neg != 0 {
                    acc -= &row[neg as usize - 1];
                }
                carry = 1;
            } else {
                if d != 0 {
                    acc += &row[d as usize - 1];
                }
                carry = 0;
            }
        }
        acc
    }

    /// The multiples of the base by each scalar, in affine form.
    /// The output is allocated once and filled in place.
    fn mul_many(&self, scalars: &[Scalar]) -> Vec<G::AffineRepr> {
        let mut out = vec![G::identity().to_affine(); scalars.len()];
        out.par_chunks_mut(FIXED_BASE_CHUNK)
            .zip(scalars.par_chunks(FIXED_BASE_CHUNK))
            .for_each(|(dst, chunk)| {
                let proj: Vec<G> = chunk.iter().map(|s| self.mul(s)).collect();
                dst.copy_from_slice(&G::normalize(&proj));
            });
        out
    }
}

pub fn generate_random_parameters<C, R>(circuit: C, rng: &mut R) -> Result<Parameters>
where
    C: bellpepper_core::Circuit<Scalar>,
    R: RngCore,
{
    let g1 = G1Projective::random(&mut *rng);
    let g2 = G2Projective::random(&mut *rng);
    let alpha = Scalar::random(&mut *rng);
    let beta = Scalar::random(&mut *rng);
    let gamma = Scalar::random(&mut *rng);
    let delta = Scalar::random(&mut *rng);
    let tau = Scalar::random(&mut *rng);
    generate_parameters(circuit, g1, g2, alpha, beta, gamma, delta, tau)
}

/// Parameters from given toxic waste (bellperson's `generate_parameters`).
#[allow(clippy::too_many_arguments)]
pub fn generate_parameters<C: Circuit<Scalar>>(
    circuit: C,
    g1: G1Projective,
    g2: G2Projective,
    alpha: Scalar,
    beta: Scalar,
    gamma: Scalar,
    delta: Scalar,
    tau: Scalar,
) -> Result<Parameters> {
    let synth_err = |source| Error::Synthesis { index: 0, source };
    let mut cs = KeypairAssembly::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))
        .map_err(synth_err)?;
    circuit.synthesize(&mut cs).map_err(synth_err)?;
    for i in 0..cs.num_inputs {
        cs.enforce(|| "", |lc| lc + Variable(Index::Input(i)), |lc| lc, |lc| lc);
    }
    let log = domain::log_domain_size(cs.num_constraints);
    if cs.too_large || log >= domain::MAX_LOG_DOMAIN {
        return Err(Error::TooLarge {
            constraints: cs.num_constraints,
            max_log: domain::MAX_LOG_DOMAIN - 1,
        });
    }
    let n = 1usize << log;

    let gamma_inv: Scalar = Option::from(gamma.invert())
        .ok_or_else(|| synth_err(SynthesisError::UnexpectedIdentity))?;
    let delta_inv: Scalar = Option::from(delta.invert())
        .ok_or_else(|| synth_err(SynthesisError::UnexpectedIdentity))?;

    // Powers of tau; their inverse NTT gives the Lagrange basis at tau.
    let mut lagrange = vec![Scalar::ZERO; n];
    lagrange
        .par_chunks_mut(1 << 12)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut cur = tau.pow_vartime([(i << 12) as u64]);
            for v in chunk {
                *v = cur;
                cur *= tau;
            }
        });
    // h_i = tau^i · Z(tau) / delta for i < n − 1.
    let z_over_delta = (tau.pow_vartime([n as u64]) - Scalar::ONE) * delta_inv;
    let h_scalars: Vec<Scalar> = lagrange[..n - 1]
        .par_iter()
        .map(|p| *p * z_over_delta)
        .collect();
    domain::ifft(&mut lagrange);

    let (ni, na) = (cs.num_inputs, cs.num_aux);
    let ((at, bt), ct) = rayon::join(
        || {
            rayon::join(
                || eval_columns(&cs.at, &lagrange, ni, na),
                || eval_columns(&cs.bt, &lagrange, ni, na),
            )
        },
        || eval_columns(&cs.ct, &lagrange, ni, na),
    );
    drop(cs);
    drop(lagrange);
    let (at_in, at_aux) = at;
    let (bt_in, bt_aux) = bt;
    let (ct_in, ct_aux) = ct;

    // (beta·A + alpha·B + C) / gamma for inputs (ic), / delta for aux (l).
    let ext = |a: &[Scalar], b: &[Scalar], c: &[Scalar], inv: Scalar| -> Vec<Scalar> {
        a.par_iter()
            .zip(b)
            .zip(c)
            .map(|((a, b), c)| (beta * a + alpha * b + c) * inv)
            .collect()
    };
    let ic_scalars = ext(&at_in, &bt_in, &ct_in, gamma_inv);
    let l_scalars = ext(&at_aux, &bt_aux, &ct_aux, delta_inv);
    if let Some(j) = l_scalars.iter().position(|s| bool::from(s.is_zero())) {
        let _ = j;
        return Err(synth_err(SynthesisError::UnconstrainedVariable));
    }
    // A and B queries hold only the variables that occur in that column.
    let nonzero = |x: &[Scalar], y: &[Scalar]| -> Vec<Scalar> {
        x.iter()
            .chain(y)
            .copied()
            .filter(|s| !bool::from(s.is_zero()))
            .collect()
    };
    let a_scalars = nonzero(&at_in, &at_aux);
    let b_scalars = nonzero(&bt_in, &bt_aux);

    let g1_count =
        h_scalars.len() + l_scalars.len() + ic_scalars.len() + a_scalars.len() + b_scalars.len();
    let g1_table = FixedBase::<G1Projective>::new(g1, g1_count);
    let h = g1_table.mul_many(&h_scalars);
    drop(h_scalars);
    let l = g1_table.mul_many(&l_scalars);
    let ic = g1_table.mul_many(&ic_scalars);
    let a = g1_table.mul_many(&a_scalars);
    let b_g1 = g1_table.mul_many(&b_scalars);
    drop(g1_table);
    let b_g2 = FixedBase::<G2Projective>::new(g2, b_scalars.len()).mul_many(&b_scalars);

    if ic.iter().any(|p| bool::from(p.is_identity())) {
        // An input that occurs nowhere but its own input constraint still
        // has a nonzero ic scalar (beta·L_row(tau)), so this needs a
        // degenerate tau or beta; the verifying key would be unusable.
        return Err(synth_err(SynthesisError::UnexpectedIdentity));
    }

    let (g1a, g2a) = (g1.to_affine(), g2.to_affine());
    let vk = VerifyingKey {
        alpha_g1: (g1a * alpha).to_affine(),
        beta_g1: (g1a * beta).to_affine(),
        beta_g2: (g2a * beta).to_affine(),
        gamma_g2: (g2a * gamma).to_affine(),
        delta_g1: (g1a * delta).to_affine(),
        delta_g2: (g2a * delta).to_affine(),
        ic,
    };
    Ok(Parameters {
        vk,
        h: Arc::new(h),
        l: Arc::new(l),
        a: Arc::new(a),
        b_g1: Arc::new(b_g1),
        b_g2: Arc::new(b_g2),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn edge_scalars() -> Vec<Scalar> {
        let mut v = vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(2u64)];
        // A full window (raw digit 2^c − 1), half a window (the largest
        // positive digit) and one more (the first negative digit), with and
        // without carries flowing through higher windows.
        let c = 12u32;
        for x in [
            (1u64 << c) - 1,
            1 << (c - 1),
            (1 << (c - 1)) + 1,
            (1u64 << (2 * c)) - 1,
            u64::MAX,
        ] {
            v.push(Scalar::from(x));
            v.push(-Scalar::from(x));
        }
        for k in [0u64, 11, 12, 13, 100, 250, 254] {
            v.push(Scalar::from(2u64).pow_vartime([k]));
        }
        v
    }

    #[test]
    fn window_choice() {
        // Few multiples: a small table; many: the largest allowed.
        assert!(best_window(1) <= 6);
        assert_eq!(best_window(1 << 24), MAX_WINDOW);
        assert!((10..=13).contains(&best_window(17_000)));
    }

    #[test]
    fn fixed_base_matches_scalar_multiplication() {
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let g1 = G1Projective::random(&mut rng);
        let g2 = G2Projective::random(&mut rng);
        let mut scalars = edge_scalars();
        scalars.extend((0..300).map(|_| Scalar::random(&mut rng)));
        for window in MIN_WINDOW..=MAX_WINDOW {
            // Edge values for this window width, too.
            let c = window as u32;
            let mut s = scalars.clone();
            for x in [(1u64 << c) - 1, 1 << (c - 1), (1 << (c - 1)) + 1] {
                s.push(Scalar::from(x));
                s.push(-Scalar::from(x));
            }
            let t1 = FixedBase::<G1Projective>::with_window(g1, window);
            let n = if window <= 12 { s.len() } else { 40 };
            for s in s.iter().rev().take(n) {
                assert_eq!(t1.mul(s), g1 * s, "G1, window {window}, {s:?}");
            }
        }
        let t1 = FixedBase::<G1Projective>::with_window(g1, 12);
        let t2 = FixedBase::<G2Projective>::with_window(g2, 9);
        for s in scalars.iter().take(60) {
            assert_eq!(t2.mul(s), g2 * s, "G2 {s:?}");
        }
        // The batched, normalised path, over lengths around the chunk size.
        for n in [0usize, 1, 3, FIXED_BASE_CHUNK, FIXED_BASE_CHUNK + 1, 1100] {
            let s: Vec<Scalar> = (0..n).map(|i| scalars[i % scalars.len()]).collect();
            let want: Vec<G1Affine> = s.iter().map(|s| (g1 * s).to_affine()).collect();
            assert_eq!(t1.mul_many(&s), want, "n = {n}");
        }
    }

    /// An aux variable in no constraint makes L's point the identity:
    /// refused, as bellperson does.
    #[test]
    fn unconstrained_variable_is_an_error() {
        struct Lonely;
        impl Circuit<Scalar> for Lonely {
            fn synthesize<CS: ConstraintSystem<Scalar>>(
                self,
                cs: &mut CS,
            ) -> std::result::Result<(), SynthesisError> {
                let x = cs.alloc(|| "x", || Ok(Scalar::ONE))?;
                cs.enforce(|| "x", |l| l + x, |l| l + x, |l| l + x);
                cs.alloc(|| "unused", || Ok(Scalar::ONE))?;
                Ok(())
            }
        }
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let r = generate_random_parameters(Lonely, &mut rng);
        assert!(matches!(
            r,
            Err(Error::Synthesis {
                source: SynthesisError::UnconstrainedVariable,
                ..
            })
        ));
    }
}
