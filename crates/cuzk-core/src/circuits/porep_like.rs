//! `porep-like`: a benchmark circuit family shaped like a Filecoin PoRep
//! partition, deterministic from (log_size, seed).
//!
//! What makes a PoRep partition's proving cost is its shape, which this
//! reproduces: most aux variables are bits (SHA-256 and Merkle path
//! gadgets), nearly every aux variable occurs in A, about a quarter occur in
//! B, some values are full-width field elements (Poseidon state, packed
//! bits), and a few hundred public inputs (comm_r, challenges) at full size.
//!
//! Each row allocates one variable; its kind is drawn from a fixed mix:
//! - `and`: z = x·y, x a bit not yet used in A, y a bit from the B pool;
//! - `xor`: z = x ⊕ y via (2x)·y = x + y − z;
//! - `bit`: a new boolean b with b·b = b, which joins the B pool;
//! - `pack`: v = s + Σ c_k·bit_k, s a field value not yet used in A and
//!   c_k random and full-width (an MDS-like mix);
//! - `mul`: u = v·w, v a field value not yet used in A, w a field value from
//!   the B pool;
//! - `square`: u = v·v, which puts v in the B pool.
//!
//! Variables wait in a queue until some row uses them in A, so A ends up
//! touching all but the last few. Operands that do not come from the queue
//! are picked among the most recent values of their pool (see
//! [`BIT_WINDOW`]), as a gadget reads the words of its last few rounds: the
//! witness's reads stay in a core's cache however large the circuit. The
//! rows fill the 2^log_size domain exactly: circuit rows plus one input
//! constraint per input (the constant one included) equal 2^log_size.
//!
//! The shape (rows, operands, coefficients, hence the densities) depends
//! on `log_size` alone; the seed picks the witness and the public inputs.
//! So one set of parameters serves every seed of a size, as one Filecoin
//! parameter file serves every partition.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

mod shape;
pub use shape::{CACHED_SHAPES, MAX_CACHED_LOG_SIZE};

pub const DEFAULT_LOG_SIZE: u32 = 16;
pub const MIN_LOG_SIZE: u32 = 2;
/// 2^30 constraints is past any Filecoin circuit and keeps row counts in u32.
pub const MAX_LOG_SIZE: u32 = 30;
/// Public inputs at full size (Filecoin's 32 GiB PoRep partition has a few
/// hundred: comm_r, comm_d and the challenges).
pub const FULL_PUBLIC_INPUTS: usize = 300;

/// Bits packed into one full-width value by a `pack` row.
const PACK_WIDTH: usize = 16;

/// The version of the shape that [`PorepLikeCircuit`] synthesizes. Parameters
/// and compiled systems serve one shape only, yet a size's counts and
/// densities need not change with it: the version goes into their names
/// and identity ([`params_id`]), so a file made for another shape is never
/// found, or is refused. Raise it with any change to the rows.
/// 1: operands picked across the whole circuit (up to ab6d778);
/// 2: picked within the windows ([`BIT_WINDOW`] and the others).
pub const SHAPE_VERSION: u32 = 2;

/// The identity of `log_size`'s porep-like shape: the stem of its parameter
/// files (`<id>.params`, `.vk`, `.r1cs`) and its compiled system's circuit
/// id, `porep-like-<log>-v<SHAPE_VERSION>`.
pub fn params_id(log_size: u32) -> String {
    format!("porep-like-{log_size}-v{SHAPE_VERSION}")
}

