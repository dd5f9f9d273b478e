//! The witness of bellperson's SHA-256 gadget (`gadgets::sha256::sha256`,
//! which storage-proofs' labeling circuit calls), generated natively: the
//! same aux values in the same order, without the gadget's linear
//! combinations, which it builds for every addition even when the
//! constraint system discards them (`UInt32::addmany` and `MultiEq` form
//! one term per bit and scale whole combinations by powers of two).
//!
//! Which operations allocate depends on which bits are constants (padding,
//! the IV, round constants, a layer index) and which are negations of
//! allocated bits, so each bit keeps that kind: [`Bit`] mirrors
//! bellpepper's `Boolean` without its variable, and every function below
//! follows its bellperson counterpart case by case. Equality with the
//! gadget is tested here on random inputs of every kind and, through the
//! whole PoRep circuit, against full synthesis.

use blstrs::Scalar;
use ff::Field;

/// bellpepper's `Boolean` as the witness sees it: `Is(v)` an allocated bit
/// of value v, `Not(v)` the negation of an allocated bit of value v.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bit {
    Const(bool),
    Is(bool),
    Not(bool),
}

impl Bit {
    pub fn value(self) -> bool {
        match self {
            Bit::Const(b) | Bit::Is(b) => b,
            Bit::Not(b) => !b,
        }
    }
    fn not(self) -> Bit {
        match self {
            Bit::Const(b) => Bit::Const(!b),
            Bit::Is(b) => Bit::Not(b),
            Bit::Not(b) => Bit::Is(b),
        }
    }
    fn is_const(self) -> bool {
        matches!(self, Bit::Const(_))
    }
}

/// Where allocated values go, in allocation order.
pub(crate) struct Aux<'a>(pub &'a mut Vec<Scalar>);

impl Aux<'_> {
    #[inline]
    fn bit(&mut self, b: bool) -> Bit {
        self.0.push(if b { Scalar::ONE } else { Scalar::ZERO });
        Bit::Is(b)
    }
}

/// `Boolean::xor`.
fn xor(aux: &mut Aux, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Bit::Const(false), x) | (x, Bit::Const(false)) => x,
        (Bit::Const(true), x) | (x, Bit::Const(true)) => x.not(),
        // xor(is, not.not()).not(): AllocatedBit::xor of the two allocated
        // bits.
        (Bit::Is(i), Bit::Not(n)) | (Bit::Not(n), Bit::Is(i)) => aux.bit(i ^ n).not(),
        (Bit::Is(x), Bit::Is(y)) | (Bit::Not(x), Bit::Not(y)) => aux.bit(x ^ y),
    }
}

/// `Boolean::and` (`AllocatedBit::and`, `and_not`, `nor`).
fn and(aux: &mut Aux, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::Const(false),
        (Bit::Const(true), x) | (x, Bit::Const(true)) => x,
        (Bit::Is(i), Bit::Not(n)) | (Bit::Not(n), Bit::Is(i)) => aux.bit(i & !n),
        (Bit::Not(x), Bit::Not(y)) => aux.bit(!x & !y),
        (Bit::Is(x), Bit::Is(y)) => aux.bit(x & y),
    }
}

