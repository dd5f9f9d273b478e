//! Radix-2 NTT over Fr on the CPU (rayon) and the H polynomial.
//!
//! Fr's two-adicity is 32, so domains go up to 2^32; the coset generator is
//! Fr's multiplicative generator, as in bellperson.
//!
//! The transform is an iterative Cooley–Tukey (decimation in time) after a
//! bit-reversal permutation. The early stages, whose butterflies stay inside
//! small blocks, run block by block so that each block stays in cache; the
//! late stages split each butterfly run across threads.

use crate::Error;
use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

pub const MAX_LOG_DOMAIN: u32 = 32;

/// Elements per cache block in the early stages: 2^12 scalars are 128 KiB,
/// which stays within a core's L2 on the machines we target.
const LOG_BLOCK: u32 = 12;

/// Below this many elements a transform runs on one thread: splitting work
/// of a few microseconds costs more than it saves.
const PARALLEL_MIN: usize = 1 << 10;

/// Smallest log2 domain size holding `n` constraints.
pub fn log_domain_size(n: usize) -> u32 {
    let mut log = 0u32;
    while (1usize << log) < n {
        log += 1;
    }
    log
}

/// The primitive 2^log-th root of unity bellperson uses (Fr's
/// `ROOT_OF_UNITY` squared down).
pub fn omega(log: u32) -> Scalar {
    let mut w = Scalar::ROOT_OF_UNITY;
    for _ in log..Scalar::S {
        w = w.square();
    }
    w
}

fn log2_exact(len: usize) -> u32 {
    assert!(
        len.is_power_of_two(),
        "NTT length {len} is not a power of two"
    );
    let log = len.trailing_zeros();
    assert!(
        log <= MAX_LOG_DOMAIN,
        "NTT length 2^{log} exceeds 2^{MAX_LOG_DOMAIN}"
    );
    log
}

/// w^0 .. w^(count-1), computed in parallel chunks.
fn powers(w: Scalar, count: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; count];
    const CHUNK: usize = 1 << 12;
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut cur = w.pow_vartime([(i * CHUNK) as u64]);
            for v in chunk {
                *v = cur;
                cur *= w;
            }
        });
    out
}

fn bit_reverse(values: &mut [Scalar], log: u32) {
    if log == 0 {
        return;
    }
    let shift = usize::BITS - log;
    for i in 0..values.len() {
        let j = i.reverse_bits() >> shift;
        if i < j {
            values.swap(i, j);
        }
    }
}

/// Butterflies of one stage on one block of length 2·half, twiddles taken
/// from `tw` (powers of the full-size root) with `stride`.
#[inline]
fn butterflies(lo: &mut [Scalar], hi: &mut [Scalar], tw: &[Scalar], stride: usize, offset: usize) {
    for (j, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let idx = (offset + j) * stride;
        let t = if idx == 0 { *y } else { *y * tw[idx] };
        *y = *x - t;
        *x += t;
    }
}

/// In-place NTT with root `w` of order values.len().
fn ntt(values: &mut [Scalar], w: Scalar) {
    let n = values.len();
    let log = log2_exact(n);
    if n <= 1 {
        return;
    }
    bit_reverse(values, log);
    // tw[k] = w^k for k < n/2; stage with butterfly span `half` uses w^(n/(2·half)).
    let tw = powers(w, n / 2);
    let tw = &tw[..];
    let parallel = n >= PARALLEL_MIN;

    // Early stages, block by block.
    let block = 1usize << LOG_BLOCK.min(log);
    let do_block = |chunk: &mut [Scalar]| {
        let mut half = 1;
        while half < block {
            let stride = n / (2 * half);
            for pair in chunk.chunks_mut(2 * half) {
                let (lo, hi) = pair.split_at_mut(half);
                butterflies(lo, hi, tw, stride, 0);
            }
            half *= 2;
        }
    };
    if parallel {
        values.par_chunks_mut(block).for_each(do_block);
    } else {
        values.chunks_mut(block).for_each(do_block);
    }

    // Late stages: each run of `half` butterflies split across threads.
    // The stage's twiddles are first gathered into a contiguous table so
    // the butterflies read them sequentially rather than one cache line
    // each (a stride of n/(2·half) elements); that costs `half` copies
    // against n/2 butterflies.
    let mut half = block;
    while half < n {
        let stride = n / (2 * half);
        let gathered: Vec<Scalar>;
        let stage_tw: &[Scalar] = if stride == 1 {
            tw
        } else {
            gathered = tw.par_iter().step_by(stride).copied().collect();
            &gathered
        };
        const SPLIT: usize = 1 << 10;
        for pair in values.chunks_mut(2 * half) {
            let (lo, hi) = pair.split_at_mut(half);
            lo.par_chunks_mut(SPLIT)
                .zip(hi.par_chunks_mut(SPLIT))
                .enumerate()
                .for_each(|(k, (l, h))| butterflies(l, h, stage_tw, 1, k * SPLIT));
        }
        half *= 2;
    }
}