/// Rows pick the operands that do not come from the fresh queues among the
/// last values of each pool, never across the whole circuit: a SHA-256
/// round reads the words of the last few rounds, a Merkle path gadget the
/// hash it just made. The windows bound what a witness reads to ~130 KB
/// whatever the size, in a core's L2 (1 MiB per core on the EPYC dev
/// machine, 2 MiB on Sapphire/Emerald Rapids) with room for the streamed
/// shape and the witness being written:
/// - `BIT_WINDOW`: the last 16384 bits (2 KB of the replay's bit array),
///   for `pack`'s bits once the fresh queue is dry (~15 of its 16);
/// - `B_BIT_WINDOW`: the last 4096 B-pool bits (spanning ~15000 bits), for
///   `and`/`xor`'s right operand;
/// - `B_FIELD_WINDOW`: the last 512 B-pool field values (spanning ~3600
///   field values, ~115 KB), for `mul`'s right operand;
/// - `FIELD_WINDOW`: the last 4096 field values (128 KB), for a left field
///   operand when the fresh queue is dry, which it never is: every field
///   row takes one fresh value and makes one, so the queue keeps the
///   public inputs' count and its values are that many fields old.
///
/// Sizes whose pools stay within the windows draw the same shape as
/// version 1 (the compiled systems' counts at 2^12-2^14 are version 1's;
/// 2^16 differs).
pub const BIT_WINDOW: usize = 1 << 14;
pub const B_BIT_WINDOW: usize = 1 << 12;
pub const B_FIELD_WINDOW: usize = 1 << 9;
pub const FIELD_WINDOW: usize = 1 << 12;

/// The index a row picks in a pool of `len` values: uniform among the last
/// `window` (as usize, so that the draw is the same whatever the pool's
/// storage; a range of `n` values draws as `0..n` does, so a pool within
/// its window draws as version 1 did).
fn recent_index(rng: &mut impl Rng, len: usize, window: usize) -> usize {
    rng.gen_range(len.saturating_sub(window)..len)
}

/// The last values of a pool, for [`recent_index`]'s picks: what falls
/// out of the window is dropped, so a pool holds at most twice its window
/// however large the circuit.
struct Recent<T> {
    window: usize,
    /// Values pushed and dropped since the start.
    dropped: usize,
    items: Vec<T>,
}

impl<T: Copy> Recent<T> {
    fn new(window: usize) -> Self {
        Recent {
            window,
            dropped: 0,
            items: Vec::new(),
        }
    }
    /// Values pushed since the start.
    fn len(&self) -> usize {
        self.dropped + self.items.len()
    }
    fn push(&mut self, x: T) {
        if self.items.len() >= 2 * self.window {
            // Keeps the last `window`, which every later pick's range
            // starts within.
            let drop = self.items.len() - self.window;
            self.items.drain(..drop);
            self.dropped += drop;
        }
        self.items.push(x);
    }
    fn pick(&self, rng: &mut impl Rng) -> T {
        self.items[recent_index(rng, self.len(), self.window) - self.dropped]
    }
}

#[derive(Clone, Debug)]
pub struct PorepLikeCircuit {
    pub log_size: u32,
    pub seed: u64,
}

/// Stream separation for the generators: public inputs and witness come
/// from the seed, the shape from the size alone.
const INPUT_STREAM: u64 = 1;
const WITNESS_STREAM: u64 = 2;
const SHAPE_STREAM: u64 = 3;
/// Seeds the shape generator (with the size); any fixed value would do.
const SHAPE_SEED: u64 = 0x706f_7265_702d_6c6b;

impl PorepLikeCircuit {
    pub fn new(log_size: u32, seed: u64) -> Self {
        Self { log_size, seed }
    }
    /// Number of public inputs (without the constant one): 1/64 of the
    /// domain, at least 1 and at most [`FULL_PUBLIC_INPUTS`].
    pub fn num_public_inputs(&self) -> usize {
        let domain = 1usize << self.log_size.min(MAX_LOG_SIZE);
        (domain / 64).clamp(1, FULL_PUBLIC_INPUTS)
    }
    /// Constraints the circuit itself enforces (without the input
    /// constraints the prover appends).
    pub fn num_circuit_constraints(&self) -> usize {
        (1usize << self.log_size.min(MAX_LOG_SIZE)) - self.num_public_inputs() - 1
    }
    fn rng(&self, stream: u64) -> ChaCha8Rng {
        let seed = if stream == SHAPE_STREAM {
            SHAPE_SEED
        } else {
            self.seed
        };
        let mut r = ChaCha8Rng::seed_from_u64(seed ^ (u64::from(self.log_size) << 56));
        r.set_stream(stream);
        r
    }
    /// The public inputs this circuit exposes (without the leading one).
    pub fn public_inputs(&self) -> Vec<Scalar> {
        let mut rng = self.rng(INPUT_STREAM);
        (0..self.num_public_inputs())
            .map(|_| Scalar::random(&mut rng))
            .collect()
    }
}

