//! Test inputs and expected results shared by the GPU checks
//! (`crate::checks`) and the CPU emulation tests (tests/emu_*.rs): field
//! values next to the moduli, where a product's final conditional
//! subtraction is taken or not and its borrow runs through every limb; the
//! special pairs of the point operations and what those operations give.

use blstrs::Scalar;
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Group;
use rand_chacha::ChaCha8Rng;

/// The moduli as little-endian u32 limbs (field.cuh's FrParams::mod and
/// FqParams::mod), for edge values next to them.
pub const FR_MODULUS: [u32; 8] = [
    0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402, 0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753,
];
pub const FQ_MODULUS: [u32; 12] = [
    0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84,
    0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea,
];

/// Inputs whose Montgomery products land next to the modulus m: for each
/// target raw value z (1, 2, 2^32k, m - 1, m - 2, m - 2^32k for k = 1..limbs-1,
/// so that the final conditional subtraction's borrow runs through every
/// limb) and `per` random x, the pair (x, z / x), whose product's raw limbs
/// are z (the value before the final subtraction is z or z + m). Then pairs
/// of raw 0, 1, m - 1 for the sum, difference and negation. `m` is the
/// modulus as little-endian u32 limbs; `raw` reads raw Montgomery limbs.
pub fn near_modulus_pairs<T: Field>(
    rng: &mut ChaCha8Rng,
    m: &[u32],
    per: usize,
    raw: impl Fn(&[u32]) -> T,
) -> (Vec<T>, Vec<T>) {
    let n = m.len();
    let sub = |a: &[u32], b: &[u32]| -> Vec<u32> {
        let mut borrow = 0i64;
        a.iter()
            .zip(b)
            .map(|(&x, &y)| {
                let d = x as i64 - y as i64 + borrow;
                borrow = d >> 32;
                d as u32
            })
            .collect()
    };
    let unit =
        |k: usize, v: u32| -> Vec<u32> { (0..n).map(|i| if i == k { v } else { 0 }).collect() };
    let mut targets = vec![
        unit(0, 1),
        unit(0, 2),
        sub(m, &unit(0, 1)),
        sub(m, &unit(0, 2)),
    ];
    for k in 1..n {
        targets.push(unit(k, 1));
        targets.push(sub(m, &unit(k, 1)));
    }
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for z in &targets {
        let z = raw(z);
        for _ in 0..per {
            let x = T::random(&mut *rng);
            // x = 0 has probability ~2^-255; take it as the zero pair then.
            let y = Option::<T>::from(x.invert()).map_or(T::ZERO, |inv| z * inv);
            xs.push(x);
            ys.push(y);
        }
    }
    let small = [
        raw(&unit(0, 0)),
        raw(&unit(0, 1)),
        raw(&sub(m, &unit(0, 1))),
    ];
    for a in small {
        for b in small {
            xs.push(a);
            ys.push(b);
        }
    }
    (xs, ys)
}

/// Puts the point operations' special pairs at the front of `p`, `q` and
/// `ks` (each at least 8 long): P = Q, P = -Q, infinity on either side or
/// both, and the multipliers 0, 1, 2.
pub fn with_special_pairs<A: PrimeCurveAffine + std::ops::Neg<Output = A>>(
    p: &mut [A],
    q: &mut [A],
    ks: &mut [u32],
) {
    q[0] = p[0];
    q[1] = -p[1];
    p[2] = A::identity();
    q[3] = A::identity();
    p[4] = A::identity();
    q[4] = A::identity();
    ks[5] = 0;
    ks[6] = 1;
    ks[7] = 2;
}

/// What kernels/tests.cu's test_g1_ops / test_g2_ops give for (P, Q, k):
/// [P + Q (mixed), P + Q (XYZZ), 2P, k P].
pub fn point_ops<A, P>(p: A, q: A, k: u32) -> [P; 4]
where
    P: Group<Scalar = Scalar> + From<A>,
{
    let (pp, qq) = (P::from(p), P::from(q));
    [pp + qq, pp + qq, pp.double(), pp * Scalar::from(k as u64)]
}