/// Multiply values[i] by scale·g^i.
fn distribute_powers(values: &mut [Scalar], g: Scalar, scale: Scalar) {
    const CHUNK: usize = 1 << 12;
    values
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut cur = g.pow_vartime([(i * CHUNK) as u64]) * scale;
            for v in chunk {
                *v *= cur;
                cur *= g;
            }
        });
}

fn scale_all(values: &mut [Scalar], k: Scalar) {
    values
        .par_iter_mut()
        .with_min_len(1 << 12)
        .for_each(|v| *v *= k);
}

fn inv_len(n: usize) -> Scalar {
    Scalar::from(n as u64)
        .invert()
        .expect("domain size is nonzero in Fr")
}

/// In-place forward NTT of a power-of-two-length vector (natural order in
/// and out).
pub fn fft(values: &mut [Scalar]) {
    let log = log2_exact(values.len());
    ntt(values, omega(log));
}
pub fn ifft(values: &mut [Scalar]) {
    let n = values.len();
    let log = log2_exact(n);
    ntt(
        values,
        omega(log).invert().expect("root of unity is nonzero"),
    );
    scale_all(values, inv_len(n));
}
/// Evaluate on the coset g·<ω> (g = Fr's multiplicative generator).
pub fn coset_fft(values: &mut [Scalar]) {
    distribute_powers(values, Scalar::MULTIPLICATIVE_GENERATOR, Scalar::ONE);
    fft(values);
}
pub fn icoset_fft(values: &mut [Scalar]) {
    let n = values.len();
    let log = log2_exact(n);
    ntt(
        values,
        omega(log).invert().expect("root of unity is nonzero"),
    );
    let ginv = Scalar::MULTIPLICATIVE_GENERATOR
        .invert()
        .expect("generator is nonzero");
    distribute_powers(values, ginv, inv_len(n));
}