/// Host bytes per row of a recorded shape (measured by
/// [`cached_shape_bytes`]: 30.0 at 2^16 and 2^22, 29.9 at 2^20).
pub const SHAPE_BYTES_PER_ROW: u64 = 30;

/// What `log_size`'s recorded shape will take once witness-only synthesis
/// has recorded it, without recording it; 0 for sizes whose shape is not
/// cached (they stream).
pub fn shape_bytes_estimate(log_size: u32) -> u64 {
    if log_size > shape::MAX_CACHED_LOG_SIZE {
        return 0;
    }
    SHAPE_BYTES_PER_ROW << log_size
}

/// Bytes of `log_size`'s recorded shape (recording it if it is not
/// cached), or `None` for sizes whose shape is not cached.
pub fn cached_shape_bytes(log_size: u32) -> Option<usize> {
    let shape = shape::cached(log_size)?;
    shape.get().map(shape::Shape::bytes)
}

/// A variable and its value.
#[derive(Clone, Copy)]
struct Var {
    v: Variable,
    val: Scalar,
}

/// Row kinds and their weights (out of 100). `bit` and `square` feed the B
/// pool: 23 + 2 = a quarter of the rows. Bits (and, xor, bit) are 86%.
const MIX: [(Kind, u32); 6] = [
    (Kind::And, 38),
    (Kind::Xor, 25),
    (Kind::Bit, 23),
    (Kind::Pack, 4),
    (Kind::Mul, 8),
    (Kind::Square, 2),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    And,
    Xor,
    Bit,
    Pack,
    Mul,
    Square,
}

/// Variables kept for later rows, the last of each pool (see
/// [`Recent`]). Synthesis that records constraints keeps each variable with
/// its value (48 bytes); witness-only synthesis (`is_witness_generator`:
/// `enforce` records nothing and calls no closure) keeps only values, a bit
/// in a byte; the witness, the shape and every draw are the same.
enum Pool {
    Vars(Recent<Var>),
    Bits(Recent<bool>),
    Fields(Recent<Scalar>),
}

/// The variable a witness-only pool hands out: never read, since the
/// constraints that name it are never formed.
const UNRECORDED: Variable = Variable(Index::Aux(0));

impl Pool {
    fn new(witness_only: bool, bits: bool, window: usize) -> Self {
        match (witness_only, bits) {
            (false, _) => Pool::Vars(Recent::new(window)),
            (true, true) => Pool::Bits(Recent::new(window)),
            (true, false) => Pool::Fields(Recent::new(window)),
        }
    }
    fn len(&self) -> usize {
        match self {
            Pool::Vars(v) => v.len(),
            Pool::Bits(v) => v.len(),
            Pool::Fields(v) => v.len(),
        }
    }
    /// A value among the pool's last (its window).
    fn pick(&self, rng: &mut ChaCha8Rng) -> Var {
        match self {
            Pool::Vars(v) => v.pick(rng),
            Pool::Bits(v) => Var {
                v: UNRECORDED,
                val: bit_value(v.pick(rng)),
            },
            Pool::Fields(v) => Var {
                v: UNRECORDED,
                val: v.pick(rng),
            },
        }
    }
    fn push(&mut self, x: Var) {
        match self {
            Pool::Vars(v) => v.push(x),
            Pool::Bits(v) => v.push(x.val == Scalar::ONE),
            Pool::Fields(v) => v.push(x.val),
        }
    }
}

