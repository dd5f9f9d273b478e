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
//! affine points with no doublings. Where those multiples are computed is a
//! [`FixedBaseEngine`]: [`CpuFixedBase`] here (parallel chunks, one
//! inversion per chunk); cuzk-gpu's runs them on a GPU from the same tables,
//! with the same results bit for bit.

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

/// Evaluations of a matrix's columns at tau: Σ_rows coeff·L_row(tau), for
/// inputs and aux variables.
fn eval_columns(
    entries: &[Entry],
    lagrange: &[Scalar],
    num_inputs: usize,
    num_aux: usize,
) -> (Vec<Scalar>, Vec<Scalar>) {
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
) -> (Vec<Scalar>, Vec<Scalar>) {
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
    let aux = all.split_off(num_inputs);
    (all, aux)
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
    /// Synthesising the circuit's constraint matrices.
    pub synthesis: Duration,
    /// Lagrange basis at tau (powers and an inverse NTT), the column
    /// evaluations and the query scalars.
    pub scalars: Duration,
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
    /// The constraint matrices are built.
    Synthesized {
        constraints: usize,
        inputs: usize,
        aux: usize,
        /// Nonzero entries of A, B and C together.
        entries: usize,
        domain: usize,
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

/// [`generate_parameters_into`] with runs of the given sizes (G1, G2):
/// tests cut small queries into many runs.
fn generate_in_runs<C: Circuit<Scalar>>(
    circuit: C,
    waste: &ToxicWaste,
    engine: &dyn FixedBaseEngine,
    sink: &mut dyn ParamsSink,
    progress: &dyn Fn(&GenerationEvent),
    (run_g1, run_g2): (usize, usize),
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
    let start = Instant::now();
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
    timings.synthesis = start.elapsed();
    progress(&GenerationEvent::Synthesized {
        constraints: cs.num_constraints,
        inputs: cs.num_inputs,
        aux: cs.num_aux,
        entries: cs.at.len() + cs.bt.len() + cs.ct.len(),
        domain: n,
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
    drop((ct_in, ct_aux));
    if l_scalars.par_iter().any(|s| bool::from(s.is_zero())) {
        return Err(synth_err(SynthesisError::UnconstrainedVariable));
    }
    // A and B queries hold only the variables that occur in that column.
    let nonzero = |x: Vec<Scalar>, y: Vec<Scalar>| -> Vec<Scalar> {
        x.into_iter()
            .chain(y)
            .filter(|s| !bool::from(s.is_zero()))
            .collect()
    };
    let a_scalars = nonzero(at_in, at_aux);
    let b_scalars = nonzero(bt_in, bt_aux);

    timings.scalars = phase.elapsed();
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
}
