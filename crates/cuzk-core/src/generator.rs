//! Random Groth16 parameters for a circuit: insecure (the toxic waste is
//! known to this process), for development, tests and benchmarks only.
//!
//! The output matches bellperson's `generate_random_parameters` in layout:
//! the same QAP (the circuit's constraints, then `input_i * 0 = 0` per
//! input), h of length n − 1 over the padded domain, a/b_g1/b_g2 with the
//! points at infinity (variables absent from that column) filtered out, and
//! an error for an aux variable that occurs in no constraint.
//!
//! The constraint matrices come from a synthesis of the circuit
//! ([`generate_parameters_into`]) or from its compiled constraint system
//! ([`generate_parameters_compiled_into`], which runs no circuit code: the
//! compiled rows already hold the input constraints); the parameters are
//! the same bytes either way.
//!
//! Speed comes from fixed-base tables: every query point is a multiple of
//! one of two bases (g1, g2), so each is a sum of 17 to 22 precomputed
//! affine points with no doublings. Where those multiples are computed is a
//! [`FixedBaseEngine`]: [`CpuFixedBase`] here (parallel chunks, one
//! inversion per chunk); cuzk-gpu's runs them on a GPU from the same tables,
//! with the same results bit for bit.

use crate::compiled::{CompiledCircuit, SparseMatrix, COEF_MINUS_ONE, COEF_ONE};
use crate::params::{Parameters, ParamsCollector, ParamsSink, Section, VerifyingKey};
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
use std::time::{Duration, Instant};

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

/// Evaluations of a recorded matrix's columns at tau: Σ_rows coeff·L_row(tau)
/// for every variable, inputs first, then aux.
fn eval_columns(
    entries: &[Entry],
    lagrange: &[Scalar],
    num_inputs: usize,
    num_aux: usize,
) -> Vec<Scalar> {
    if entries.len() < PARALLEL_EVAL_MIN || u32::try_from(entries.len()).is_err() {
        return eval_columns_serial(entries, lagrange, num_inputs, num_aux);
    }
    eval_columns_par(entries, lagrange, num_inputs, num_aux)
}

/// Below this many entries one thread is quicker than the bucketing.
const PARALLEL_EVAL_MIN: usize = 1 << 14;
/// Entries per work item of the bucketing pass.
const EVAL_CHUNK: usize = 1 << 16;

fn eval_columns_serial(
    entries: &[Entry],
    lagrange: &[Scalar],
    num_inputs: usize,
    num_aux: usize,
) -> Vec<Scalar> {
    let mut all = vec![Scalar::ZERO; num_inputs + num_aux];
    for e in entries {
        let t = e.coeff * lagrange[e.row as usize];
        if e.input {
            all[e.var as usize] += t;
        } else {
            all[num_inputs + e.var as usize] += t;
        }
    }
    all
}

/// The same sums on every core: the variables (inputs, then aux) are cut
/// into ranges, the entries sorted into one list of positions per range
/// (in parallel over runs of entries), and each range summed by one task
/// into its own part of the output. Field addition is exact, so the order
/// of the terms does not change a sum.
fn eval_columns_par(
    entries: &[Entry],
    lagrange: &[Scalar],
    num_inputs: usize,
    num_aux: usize,
) -> Vec<Scalar> {
    let total = num_inputs + num_aux;
    let ranges = (rayon::current_num_threads() * 4).clamp(1, total.max(1));
    let width = total.div_ceil(ranges).max(1);
    let slot = |e: &Entry| {
        if e.input {
            e.var as usize
        } else {
            num_inputs + e.var as usize
        }
    };
    // lists[chunk][range]: positions (in `entries`) of that chunk's entries
    // whose variable falls in the range.
    let lists: Vec<Vec<Vec<u32>>> = entries
        .par_chunks(EVAL_CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut v = vec![Vec::new(); ranges];
            for (i, e) in chunk.iter().enumerate() {
                v[slot(e) / width].push((c * EVAL_CHUNK + i) as u32);
            }
            v
        })
        .collect();
    let mut all = vec![Scalar::ZERO; total];
    all.par_chunks_mut(width).enumerate().for_each(|(r, dst)| {
        let base = r * width;
        for chunk in &lists {
            for &k in &chunk[r] {
                let e = &entries[k as usize];
                dst[slot(e) - base] += e.coeff * lagrange[e.row as usize];
            }
        }
    });
    all
}

// ---------------------------------------------------------------------------
// Column evaluations from a compiled system's rows.

/// One of a compiled system's matrices, in compressed sparse rows (see
/// [`crate::compiled::SparseMatrix`]), with its coefficient table.
#[derive(Clone, Copy)]
struct CsrMatrix<'a> {
    row_start: &'a [u64],
    cols: &'a [u32],
    coefs: &'a [u32],
    table: &'a [Scalar],
}

impl<'a> CsrMatrix<'a> {
    fn of(m: &'a SparseMatrix, table: &'a [Scalar]) -> Self {
        CsrMatrix {
            row_start: m.row_start(),
            cols: m.cols(),
            coefs: m.coefs(),
            table,
        }
    }
    fn rows(&self) -> usize {
        self.row_start.len().saturating_sub(1)
    }
    fn row(&self, r: usize) -> std::ops::Range<usize> {
        self.row_start[r] as usize..self.row_start[r + 1] as usize
    }
    /// `*dst += coefficient(coef) · l`, the ±1 coefficients (most of a real
    /// circuit's) without a multiplication. Exactly the field's
    /// `coeff · l` either way.
    #[inline]
    fn add_term(&self, dst: &mut Scalar, coef: u32, l: &Scalar) {
        match coef {
            COEF_ONE => *dst += l,
            COEF_MINUS_ONE => *dst -= l,
            c => *dst += self.table[c as usize] * l,
        }
    }
}