struct Builder {
    /// Shape decisions: row kinds, operands, coefficients.
    rng: ChaCha8Rng,
    /// Witness values: the free bits.
    wrng: ChaCha8Rng,
    /// Bits and field values not yet used in A.
    fresh_bits: VecDeque<Var>,
    fresh_fields: VecDeque<Var>,
    /// Variables that occur in B.
    b_bits: Pool,
    b_fields: Pool,
    /// The last bits and field values, for when the queues run dry.
    all_bits: Pool,
    all_fields: Pool,
}

impl Builder {
    fn a_bit(&mut self) -> Var {
        match self.fresh_bits.pop_front() {
            Some(v) => v,
            None => self.all_bits.pick(&mut self.rng),
        }
    }
    fn a_field(&mut self) -> Var {
        match self.fresh_fields.pop_front() {
            Some(v) => v,
            None => self.all_fields.pick(&mut self.rng),
        }
    }
    fn new_bit(&mut self, v: Var, fresh: bool) {
        self.all_bits.push(v);
        if fresh {
            self.fresh_bits.push_back(v);
        }
    }
    fn new_field(&mut self, v: Var, fresh: bool) {
        self.all_fields.push(v);
        if fresh {
            self.fresh_fields.push_back(v);
        }
    }
}

fn alloc<CS: ConstraintSystem<Scalar>>(cs: &mut CS, val: Scalar) -> Result<Var, SynthesisError> {
    let v = cs.alloc(|| "", || Ok(val))?;
    Ok(Var { v, val })
}

fn lc(v: Var) -> LinearCombination<Scalar> {
    LinearCombination::zero() + v.v
}

fn bit_value(b: bool) -> Scalar {
    if b {
        Scalar::ONE
    } else {
        Scalar::ZERO
    }
}

/// The kind a roll in `0..100` picks from [`MIX`].
fn roll_kind(mut roll: u32) -> Kind {
    MIX.iter()
        .find(|(_, w)| {
            if roll < *w {
                true
            } else {
                roll -= w;
                false
            }
        })
        .map(|m| m.0)
        .unwrap_or(Kind::And)
}

impl Circuit<Scalar> for PorepLikeCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if !(MIN_LOG_SIZE..=MAX_LOG_SIZE).contains(&self.log_size) {
            // The smallest domain holds one input copy row and the two input
            // constraints; the largest is a sanity bound.
            return Err(SynthesisError::PolynomialDegreeTooLarge);
        }
        // Witness-only synthesis replays the size's recorded shape (the
        // same witness without the shape's draws); synthesis that records
        // constraints, and sizes too large to cache, draw it as they go.
        if cs.is_witness_generator() {
            if let Some(shape) = shape::cached(self.log_size) {
                if let Some(shape) = shape.get() {
                    return shape::synthesize_witness(&self, shape, cs);
                }
            }
        }
        synthesize_streaming(self, cs)
    }
}

