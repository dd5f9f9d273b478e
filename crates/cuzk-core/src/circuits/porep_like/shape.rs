//! porep-like's shape, recorded once per size and replayed for every seed.
//!
//! The shape (each row's kind, operands and `pack` coefficients) depends on
//! `log_size` alone, but drawing it is most of what witness generation
//! costs: ChaCha for every row's kind and operands, and 16 full-width
//! `Scalar::random` per `pack` row. Witness-only synthesis therefore
//! records the draws once per size ([`Shape::record`], the same draws in
//! the same order as the streaming synthesis in the parent module) and
//! replays them for each seed ([`synthesize_witness`]): a tight loop of
//! field operations on value arrays, with no shape RNG. The witness RNG (the
//! free bits) and the public inputs are drawn exactly as before, so the
//! assignment is bit-identical; tests compare it with the streaming path.
//!
//! This module owns the recorded shapes and their cache; it does not touch
//! the constraint system's shape (full synthesis still streams, see the
//! parent module), hence not the parameters.
//!
//! Memory, per row of the domain (MIX weights: 63% `and`/`xor` with two
//! operands, 23% `bit` with none, 4% `pack` with 17 and 16 coefficients, 8%
//! `mul` with two, 2% `square` with one): a kind byte, 8.5 bytes of u32
//! operands and 20.5 bytes of coefficients, about 30 bytes (measured by
//! [`Shape::bytes`]: 30.0 at 2^16 and 2^22, 29.9 at 2^20): ~0.5 GB at
//! 2^24, ~4 GB at 2^27. At most [`CACHED_SHAPES`] sizes are kept, and none
//! above [`MAX_CACHED_LOG_SIZE`] (those stream as before).

use super::WITNESS_STREAM;
use super::{
    bit_value, recent_index, Kind, PorepLikeCircuit, Recent, BIT_WINDOW, B_BIT_WINDOW,
    B_FIELD_WINDOW, FIELD_WINDOW, MIX, PACK_WIDTH, SHAPE_STREAM, UNRECORDED,
};
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use rand::Rng;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

/// Sizes kept at once: a daemon proves one size at a time, and a second
/// entry spares a bench that alternates two sizes from re-recording.
pub const CACHED_SHAPES: usize = 2;
/// The largest size whose shape is cached: 2^27 (a 32 GiB PoRep
/// partition's class) costs ~4 GB, shared by every synthesis of that size;
/// larger sizes (2^30 would be 32 GB) stream their shape as before.
pub const MAX_CACHED_LOG_SIZE: u32 = 27;

/// One size's rows after the public inputs, as they were drawn.
pub struct Shape {
    /// One per row, the seeding rows included (as `bit` and `square`).
    kinds: Vec<Kind>,
    /// The rows' bit operands in order, as indices into the bits
    /// allocated so far: `and`/`xor` x, y; `pack` its 16 bits.
    bit_operands: Vec<u32>,
    /// The rows' field operands in order, as indices into the field values
    /// allocated so far (the inputs first): `pack` its state; `mul` x, y;
    /// `square` x. Two streams, so that the replay can prefetch each.
    field_operands: Vec<u32>,
    /// `pack` coefficients, 16 per `pack` row, in order.
    coefficients: Vec<Scalar>,
    /// Bits and field values the witness holds, to reserve its arrays.
    bits: usize,
    fields: usize,
}

