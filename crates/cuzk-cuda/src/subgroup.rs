//! Subgroup membership of BLS12-381 points, as the GPU tests it
//! (kernels/subgroup.cuh), written here once more over blstrs' field
//! arithmetic so that the formulas are checked on any machine against
//! blstrs' own `is_torsion_free` and against the plain definition
//! ([r]P = O). The kernels take their constants (β, ψ's coefficients and
//! the scalars) from [`constants`]: this module is their one owner.
//!
//! The tests are Scott's (“A note on group membership tests for G1, G2 and
//! GT on BLS pairing-friendly curves”, ePrint 2021/1130), for a point P
//! already on the curve (the loader's decoding checks that):
//! - G1: P ∈ G1 ⟺ σ(P) = [−x²]P, σ(x, y) = (βx, y) with β the cube root of
//!   unity for which σ acts on G1 as multiplication by −x² mod r. Tested as
//!   [x²]P = (βx, −y): one 128-bit multiplication by the constant x² (17
//!   bits set), 127 doublings and 16 mixed additions.
//! - G2: P ∈ G2 ⟺ ψ(P) = [x]P, ψ the untwist-Frobenius-twist map
//!   ψ(x, y) = (x̄·c_x, ȳ·c_y). x < 0, so tested as [|x|]P = −ψ(P): 63
//!   doublings and 5 mixed additions over Fq2.
//!
//! The multiplications run in Jacobian coordinates (x = X/Z², y = Y/Z³):
//! a doubling costs 2M + 5S (dbl-2009-l), against 6M + 3S in the XYZZ form
//! the MSM kernels use, and doublings are nearly all of the work. Both
//! curves' point groups have odd order (odd cofactors), so no finite
//! point has y = 0 and the doubling never meets a 2-torsion point; the
//! mixed addition handles P = ±Q and the point at infinity explicitly, so
//! the answer is right for every point on the curve, whatever its order.
//!
//! Cost per point, in Fq products (a square counted as a product, an Fq2
//! product as 3, an Fq2 square as 2):
//! - G1: 127 doublings × 7 + 16 additions × 11 + 5 for the comparison
//!   ≈ 1070.
//! - G2: 63 doublings × 16 + 5 additions × 29 + 6 for ψ + 11 for the
//!   comparison ≈ 1170.

use std::sync::OnceLock;

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};

/// |x| for BLS12-381's curve parameter x = −0xd201000000010000.
pub const X_ABS: u64 = 0xd201_0000_0001_0000;

/// x², the G1 test's scalar (x² = |x|², 128 bits).
pub const X_SQUARED: u128 = (X_ABS as u128) * (X_ABS as u128);

/// Fq products per point of the G1 test: 127 doublings (2M + 5S), 16
/// mixed additions (7M + 4S), β·x and the comparison (4).
pub const G1_FQ_PRODUCTS: u32 = 127 * 7 + 16 * 11 + 1 + 4;
/// Fq products per point of the G2 test (an Fq2 product is 3, a square 2):
/// 63 doublings (2·3 + 5·2), 5 mixed additions (7·3 + 4·2), ψ (2·3) and
/// the comparison (2 + 3·3).
pub const G2_FQ_PRODUCTS: u32 = 63 * 16 + 5 * 29 + 6 + 11;

/// The constants of both tests.
#[derive(Clone, Copy, Debug)]
pub struct Constants {
    /// σ(x, y) = (βx, y) acts on G1 as multiplication by −x² mod r.
    pub beta: Fp,
    /// ψ(x, y) = (x̄·psi_x, ȳ·psi_y).
    pub psi_x: Fp2,
    pub psi_y: Fp2,
}

/// q as little-endian u64 limbs.
fn modulus() -> [u64; 6] {
    let bytes = Fp::char();
    let mut out = [0u64; 6];
    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *o = u64::from_le_bytes(c.try_into().expect("chunks_exact(8) yields 8 bytes"));
    }
    out
}

/// (q − 1) / d for a small d dividing q − 1.
fn q_minus_one_over(d: u64) -> [u64; 6] {
    let mut q = modulus();
    q[0] -= 1; // q is odd: no borrow
    let mut rem: u128 = 0;
    for limb in q.iter_mut().rev() {
        let cur = (rem << 64) | *limb as u128;
        *limb = (cur / d as u128) as u64;
        rem = cur % d as u128;
    }
    debug_assert_eq!(rem, 0, "{d} divides q - 1");
    q
}

