//! Radix-2 NTT over Fr on the CPU (rayon) and the H polynomial.
//!
//! Fr's two-adicity is 32, so domains go up to 2^32; the coset generator is
//! Fr's multiplicative generator, as in bellperson.

use blstrs::Scalar;

pub const MAX_LOG_DOMAIN: u32 = 32;

/// Smallest log2 domain size holding `n` constraints.
pub fn log_domain_size(n: usize) -> u32 {
    let _ = n;
    todo!()
}

/// In-place forward NTT of a power-of-two-length vector (natural order in
/// and out).
pub fn fft(values: &mut [Scalar]) {
    let _ = values;
    todo!()
}
pub fn ifft(values: &mut [Scalar]) {
    let _ = values;
    todo!()
}
/// Evaluate on the coset g·<ω> (g = Fr's multiplicative generator).
pub fn coset_fft(values: &mut [Scalar]) {
    let _ = values;
    todo!()
}
pub fn icoset_fft(values: &mut [Scalar]) {
    let _ = values;
    todo!()
}

/// H's coefficients from the a/b/c evaluations: each is zero-padded to the
/// domain, interpolated, evaluated on the coset, combined as (a·b − c)/Z and
/// interpolated back. Returns n − 1 coefficients (the length of the h query).
pub fn compute_h(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> crate::Result<Vec<Scalar>> {
    let _ = (a, b, c);
    todo!()
}