/// Entries per block of rows in [`eval_compiled_par`]: its scratch is 12
/// bytes an entry, so 96 MiB (about twice that in vector slack) whatever
/// the matrix's size; at 32 GiB (about 300 M entries a matrix) that is
/// some 40 blocks, each two parallel passes, whose barriers cost nothing
/// beside the 2^23 entries' work.
const COMPILED_BLOCK_ENTRIES: usize = 1 << 23;
/// Inputs up to this many are summed by each task into a private vector
/// and added up at the end: the constant one's column is in a large share
/// of the rows (every boolean constraint has it), and as part of one range
/// of the shared output it would be one task's work. 4096 inputs are 128
/// KiB a task.
const LOCAL_INPUTS_MAX: usize = 1 << 12;
/// Column buckets for balancing the ranges: the ranges are cut at bucket
/// edges so that each holds about the same number of entries.
const BALANCE_BUCKETS: usize = 1 << 16;

/// A compiled matrix's column evaluations at tau (Σ over each column's
/// entries of coefficient · L_row(tau)) for all `vars` variables.
fn eval_compiled(
    m: CsrMatrix<'_>,
    lagrange: &[Scalar],
    num_inputs: usize,
    vars: usize,
) -> Vec<Scalar> {
    if m.cols.len() < PARALLEL_EVAL_MIN {
        return eval_compiled_serial(m, lagrange, vars);
    }
    let local = if num_inputs <= LOCAL_INPUTS_MAX {
        num_inputs
    } else {
        0
    };
    // Four ranges per thread, balanced by entry counts, for rayon to
    // steal among. More (finer ranges, whose part of the output stays in
    // cache) measured no better at 2^20 on the loaded 2-core machine:
    // 64 to 1024 ranges were 0–50% slower than 8 (the first pass then
    // scatters into that many lists).
    let ranges = 4 * rayon::current_num_threads();
    eval_compiled_par(m, lagrange, vars, local, COMPILED_BLOCK_ENTRIES, ranges)
}

/// The reference: row by row on one thread.
fn eval_compiled_serial(m: CsrMatrix<'_>, lagrange: &[Scalar], vars: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; vars];
    for (r, l) in lagrange.iter().enumerate().take(m.rows()) {
        for k in m.row(r) {
            m.add_term(&mut out[m.cols[k] as usize], m.coefs[k], l);
        }
    }
    out
}

/// An entry routed to the range of columns it adds to.
#[derive(Clone, Copy)]
struct Routed {
    col: u32,
    row: u32,
    coef: u32,
}

/// How columns `first..vars` are cut into ranges of about equal entry
/// counts: `bounds[r]..bounds[r + 1]` is range r, cut at bucket edges
/// (`col >> shift`), and `bucket_range[b]` the range of bucket b.
struct ColumnRanges {
    bounds: Vec<usize>,
    shift: u32,
    bucket_range: Vec<u32>,
}