/// The tests' constants, derived once from the field (not copied from
/// elsewhere): β is whichever primitive cube root of unity makes σ act on
/// the G1 generator as −x²; ψ's coefficients are 1/(1+u)^((q−1)/3) and
/// 1/(1+u)^((q−1)/2).
pub fn constants() -> &'static Constants {
    static C: OnceLock<Constants> = OnceLock::new();
    C.get_or_init(|| {
        let third = q_minus_one_over(3);
        // 2 is not a cube in Fq (q ≡ 1 mod 3), so 2^((q−1)/3) ≠ 1.
        let omega = Fp::from(2u64).pow_vartime(third);
        assert!(omega != Fp::ONE, "2 is a cube mod q: pick another base");
        let g = G1Affine::generator();
        let want = mul_jacobian(&g.x(), &g.y(), X_SQUARED);
        let beta = [omega, omega.square()]
            .into_iter()
            .find(|b| want.equals_affine(&(*b * g.x()), &(-g.y())))
            .expect("one of the two cube roots of unity is G1's eigenvalue -x^2");
        let xi = Fp2::new(Fp::ONE, Fp::ONE);
        let inv = |e: [u64; 6]| {
            Option::<Fp2>::from(xi.pow_vartime(e).invert()).expect("1 + u is not zero")
        };
        Constants {
            beta,
            psi_x: inv(third),
            psi_y: inv(q_minus_one_over(2)),
        }
    })
}

/// A point in Jacobian coordinates (x = X/Z², y = Y/Z³; Z = 0 is the
/// point at infinity), as the kernels hold it.
#[derive(Clone, Copy, Debug)]
pub struct Jacobian<F> {
    pub x: F,
    pub y: F,
    pub z: F,
}

impl<F: Field> Jacobian<F> {
    pub fn infinity() -> Self {
        Jacobian {
            x: F::ONE,
            y: F::ONE,
            z: F::ZERO,
        }
    }

    pub fn from_affine(x: &F, y: &F) -> Self {
        Jacobian {
            x: *x,
            y: *y,
            z: F::ONE,
        }
    }