impl Shape {
    /// Draws `log_size`'s shape exactly as the streaming synthesis does
    /// (same generator, same draws, same order), keeping indices instead
    /// of values.
    pub fn record(log_size: u32) -> Shape {
        let c = PorepLikeCircuit::new(log_size, 0);
        let rows = c.num_circuit_constraints();
        let mut rng = c.rng(SHAPE_STREAM);
        let mut r = Recorder {
            shape: Shape {
                kinds: Vec::with_capacity(rows),
                bit_operands: Vec::new(),
                field_operands: Vec::new(),
                coefficients: Vec::new(),
                bits: 0,
                fields: 0,
            },
            fresh_bits: VecDeque::new(),
            fresh_fields: VecDeque::new(),
            b_bits: Recent::new(B_BIT_WINDOW),
            b_fields: Recent::new(B_FIELD_WINDOW),
        };
        let mut done = 0usize;
        for _ in 0..c.num_public_inputs() {
            r.new_field(true);
            done += 1;
        }
        while done < rows && (r.b_bits.len() < 2 || r.shape.bits < 2) {
            r.shape.kinds.push(Kind::Bit);
            r.b_bits.push(r.shape.bits as u32);
            r.new_bit(false);
            done += 1;
        }
        if done < rows {
            r.shape.kinds.push(Kind::Square);
            let v = r.a_field(&mut rng);
            r.shape.field_operands.push(v);
            r.b_fields.push(v);
            r.new_field(true);
            done += 1;
        }
        let total: u32 = MIX.iter().map(|m| m.1).sum();
        while done < rows {
            let kind = super::roll_kind(rng.gen_range(0..total));
            r.shape.kinds.push(kind);
            match kind {
                Kind::And | Kind::Xor => {
                    let x = r.a_bit(&mut rng);
                    let y = r.b_bits.pick(&mut rng);
                    r.shape.bit_operands.extend([x, y]);
                    r.new_bit(true);
                }
                Kind::Bit => {
                    r.b_bits.push(r.shape.bits as u32);
                    r.new_bit(false);
                }
                Kind::Pack => {
                    let state = r.a_field(&mut rng);
                    r.shape.field_operands.push(state);
                    for _ in 0..PACK_WIDTH {
                        let x = r.a_bit(&mut rng);
                        r.shape.bit_operands.push(x);
                        r.shape.coefficients.push(Scalar::random(&mut rng));
                    }
                    r.new_field(true);
                }
                Kind::Mul => {
                    let x = r.a_field(&mut rng);
                    let y = r.b_fields.pick(&mut rng);
                    r.shape.field_operands.extend([x, y]);
                    r.new_field(true);
                }
                Kind::Square => {
                    let x = r.a_field(&mut rng);
                    r.shape.field_operands.push(x);
                    r.b_fields.push(x);
                    r.new_field(true);
                }
            }
            done += 1;
        }
        r.shape.kinds.shrink_to_fit();
        r.shape.bit_operands.shrink_to_fit();
        r.shape.field_operands.shrink_to_fit();
        r.shape.coefficients.shrink_to_fit();
        r.shape
    }

    /// Bytes this shape holds.
    pub fn bytes(&self) -> usize {
        self.kinds.len() * std::mem::size_of::<Kind>()
            + (self.bit_operands.len() + self.field_operands.len()) * std::mem::size_of::<u32>()
            + self.coefficients.len() * std::mem::size_of::<Scalar>()
    }
}

/// The streaming synthesis' pools and queues, as indices.
struct Recorder {
    shape: Shape,
    fresh_bits: VecDeque<u32>,
    fresh_fields: VecDeque<u32>,
    b_bits: Recent<u32>,
    b_fields: Recent<u32>,
}

impl Recorder {
    fn a_bit(&mut self, rng: &mut impl Rng) -> u32 {
        match self.fresh_bits.pop_front() {
            Some(i) => i,
            // `all_bits` holds the bits in order: its index is the bit's.
            None => recent_index(rng, self.shape.bits, BIT_WINDOW) as u32,
        }
    }
    fn a_field(&mut self, rng: &mut impl Rng) -> u32 {
        match self.fresh_fields.pop_front() {
            Some(i) => i,
            None => recent_index(rng, self.shape.fields, FIELD_WINDOW) as u32,
        }
    }
    fn new_bit(&mut self, fresh: bool) {
        if fresh {
            self.fresh_bits.push_back(self.shape.bits as u32);
        }
        self.shape.bits += 1;
    }
    fn new_field(&mut self, fresh: bool) {
        if fresh {
            self.fresh_fields.push_back(self.shape.fields as u32);
        }
        self.shape.fields += 1;
    }
}

type Entry = (u32, Arc<OnceLock<Shape>>);

/// Most recently used last. The lock is taken once per synthesis, to find
/// the entry; recording runs outside it, once per size, while concurrent
/// syntheses of that size wait on the entry's `OnceLock` and then share it.
static CACHE: Mutex<VecDeque<Entry>> = Mutex::new(VecDeque::new());