/// `Boolean::sha256_ch`.
fn ch(aux: &mut Aux, a: Bit, b: Bit, c: Bit) -> Bit {
    let (av, bv, cv) = (a.value(), b.value(), c.value());
    let v = (av & bv) ^ (!av & cv);
    match (a, b, c) {
        (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(v),
        (Bit::Const(false), _, c) => c,
        (a, Bit::Const(false), c) => and(aux, a.not(), c),
        (a, b, Bit::Const(false)) => and(aux, a, b),
        (a, b, Bit::Const(true)) => and(aux, a, b.not()).not(),
        (a, Bit::Const(true), c) => and(aux, a.not(), c.not()).not(),
        _ => aux.bit(v),
    }
}

/// `Boolean::sha256_maj`.
fn maj(aux: &mut Aux, a: Bit, b: Bit, c: Bit) -> Bit {
    let (av, bv, cv) = (a.value(), b.value(), c.value());
    let v = (av & bv) ^ (av & cv) ^ (bv & cv);
    match (a, b, c) {
        (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(v),
        (Bit::Const(false), b, c) => and(aux, b, c),
        (a, Bit::Const(false), c) => and(aux, a, c),
        (a, b, Bit::Const(false)) => and(aux, a, b),
        (a, b, Bit::Const(true)) => and(aux, a.not(), b.not()).not(),
        (a, Bit::Const(true), c) => and(aux, a.not(), c.not()).not(),
        (Bit::Const(true), b, c) => and(aux, b.not(), c.not()).not(),
        _ => {
            // maj, then "b and c" (which the gadget's constraint uses).
            let r = aux.bit(v);
            and(aux, b, c);
            r
        }
    }
}

/// bellperson's `UInt32`: bits least significant first.
#[derive(Clone, Copy, Debug)]
struct Word {
    bits: [Bit; 32],
    value: u32,
}

impl Word {
    fn constant(value: u32) -> Word {
        Word {
            bits: std::array::from_fn(|i| Bit::Const((value >> i) & 1 == 1)),
            value,
        }
    }
    /// `UInt32::from_bits_be`.
    fn from_bits_be(bits: &[Bit]) -> Word {
        let mut value = 0u32;
        for b in bits {
            value = (value << 1) | b.value() as u32;
        }
        Word {
            bits: std::array::from_fn(|i| bits[31 - i]),
            value,
        }
    }
    fn rotr(&self, by: usize) -> Word {
        Word {
            bits: std::array::from_fn(|i| self.bits[(i + by) % 32]),
            value: self.value.rotate_right(by as u32),
        }
    }
    fn shr(&self, by: usize) -> Word {
        Word {
            bits: std::array::from_fn(|i| {
                if i + by < 32 {
                    self.bits[i + by]
                } else {
                    Bit::Const(false)
                }
            }),
            value: self.value >> by,
        }
    }
    fn xor(&self, aux: &mut Aux, other: &Word) -> Word {
        Word {
            bits: std::array::from_fn(|i| xor(aux, self.bits[i], other.bits[i])),
            value: self.value ^ other.value,
        }
    }
    fn ch(aux: &mut Aux, a: &Word, b: &Word, c: &Word) -> Word {
        Word {
            bits: std::array::from_fn(|i| ch(aux, a.bits[i], b.bits[i], c.bits[i])),
            value: (a.value & b.value) ^ (!a.value & c.value),
        }
    }
    fn maj(aux: &mut Aux, a: &Word, b: &Word, c: &Word) -> Word {
        Word {
            bits: std::array::from_fn(|i| maj(aux, a.bits[i], b.bits[i], c.bits[i])),
            value: (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value),
        }
    }
    /// `UInt32::addmany`: the sum's bits up to the largest possible sum
    /// are allocated, unless every operand is constant.
    fn addmany(aux: &mut Aux, operands: &[Word]) -> Word {
        debug_assert!((2..=10).contains(&operands.len()));
        let sum: u64 = operands.iter().map(|w| u64::from(w.value)).sum();
        if operands.iter().all(|w| w.bits.iter().all(|b| b.is_const())) {
            return Word::constant(sum as u32);
        }
        let max = operands.len() as u64 * u64::from(u32::MAX);
        let n = 64 - max.leading_zeros() as usize;
        let mut bits = [Bit::Const(false); 32];
        for i in 0..n {
            // Every bit of the sum is allocated; the low 32 are the word.
            let b = aux.bit((sum >> i) & 1 == 1);
            if let Some(slot) = bits.get_mut(i) {
                *slot = b;
            }
        }
        Word {
            bits,
            value: sum as u32,
        }
    }
}

const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The gadget's deferred additions: a sum not yet allocated.
enum Maybe {
    Deferred(Vec<Word>),
    Concrete(Word),
}

impl Maybe {
    fn compute(self, aux: &mut Aux, others: &[Word]) -> Word {
        match self {
            Maybe::Concrete(v) => v,
            Maybe::Deferred(mut v) => {
                v.extend_from_slice(others);
                Word::addmany(aux, &v)
            }
        }
    }
}

/// `sha256_compression_function`.
fn compress(aux: &mut Aux, input: &[Bit], current: &[Word; 8]) -> [Word; 8] {
    debug_assert_eq!(input.len(), 512);
    let mut w: Vec<Word> = Vec::with_capacity(64);
    w.extend(input.chunks(32).map(Word::from_bits_be));
    for i in 16..64 {
        let s0 = w[i - 15].rotr(7);
        let s0 = s0.xor(aux, &w[i - 15].rotr(18));
        let s0 = s0.xor(aux, &w[i - 15].shr(3));
        let s1 = w[i - 2].rotr(17);
        let s1 = s1.xor(aux, &w[i - 2].rotr(19));
        let s1 = s1.xor(aux, &w[i - 2].shr(10));
        let tmp = Word::addmany(aux, &[w[i - 16], s0, w[i - 7], s1]);
        w.push(tmp);
    }

    let mut a = Maybe::Concrete(current[0]);
    let mut b = current[1];
    let mut c = current[2];
    let mut d = current[3];
    let mut e = Maybe::Concrete(current[4]);
    let mut f = current[5];
    let mut g = current[6];
    let mut h = current[7];

    for i in 0..64 {
        let new_e = e.compute(aux, &[]);
        let s1 = new_e.rotr(6);
        let s1 = s1.xor(aux, &new_e.rotr(11));
        let s1 = s1.xor(aux, &new_e.rotr(25));
        let ch = Word::ch(aux, &new_e, &f, &g);
        let temp1 = [h, s1, ch, Word::constant(ROUND_CONSTANTS[i]), w[i]];

        let new_a = a.compute(aux, &[]);
        let s0 = new_a.rotr(2);
        let s0 = s0.xor(aux, &new_a.rotr(13));
        let s0 = s0.xor(aux, &new_a.rotr(22));
        let maj = Word::maj(aux, &new_a, &b, &c);

        h = g;
        g = f;
        f = new_e;
        let mut next_e = Vec::with_capacity(7);
        next_e.extend_from_slice(&temp1);
        next_e.push(d);
        e = Maybe::Deferred(next_e);
        d = c;
        c = b;
        b = new_a;
        let mut next_a = Vec::with_capacity(8);
        next_a.extend_from_slice(&temp1);
        next_a.extend_from_slice(&[s0, maj]);
        a = Maybe::Deferred(next_a);
    }

    let h0 = a.compute(aux, &[current[0]]);
    let h1 = Word::addmany(aux, &[current[1], b]);
    let h2 = Word::addmany(aux, &[current[2], c]);
    let h3 = Word::addmany(aux, &[current[3], d]);
    let h4 = e.compute(aux, &[current[4]]);
    let h5 = Word::addmany(aux, &[current[5], f]);
    let h6 = Word::addmany(aux, &[current[6], g]);
    let h7 = Word::addmany(aux, &[current[7], h]);
    [h0, h1, h2, h3, h4, h5, h6, h7]
}

/// bellperson's `sha256::sha256`: the digest's 256 bits, big-endian per
/// word as the gadget returns them.
pub(crate) fn sha256(aux: &mut Aux, input: &[Bit]) -> Vec<Bit> {
    assert!(input.len().is_multiple_of(8));
    let mut padded = input.to_vec();
    let plen = padded.len() as u64;
    padded.push(Bit::Const(true));
    while !(padded.len() + 64).is_multiple_of(512) {
        padded.push(Bit::Const(false));
    }
    for i in (0..64).rev() {
        padded.push(Bit::Const((plen >> i) & 1 == 1));
    }
    let mut cur = IV.map(Word::constant);
    for block in padded.chunks(512) {
        cur = compress(aux, block, &cur);
    }
    let mut out = Vec::with_capacity(256);
    for w in &cur {
        out.extend(w.bits.iter().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bellpepper_core::boolean::{AllocatedBit, Boolean};
    use bellpepper_core::ConstraintSystem;
    use cuzk_core::compiled::WitnessCs;
    use rand::{Rng, SeedableRng};

    /// A random input of `n` bits of every kind, as gadget Booleans
    /// (allocated in `cs`) and as [`Bit`]s.
    fn input(rng: &mut impl Rng, cs: &mut WitnessCs, n: usize) -> (Vec<Boolean>, Vec<Bit>) {
        (0..n)
            .map(|_| {
                let v: bool = rng.gen();
                match rng.gen_range(0..3) {
                    0 => (Boolean::Constant(v), Bit::Const(v)),
                    1 => {
                        let a = AllocatedBit::alloc(&mut *cs, Some(v)).unwrap();
                        (Boolean::Is(a), Bit::Is(v))
                    }
                    _ => {
                        let a = AllocatedBit::alloc(&mut *cs, Some(v)).unwrap();
                        (Boolean::Not(a), Bit::Not(v))
                    }
                }
            })
            .unzip()
    }

    /// The native witness equals the gadget's (values, allocations, output
    /// bits and their kinds) on inputs of 0 to 3 blocks, all constant, all
    /// allocated and mixed.
    #[test]
    fn native_sha256_witness_equals_the_gadget() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        for bytes in [0usize, 1, 3, 55, 56, 64, 100, 130, 160] {
            for _ in 0..3 {
                let mut cs = WitnessCs::with_one();
                let (booleans, bits) = input(&mut rng, &mut cs, bytes * 8);
                let before = cs.aux_slice().len();
                let out =
                    bellperson::gadgets::sha256::sha256(cs.namespace(|| "sha"), &booleans).unwrap();
                let gadget_aux = cs.aux_slice()[before..].to_vec();
                let mut native = Vec::new();
                let got = sha256(&mut Aux(&mut native), &bits);
                assert_eq!(native.len(), gadget_aux.len(), "{bytes} bytes: allocations");
                assert!(native == gadget_aux, "{bytes} bytes: values differ");
                let want: Vec<Bit> = out
                    .iter()
                    .map(|b| match b {
                        Boolean::Constant(v) => Bit::Const(*v),
                        Boolean::Is(a) => Bit::Is(a.get_value().unwrap()),
                        Boolean::Not(a) => Bit::Not(a.get_value().unwrap()),
                    })
                    .collect();
                assert_eq!(got, want, "{bytes} bytes: digest bits");
            }
        }
    }
}