    /// dbl-2009-l for a = 0 (2M + 5S); infinity stays infinity (Z' = 2YZ).
    pub fn dbl(&self) -> Self {
        let a = self.x.square();
        let b = self.y.square();
        let c = b.square();
        let d = ((self.x + b).square() - a - c).double();
        let e = a.double() + a;
        let f = e.square();
        let x3 = f - d.double();
        let y3 = e * (d - x3) - c.double().double().double();
        let z3 = (self.y * self.z).double();
        Jacobian {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// madd-2007-bl: self + (x2, y2) affine, not infinity (7M + 4S).
    pub fn add_affine(&self, x2: &F, y2: &F) -> Self {
        if bool::from(self.z.is_zero()) {
            return Self::from_affine(x2, y2);
        }
        let z1z1 = self.z.square();
        let u2 = *x2 * z1z1;
        let s2 = *y2 * self.z * z1z1;
        let h = u2 - self.x;
        let r = (s2 - self.y).double();
        if bool::from(h.is_zero()) {
            // Same x: the same point (double it) or its negation.
            return if bool::from(r.is_zero()) {
                Self::from_affine(x2, y2).dbl()
            } else {
                Self::infinity()
            };
        }
        let hh = h.square();
        let i = hh.double().double();
        let j = h * i;
        let v = self.x * i;
        let x3 = r.square() - j - v.double();
        let y3 = r * (v - x3) - (self.y * j).double();
        let z3 = (self.z + h).square() - z1z1 - hh;
        Jacobian {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// Whether this is the finite point (ax, ay): X = ax·Z², Y = ay·Z³.
    pub fn equals_affine(&self, ax: &F, ay: &F) -> bool {
        if bool::from(self.z.is_zero()) {
            return false;
        }
        let zz = self.z.square();
        let zzz = zz * self.z;
        self.x == *ax * zz && self.y == *ay * zzz
    }
}

/// [k]P for the affine point (x, y) (not infinity) and k > 0: double and
/// add, most significant bit first, as the kernels do.
pub fn mul_jacobian<F: Field>(x: &F, y: &F, k: u128) -> Jacobian<F> {
    if k == 0 {
        return Jacobian::infinity();
    }
    let top = 127 - k.leading_zeros();
    let mut acc = Jacobian::from_affine(x, y);
    for bit in (0..top).rev() {
        acc = acc.dbl();
        if (k >> bit) & 1 == 1 {
            acc = acc.add_affine(x, y);
        }
    }
    acc
}

fn conjugate(a: &Fp2) -> Fp2 {
    Fp2::new(a.c0(), -a.c1())
}

/// The G1 test as the kernel computes it: [x²]P = (βx, −y).
pub fn g1_in_subgroup(p: &G1Affine) -> bool {
    if bool::from(p.is_identity()) {
        return true;
    }
    let c = constants();
    mul_jacobian(&p.x(), &p.y(), X_SQUARED).equals_affine(&(c.beta * p.x()), &(-p.y()))
}

/// The G2 test as the kernel computes it: [|x|]P = −ψ(P).
pub fn g2_in_subgroup(p: &G2Affine) -> bool {
    if bool::from(p.is_identity()) {
        return true;
    }
    let c = constants();
    let psi_x = conjugate(&p.x()) * c.psi_x;
    let psi_y = conjugate(&p.y()) * c.psi_y;
    mul_jacobian(&p.x(), &p.y(), X_ABS as u128).equals_affine(&psi_x, &(-psi_y))
}

/// The scalar r (the subgroup's order) as little-endian bits' u64 limbs.
const R: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// [k]P by plain double and add over the bits of k, for any point on the
/// curve (blstrs' own scalar multiplication assumes the subgroup, through
/// its endomorphism, so it cannot make torsion points).
pub fn mul_bits<G: Group>(p: G, k: &[u64]) -> G {
    let mut acc = G::identity();
    for limb in k.iter().rev() {
        for bit in (0..64).rev() {
            acc = acc.double();
            if (limb >> bit) & 1 == 1 {
                acc += p;
            }
        }
    }
    acc
}

/// The definition: [r]P = O. Slow (255 doublings); the reference the
/// tests compare both fast tests with.
pub fn g1_times_r_is_identity(p: &G1Affine) -> bool {
    bool::from(mul_bits(G1Projective::from(*p), &R).is_identity())
}
pub fn g2_times_r_is_identity(p: &G2Affine) -> bool {
    bool::from(mul_bits(G2Projective::from(*p), &R).is_identity())
}

/// A point on y² = x³ + 4 with a random x, its cofactor not cleared: in
/// G1 only with probability 1/h (h ≈ 2^126), so in practice never.
pub fn g1_curve_point<R: rand::RngCore>(rng: &mut R) -> G1Affine {
    let b = Fp::from(4u64);
    loop {
        let x = Fp::random(&mut *rng);
        if let Some(y) = Option::<Fp>::from((x.square() * x + b).sqrt()) {
            let y = if rng.next_u32() & 1 == 1 { -y } else { y };
            return G1Affine::from_raw_unchecked(x, y, false);
        }
    }
}

/// A point on y² = x³ + 4(1 + u) with a random x, its cofactor not
/// cleared (in G2 with probability about 2^-380).
pub fn g2_curve_point<R: rand::RngCore>(rng: &mut R) -> G2Affine {
    let b = Fp2::new(Fp::from(4u64), Fp::from(4u64));
    loop {
        let x = Fp2::random(&mut *rng);
        if let Some(y) = Option::<Fp2>::from((x.square() * x + b).sqrt()) {
            let y = if rng.next_u32() & 1 == 1 { -y } else { y };
            return G2Affine::from_raw_unchecked(x, y, false);
        }
    }
}

/// Points outside the subgroup of several kinds, for the tests: a random
/// curve point, one of small order (a curve point times r: its order
/// divides the cofactor), and a subgroup point plus such a torsion point.
pub fn g1_outside<R: rand::RngCore>(rng: &mut R, kind: u32) -> G1Affine {
    let c = g1_curve_point(rng);
    match kind % 3 {
        0 => c,
        1 => mul_bits(G1Projective::from(c), &R).to_affine(),
        _ => (G1Projective::random(&mut *rng) + mul_bits(G1Projective::from(c), &R)).to_affine(),
    }
}
pub fn g2_outside<R: rand::RngCore>(rng: &mut R, kind: u32) -> G2Affine {
    let c = g2_curve_point(rng);
    match kind % 3 {
        0 => c,
        1 => mul_bits(G2Projective::from(c), &R).to_affine(),
        _ => (G2Projective::random(&mut *rng) + mul_bits(G2Projective::from(c), &R)).to_affine(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn constants_are_what_the_tests_need() {
        let c = constants();
        // β is a primitive cube root of unity.
        assert!(c.beta != Fp::ONE && c.beta.square() * c.beta == Fp::ONE);
        // ψ maps the G2 generator to [x]·generator, the property the test
        // rests on.
        let g = G2Affine::generator();
        let psi = G2Affine::from_raw_unchecked(
            conjugate(&g.x()) * c.psi_x,
            conjugate(&g.y()) * c.psi_y,
            false,
        );
        let x_g = -mul_bits(G2Projective::from(g), &[X_ABS]);
        assert_eq!(G2Projective::from(psi), x_g);
        assert_eq!(X_SQUARED, 0xac45a4010001a4020000000100000000);
        assert_eq!(X_SQUARED.count_ones(), 17);
    }

    #[test]
    fn jacobian_formulas_match_blstrs() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for k in [1u128, 2, 3, 5, 0xff, X_ABS as u128, X_SQUARED, u128::MAX] {
            let p = G1Projective::random(&mut rng).to_affine();
            let j = mul_jacobian(&p.x(), &p.y(), k);
            let want = mul_bits(G1Projective::from(p), &[k as u64, (k >> 64) as u64]).to_affine();
            assert!(j.equals_affine(&want.x(), &want.y()), "k = {k:#x}");
            let q = G2Projective::random(&mut rng).to_affine();
            let j = mul_jacobian(&q.x(), &q.y(), k);
            let want = mul_bits(G2Projective::from(q), &[k as u64, (k >> 64) as u64]).to_affine();
            assert!(j.equals_affine(&want.x(), &want.y()), "k = {k:#x}");
        }
        // P + P, P + (−P), ∞ + P through the mixed addition.
        let p = G1Projective::random(&mut rng).to_affine();
        let j = Jacobian::from_affine(&p.x(), &p.y());
        let two = (G1Projective::from(p).double()).to_affine();
        assert!(j
            .add_affine(&p.x(), &p.y())
            .equals_affine(&two.x(), &two.y()));
        assert!(bool::from(j.add_affine(&p.x(), &(-p.y())).z.is_zero()));
        assert!(Jacobian::<Fp>::infinity()
            .add_affine(&p.x(), &p.y())
            .equals_affine(&p.x(), &p.y()));
        assert!(bool::from(Jacobian::<Fp>::infinity().dbl().z.is_zero()));
    }

    /// The fast tests agree with blstrs and with [r]P = O on points in the
    /// subgroup, random curve points, small-order points and sums of both.
    #[test]
    fn tests_agree_with_blstrs_and_the_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for i in 0..48u32 {
            let inside = G1Projective::random(&mut rng).to_affine();
            let outside = g1_outside(&mut rng, i);
            for (p, want) in [(inside, true), (outside, false)] {
                assert!(bool::from(p.is_on_curve()));
                assert_eq!(bool::from(p.is_torsion_free()), want, "blstrs, case {i}");
                assert_eq!(g1_times_r_is_identity(&p), want, "[r]P, case {i}");
                assert_eq!(g1_in_subgroup(&p), want, "G1 test, case {i}");
            }
            let inside = G2Projective::random(&mut rng).to_affine();
            let outside = g2_outside(&mut rng, i);
            for (p, want) in [(inside, true), (outside, false)] {
                assert!(bool::from(p.is_on_curve()));
                assert_eq!(bool::from(p.is_torsion_free()), want, "blstrs, case {i}");
                assert_eq!(g2_times_r_is_identity(&p), want, "[r]P, case {i}");
                assert_eq!(g2_in_subgroup(&p), want, "G2 test, case {i}");
            }
        }
        assert!(g1_in_subgroup(&G1Affine::identity()));
        assert!(g2_in_subgroup(&G2Affine::identity()));
    }
}