impl ColumnRanges {
    fn new(cols: &[u32], first: usize, vars: usize, ranges: usize) -> Self {
        let mut shift = 0u32;
        while (vars >> shift) >= BALANCE_BUCKETS {
            shift += 1;
        }
        let buckets = (vars >> shift) + 1;
        let hist = cols
            .par_chunks(1 << 16)
            .fold(
                || vec![0u64; buckets],
                |mut h, chunk| {
                    for &c in chunk {
                        if c as usize >= first {
                            h[(c >> shift) as usize] += 1;
                        }
                    }
                    h
                },
            )
            .reduce(
                || vec![0u64; buckets],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let total: u64 = hist.iter().sum();
        let ranges = ranges.max(1) as u64;
        let mut bounds = vec![first];
        let mut bucket_range = vec![0u32; buckets];
        let mut seen = 0u64;
        for (b, &h) in hist.iter().enumerate() {
            let edge = (b << shift).max(first);
            // A new range starts at this bucket once the entries before it
            // pass the next share of the total.
            let k = bounds.len() as u64;
            // (Without entries, one range: not one per bucket.)
            let due = total > 0 && seen * ranges >= k * total;
            if due && edge > *bounds.last().unwrap_or(&first) && edge < vars {
                bounds.push(edge);
            }
            bucket_range[b] = (bounds.len() - 1) as u32;
            seen += h;
        }
        bounds.push(vars.max(first));
        ColumnRanges {
            bounds,
            shift,
            bucket_range,
        }
    }
    fn count(&self) -> usize {
        self.bounds.len() - 1
    }
    #[inline]
    fn of(&self, col: u32) -> usize {
        self.bucket_range[(col >> self.shift) as usize] as usize
    }
}

/// The same sums on every core, in blocks of rows of about `block`
/// entries: each block's rows are cut into pieces, each piece (one task)
/// routes its entries to the range of columns they add to (entries of the
/// first `local_inputs` columns it sums into its own vector instead), then
/// each range (one task) adds its entries into its own part of the
/// output (`ranges` of them, about equal in entries). No atomics, no
/// locks, and scratch bounded by the block, not the matrix. Field addition is exact: the order of the terms does not
/// change a sum, so the result is the serial one.
fn eval_compiled_par(
    m: CsrMatrix<'_>,
    lagrange: &[Scalar],
    vars: usize,
    local_inputs: usize,
    block: usize,
    ranges: usize,
) -> Vec<Scalar> {
    let threads = rayon::current_num_threads();
    let ranges = ColumnRanges::new(m.cols, local_inputs, vars, ranges);
    let pieces = 4 * threads;
    let mut out = vec![Scalar::ZERO; vars];
    let mut routed: Vec<Vec<Vec<Routed>>> = vec![vec![Vec::new(); ranges.count()]; pieces];
    let mut locals: Vec<Vec<Scalar>> = vec![vec![Scalar::ZERO; local_inputs]; pieces];
    let rows = m.rows();
    let mut r0 = 0;
    while r0 < rows {
        // Rows r0..r1 with about `block` entries (one row at least).
        let target = m.row_start[r0].saturating_add(block as u64);
        let r1 = (m.row_start.partition_point(|&s| s <= target) - 1).clamp(r0 + 1, rows);
        let per = (r1 - r0).div_ceil(pieces);
        routed
            .par_iter_mut()
            .zip(locals.par_iter_mut())
            .enumerate()
            .for_each(|(p, (lists, local))| {
                lists.iter_mut().for_each(Vec::clear);
                let a = (r0 + p * per).min(r1);
                let end = (a + per).min(r1);
                for (r, l) in lagrange.iter().enumerate().take(end).skip(a) {
                    for k in m.row(r) {
                        let (col, coef) = (m.cols[k], m.coefs[k]);
                        if (col as usize) < local_inputs {
                            m.add_term(&mut local[col as usize], coef, l);
                        } else {
                            lists[ranges.of(col)].push(Routed {
                                col,
                                row: r as u32,
                                coef,
                            });
                        }
                    }
                }
            });
        let mut parts = Vec::with_capacity(ranges.count());
        let mut rest = &mut out[local_inputs..];
        for w in ranges.bounds.windows(2) {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
            parts.push(part);
            rest = tail;
        }
        parts.into_par_iter().enumerate().for_each(|(r, dst)| {
            let base = ranges.bounds[r];
            for lists in &routed {
                for e in &lists[r] {
                    m.add_term(
                        &mut dst[e.col as usize - base],
                        e.coef,
                        &lagrange[e.row as usize],
                    );
                }
            }
        });
        r0 = r1;
    }
    for local in &locals {
        for (o, v) in out.iter_mut().zip(local) {
            *o += v;
        }
    }
    out
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

/// The group operations the fixed-base table needs (G1 and G2).
pub trait FixedBaseGroup:
    Curve
    + Group<Scalar = Scalar>
    + Send
    + Sync
    + for<'a> AddAssign<&'a <Self as Curve>::AffineRepr>
    + for<'a> SubAssign<&'a <Self as Curve>::AffineRepr>
where
    <Self as Curve>::AffineRepr: Send + Sync + Copy,
{
    /// Batch conversion to affine.
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

/// A fixed-base table: table[w·half + d − 1] = d·2^(c·w)·base for d in
/// 1..=half, half = 2^(c−1), w < ⌈256/c⌉. Multiples of the base by any
/// scalar are sums of one entry per row (signed digits), which is what
/// [`FixedBaseTable::mul`] and the GPU kernels compute.
pub struct FixedBaseTable<G: FixedBaseGroup>
where
    G::AffineRepr: Send + Sync + Copy,
{
    window: usize,
    windows: usize,
    table: Vec<G::AffineRepr>,
}

impl<G: FixedBaseGroup> FixedBaseTable<G>
where
    G::AffineRepr: Send + Sync + Copy,
{
    /// A table for about `count` multiples of `base`.
    pub fn new(base: G, count: usize) -> Self {
        Self::with_window(base, best_window(count))
    }

    /// A table of window `window` bits, in `MIN_WINDOW..=MAX_WINDOW` (4..=13).
    pub fn with_window(base: G, window: usize) -> Self {
        assert!(
            (MIN_WINDOW..=MAX_WINDOW).contains(&window),
            "fixed-base window {window} outside {MIN_WINDOW}..={MAX_WINDOW}"
        );
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
        FixedBaseTable {
            window,
            windows,
            table,
        }
    }

    /// Window width c in bits.
    pub fn window(&self) -> usize {
        self.window
    }
    /// Rows: ⌈256/c⌉.
    pub fn windows(&self) -> usize {
        self.windows
    }
    /// The entries, row by row (windows × 2^(c−1) affine points).
    pub fn points(&self) -> &[G::AffineRepr] {
        &self.table
    }

    /// s · base.
    pub fn mul(&self, s: &Scalar) -> G {
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

    /// The multiples of the base by each scalar, in affine form, on the
    /// CPU (rayon). The output is allocated once and filled in place.
    pub fn mul_many(&self, scalars: &[Scalar]) -> Vec<G::AffineRepr> {
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

/// Where parameter generation's fixed-base multiplications run.
pub trait FixedBaseEngine: Sync {
    /// For reports: "cpu", or the device.
    fn name(&self) -> String;
    /// table · s for each scalar, affine, in order.
    fn mul_g1(
        &self,
        table: &FixedBaseTable<G1Projective>,
        scalars: &[Scalar],
    ) -> Result<Vec<G1Affine>>;
    fn mul_g2(
        &self,
        table: &FixedBaseTable<G2Projective>,
        scalars: &[Scalar],
    ) -> Result<Vec<G2Affine>>;
}

/// The multiplications on this machine's cores (rayon).
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuFixedBase;

impl FixedBaseEngine for CpuFixedBase {
    fn name(&self) -> String {
        "cpu".into()
    }
    fn mul_g1(
        &self,
        table: &FixedBaseTable<G1Projective>,
        scalars: &[Scalar],
    ) -> Result<Vec<G1Affine>> {
        Ok(table.mul_many(scalars))
    }
    fn mul_g2(
        &self,
        table: &FixedBaseTable<G2Projective>,
        scalars: &[Scalar],
    ) -> Result<Vec<G2Affine>> {
        Ok(table.mul_many(scalars))
    }
}

/// An engine's output must have one point per scalar.
fn expect_len<A>(
    engine: &dyn FixedBaseEngine,
    query: &str,
    points: Vec<A>,
    want: usize,
) -> Result<Vec<A>> {
    if points.len() == want {
        return Ok(points);
    }
    Err(Error::Backend {
        backend: "fixed-base",
        source: format!(
            "engine {} returned {} points for the {query} query of {want}",
            engine.name(),
            points.len()
        )
        .into(),
    })
}

/// The secrets parameters are made from ("toxic waste"): whoever knows
/// them can forge proofs, hence random parameters are for development only.
#[derive(Clone, Copy, Debug)]
pub struct ToxicWaste {
    pub g1: G1Projective,
    pub g2: G2Projective,
    pub alpha: Scalar,
    pub beta: Scalar,
    pub gamma: Scalar,
    pub delta: Scalar,
    pub tau: Scalar,
}

impl ToxicWaste {
    /// Drawn in bellperson's order (g1, g2, alpha, beta, gamma, delta,
    /// tau), so one seed gives both generators the same parameters.
    pub fn random<R: RngCore>(rng: &mut R) -> Self {
        ToxicWaste {
            g1: G1Projective::random(&mut *rng),
            g2: G2Projective::random(&mut *rng),
            alpha: Scalar::random(&mut *rng),
            beta: Scalar::random(&mut *rng),
            gamma: Scalar::random(&mut *rng),
            delta: Scalar::random(&mut *rng),
            tau: Scalar::random(&mut *rng),
        }
    }
}

/// Where parameter generation spent its time.
#[derive(Clone, Debug, Default)]
pub struct GenerationTimings {
    /// Which [`FixedBaseEngine`] ran the multiplications.
    pub engine: String,
    /// Synthesising the circuit's constraint matrices (next to nothing
    /// when they come from a compiled system, whose compiling or opening
    /// is the caller's).
    pub synthesis: Duration,
    /// Lagrange basis at tau (powers and an inverse NTT), the column
    /// evaluations and the query scalars.
    pub scalars: Duration,
    /// Of `scalars`: the column evaluations and the query scalars made
    /// from them (what reads the matrices; the rest is the Lagrange basis).
    pub evaluation: Duration,
    /// Fixed-base multiplications in G1 (h, l, ic, a, b_g1), tables included.
    pub g1: Duration,
    /// Fixed-base multiplications in G2 (b_g2).
    pub g2: Duration,
    pub total: Duration,
    /// Multiples computed in each group.
    pub g1_points: usize,
    pub g2_points: usize,
}

pub fn generate_random_parameters<C, R>(circuit: C, rng: &mut R) -> Result<Parameters>
where
    C: bellpepper_core::Circuit<Scalar>,
    R: RngCore,
{
    let w = ToxicWaste::random(rng);
    generate_parameters_with(circuit, &w, &CpuFixedBase).map(|(p, _)| p)
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
    let w = ToxicWaste {
        g1,
        g2,
        alpha,
        beta,
        gamma,
        delta,
        tau,
    };
    generate_parameters_with(circuit, &w, &CpuFixedBase).map(|(p, _)| p)
}

/// Parameters from given toxic waste with the multiplications on `engine`,
/// and where the time went. Every engine gives the same parameters.
pub fn generate_parameters_with<C: Circuit<Scalar>>(
    circuit: C,
    waste: &ToxicWaste,
    engine: &dyn FixedBaseEngine,
) -> Result<(Parameters, GenerationTimings)> {
    let mut sink = ParamsCollector::new();
    let timings = generate_parameters_into(circuit, waste, engine, &mut sink, &|_| {})?;
    let params = sink.finish().map_err(sink_err)?;
    Ok((params, timings))
}

/// What [`generate_parameters_into`] reports as it goes (a 32 GiB PoRep
/// takes minutes: synthesis, the scalars, then each query).
#[derive(Clone, Debug)]
pub enum GenerationEvent<'a> {
    /// The constraint matrices are ready: synthesized, or (`compiled`)
    /// a compiled system's, which no synthesis was needed for.
    Synthesized {
        constraints: usize,
        inputs: usize,
        aux: usize,
        /// Entries of A, B and C together.
        entries: usize,
        domain: usize,
        compiled: bool,
    },
    /// The query scalars are computed; the multiplications begin.
    Scalars { g1_points: usize, g2_points: usize },
    /// `done` of a query's `total` points are computed and handed to the
    /// sink (once per chunk).
    Query {
        query: &'a str,
        done: usize,
        total: usize,
        /// Since this query began.
        elapsed: Duration,
    },
}

/// Points per call to the engine and per run handed to the sink: the
/// bound on what a query holds in memory (two runs: one being computed,
/// one being written). 2^23 G1 points are 768 MiB, G2 half as many points
/// for the same bytes; on the GPU a run is 0.6 s of work (14 M points/s on
/// the H200), long beside the per-call table upload (≤ 16 MiB).
const STREAM_RUN_G1: usize = 1 << 23;
const STREAM_RUN_G2: usize = 1 << 22;

fn sink_err(source: std::io::Error) -> Error {
    Error::Backend {
        backend: "parameter sink",
        source: Box::new(source),
    }
}

/// One query, run by run: `points(range)` computes the points of that
/// range of the query, on a helper thread while the previous run is handed
/// to `emit`, so the engine and the sink (encoding, the disk) overlap.
fn stream_query<A: Send>(
    query: &str,
    total: usize,
    run: usize,
    points: &(dyn Fn(std::ops::Range<usize>) -> Result<Vec<A>> + Sync),
    emit: &mut dyn FnMut(&[A]) -> Result<()>,
    progress: &dyn Fn(&GenerationEvent),
) -> Result<()> {
    let run = run.max(1);
    let start = Instant::now();
    let mut done = 0usize;
    std::thread::scope(|s| -> Result<()> {
        let mut pending: Option<std::thread::ScopedJoinHandle<'_, Result<Vec<A>>>> = None;
        let mut next = 0usize;
        loop {
            let spawned = (next < total).then(|| {
                let range = next..(next + run).min(total);
                next = range.end;
                s.spawn(move || points(range))
            });
            let Some(p) = pending.take() else {
                if spawned.is_none() {
                    return Ok(());
                }
                pending = spawned;
                continue;
            };
            let pts = p.join().map_err(|_| Error::Backend {
                backend: "fixed-base",
                source: format!("the thread computing the {query} query panicked").into(),
            })??;
            emit(&pts)?;
            done += pts.len();
            drop(pts);
            progress(&GenerationEvent::Query {
                query,
                done,
                total,
                elapsed: start.elapsed(),
            });
            pending = spawned;
        }
    })
}

/// Parameters from given toxic waste, handed to `sink` query by query as
/// each run of points is computed (the file order: the verifying key, h, l,
/// a, b_g1, b_g2), so that no whole query is ever held: peak memory is the
/// constraint matrices while they are evaluated, then the l, a and b
/// scalars (32 bytes a point) and two runs of points. Everything that can
/// fail for the circuit's sake (an unconstrained variable, an identity in
/// ic) fails before the sink is given anything.
pub fn generate_parameters_into<C: Circuit<Scalar>>(
    circuit: C,
    waste: &ToxicWaste,
    engine: &dyn FixedBaseEngine,
    sink: &mut dyn ParamsSink,
    progress: &dyn Fn(&GenerationEvent),
) -> Result<GenerationTimings> {
    generate_in_runs(
        circuit,
        waste,
        engine,
        sink,
        progress,
        (STREAM_RUN_G1, STREAM_RUN_G2),
    )
}

/// [`generate_parameters_into`] from the circuit's compiled constraint
/// system instead of a synthesis: the QAP is evaluated at tau from the
/// compiled matrices (which hold the input constraints too), with no
/// circuit code run. The parameters are byte for byte those of
/// [`generate_parameters_into`] for the circuit `compiled` was compiled
/// from and the same toxic waste (tested). Memory: the matrices (mapped,
/// where the system was opened from a file: 8 bytes an entry), the
/// Lagrange basis and three vectors of one scalar per variable at the
/// peak, no copy of the matrices.
pub fn generate_parameters_compiled_into(
    compiled: &CompiledCircuit,
    waste: &ToxicWaste,
    engine: &dyn FixedBaseEngine,
    sink: &mut dyn ParamsSink,
    progress: &dyn Fn(&GenerationEvent),
) -> Result<GenerationTimings> {
    generate_from(
        Qap::Compiled(compiled),
        waste,
        engine,
        sink,
        progress,
        (STREAM_RUN_G1, STREAM_RUN_G2),
        Instant::now(),
    )
}

/// [`generate_parameters_compiled_into`] collected in memory (for tests
/// and small circuits), like [`generate_parameters_with`].
pub fn generate_parameters_compiled_with(
    compiled: &CompiledCircuit,
    waste: &ToxicWaste,
    engine: &dyn FixedBaseEngine,
) -> Result<(Parameters, GenerationTimings)> {
    let mut sink = ParamsCollector::new();
    let timings = generate_parameters_compiled_into(compiled, waste, engine, &mut sink, &|_| {})?;
    let params = sink.finish().map_err(sink_err)?;
    Ok((params, timings))
}

/// The QAP's matrices as parameter generation reads them: recorded by a
/// synthesis here, or a compiled system's.
enum Qap<'a> {
    Recorded(KeypairAssembly),
    Compiled(&'a CompiledCircuit),
}

/// Which of the QAP's matrices.
#[derive(Clone, Copy)]
enum Matrix {
    A,
    B,
    C,
}

impl Qap<'_> {
    fn num_inputs(&self) -> usize {
        match self {
            Qap::Recorded(cs) => cs.num_inputs,
            Qap::Compiled(cc) => cc.num_inputs(),
        }
    }
    fn num_aux(&self) -> usize {
        match self {
            Qap::Recorded(cs) => cs.num_aux,
            Qap::Compiled(cc) => cc.num_aux(),
        }
    }
    /// Constraints, the input constraints included.
    fn num_constraints(&self) -> usize {
        match self {
            Qap::Recorded(cs) => cs.num_constraints,
            Qap::Compiled(cc) => cc.num_constraints(),
        }
    }
    fn entries(&self) -> usize {
        match self {
            Qap::Recorded(cs) => cs.at.len() + cs.bt.len() + cs.ct.len(),
            Qap::Compiled(cc) => cc.a.nnz() + cc.b.nnz() + cc.c.nnz(),
        }
    }
    /// The matrix's column evaluations at tau, inputs then aux.
    fn eval(&self, which: Matrix, lagrange: &[Scalar]) -> Vec<Scalar> {
        let (ni, na) = (self.num_inputs(), self.num_aux());
        match self {
            Qap::Recorded(cs) => {
                let entries = match which {
                    Matrix::A => &cs.at,
                    Matrix::B => &cs.bt,
                    Matrix::C => &cs.ct,
                };
                eval_columns(entries, lagrange, ni, na)
            }
            Qap::Compiled(cc) => {
                let m = match which {
                    Matrix::A => &cc.a,
                    Matrix::B => &cc.b,
                    Matrix::C => &cc.c,
                };
                eval_compiled(CsrMatrix::of(m, cc.coefficients()), lagrange, ni, ni + na)
            }
        }
    }
}

/// [`generate_parameters_into`] with runs of the given sizes (G1, G2):
/// tests cut small queries into many runs.
fn generate_in_runs<C: Circuit<Scalar>>(
    circuit: C,
    waste: &ToxicWaste,
    engine: &dyn FixedBaseEngine,
    sink: &mut dyn ParamsSink,
    progress: &dyn Fn(&GenerationEvent),
    runs: (usize, usize),
) -> Result<GenerationTimings> {
    let start = Instant::now();
    let synth_err = |source| Error::Synthesis { index: 0, source };
    let mut cs = KeypairAssembly::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))
        .map_err(synth_err)?;
    circuit.synthesize(&mut cs).map_err(synth_err)?;
    for i in 0..cs.num_inputs {
        cs.enforce(|| "", |lc| lc + Variable(Index::Input(i)), |lc| lc, |lc| lc);
    }
    if cs.too_large {
        return Err(Error::TooLarge {
            constraints: cs.num_constraints,
            max_log: domain::MAX_LOG_DOMAIN - 1,
        });
    }
    generate_from(
        Qap::Recorded(cs),
        waste,
        engine,
        sink,
        progress,
        runs,
        start,
    )
}

/// The generation common to both sources of the matrices; `start` is when
/// the caller began (the synthesis, for recorded matrices).
fn generate_from(
    qap: Qap<'_>,
    waste: &ToxicWaste,
    engine: &dyn FixedBaseEngine,
    sink: &mut dyn ParamsSink,
    progress: &dyn Fn(&GenerationEvent),
    (run_g1, run_g2): (usize, usize),
    start: Instant,
) -> Result<GenerationTimings> {
    let ToxicWaste {
        g1,
        g2,
        alpha,
        beta,
        gamma,
        delta,
        tau,
    } = *waste;
    let mut timings = GenerationTimings {
        engine: engine.name(),
        ..Default::default()
    };
    let synth_err = |source| Error::Synthesis { index: 0, source };
    let (num_constraints, ni, na) = (qap.num_constraints(), qap.num_inputs(), qap.num_aux());
    let log = domain::log_domain_size(num_constraints);
    if log >= domain::MAX_LOG_DOMAIN {
        return Err(Error::TooLarge {
            constraints: num_constraints,
            max_log: domain::MAX_LOG_DOMAIN - 1,
        });
    }
    let n = 1usize << log;
    timings.synthesis = start.elapsed();
    progress(&GenerationEvent::Synthesized {
        constraints: num_constraints,
        inputs: ni,
        aux: na,
        entries: qap.entries(),
        domain: n,
        compiled: matches!(qap, Qap::Compiled(_)),
    });
    let phase = Instant::now();

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
    // h_i = tau^i · Z(tau) / delta for i < n − 1: computed run by run when
    // the h query is, rather than held (n scalars).
    let z_over_delta = (tau.pow_vartime([n as u64]) - Scalar::ONE) * delta_inv;
    domain::ifft(&mut lagrange);

    let evaluation = Instant::now();
    // One matrix at a time, folded into ext = beta·A + alpha·B + C as it
    // comes: at most three vectors of one scalar per variable are held
    // (ext, the matrix's evaluations, its nonzero ones), not four. Field
    // arithmetic is exact, so the order of the sums changes nothing.
    let mut ext = qap.eval(Matrix::C, &lagrange);
    // The A and B queries hold only the variables that occur in that
    // column (nonzero evaluation), inputs then aux.
    let mut fold = |which: Matrix, factor: Scalar| -> Vec<Scalar> {
        let evals = qap.eval(which, &lagrange);
        ext.par_iter_mut()
            .zip(&evals)
            .for_each(|(e, x)| *e += factor * x);
        evals
            .into_iter()
            .filter(|s| !bool::from(s.is_zero()))
            .collect()
    };
    let a_scalars = fold(Matrix::A, beta);
    let b_scalars = fold(Matrix::B, alpha);
    drop(qap);
    drop(lagrange);
    // ext / gamma for inputs (ic), / delta for aux (l).
    let mut l_scalars = ext.split_off(ni);
    let mut ic_scalars = ext;
    ic_scalars.par_iter_mut().for_each(|s| *s *= gamma_inv);
    l_scalars.par_iter_mut().for_each(|s| *s *= delta_inv);
    if l_scalars.par_iter().any(|s| bool::from(s.is_zero())) {
        return Err(synth_err(SynthesisError::UnconstrainedVariable));
    }

    timings.scalars = phase.elapsed();
    timings.evaluation = evaluation.elapsed();
    let g1_count = (n - 1) + l_scalars.len() + ic_scalars.len() + a_scalars.len() + b_scalars.len();
    progress(&GenerationEvent::Scalars {
        g1_points: g1_count,
        g2_points: b_scalars.len(),
    });
    let phase = Instant::now();

    let g1_table = FixedBaseTable::<G1Projective>::new(g1, g1_count);
    // A run of a query's points, checked to be as many as its scalars.
    let g1_run = |query: &str, scalars: &[Scalar]| {
        expect_len(
            engine,
            query,
            engine.mul_g1(&g1_table, scalars)?,
            scalars.len(),
        )
    };
    let ic = g1_run("ic", &ic_scalars)?;
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
    sink.vk(&vk).map_err(sink_err)?;
    drop(vk);

    // h: its scalars made run by run from the powers of tau.
    sink.begin(Section::H, n - 1).map_err(sink_err)?;
    stream_query(
        "h",
        n - 1,
        run_g1,
        &|r: std::ops::Range<usize>| {
            let first = tau.pow_vartime([r.start as u64]) * z_over_delta;
            let mut scalars = vec![Scalar::ZERO; r.len()];
            scalars
                .par_chunks_mut(1 << 12)
                .enumerate()
                .for_each(|(i, chunk)| {
                    let mut cur = first * tau.pow_vartime([(i << 12) as u64]);
                    for v in chunk {
                        *v = cur;
                        cur *= tau;
                    }
                });
            g1_run("h", &scalars)
        },
        &mut |pts: &[G1Affine]| sink.g1(pts).map_err(sink_err),
        progress,
    )?;
    for (section, scalars) in [(Section::L, l_scalars), (Section::A, a_scalars)] {
        sink.begin(section, scalars.len()).map_err(sink_err)?;
        stream_query(
            section.name(),
            scalars.len(),
            run_g1,
            &|r| g1_run(section.name(), &scalars[r]),
            &mut |pts: &[G1Affine]| sink.g1(pts).map_err(sink_err),
            progress,
        )?;
    }
    sink.begin(Section::BG1, b_scalars.len())
        .map_err(sink_err)?;
    stream_query(
        "b_g1",
        b_scalars.len(),
        run_g1,
        &|r| g1_run("b_g1", &b_scalars[r]),
        &mut |pts: &[G1Affine]| sink.g1(pts).map_err(sink_err),
        progress,
    )?;
    drop(g1_table);
    timings.g1 = phase.elapsed();
    timings.g1_points = g1_count;

    let phase = Instant::now();
    let g2_table = FixedBaseTable::<G2Projective>::new(g2, b_scalars.len());
    sink.begin(Section::BG2, b_scalars.len())
        .map_err(sink_err)?;
    stream_query(
        "b_g2",
        b_scalars.len(),
        run_g2,
        &|r| {
            let s = &b_scalars[r];
            expect_len(engine, "b_g2", engine.mul_g2(&g2_table, s)?, s.len())
        },
        &mut |pts: &[G2Affine]| sink.g2(pts).map_err(sink_err),
        progress,
    )?;
    timings.g2 = phase.elapsed();
    timings.g2_points = b_scalars.len();
    timings.total = start.elapsed();
    Ok(timings)
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
            let t1 = FixedBaseTable::<G1Projective>::with_window(g1, window);
            let n = if window <= 12 { s.len() } else { 40 };
            for s in s.iter().rev().take(n) {
                assert_eq!(t1.mul(s), g1 * s, "G1, window {window}, {s:?}");
            }
        }
        let t1 = FixedBaseTable::<G1Projective>::with_window(g1, 12);
        let t2 = FixedBaseTable::<G2Projective>::with_window(g2, 9);
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

    /// Scalar multiplication of the table's base (its first entry), one
    /// point at a time: an engine independent of the tables.
    struct Naive;
    impl FixedBaseEngine for Naive {
        fn name(&self) -> String {
            "naive".into()
        }
        fn mul_g1(&self, t: &FixedBaseTable<G1Projective>, s: &[Scalar]) -> Result<Vec<G1Affine>> {
            Ok(s.iter().map(|s| (t.points()[0] * s).to_affine()).collect())
        }
        fn mul_g2(&self, t: &FixedBaseTable<G2Projective>, s: &[Scalar]) -> Result<Vec<G2Affine>> {
            Ok(s.iter().map(|s| (t.points()[0] * s).to_affine()).collect())
        }
    }

    /// Drops the last point of every query.
    struct Short;
    impl FixedBaseEngine for Short {
        fn name(&self) -> String {
            "short".into()
        }
        fn mul_g1(&self, t: &FixedBaseTable<G1Projective>, s: &[Scalar]) -> Result<Vec<G1Affine>> {
            Ok(t.mul_many(&s[..s.len().saturating_sub(1)]))
        }
        fn mul_g2(&self, t: &FixedBaseTable<G2Projective>, s: &[Scalar]) -> Result<Vec<G2Affine>> {
            Ok(t.mul_many(&s[..s.len().saturating_sub(1)]))
        }
    }

    #[test]
    fn engines_agree_and_a_wrong_engine_is_caught() {
        let circuit = crate::circuits::PorepLikeCircuit::new(7, 0);
        let mut rng = ChaCha20Rng::seed_from_u64(10);
        let w = ToxicWaste::random(&mut rng);
        let (cpu, t) = generate_parameters_with(circuit.clone(), &w, &CpuFixedBase).unwrap();
        assert_eq!(t.engine, "cpu");
        assert_eq!(
            t.g1_points,
            cpu.h.len() + cpu.l.len() + cpu.vk.ic.len() + cpu.a.len() + cpu.b_g1.len()
        );
        assert_eq!(t.g2_points, cpu.b_g2.len());
        let (naive, _) = generate_parameters_with(circuit.clone(), &w, &Naive).unwrap();
        let bytes = |p: &Parameters| {
            let mut v = Vec::new();
            p.write(&mut v).unwrap();
            v
        };
        assert_eq!(bytes(&cpu), bytes(&naive));
        // The positional form draws nothing else: same parameters.
        let positional = generate_parameters(
            circuit.clone(),
            w.g1,
            w.g2,
            w.alpha,
            w.beta,
            w.gamma,
            w.delta,
            w.tau,
        )
        .unwrap();
        assert_eq!(bytes(&cpu), bytes(&positional));
        let err = generate_parameters_with(circuit, &w, &Short).err().unwrap();
        let msg = err.to_string();
        assert!(
            msg.contains("short") && msg.contains("the ic query"),
            "{msg}"
        );
    }

    /// The streamed file, cut into many runs (sizes that divide no query
    /// evenly, and runs of one point), is byte for byte what the in-memory
    /// parameters write; it reads back as those parameters, which prove
    /// and verify (and refuse a wrong input).
    #[test]
    fn streamed_file_equals_the_in_memory_parameters() {
        let circuit = crate::circuits::PorepLikeCircuit::new(7, 3);
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        let w = ToxicWaste::random(&mut rng);
        let (mem, _) = generate_parameters_with(circuit.clone(), &w, &CpuFixedBase).unwrap();
        let mut want = Vec::new();
        mem.write(&mut want).unwrap();
        for runs in [(37, 5), (1, 1), (1 << 20, 1 << 20)] {
            let events = std::cell::RefCell::new(Vec::new());
            let mut sink = crate::params::ParamsFileSink::new(Vec::new());
            generate_in_runs(
                circuit.clone(),
                &w,
                &CpuFixedBase,
                &mut sink,
                &|e| {
                    if let GenerationEvent::Query {
                        query, done, total, ..
                    } = e
                    {
                        events.borrow_mut().push((query.to_string(), *done, *total));
                    }
                },
                runs,
            )
            .unwrap();
            let got = sink.finish().unwrap();
            assert!(got == want, "runs {runs:?}: the streamed file differs");
            // Progress: every query ends complete, counts only grow.
            let events = events.into_inner();
            for (q, len) in [
                ("h", mem.h.len()),
                ("l", mem.l.len()),
                ("a", mem.a.len()),
                ("b_g1", mem.b_g1.len()),
                ("b_g2", mem.b_g2.len()),
            ] {
                let mine: Vec<_> = events.iter().filter(|e| e.0 == q).collect();
                assert_eq!(
                    mine.last().map(|e| (e.1, e.2)),
                    Some((len, len)),
                    "{q} {runs:?}"
                );
                assert!(mine.windows(2).all(|p| p[0].1 < p[1].1), "{q} {runs:?}");
            }
            if runs == (37, 5) {
                assert_eq!(
                    events.iter().filter(|e| e.0 == "h").count(),
                    mem.h.len().div_ceil(37)
                );
            }
        }
        let back = Parameters::read_bytes(&want, std::path::Path::new("mem"), true).unwrap();
        assert_eq!(back.vk, mem.vk);
        assert_eq!((&back.h, &back.a, &back.b_g2), (&mem.h, &mem.a, &mem.b_g2));
        let proof = crate::prover::create_random_proof(circuit.clone(), &back, &mut rng).unwrap();
        let pvk = crate::verifier::prepare_verifying_key(&back.vk);
        let inputs = circuit.public_inputs();
        assert!(crate::verifier::verify_proof(&pvk, &proof, &inputs).unwrap());
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(!crate::verifier::verify_proof(&pvk, &proof, &wrong).unwrap());
    }

    /// A sink that fails mid-query stops generation with its error.
    #[test]
    fn a_failing_sink_stops_generation() {
        struct Full(usize);
        impl std::io::Write for Full {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if self.0 < b.len() {
                    return Err(std::io::Error::other("disk full"));
                }
                self.0 -= b.len();
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let circuit = crate::circuits::PorepLikeCircuit::new(7, 3);
        let w = ToxicWaste::random(&mut ChaCha20Rng::seed_from_u64(13));
        let mut sink = crate::params::ParamsFileSink::new(Full(5000));
        let err =
            generate_in_runs(circuit, &w, &CpuFixedBase, &mut sink, &|_| {}, (16, 16)).unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
    }

    #[test]
    fn parallel_column_sums_equal_the_serial_ones() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let lagrange: Vec<Scalar> = (0..512).map(|_| Scalar::random(&mut rng)).collect();
        for (ni, na, n) in [
            (1usize, 1usize, 20_000usize),
            (3, 1000, 70_000),
            (300, 5, 40_000),
        ] {
            let entries: Vec<Entry> = (0..n)
                .map(|_| {
                    let input = rng.next_u32() % 7 == 0;
                    Entry {
                        coeff: Scalar::random(&mut rng),
                        var: rng.next_u32() % if input { ni as u32 } else { na as u32 },
                        row: rng.next_u32() % 512,
                        input,
                    }
                })
                .collect();
            let a = eval_columns_serial(&entries, &lagrange, ni, na);
            let b = eval_columns_par(&entries, &lagrange, ni, na);
            assert_eq!(a, b, "{ni} inputs, {na} aux, {n} entries");
        }
    }

    /// Random compressed rows over `vars` variables: rows of 0 to 6
    /// entries, a share of them in one hot column (`hot`, the constant
    /// one's in real circuits), coefficients ±1 (indices 0, 1) or from the
    /// table.
    fn random_csr(
        rng: &mut ChaCha20Rng,
        rows: usize,
        vars: usize,
        hot: u32,
        table: usize,
    ) -> (Vec<u64>, Vec<u32>, Vec<u32>) {
        let mut row_start = vec![0u64];
        let (mut cols, mut coefs) = (Vec::new(), Vec::new());
        for _ in 0..rows {
            let len = rng.next_u32() % 7;
            for _ in 0..len {
                let col = if rng.next_u32().is_multiple_of(4) {
                    hot
                } else {
                    rng.next_u32() % vars as u32
                };
                cols.push(col);
                coefs.push(match rng.next_u32() % 3 {
                    0 => COEF_ONE,
                    1 => COEF_MINUS_ONE,
                    _ => rng.next_u32() % table as u32,
                });
            }
            row_start.push(cols.len() as u64);
        }
        (row_start, cols, coefs)
    }

    /// The blocked, routed column sums of a compiled matrix equal the
    /// row-by-row ones: one block and many (down to a row each), inputs
    /// summed privately or through the ranges, a hot input or aux column,
    /// no aux at all, unused columns, empty rows.
    #[test]
    fn compiled_column_sums_equal_the_serial_ones() {
        let mut rng = ChaCha20Rng::seed_from_u64(rand::random());
        let mut table = vec![Scalar::ONE, -Scalar::ONE];
        table.extend((0..30).map(|_| Scalar::random(&mut rng)));
        let lagrange: Vec<Scalar> = (0..3000).map(|_| Scalar::random(&mut rng)).collect();
        // (rows, inputs, vars, hot column)
        for (rows, ni, vars, hot) in [
            (3000usize, 1usize, 2000usize, 0u32),
            (3000, 3, 3, 0),
            (2500, 300, 5000, 1234),
            (3000, 5000, 5200, 4),
            (1, 1, 1, 0),
            (0, 1, 10, 0),
            (2000, 2, 70_000, 0),
        ] {
            let (row_start, cols, coefs) = random_csr(&mut rng, rows, vars, hot, table.len());
            let m = CsrMatrix {
                row_start: &row_start,
                cols: &cols,
                coefs: &coefs,
                table: &table,
            };
            let want = eval_compiled_serial(m, &lagrange, vars);
            for local in [0, ni.min(LOCAL_INPUTS_MAX)] {
                for (block, ranges) in [(1usize, 8usize), (7, 3), (1000, 1), (1 << 30, 8), (5, 64)]
                {
                    let got = eval_compiled_par(m, &lagrange, vars, local, block, ranges);
                    assert!(
                        got == want,
                        "{rows} rows, {ni} inputs, {vars} vars, local {local}, block {block}, \
                         {ranges} ranges"
                    );
                }
            }
        }
    }

    /// The ranges cover the columns past the inputs exactly, in order,
    /// each bucket in one range.
    #[test]
    fn column_ranges_partition_the_columns() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        for (vars, first, ranges) in [(10usize, 0usize, 8usize), (200_000, 7, 16), (5, 5, 4)] {
            let cols: Vec<u32> = (0..50_000).map(|_| rng.next_u32() % vars as u32).collect();
            let r = ColumnRanges::new(&cols, first, vars, ranges);
            assert_eq!(r.bounds.first(), Some(&first));
            assert_eq!(r.bounds.last(), Some(&vars));
            assert!(r.bounds.windows(2).all(|w| w[0] <= w[1]));
            assert!(r.count() <= ranges + 1, "{} ranges", r.count());
            for c in first..vars {
                let k = r.of(c as u32);
                assert!(r.bounds[k] <= c && c < r.bounds[k + 1], "column {c}");
            }
        }
        // No entries past the inputs: one range, not one per bucket.
        let r = ColumnRanges::new(&[0, 0, 1], 2, 100_000, 8);
        assert_eq!(r.count(), 1);
    }
}