/// `log_size`'s shape, recorded on first use; `None` above
/// [`MAX_CACHED_LOG_SIZE`].
pub fn cached(log_size: u32) -> Option<Arc<OnceLock<Shape>>> {
    if log_size > MAX_CACHED_LOG_SIZE {
        return None;
    }
    let entry = {
        // A panic while the lock was held left the list itself valid.
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let entry = match cache.iter().position(|(l, _)| *l == log_size) {
            Some(i) => cache.remove(i),
            None => None,
        };
        let entry = entry.unwrap_or_else(|| (log_size, Arc::new(OnceLock::new())));
        cache.push_back((entry.0, Arc::clone(&entry.1)));
        while cache.len() > CACHED_SHAPES {
            // Evicted shapes live on while a synthesis still holds them.
            cache.pop_front();
        }
        entry.1
    };
    entry.get_or_init(|| Shape::record(log_size));
    Some(entry)
}

/// Rows' operands are read this many operands ahead of use, so that reads
/// that miss the cache overlap instead of stalling one by one. Measured
/// with shape version 1, whose picks spanned the circuit (at 2^22 those
/// loads were 55% of the replay's samples); with the windows the reads hit
/// L2 and the hints cost about one instruction per operand. 32 bit
/// operands are ~20 rows; 8 field operands ~40.
const BIT_PREFETCH: usize = 32;
const FIELD_PREFETCH: usize = 8;

/// Hints the cache to load `p`'s line; nothing is read.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint: it never faults and reads nothing
        // into the program, whatever the address.
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>())
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The witness's bits, one per bit of a word: at 2^22 they are 0.45 MB,
/// which stays in L2 (a byte each was 3.6 MB).
struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    fn with_capacity(n: usize) -> Self {
        Bits {
            words: Vec::with_capacity(n.div_ceil(64)),
            len: 0,
        }
    }
    #[inline(always)]
    fn get(&self, i: u32) -> bool {
        let i = i as usize;
        (self.words[i / 64] >> (i % 64)) & 1 == 1
    }
    #[inline(always)]
    fn push(&mut self, b: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        if let Some(w) = self.words.last_mut() {
            *w |= u64::from(b) << (self.len % 64);
        }
        self.len += 1;
    }
    #[inline(always)]
    fn prefetch(&self, i: u32) {
        prefetch(self.words.as_ptr().wrapping_add(i as usize / 64));
    }
}