/// porep-like drawing its shape as it goes: the definition of the shape
/// (which [`shape::Shape::record`] reproduces) and of the witness.
fn synthesize_streaming<CS: ConstraintSystem<Scalar>>(
    c: PorepLikeCircuit,
    cs: &mut CS,
) -> Result<(), SynthesisError> {
    let rows = c.num_circuit_constraints();
    let inputs = c.public_inputs();
    let witness_only = cs.is_witness_generator();
    let mut b = Builder {
        rng: c.rng(SHAPE_STREAM),
        wrng: c.rng(WITNESS_STREAM),
        fresh_bits: VecDeque::new(),
        fresh_fields: VecDeque::new(),
        b_bits: Pool::new(witness_only, true, B_BIT_WINDOW),
        b_fields: Pool::new(witness_only, false, B_FIELD_WINDOW),
        all_bits: Pool::new(witness_only, true, BIT_WINDOW),
        all_fields: Pool::new(witness_only, false, FIELD_WINDOW),
    };
    let mut done = 0usize;

    // Public inputs: each copied into an aux value (x·1 = input), which
    // then feeds the body like any field value.
    for (i, x) in inputs.iter().enumerate() {
        let input = cs.alloc_input(|| format!("input {i}"), || Ok(*x))?;
        let copy = alloc(cs, *x)?;
        cs.enforce(|| "", |l| l + copy.v, |l| l + CS::one(), |l| l + input);
        b.new_field(copy, true);
        done += 1;
    }
    // Seed the pools so every kind has operands from the first row.
    while done < rows && (b.b_bits.len() < 2 || b.all_bits.len() < 2) {
        let bit = alloc(cs, bit_value(b.wrng.gen()))?;
        cs.enforce(|| "", |l| l + bit.v, |l| l + bit.v, |l| l + bit.v);
        b.b_bits.push(bit);
        b.new_bit(bit, false);
        done += 1;
    }
    if done < rows {
        // One B-pool field value, so `mul` always has a right operand.
        let v = b.a_field();
        let sq = alloc(cs, v.val.square())?;
        cs.enforce(|| "", |l| l + v.v, |l| l + v.v, |l| l + sq.v);
        b.b_fields.push(v);
        b.new_field(sq, true);
        done += 1;
    }

    let total: u32 = MIX.iter().map(|m| m.1).sum();
    while done < rows {
        let kind = roll_kind(b.rng.gen_range(0..total));
        match kind {
            Kind::And => {
                let x = b.a_bit();
                let y = b.b_bits.pick(&mut b.rng);
                let z = alloc(cs, x.val * y.val)?;
                cs.enforce(|| "and", |l| l + x.v, |l| l + y.v, |l| l + z.v);
                b.new_bit(z, true);
            }
            Kind::Xor => {
                let x = b.a_bit();
                let y = b.b_bits.pick(&mut b.rng);
                let z = alloc(cs, x.val + y.val - x.val.double() * y.val)?;
                cs.enforce(
                    || "xor",
                    |l| l + x.v + x.v,
                    |l| l + y.v,
                    |l| l + x.v + y.v - z.v,
                );
                b.new_bit(z, true);
            }
            Kind::Bit => {
                let bit = alloc(cs, bit_value(b.wrng.gen()))?;
                cs.enforce(|| "bool", |l| l + bit.v, |l| l + bit.v, |l| l + bit.v);
                b.b_bits.push(bit);
                b.new_bit(bit, false);
            }
            Kind::Pack => {
                // State plus a mix of bits, as a Poseidon round adds
                // its input to the state.
                let state = b.a_field();
                let mut sum = lc(state);
                let mut val = state.val;
                for _ in 0..PACK_WIDTH {
                    let x = b.a_bit();
                    let c = Scalar::random(&mut b.rng);
                    sum = sum + (c, x.v);
                    val += c * x.val;
                }
                let v = alloc(cs, val)?;
                cs.enforce(|| "pack", |_| sum, |l| l + CS::one(), |l| l + v.v);
                b.new_field(v, true);
            }
            Kind::Mul => {
                let x = b.a_field();
                let y = b.b_fields.pick(&mut b.rng);
                let z = alloc(cs, x.val * y.val)?;
                cs.enforce(|| "mul", |l| l + x.v, |l| l + y.v, |l| l + z.v);
                b.new_field(z, true);
            }
            Kind::Square => {
                let x = b.a_field();
                let z = alloc(cs, x.val.square())?;
                cs.enforce(|| "square", |_| lc(x), |_| lc(x), |l| l + z.v);
                b.b_fields.push(x);
                b.new_field(z, true);
            }
        }
        done += 1;
    }
    Ok(())
}