/// H's coefficients from the a/b/c evaluations: each is zero-padded to the
/// domain, interpolated, evaluated on the coset, combined as (a·b − c)/Z and
/// interpolated back. Returns n − 1 coefficients (the length of the h query).
pub fn compute_h(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> crate::Result<Vec<Scalar>> {
    compute_h_inner(a, b, c)
}

/// [`compute_h`] from borrowed evaluations: each is copied once, straight
/// into a buffer of the domain's size.
pub fn compute_h_from_slices(
    a: &[Scalar],
    b: &[Scalar],
    c: &[Scalar],
) -> crate::Result<Vec<Scalar>> {
    let n = 1usize << log_domain_size(a.len()).min(MAX_LOG_DOMAIN - 1);
    let padded = |v: &[Scalar]| {
        let mut out = Vec::with_capacity(n.max(v.len()));
        out.extend_from_slice(v);
        out
    };
    compute_h_inner(padded(a), padded(b), padded(c))
}

fn compute_h_inner(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> crate::Result<Vec<Scalar>> {
    if a.len() != b.len() || a.len() != c.len() {
        return Err(Error::InvalidCircuit {
            index: 0,
            what: format!("a, b, c have lengths {}, {}, {}", a.len(), b.len(), c.len()),
        });
    }
    let log = log_domain_size(a.len());
    if log >= MAX_LOG_DOMAIN {
        return Err(Error::TooLarge {
            constraints: a.len(),
            max_log: MAX_LOG_DOMAIN - 1,
        });
    }
    let n = 1usize << log;
    let w_inv = omega(log).invert().expect("root of unity is nonzero");
    let g = Scalar::MULTIPLICATIVE_GENERATOR;

    let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE)
        .invert()
        .expect("the coset generator is not an n-th root of unity");

    // Six transforms, not seven: the final coset inverse is linear and Z(x)
    // = x^n − 1 is the constant g^n − 1 on the coset, so
    // H = coset_inverse(a·b)/Z − coset_inverse(c on the coset)/Z, and the
    // second term is C's coefficients over Z: c is only interpolated.
    // Interpolate a and b and move them to the coset (the 1/n of the
    // inverse transform folds into the coset shift); c's 1/n and 1/Z fold
    // into one scaling.
    let to_coset = |mut v: Vec<Scalar>| {
        v.resize(n, Scalar::ZERO);
        ntt(&mut v, w_inv);
        distribute_powers(&mut v, g, inv_len(n));
        fft(&mut v);
        v
    };
    let c_over_z = |mut v: Vec<Scalar>| {
        v.resize(n, Scalar::ZERO);
        ntt(&mut v, w_inv);
        scale_all(&mut v, inv_len(n) * z_inv);
        v
    };
    let (mut a, (b, c)) = rayon::join(
        || to_coset(a),
        || rayon::join(|| to_coset(b), || c_over_z(c)),
    );

    a.par_iter_mut()
        .zip(b.par_iter())
        .with_min_len(1 << 12)
        .for_each(|(a, b)| *a *= b);
    drop(b);
    // Back from the coset; 1/Z folds into the final scaling with 1/n and
    // g^-i.
    ntt(&mut a, w_inv);
    let ginv = g.invert().expect("generator is nonzero");
    distribute_powers(&mut a, ginv, inv_len(n) * z_inv);
    a.par_iter_mut()
        .zip(c.par_iter())
        .with_min_len(1 << 12)
        .for_each(|(a, c)| *a -= c);
    drop(c);
    a.truncate(n - 1);
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn random_vec(rng: &mut ChaCha20Rng, n: usize) -> Vec<Scalar> {
        (0..n).map(|_| Scalar::random(&mut *rng)).collect()
    }

    /// Σ_j v_j · (shift·w^i)^j, straight from the definition.
    fn naive_eval(v: &[Scalar], w: Scalar, shift: Scalar) -> Vec<Scalar> {
        (0..v.len())
            .map(|i| {
                let x = shift * w.pow_vartime([i as u64]);
                v.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
            })
            .collect()
    }

    /// The textbook recursive radix-2 transform, for sizes too big for the
    /// quadratic one.
    fn recursive_ntt(v: &[Scalar], w: Scalar) -> Vec<Scalar> {
        let n = v.len();
        if n == 1 {
            return v.to_vec();
        }
        let even: Vec<Scalar> = v.iter().step_by(2).copied().collect();
        let odd: Vec<Scalar> = v.iter().skip(1).step_by(2).copied().collect();
        let (e, o) = (
            recursive_ntt(&even, w.square()),
            recursive_ntt(&odd, w.square()),
        );
        let mut out = vec![Scalar::ZERO; n];
        let mut t = Scalar::ONE;
        for i in 0..n / 2 {
            out[i] = e[i] + t * o[i];
            out[i + n / 2] = e[i] - t * o[i];
            t *= w;
        }
        out
    }

    #[test]
    fn log_domain_sizes() {
        let cases = [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (1000, 10),
            (1024, 10),
            (1025, 11),
        ];
        for (n, log) in cases {
            assert_eq!(log_domain_size(n), log, "n = {n}");
        }
    }

    #[test]
    fn fft_matches_definition_small() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for log in 0..=8 {
            let n = 1usize << log;
            let v = random_vec(&mut rng, n);
            let w = omega(log);
            let mut f = v.clone();
            fft(&mut f);
            assert_eq!(f, naive_eval(&v, w, Scalar::ONE), "fft 2^{log}");
            let mut c = v.clone();
            coset_fft(&mut c);
            assert_eq!(
                c,
                naive_eval(&v, w, Scalar::MULTIPLICATIVE_GENERATOR),
                "coset 2^{log}"
            );
            ifft(&mut f);
            assert_eq!(f, v, "ifft 2^{log}");
            icoset_fft(&mut c);
            assert_eq!(c, v, "icoset 2^{log}");
        }
    }

    #[test]
    fn fft_matches_recursive_large() {
        // Crosses LOG_BLOCK, so the late (split) stages run too.
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for log in [LOG_BLOCK - 1, LOG_BLOCK, LOG_BLOCK + 1, LOG_BLOCK + 3] {
            let v = random_vec(&mut rng, 1 << log);
            let mut f = v.clone();
            fft(&mut f);
            assert_eq!(f, recursive_ntt(&v, omega(log)), "2^{log}");
            ifft(&mut f);
            assert_eq!(f, v);
        }
    }

    /// H against schoolbook polynomial arithmetic: interpolate a, b, c,
    /// form a·b − c, divide by x^n − 1; the remainder must vanish and the
    /// quotient equal compute_h's output.
    #[test]
    fn h_matches_polynomial_division() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        for len in [1usize, 2, 3, 4, 7, 100, 129] {
            let a = random_vec(&mut rng, len);
            let b = random_vec(&mut rng, len);
            let c: Vec<Scalar> = a.iter().zip(&b).map(|(x, y)| *x * y).collect();
            let h = compute_h(a.clone(), b.clone(), c.clone()).unwrap();
            let log = log_domain_size(len);
            let n = 1usize << log;
            assert_eq!(h.len(), n - 1);
            let interp = |mut v: Vec<Scalar>| {
                v.resize(n, Scalar::ZERO);
                let w_inv = omega(log).invert().unwrap();
                let n_inv = Scalar::from(n as u64).invert().unwrap();
                naive_eval(&v, w_inv, Scalar::ONE)
                    .into_iter()
                    .map(|x| x * n_inv)
                    .collect::<Vec<_>>()
            };
            let (pa, pb, pc) = (interp(a), interp(b), interp(c));
            let mut prod = vec![Scalar::ZERO; 2 * n - 1];
            for (i, x) in pa.iter().enumerate() {
                for (j, y) in pb.iter().enumerate() {
                    prod[i + j] += *x * y;
                }
            }
            for (i, x) in pc.iter().enumerate() {
                prod[i] -= x;
            }
            // Divide by x^n − 1 from the top.
            let mut q = vec![Scalar::ZERO; n - 1];
            for d in (n..2 * n - 1).rev() {
                let coef = prod[d];
                q[d - n] = coef;
                prod[d] = Scalar::ZERO;
                prod[d - n] += coef;
            }
            assert!(
                prod.iter().all(|x| bool::from(x.is_zero())),
                "len {len}: nonzero remainder"
            );
            assert_eq!(h, q, "len {len}");
        }
    }

    /// The six-transform H against bellperson's seven (a, b and c each to
    /// the coset, (a·b − c)/Z there, back), on inputs whose a·b − c does
    /// not vanish on the domain: the two agree whatever the witness, so a
    /// proof of a wrong witness is the same as bellperson's too.
    #[test]
    fn h_equals_the_seven_transform_form_on_any_input() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        for len in [1usize, 2, 3, 5, 64, 100, 1000] {
            let [a, b, c] = [0; 3].map(|_| random_vec(&mut rng, len));
            let h = compute_h(a.clone(), b.clone(), c.clone()).unwrap();
            let log = log_domain_size(len);
            let n = 1usize << log;
            let w = omega(log);
            let w_inv = w.invert().unwrap();
            let g = Scalar::MULTIPLICATIVE_GENERATOR;
            let n_inv = Scalar::from(n as u64).invert().unwrap();
            let to_coset = |mut v: Vec<Scalar>| {
                v.resize(n, Scalar::ZERO);
                let coeffs: Vec<Scalar> = naive_eval(&v, w_inv, Scalar::ONE)
                    .into_iter()
                    .map(|x| x * n_inv)
                    .collect();
                naive_eval(&coeffs, w, g)
            };
            let (ca, cb, cc) = (to_coset(a), to_coset(b), to_coset(c));
            let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
            let q: Vec<Scalar> = (0..n).map(|i| (ca[i] * cb[i] - cc[i]) * z_inv).collect();
            // Back from the coset: coefficients k_j = n^-1 g^-j sum_i q_i w^-ij.
            let g_inv = g.invert().unwrap();
            let back: Vec<Scalar> = naive_eval(&q, w_inv, Scalar::ONE)
                .into_iter()
                .enumerate()
                .map(|(j, x)| x * n_inv * g_inv.pow_vartime([j as u64]))
                .collect();
            assert_eq!(h[..], back[..n - 1], "len {len}");
        }
    }

    #[test]
    fn h_rejects_mismatched_lengths() {
        let r = compute_h(
            vec![Scalar::ONE; 3],
            vec![Scalar::ONE; 2],
            vec![Scalar::ONE; 3],
        );
        assert!(matches!(r, Err(Error::InvalidCircuit { .. })));
    }
}