/// The witness of `c`, replaying its size's `shape`: what the streaming
/// synthesis computes in witness-only mode, with the shape's draws read
/// instead of drawn. `enforce` is called once per row with empty
/// combinations, as a witness generator records none.
pub fn synthesize_witness<CS: ConstraintSystem<Scalar>>(
    c: &PorepLikeCircuit,
    shape: &Shape,
    cs: &mut CS,
) -> Result<(), SynthesisError> {
    let mut wrng = c.rng(WITNESS_STREAM);
    let mut bits = Bits::with_capacity(shape.bits);
    let mut fields: Vec<Scalar> = Vec::with_capacity(shape.fields);
    for (i, x) in c.public_inputs().into_iter().enumerate() {
        let input = cs.alloc_input(|| format!("input {i}"), || Ok(x))?;
        cs.alloc(|| "", || Ok(x))?;
        cs.enforce(|| "", |l| l + UNRECORDED, |l| l + CS::one(), |l| l + input);
        fields.push(x);
    }
    let bops = &shape.bit_operands[..];
    let fops = &shape.field_operands[..];
    let coeffs = &shape.coefficients[..];
    let (mut ob, mut of, mut k) = (0usize, 0usize, 0usize);
    // The operand `ahead` places on, once the stream's index `at` is used.
    let bit_ahead = |bits: &Bits, at: usize| {
        if let Some(i) = bops.get(at + BIT_PREFETCH) {
            bits.prefetch(*i);
        }
    };
    let field_ahead = |fields: &Vec<Scalar>, at: usize| {
        if let Some(i) = fops.get(at + FIELD_PREFETCH) {
            prefetch(fields.as_ptr().wrapping_add(*i as usize));
        }
    };
    for kind in &shape.kinds {
        match kind {
            Kind::And | Kind::Xor => {
                bit_ahead(&bits, ob);
                bit_ahead(&bits, ob + 1);
                let (x, y) = (bits.get(bops[ob]), bits.get(bops[ob + 1]));
                ob += 2;
                let z = if *kind == Kind::And { x & y } else { x ^ y };
                cs.alloc(|| "", || Ok(bit_value(z)))?;
                bits.push(z);
            }
            Kind::Bit => {
                let z: bool = wrng.gen();
                cs.alloc(|| "", || Ok(bit_value(z)))?;
                bits.push(z);
            }
            Kind::Pack => {
                // val = state + Σ c·x over bits x: only the set bits add.
                field_ahead(&fields, of);
                let mut val = fields[fops[of] as usize];
                of += 1;
                let row_ops = &bops[ob..ob + PACK_WIDTH];
                let row_coeffs = &coeffs[k..k + PACK_WIDTH];
                for (j, (x, c)) in row_ops.iter().zip(row_coeffs).enumerate() {
                    bit_ahead(&bits, ob + j);
                    if bits.get(*x) {
                        val += c;
                    }
                }
                ob += PACK_WIDTH;
                k += PACK_WIDTH;
                cs.alloc(|| "", || Ok(val))?;
                fields.push(val);
            }
            Kind::Mul => {
                field_ahead(&fields, of);
                field_ahead(&fields, of + 1);
                let z = fields[fops[of] as usize] * fields[fops[of + 1] as usize];
                of += 2;
                cs.alloc(|| "", || Ok(z))?;
                fields.push(z);
            }
            Kind::Square => {
                field_ahead(&fields, of);
                let z = fields[fops[of] as usize].square();
                of += 1;
                cs.alloc(|| "", || Ok(z))?;
                fields.push(z);
            }
        }
        cs.enforce(|| "", |l| l, |l| l, |l| l);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiled::WitnessCs;
    use bellpepper_core::Circuit;

    fn streamed(log: u32, seed: u64) -> crate::compiled::Witness {
        let mut cs = WitnessCs::with_one();
        super::super::synthesize_streaming(PorepLikeCircuit::new(log, seed), &mut cs).unwrap();
        cs.into_witness()
    }

    fn replayed(log: u32, seed: u64) -> crate::compiled::Witness {
        let shape = Shape::record(log);
        let mut cs = WitnessCs::with_one();
        synthesize_witness(&PorepLikeCircuit::new(log, seed), &shape, &mut cs).unwrap();
        cs.into_witness()
    }

    #[test]
    fn replayed_witness_equals_streamed() {
        let seed: u64 = rand::random();
        for log in (2u32..=12).chain([13, 15, 17]) {
            for s in [seed, seed.wrapping_add(1), 0] {
                let (a, b) = (streamed(log, s), replayed(log, s));
                assert!(
                    a.inputs == b.inputs && a.aux == b.aux,
                    "porep-like 2^{log} seed {s}: replayed witness differs"
                );
                assert_eq!(a.inputs.len() + a.aux.len(), 1 << log);
            }
        }
    }

    #[test]
    fn the_public_path_uses_the_cache_and_matches() {
        for log in [2u32, 9, 14] {
            let mut cs = WitnessCs::with_one();
            PorepLikeCircuit::new(log, 11).synthesize(&mut cs).unwrap();
            let w = cs.into_witness();
            let s = streamed(log, 11);
            assert!(w.inputs == s.inputs && w.aux == s.aux, "2^{log}");
            let cached = cached(log).expect("cached");
            assert!(cached.get().is_some());
        }
        assert!(cached(MAX_CACHED_LOG_SIZE + 1).is_none());
        let cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        assert!(cache.len() <= CACHED_SHAPES);
    }

    /// Every operand that is not a fresh value is picked within its
    /// window: walks a recorded shape past every window (2^17: ~110000
    /// bits, ~30000 B-pool bits, ~2600 B-pool field values), keeping the
    /// pools as the circuit defines them.
    #[test]
    fn picks_stay_in_their_windows() {
        let log = 17;
        let shape = Shape::record(log);
        let inputs = PorepLikeCircuit::new(log, 0).num_public_inputs();
        let (mut bits, mut fields) = (0usize, inputs);
        let (mut b_bits, mut b_fields): (Vec<u32>, Vec<u32>) = (vec![], vec![]);
        let (mut ob, mut of) = (0usize, 0usize);
        // The oldest pick seen in each pool, as a distance back.
        let (mut deepest_b_bit, mut deepest_b_field, mut deepest_bit) = (0, 0, 0);
        let in_last = |pool: &[u32], window: usize, x: u32| {
            let recent = &pool[pool.len().saturating_sub(window)..];
            recent
                .iter()
                .rposition(|v| *v == x)
                .map(|i| recent.len() - i)
        };
        for kind in &shape.kinds {
            let bit = |x: u32, bits: usize, deepest: &mut usize| {
                let back = bits - x as usize;
                assert!((1..=BIT_WINDOW).contains(&back), "bit {back} back");
                *deepest = (*deepest).max(back);
            };
            let field = |x: u32, fields: usize| {
                let back = fields - x as usize;
                assert!((1..=FIELD_WINDOW).contains(&back), "field {back} back");
            };
            match kind {
                Kind::And | Kind::Xor => {
                    let (x, y) = (shape.bit_operands[ob], shape.bit_operands[ob + 1]);
                    ob += 2;
                    bit(x, bits, &mut deepest_bit);
                    let back = in_last(&b_bits, B_BIT_WINDOW, y).expect("y in the B window");
                    deepest_b_bit = deepest_b_bit.max(back);
                    bits += 1;
                }
                Kind::Bit => {
                    b_bits.push(bits as u32);
                    bits += 1;
                }
                Kind::Pack => {
                    field(shape.field_operands[of], fields);
                    of += 1;
                    for x in &shape.bit_operands[ob..ob + PACK_WIDTH] {
                        bit(*x, bits, &mut deepest_bit);
                    }
                    ob += PACK_WIDTH;
                    fields += 1;
                }
                Kind::Mul => {
                    let (x, y) = (shape.field_operands[of], shape.field_operands[of + 1]);
                    of += 2;
                    field(x, fields);
                    let back =
                        in_last(&b_fields, B_FIELD_WINDOW, y).expect("y in the B-field window");
                    deepest_b_field = deepest_b_field.max(back);
                    fields += 1;
                }
                Kind::Square => {
                    let x = shape.field_operands[of];
                    of += 1;
                    field(x, fields);
                    b_fields.push(x);
                    fields += 1;
                }
            }
        }
        assert_eq!(
            (ob, of),
            (shape.bit_operands.len(), shape.field_operands.len())
        );
        assert_eq!((bits, fields), (shape.bits, shape.fields));
        assert!(b_bits.len() > 4 * B_BIT_WINDOW && b_fields.len() > 4 * B_FIELD_WINDOW);
        assert!(bits > 4 * BIT_WINDOW);
        // The picks use their whole window, not only its newest values.
        assert!(deepest_bit > BIT_WINDOW * 9 / 10, "{deepest_bit}");
        assert!(deepest_b_bit > B_BIT_WINDOW * 9 / 10, "{deepest_b_bit}");
        assert!(
            deepest_b_field > B_FIELD_WINDOW * 9 / 10,
            "{deepest_b_field}"
        );
    }

    /// `Recent` keeps what its window needs and picks as a plain list of
    /// every value would, for windows of 1, small and odd, across drops.
    #[test]
    fn recent_picks_as_the_whole_pool() {
        use rand::SeedableRng;
        for window in [1usize, 2, 5, 64] {
            let mut recent = Recent::new(window);
            let mut all = Vec::new();
            let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(window as u64);
            let mut r2 = r1.clone();
            for i in 0..1000u32 {
                recent.push(i);
                all.push(i);
                assert_eq!(recent.len(), all.len());
                assert!(recent.items.len() <= 2 * window);
                let got = recent.pick(&mut r1);
                let want = all[recent_index(&mut r2, all.len(), window)];
                assert_eq!(got, want);
                assert!(all.len() - got as usize <= window);
            }
        }
    }

    #[test]
    fn shape_bytes_per_row() {
        let log = 16;
        let b = Shape::record(log).bytes() as f64 / (1u64 << log) as f64;
        assert!((25.0..35.0).contains(&b), "{b} bytes per row");
    }
}
