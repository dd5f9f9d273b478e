//! Compiled constraint systems: a circuit's constraints recorded once, so
//! that each proof only generates its witness.
//!
//! Every proof of one circuit shape (a porep-like size, a Filecoin proof
//! type and sector size) enforces the same constraints; only the witness
//! changes. [`compile`] synthesizes a circuit once into a
//! [`CompiledCircuit`]: A, B and C as sparse matrices over the full
//! assignment z = (inputs, aux), their coefficients through a table, the
//! counts and the A/B densities. A proof then runs the circuit through a
//! witness-only constraint system ([`synthesize_witness`]: `enforce`
//! records nothing, its closures are never called) and evaluates
//! a = A·z, b = B·z, c = C·z ([`CompiledCircuit::assign`], on every core).
//! The result equals [`crate::synthesis::synthesize`]'s element by element
//! (tested), so proofs and parameters are unchanged.
//!
//! Matrix layout (the GPU's sparse kernels read the same arrays):
//! `row_start: [u64; rows + 1]`, `cols: [u32; nnz]` indexing z, and
//! `coefs: [u32; nnz]` indexing the coefficient table, whose entries 0 and
//! 1 are always 1 and −1. Rows are the circuit's constraints followed by
//! one input constraint per input (`input_i · 0 = 0`, A holding input i),
//! bellperson's layout.
//!
//! The file form (`.r1cs` beside the parameters) is described at
//! [`CompiledCircuit::write_file`]; it is memory-mapped on load, its
//! sections checked against a CRC-32 each, and its header carries the
//! circuit's identity and shape, which [`CompiledCircuit::check_params`]
//! checks against a parameter file.

use crate::params::{open_regular, write_atomically, Parameters};
use crate::prover::CircuitShape;
use crate::synthesis::{Density, ProvingAssignment};
use crate::zero_one::ZeroOneForm;
use crate::{Error, Result};
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Write;
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

/// Coefficient table index of 1 (a plain addition).
pub const COEF_ONE: u32 = 0;
/// Coefficient table index of −1 (a subtraction).
pub const COEF_MINUS_ONE: u32 = 1;

/// A vector of plain words, owned or read in place from a mapped file.
pub enum Words<T: bytemuck::Pod> {
    Owned(Vec<T>),
    Mapped {
        map: Arc<memmap2::Mmap>,
        offset: usize,
        len: usize,
    },
}

impl<T: bytemuck::Pod> Deref for Words<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Words::Owned(v) => v,
            Words::Mapped { map, offset, len } => {
                // The offset and length were checked (alignment included)
                // when the file was opened, so the cast cannot fail.
                bytemuck::cast_slice(&map[*offset..*offset + len * std::mem::size_of::<T>()])
            }
        }
    }
}

impl<T: bytemuck::Pod + std::fmt::Debug> std::fmt::Debug for Words<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Words::Owned(_) => "owned",
            Words::Mapped { .. } => "mapped",
        };
        write!(f, "Words({kind}, {} words)", self.len())
    }
}

/// One of A, B, C in compressed sparse rows.
#[derive(Debug)]
pub struct SparseMatrix {
    row_start: Words<u64>,
    cols: Words<u32>,
    coefs: Words<u32>,
}

impl SparseMatrix {
    pub fn rows(&self) -> usize {
        self.row_start.len().saturating_sub(1)
    }
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }
    /// `rows + 1` offsets into `cols` and `coefs`.
    pub fn row_start(&self) -> &[u64] {
        &self.row_start
    }
    /// Per entry, the index into z = (inputs, aux).
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }
    /// Per entry, the index into the coefficient table.
    pub fn coefs(&self) -> &[u32] {
        &self.coefs
    }
    fn bytes(&self) -> usize {
        self.row_start.len() * 8 + self.cols.len() * 4 + self.coefs.len() * 4
    }

    /// out[r] = Σ coefs·z over row r, for rows `first..first + out.len()`,
    /// with z = (inputs, aux) read in place (no joined copy: at 2^27 it
    /// would be 4 GB).
    fn eval_rows(
        &self,
        table: &[Scalar],
        (inputs, aux): (&[Scalar], &[Scalar]),
        first: usize,
        out: &mut [Scalar],
    ) {
        let (starts, cols, coefs) = (&*self.row_start, &*self.cols, &*self.coefs);
        let ni = inputs.len();
        for (k, o) in out.iter_mut().enumerate() {
            let r = first + k;
            let (s, e) = (starts[r] as usize, starts[r + 1] as usize);
            let mut acc = Scalar::ZERO;
            for (&col, &coef) in cols[s..e].iter().zip(&coefs[s..e]) {
                let col = col as usize;
                let v = if col < ni { inputs[col] } else { aux[col - ni] };
                match coef {
                    COEF_ONE => acc += v,
                    COEF_MINUS_ONE => acc -= v,
                    c => acc += v * table[c as usize],
                }
            }
            *o = acc;
        }
    }

    /// M·z on every core.
    fn eval(&self, table: &[Scalar], z: (&[Scalar], &[Scalar])) -> Vec<Scalar> {
        // Rows per work item: enough that rayon's overhead vanishes (a row
        // costs tens of ns), few enough to balance long rows.
        const ROWS: usize = 1 << 13;
        let mut out = vec![Scalar::ZERO; self.rows()];
        out.par_chunks_mut(ROWS)
            .enumerate()
            .for_each(|(i, chunk)| self.eval_rows(table, z, i * ROWS, chunk));
        out
    }

    /// Structural checks: offsets monotone and within the entries, every
    /// column inside z, every coefficient inside the table.
    fn validate(&self, name: &str, vars: usize, table: usize) -> std::result::Result<(), String> {
        let starts = &*self.row_start;
        if starts.first().copied().unwrap_or(0) != 0 {
            return Err(format!("matrix {name}: the first row does not start at 0"));
        }
        if starts.last().copied().unwrap_or(0) as usize != self.cols.len()
            || self.cols.len() != self.coefs.len()
        {
            return Err(format!(
                "matrix {name}: the rows end at {} but there are {} columns and {} coefficients",
                starts.last().copied().unwrap_or(0),
                self.cols.len(),
                self.coefs.len()
            ));
        }
        if let Some(r) = starts.par_windows(2).position_any(|w| w[0] > w[1]) {
            return Err(format!("matrix {name}: row {r} ends before it starts"));
        }
        if let Some(k) = self.cols.par_iter().position_any(|&c| c as usize >= vars) {
            return Err(format!(
                "matrix {name}: entry {k} names variable {}, past the {vars} variables",
                self.cols[k]
            ));
        }
        if let Some(k) = self.coefs.par_iter().position_any(|&c| c as usize >= table) {
            return Err(format!(
                "matrix {name}: entry {k} names coefficient {}, past the table's {table}",
                self.coefs[k]
            ));
        }
        Ok(())
    }
}

/// A circuit's constraints, compiled once per shape.
#[derive(Debug)]
pub struct CompiledCircuit {
    /// What circuit this is (a kind name, a Filecoin identifier); checked
    /// when a file is opened for a circuit.
    pub circuit_id: String,
    num_inputs: usize,
    num_aux: usize,
    pub a: SparseMatrix,
    pub b: SparseMatrix,
    pub c: SparseMatrix,
    coeffs: Vec<Scalar>,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
}

/// A witness: the values of every input (the constant one first) and aux
/// variable, in allocation order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    pub inputs: Vec<Scalar>,
    pub aux: Vec<Scalar>,
    /// The aux vector's 0/1 form, made on the synthesis side for a backend
    /// that sends it ([`Self::prepare_zero_one`]); None otherwise. A backend
    /// checks it against `aux` ([`ZeroOneForm::matches`]) before using it.
    pub aux_zero_one: Option<ZeroOneForm>,
}

impl Witness {
    /// A witness of these values, without a 0/1 form.
    pub fn new(inputs: Vec<Scalar>, aux: Vec<Scalar>) -> Self {
        Witness {
            inputs,
            aux,
            aux_zero_one: None,
        }
    }
    /// Makes the aux vector's 0/1 form where it pays (a backend whose
    /// [`ProverBackend::wants_zero_one`](crate::prover::ProverBackend::wants_zero_one)
    /// is true then sends it instead of packing on the proving side).
    /// Parallel over rayon's pool; the form is about a sixth of the
    /// vector's bytes for a Filecoin witness.
    pub fn prepare_zero_one(&mut self) {
        self.aux_zero_one = ZeroOneForm::of(&self.aux);
    }
}

impl CompiledCircuit {
    /// Inputs, the constant one included.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }
    /// Constraints, the input constraints included.
    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }
    /// The coefficient table (entries 0 and 1 are 1 and −1).
    pub fn coefficients(&self) -> &[Scalar] {
        &self.coeffs
    }
    pub fn a_aux_density(&self) -> &Density {
        &self.a_aux_density
    }
    pub fn b_input_density(&self) -> &Density {
        &self.b_input_density
    }
    pub fn b_aux_density(&self) -> &Density {
        &self.b_aux_density
    }
    /// What the parameters of this circuit are sized by.
    pub fn shape(&self) -> CircuitShape {
        CircuitShape {
            constraints: self.num_constraints(),
            inputs: self.num_inputs,
            aux: self.num_aux,
            a_aux: self.a_aux_density.count(),
            b_dense: self.b_input_density.count() + self.b_aux_density.count(),
        }
    }
    /// Check that `params` were made for this circuit.
    pub fn check_params(&self, params: &Parameters) -> Result<()> {
        self.shape().check_params(params, 0)
    }
    /// Bytes the matrices and the table take in memory.
    pub fn matrix_bytes(&self) -> usize {
        self.a.bytes() + self.b.bytes() + self.c.bytes() + self.coeffs.len() * 32
    }

    /// Check a witness's shape against this circuit.
    pub fn check_witness(&self, w: &Witness) -> Result<()> {
        if w.inputs.len() != self.num_inputs || w.aux.len() != self.num_aux {
            return Err(Error::WitnessMismatch {
                circuit: self.circuit_id.clone(),
                expected_inputs: self.num_inputs,
                expected_aux: self.num_aux,
                inputs: w.inputs.len(),
                aux: w.aux.len(),
            });
        }
        if w.inputs.first() != Some(&Scalar::ONE) {
            return Err(Error::InvalidCircuit {
                index: 0,
                what: "the witness's input 0 is not the constant one".into(),
            });
        }
        Ok(())
    }

    /// The full assignment z = (inputs, aux) in one vector, as the sparse
    /// products (CPU or GPU) read it.
    pub fn full_assignment(&self, w: &Witness) -> Result<Vec<Scalar>> {
        self.check_witness(w)?;
        let mut z = Vec::with_capacity(w.inputs.len() + w.aux.len());
        z.extend_from_slice(&w.inputs);
        z.extend_from_slice(&w.aux);
        Ok(z)
    }

    /// a = A·z, b = B·z, c = C·z on every core, with this circuit's
    /// densities: the [`ProvingAssignment`] full synthesis would make.
    pub fn assign(&self, w: Witness) -> Result<ProvingAssignment> {
        self.check_witness(&w)?;
        let z = (&w.inputs[..], &w.aux[..]);
        let table = &self.coeffs;
        let ((a, b), c) = rayon::join(
            || rayon::join(|| self.a.eval(table, z), || self.b.eval(table, z)),
            || self.c.eval(table, z),
        );
        Ok(ProvingAssignment {
            a,
            b,
            c,
            input_assignment: w.inputs,
            aux_assignment: w.aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
        })
    }

    /// Generate the witness of `circuit` and assign it (witness-only
    /// synthesis, then the sparse products).
    pub fn synthesize<C: Circuit<Scalar>>(&self, circuit: C) -> Result<ProvingAssignment> {
        self.assign(synthesize_witness(circuit)?)
    }

    /// [`CompiledCircuit::synthesize`] for several circuits of this shape,
    /// one witness per core at a time.
    pub fn synthesize_batch<C: Circuit<Scalar> + Send>(
        &self,
        circuits: Vec<C>,
    ) -> Result<Vec<ProvingAssignment>> {
        circuits
            .into_par_iter()
            .map(|c| self.synthesize(c))
            .collect()
    }

    /// The witnesses of several circuits of this shape, one per core at a
    /// time, each checked against this system: what
    /// [`crate::prover::prove_witnesses`] proves.
    pub fn witness_batch<C: Circuit<Scalar> + Send>(
        &self,
        circuits: Vec<C>,
    ) -> Result<Vec<Witness>> {
        circuits
            .into_par_iter()
            .map(|c| {
                let w = self.witness(c)?;
                self.check_witness(&w)?;
                Ok(w)
            })
            .collect()
    }

    /// The witness of `circuit`, its vectors reserved at this system's
    /// sizes up front: grown by doubling instead, a 2^24 witness was
    /// copied ~24 times and its memory remapped as it grew, which several
    /// witnesses growing at once in one process serialize on. Not checked
    /// against this system ([`CompiledCircuit::check_witness`] does that).
    pub fn witness<C: Circuit<Scalar>>(&self, circuit: C) -> Result<Witness> {
        let mut cs = WitnessCs::with_capacity(self.num_inputs, self.num_aux);
        circuit
            .synthesize(&mut cs)
            .map_err(|source| Error::Synthesis { index: 0, source })?;
        Ok(cs.into_witness())
    }
}

// ---------------------------------------------------------------------------
// Recording the constraints.

/// The coefficient table under construction; equal coefficients share an
/// entry.
struct CoeffTable {
    values: Vec<Scalar>,
    index: HashMap<[u8; 32], u32>,
}

impl CoeffTable {
    fn new() -> Self {
        let mut t = CoeffTable {
            values: Vec::new(),
            index: HashMap::new(),
        };
        t.intern(Scalar::ONE);
        t.intern(-Scalar::ONE);
        t
    }
    fn intern(&mut self, c: Scalar) -> u32 {
        if c == Scalar::ONE && !self.values.is_empty() {
            return COEF_ONE;
        }
        if c == -Scalar::ONE && self.values.len() > 1 {
            return COEF_MINUS_ONE;
        }
        let next = self.values.len() as u32;
        let i = *self.index.entry(c.to_repr()).or_insert(next);
        if i == next {
            self.values.push(c);
        }
        i
    }
}

/// Marks an aux column while recording (inputs and aux are counted apart
/// until synthesis ends).
const AUX_TAG: u32 = 1 << 31;

#[derive(Default)]
struct MatrixBuilder {
    row_start: Vec<u64>,
    cols: Vec<u32>,
    coefs: Vec<u32>,
}

impl MatrixBuilder {
    fn new() -> Self {
        MatrixBuilder {
            row_start: vec![0],
            ..Default::default()
        }
    }
    fn end_row(&mut self) {
        self.row_start.push(self.cols.len() as u64);
    }
    /// The matrix with tagged aux columns placed after the inputs.
    fn finish(mut self, num_inputs: usize) -> SparseMatrix {
        let ni = num_inputs as u32;
        self.cols.par_iter_mut().for_each(|c| {
            if *c & AUX_TAG != 0 {
                *c = ni + (*c & !AUX_TAG);
            }
        });
        SparseMatrix {
            row_start: Words::Owned(self.row_start),
            cols: Words::Owned(self.cols),
            coefs: Words::Owned(self.coefs),
        }
    }
}

/// The constraint system [`compile`] synthesizes into: it records the
/// constraints and counts the variables, and never asks for values, so a
/// circuit without a witness compiles too (as parameter generation needs).
struct Recorder {
    num_inputs: usize,
    num_aux: usize,
    a: MatrixBuilder,
    b: MatrixBuilder,
    c: MatrixBuilder,
    table: CoeffTable,
    rows: usize,
    error: Option<String>,
}

impl Recorder {
    fn record(&mut self, lc: &LinearCombination<Scalar>, which: usize) {
        let (num_inputs, num_aux, rows) = (self.num_inputs, self.num_aux, self.rows);
        let mut err = None;
        let m = match which {
            0 => &mut self.a,
            1 => &mut self.b,
            _ => &mut self.c,
        };
        for (&i, coeff) in lc.iter_inputs() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            if i >= num_inputs {
                err = Some(format!(
                    "constraint {rows} uses input {i}, which was never allocated"
                ));
                continue;
            }
            m.cols.push(i as u32);
            m.coefs.push(self.table.intern(*coeff));
        }
        for (&i, coeff) in lc.iter_aux() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            if i >= num_aux {
                err = Some(format!(
                    "constraint {rows} uses aux variable {i}, which was never allocated"
                ));
                continue;
            }
            if i as u64 >= u64::from(AUX_TAG) {
                err = Some(format!(
                    "aux variable {i} exceeds the compiled form's 2^31 aux variables"
                ));
                continue;
            }
            // Inputs may still be allocated after this constraint, so aux
            // columns are tagged now and placed after the inputs at the end.
            m.cols.push(AUX_TAG | i as u32);
            m.coefs.push(self.table.intern(*coeff));
        }
        m.end_row();
        if let Some(e) = err {
            self.error.get_or_insert(e);
        }
    }
}

impl ConstraintSystem<Scalar> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_aux += 1;
        Ok(Variable(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
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
        let a = a(LinearCombination::zero());
        self.record(&a, 0);
        let b = b(LinearCombination::zero());
        self.record(&b, 1);
        let c = c(LinearCombination::zero());
        self.record(&c, 2);
        self.rows += 1;
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
}

/// A bit per variable of `range` of z, set where some entry of `m` names it.
fn density_of(m: &SparseMatrix, first: usize, len: usize) -> Density {
    let mut bits = vec![false; len];
    for &c in m.cols().iter() {
        let c = c as usize;
        if c >= first && c < first + len {
            bits[c - first] = true;
        }
    }
    Density::from_bits(bits)
}

/// Synthesize `circuit` once and record its constraints. `circuit_id`
/// names the shape (it goes into the file header). The circuit's values
/// are not needed: one made for parameter generation compiles as well.
pub fn compile<C: Circuit<Scalar>>(circuit: C, circuit_id: &str) -> Result<CompiledCircuit> {
    let mut cs = Recorder {
        num_inputs: 0,
        num_aux: 0,
        a: MatrixBuilder::new(),
        b: MatrixBuilder::new(),
        c: MatrixBuilder::new(),
        table: CoeffTable::new(),
        rows: 0,
        error: None,
    };
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))
        .map_err(|source| Error::Synthesis { index: 0, source })?;
    circuit
        .synthesize(&mut cs)
        .map_err(|source| Error::Synthesis { index: 0, source })?;
    if let Some(what) = cs.error.take() {
        return Err(Error::InvalidCircuit { index: 0, what });
    }
    // The input constraints `input_i * 0 = 0`: A holds input i.
    for i in 0..cs.num_inputs {
        cs.a.cols.push(i as u32);
        cs.a.coefs.push(COEF_ONE);
        cs.a.end_row();
        cs.b.end_row();
        cs.c.end_row();
    }
    let vars = cs.num_inputs + cs.num_aux;
    if u32::try_from(vars).is_err() || cs.num_inputs >= AUX_TAG as usize {
        return Err(Error::InvalidCircuit {
            index: 0,
            what: format!("{vars} variables exceed the compiled form's u32 columns"),
        });
    }
    let ni = cs.num_inputs;
    let (a, b, c) = (cs.a.finish(ni), cs.b.finish(ni), cs.c.finish(ni));
    let (ni, na) = (cs.num_inputs, cs.num_aux);
    let (a_aux_density, (b_input_density, b_aux_density)) = rayon::join(
        || density_of(&a, ni, na),
        || rayon::join(|| density_of(&b, 0, ni), || density_of(&b, ni, na)),
    );
    Ok(CompiledCircuit {
        circuit_id: circuit_id.to_owned(),
        num_inputs: ni,
        num_aux: na,
        a,
        b,
        c,
        coeffs: cs.table.values,
        a_aux_density,
        b_input_density,
        b_aux_density,
    })
}

// ---------------------------------------------------------------------------
// Witness-only synthesis.

/// The witness-only constraint system: allocations store their values,
/// `enforce` records nothing and calls none of its closures. It is a
/// witness generator in bellpepper-core's sense (gadgets such as neptune's
/// Poseidon then write their values in bulk) and extensible (parts
/// synthesized on other threads are appended in order).
pub struct WitnessCs {
    inputs: Vec<Scalar>,
    aux: Vec<Scalar>,
}

impl WitnessCs {
    /// A system holding only the constant one.
    pub fn with_one() -> Self {
        WitnessCs {
            inputs: vec![Scalar::ONE],
            aux: Vec::new(),
        }
    }
    /// With room reserved for a witness of this shape (the aux vector
    /// backed by huge pages where the kernel allows: [`advise_huge_pages`]).
    pub fn with_capacity(inputs: usize, aux: usize) -> Self {
        let mut cs = WitnessCs {
            inputs: Vec::with_capacity(inputs.max(1)),
            aux: Vec::with_capacity(aux),
        };
        advise_huge_pages(&cs.aux);
        cs.inputs.push(Scalar::ONE);
        cs
    }
    pub fn into_witness(self) -> Witness {
        Witness::new(self.inputs, self.aux)
    }
}

/// Asks Linux to back `v`'s reserved buffer with transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`, honoured in THP's `madvise` and `always`
/// modes). A witness is written once, front to back, into fresh memory;
/// with 4 KiB pages a 2^24 one (537 MB) takes 131 k page faults, which the
/// threads of one process take in turn when many witnesses are written at
/// once (H200, bench/compiled-synthesis.md "On the H200": 16 porep-like
/// 2^24 witnesses at once 0.063 µs per row per core, 0.048 with glibc's
/// huge-page malloc). Only the 2 MiB-aligned interior is advised; buffers
/// under 4 MiB, other systems and a refusal (THP off) change nothing.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if hi >= lo + HUGE {
            #[allow(unsafe_code)]
            // SAFETY: MADV_HUGEPAGE changes only how the kernel backs the
            // pages of [lo, hi), never their contents, the mapping or its
            // protection; the range lies inside `v`'s allocation (its
            // reserved capacity) and is page-aligned, as madvise requires.
            // The result is ignored: a refusal leaves 4 KiB pages.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    /// An empty system, for parts synthesized apart and then appended
    /// with [`ConstraintSystem::extend`]: the caller allocates the part's
    /// own constant one as its input 0 (as storage-proofs' PoSt does with
    /// its "temp ONE"), and `extend` drops it. Starting with a one here
    /// would leave two.
    fn new() -> Self {
        WitnessCs {
            inputs: Vec::new(),
            aux: Vec::new(),
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _a: LA, _b: LB, _c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
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

    fn is_extensible() -> bool {
        true
    }

    /// Append `other`; its input 0 is its own copy of the constant one.
    fn extend(&mut self, other: &Self) {
        self.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or(&[]));
        self.aux.extend_from_slice(&other.aux);
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.inputs.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.aux.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let (a0, i0) = (self.aux.len(), self.inputs.len());
        self.aux.resize(a0 + aux_n, Scalar::ZERO);
        self.inputs.resize(i0 + inputs_n, Scalar::ZERO);
        (&mut self.aux[a0..], &mut self.inputs[i0..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        let i0 = self.inputs.len();
        self.inputs.resize(i0 + n, Scalar::ZERO);
        &mut self.inputs[i0..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        let a0 = self.aux.len();
        self.aux.resize(a0 + n, Scalar::ZERO);
        &mut self.aux[a0..]
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.inputs
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.aux
    }
}

/// A part of a witness generated straight into its place in the whole
/// (no per-part vectors to join afterwards: at 32 GiB a PoRep challenge's
/// part is 230 MB, and joining them copied and page-faulted every byte a
/// second time). The part's circuit first allocates a prefix it shares
/// with the whole (generated once elsewhere): those allocations are
/// compared with it and dropped; the rest fill `inputs` and `aux`, which
/// they must fill exactly ([`WitnessPart::finish`] says otherwise, by
/// name). A witness generator like [`WitnessCs`].
pub struct WitnessPart<'a> {
    prefix_inputs: &'a [Scalar],
    prefix_aux: &'a [Scalar],
    inputs: &'a mut [Scalar],
    aux: &'a mut [Scalar],
    /// Allocated so far, the prefix included.
    num_inputs: usize,
    num_aux: usize,
    /// Bulk allocations that do not fit in place land here, and the part
    /// is then refused.
    spill: Vec<Scalar>,
    error: Option<String>,
}

impl<'a> WitnessPart<'a> {
    /// `prefix_inputs` starts with the constant one, which this part's
    /// system holds as its input 0 from the start.
    pub fn new(
        prefix_inputs: &'a [Scalar],
        prefix_aux: &'a [Scalar],
        inputs: &'a mut [Scalar],
        aux: &'a mut [Scalar],
    ) -> Self {
        let mut error = None;
        if prefix_inputs.first() != Some(&Scalar::ONE) {
            error = Some("the shared prefix's input 0 is not the constant one".to_owned());
        }
        WitnessPart {
            prefix_inputs,
            prefix_aux,
            inputs,
            aux,
            num_inputs: 1,
            num_aux: 0,
            spill: Vec::new(),
            error,
        }
    }

    /// Takes the shared prefix as allocated already: for a part whose
    /// generator holds the prefix's variables from generating it once, and
    /// so starts with its own. Only before anything is allocated.
    pub fn skip_prefix(&mut self) {
        if self.num_inputs != 1 || self.num_aux != 0 {
            self.fail(|| "the prefix skipped after allocations".to_owned());
            return;
        }
        self.num_inputs = self.prefix_inputs.len();
        self.num_aux = self.prefix_aux.len();
    }

    fn fail(&mut self, what: impl FnOnce() -> String) {
        if self.error.is_none() {
            self.error = Some(what());
        }
    }

    fn put_aux(&mut self, v: Scalar) {
        let (k, pa) = (self.num_aux, self.prefix_aux.len());
        if k < pa {
            if self.prefix_aux[k] != v {
                self.fail(|| format!("aux {k} differs from the shared prefix's"));
            }
        } else if let Some(slot) = self.aux.get_mut(k - pa) {
            *slot = v;
        } else {
            let room = self.aux.len();
            self.fail(|| format!("more aux variables than the part's {room}"));
        }
        self.num_aux += 1;
    }

    fn put_input(&mut self, v: Scalar) {
        let (k, pi) = (self.num_inputs, self.prefix_inputs.len());
        if k < pi {
            if self.prefix_inputs[k] != v {
                self.fail(|| format!("input {k} differs from the shared prefix's"));
            }
        } else if let Some(slot) = self.inputs.get_mut(k - pi) {
            *slot = v;
        } else {
            let room = self.inputs.len();
            self.fail(|| format!("more inputs than the part's {room}"));
        }
        self.num_inputs += 1;
    }

    /// `Ok` when the prefix was allocated with its values and the part's
    /// room filled exactly; otherwise what went wrong.
    pub fn finish(self) -> std::result::Result<(), String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let (pi, pa) = (self.prefix_inputs.len(), self.prefix_aux.len());
        if self.num_inputs != pi + self.inputs.len() || self.num_aux != pa + self.aux.len() {
            return Err(format!(
                "allocated {} inputs and {} aux variables, the prefix and the part's room \
                 make {} and {}",
                self.num_inputs,
                self.num_aux,
                pi + self.inputs.len(),
                pa + self.aux.len()
            ));
        }
        Ok(())
    }
}

impl ConstraintSystem<Scalar> for WitnessPart<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.put_aux(f()?);
        Ok(Variable(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.put_input(f()?);
        Ok(Variable(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _a: LA, _b: LB, _c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
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

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        for &v in new_inputs {
            self.put_input(v);
        }
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        let (k, pa) = (self.num_aux, self.prefix_aux.len());
        // Past the prefix and within the room: one copy.
        if k >= pa {
            if let Some(dst) = self.aux.get_mut(k - pa..k - pa + new_aux.len()) {
                dst.copy_from_slice(new_aux);
                self.num_aux += new_aux.len();
                return;
            }
        }
        for &v in new_aux {
            self.put_aux(v);
        }
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        // Two disjoint slices cannot come from this system's storage and
        // the spill at once; no gadget of the circuits this serves asks
        // for both, so it is refused rather than supported.
        self.fail(|| format!("allocate_empty({aux_n}, {inputs_n}) is not supported in a part"));
        self.num_aux += aux_n;
        self.num_inputs += inputs_n;
        self.spill.clear();
        self.spill.resize(aux_n + inputs_n, Scalar::ZERO);
        let (a, i) = self.spill.split_at_mut(aux_n);
        (a, i)
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        self.fail(|| format!("allocate_empty_inputs({n}) is not supported in a part"));
        self.num_inputs += n;
        self.spill.clear();
        self.spill.resize(n, Scalar::ZERO);
        &mut self.spill
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        let (k, pa) = (self.num_aux, self.prefix_aux.len());
        self.num_aux += n;
        if k >= pa && k - pa + n <= self.aux.len() {
            return &mut self.aux[k - pa..k - pa + n];
        }
        self.fail(|| format!("allocate_empty_aux({n}) at aux {k} does not fit the part"));
        self.spill.clear();
        self.spill.resize(n, Scalar::ZERO);
        &mut self.spill
    }
}

/// The witness of `circuit`: its synthesis with nothing but the values kept
/// (its vectors grown as it allocates; [`CompiledCircuit::witness`]
/// reserves them at a compiled system's sizes).
pub fn synthesize_witness<C: Circuit<Scalar>>(circuit: C) -> Result<Witness> {
    let mut cs = WitnessCs::with_one();
    circuit
        .synthesize(&mut cs)
        .map_err(|source| Error::Synthesis { index: 0, source })?;
    Ok(cs.into_witness())
}

// ---------------------------------------------------------------------------
// The file.

const MAGIC: &[u8; 8] = b"CUZKR1CS";
const VERSION: u32 = 1;
/// Sections: three per matrix, the coefficient table, the densities.
const SECTIONS: usize = 11;
const SECTION_NAMES: [&str; SECTIONS] = [
    "A row starts",
    "A columns",
    "A coefficients",
    "B row starts",
    "B columns",
    "B coefficients",
    "C row starts",
    "C columns",
    "C coefficients",
    "coefficient table",
    "densities",
];

fn crc_of(bytes: &[u8]) -> u32 {
    // Chunks hashed on every core and combined: a 2^27 circuit's file is
    // several GB.
    const CHUNK: usize = 64 << 20;
    bytes
        .par_chunks(CHUNK)
        .map(|c| {
            let mut h = crc32fast::Hasher::new();
            h.update(c);
            h
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(crc32fast::Hasher::new(), |mut acc, h| {
            acc.combine(&h);
            acc
        })
        .finalize()
}

fn pad8(n: usize) -> usize {
    (8 - n % 8) % 8
}

impl CompiledCircuit {
    /// The sections in file order, borrowed where they are plain words:
    /// per matrix A, B, C its row starts (u64), columns and coefficient
    /// indices (u32); the coefficient table (canonical 32-byte
    /// little-endian); the densities (one byte per variable: A aux, B
    /// inputs, B aux).
    fn sections(&self) -> Vec<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        let mut out: Vec<Cow<'_, [u8]>> = Vec::with_capacity(SECTIONS);
        for m in [&self.a, &self.b, &self.c] {
            out.push(Cow::Borrowed(bytemuck::cast_slice(m.row_start())));
            out.push(Cow::Borrowed(bytemuck::cast_slice(m.cols())));
            out.push(Cow::Borrowed(bytemuck::cast_slice(m.coefs())));
        }
        out.push(Cow::Owned(
            self.coeffs.iter().flat_map(|c| c.to_repr()).collect(),
        ));
        let mut dens = Vec::with_capacity(2 * self.num_aux + self.num_inputs);
        dens.extend(self.a_aux_density.as_slice().iter().map(|b| *b as u8));
        dens.extend(self.b_input_density.as_slice().iter().map(|b| *b as u8));
        dens.extend(self.b_aux_density.as_slice().iter().map(|b| *b as u8));
        out.push(Cow::Owned(dens));
        out
    }
}

/// Little-endian reader over the header.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(Error::Format {
                path: self.path.to_path_buf(),
                what: format!(
                    "truncated: the file ends at byte {} inside the {what}",
                    self.bytes.len()
                ),
            });
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
}

impl CompiledCircuit {
    /// Write the compiled system to `path` (through a temporary file, so a
    /// crash never leaves a truncated file under the final name).
    ///
    /// Layout, little-endian: magic `CUZKR1CS`, version (u32), the circuit
    /// id (u32 length, UTF-8 bytes), inputs, aux, rows (u64 each), the nnz
    /// of A, B, C and the table's length (u64 each), one (u64 length, u32
    /// CRC-32) pair per section, the header's CRC-32 (u32, over everything
    /// before it), zero padding to a multiple of 8; then the sections, each
    /// padded to a multiple of 8 bytes: for A, B and C in turn the row
    /// starts (u64), the columns and the coefficient indices (u32); the
    /// table (32-byte canonical scalars); the densities (a byte per
    /// variable: A aux, B inputs, B aux). Sections start 8-byte aligned in
    /// the file, so a mapping reads them in place.
    pub fn write_file(&self, path: &Path) -> Result<()> {
        let sections = self.sections();
        let mut head = Vec::new();
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&(self.circuit_id.len() as u32).to_le_bytes());
        head.extend_from_slice(self.circuit_id.as_bytes());
        for v in [
            self.num_inputs,
            self.num_aux,
            self.num_constraints(),
            self.a.nnz(),
            self.b.nnz(),
            self.c.nnz(),
            self.coeffs.len(),
        ] {
            head.extend_from_slice(&(v as u64).to_le_bytes());
        }
        let crcs: Vec<u32> = sections.par_iter().map(|s| crc_of(s)).collect();
        for (s, crc) in sections.iter().zip(&crcs) {
            head.extend_from_slice(&(s.len() as u64).to_le_bytes());
            head.extend_from_slice(&crc.to_le_bytes());
        }
        let hcrc = crc_of(&head);
        head.extend_from_slice(&hcrc.to_le_bytes());
        head.resize(head.len() + pad8(head.len()), 0);
        write_atomically(path, |w| {
            w.write_all(&head)?;
            for s in &sections {
                w.write_all(s)?;
                w.write_all(&[0u8; 8][..pad8(s.len())])?;
            }
            Ok(())
        })
    }

    /// Open a compiled system written by [`CompiledCircuit::write_file`]:
    /// the file is mapped, every section's CRC checked, the matrices read
    /// in place. `expect_id`, when given, must equal the circuit id in
    /// the header.
    pub fn open(path: &Path, expect_id: Option<&str>) -> Result<Self> {
        let fmt = |what: String| Error::Format {
            path: path.to_path_buf(),
            what,
        };
        if cfg!(target_endian = "big") {
            return Err(fmt(
                "compiled circuits are read in place as little-endian words; \
                            this machine is big-endian"
                    .into(),
            ));
        }
        let file = open_regular(path, "compiled circuit")?;
        #[allow(unsafe_code)]
        // SAFETY: read-only mapping of a file that writers replace by
        // rename and never modify in place; were another process to
        // truncate it while mapped, reads could fault, the documented caveat
        // of every file mapping.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        let map = Arc::new(map);
        let mut cur = Cursor {
            bytes: &map,
            at: 0,
            path,
        };
        if cur.take(8, "magic")? != MAGIC {
            return Err(fmt("not a cuzk compiled circuit (bad magic)".into()));
        }
        let version = cur.u32("version")?;
        if version != VERSION {
            return Err(fmt(format!(
                "compiled-circuit format version {version}; this build reads version {VERSION}"
            )));
        }
        let id_len = cur.u32("circuit id length")? as usize;
        if id_len > 4096 {
            return Err(fmt(format!("circuit id of {id_len} bytes")));
        }
        let id = std::str::from_utf8(cur.take(id_len, "circuit id")?)
            .map_err(|_| fmt("the circuit id is not UTF-8".into()))?
            .to_owned();
        let mut counts = [0usize; 7];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = usize::try_from(cur.u64(
                [
                    "inputs",
                    "aux",
                    "rows",
                    "A nnz",
                    "B nnz",
                    "C nnz",
                    "table length",
                ][i],
            )?)
            .map_err(|_| fmt("a count does not fit this machine's usize".into()))?;
        }
        let [num_inputs, num_aux, rows, a_nnz, b_nnz, c_nnz, table_len] = counts;
        let mut sect = [(0usize, 0u32); SECTIONS];
        for s in sect.iter_mut() {
            let len = cur.u64("section table")?;
            let crc = cur.u32("section table")?;
            *s = (
                usize::try_from(len).map_err(|_| fmt("a section length overflows".into()))?,
                crc,
            );
        }
        let head_end = cur.at;
        let hcrc = cur.u32("header checksum")?;
        if crc_of(&map[..head_end]) != hcrc {
            return Err(fmt(
                "the header's checksum does not match: the file is damaged".into(),
            ));
        }
        if let Some(want) = expect_id {
            if want != id {
                return Err(Error::CompiledMismatch {
                    path: path.to_path_buf(),
                    what: format!("made for circuit {id:?}, not {want:?}"),
                });
            }
        }
        let vars = num_inputs
            .checked_add(num_aux)
            .ok_or_else(|| fmt("input and aux counts overflow".into()))?;
        // Expected section lengths from the counts.
        let mul = |a: usize, b: usize| {
            a.checked_mul(b)
                .ok_or_else(|| fmt("a section size overflows".into()))
        };
        let rows1 = rows
            .checked_add(1)
            .ok_or_else(|| fmt("row count overflows".into()))?;
        let expect = [
            mul(8, rows1)?,
            mul(4, a_nnz)?,
            mul(4, a_nnz)?,
            mul(8, rows1)?,
            mul(4, b_nnz)?,
            mul(4, b_nnz)?,
            mul(8, rows1)?,
            mul(4, c_nnz)?,
            mul(4, c_nnz)?,
            mul(32, table_len)?,
            mul(2, num_aux)?
                .checked_add(num_inputs)
                .ok_or_else(|| fmt("density size overflows".into()))?,
        ];
        let names = SECTION_NAMES;
        let mut at = cur.at + pad8(cur.at);
        let mut offsets = [0usize; SECTIONS];
        for (i, &(len, _)) in sect.iter().enumerate() {
            if len != expect[i] {
                return Err(fmt(format!(
                    "section {} is {len} bytes; the header's counts need {}",
                    names[i], expect[i]
                )));
            }
            let end = at
                .checked_add(len)
                .filter(|&e| e <= map.len())
                .ok_or_else(|| {
                    fmt(format!(
                        "truncated: the file is {} bytes and ends inside section {}",
                        map.len(),
                        names[i]
                    ))
                })?;
            offsets[i] = at;
            at = end + pad8(len);
        }
        if at != map.len() {
            return Err(fmt(format!(
                "{} trailing bytes after the last section (which ends at {at})",
                map.len().saturating_sub(at)
            )));
        }
        let bad: Vec<usize> = (0..SECTIONS)
            .into_par_iter()
            .filter(|&i| crc_of(&map[offsets[i]..offsets[i] + sect[i].0]) != sect[i].1)
            .collect();
        if let Some(&i) = bad.first() {
            return Err(fmt(format!(
                "section {}'s checksum does not match: the file is damaged",
                names[i]
            )));
        }
        fn mapped<T: bytemuck::Pod>(
            map: &Arc<memmap2::Mmap>,
            offset: usize,
            len: usize,
        ) -> Words<T> {
            Words::Mapped {
                map: map.clone(),
                offset,
                len,
            }
        }
        let matrix = |k: usize, nnz: usize| SparseMatrix {
            row_start: mapped(&map, offsets[3 * k], rows1),
            cols: mapped(&map, offsets[3 * k + 1], nnz),
            coefs: mapped(&map, offsets[3 * k + 2], nnz),
        };
        let (a, b, c) = (matrix(0, a_nnz), matrix(1, b_nnz), matrix(2, c_nnz));
        let table_bytes = &map[offsets[9]..offsets[9] + 32 * table_len];
        let coeffs: Vec<Option<Scalar>> = table_bytes
            .par_chunks(32)
            .map(|c| {
                let mut repr = [0u8; 32];
                repr.copy_from_slice(c);
                Option::from(Scalar::from_repr(repr))
            })
            .collect();
        let coeffs: Vec<Scalar> = coeffs
            .into_iter()
            .enumerate()
            .map(|(i, c)| c.ok_or_else(|| fmt(format!("coefficient {i} is not a field element"))))
            .collect::<Result<_>>()?;
        if coeffs.len() < 2 || coeffs[0] != Scalar::ONE || coeffs[1] != -Scalar::ONE {
            return Err(fmt("the coefficient table does not start with 1, -1".into()));
        }
        let dens = &map[offsets[10]..offsets[10] + sect[10].0];
        if let Some(k) = dens.iter().position(|&b| b > 1) {
            return Err(fmt(format!("density byte {k} is {}, not 0 or 1", dens[k])));
        }
        let bits = |r: std::ops::Range<usize>| {
            Density::from_bits(dens[r].iter().map(|&b| b == 1).collect())
        };
        let a_aux_density = bits(0..num_aux);
        let b_input_density = bits(num_aux..num_aux + num_inputs);
        let b_aux_density = bits(num_aux + num_inputs..2 * num_aux + num_inputs);
        for (name, m) in [("A", &a), ("B", &b), ("C", &c)] {
            m.validate(name, vars, coeffs.len()).map_err(fmt)?;
        }
        let cc = CompiledCircuit {
            circuit_id: id,
            num_inputs,
            num_aux,
            a,
            b,
            c,
            coeffs,
            a_aux_density,
            b_input_density,
            b_aux_density,
        };
        // The densities must be what the matrices say (a tampered density
        // would silently pair scalars with the wrong query points).
        let (ni, na) = (num_inputs, num_aux);
        if density_of(&cc.a, ni, na) != cc.a_aux_density
            || density_of(&cc.b, 0, ni) != cc.b_input_density
            || density_of(&cc.b, ni, na) != cc.b_aux_density
        {
            return Err(fmt("the densities do not match the matrices".into()));
        }
        Ok(cc)
    }

    /// Open the file at `path` if it exists and was made for `circuit_id`,
    /// else compile `make()`'s circuit and write it there. Returns the
    /// system and whether it was compiled now.
    pub fn open_or_compile<C: Circuit<Scalar>>(
        path: &Path,
        circuit_id: &str,
        make: impl FnOnce() -> C,
    ) -> Result<(Self, bool)> {
        if path.exists() {
            return Ok((Self::open(path, Some(circuit_id))?, false));
        }
        let cc = compile(make(), circuit_id)?;
        cc.write_file(path)?;
        Ok((cc, true))
    }
}

/// A compiled constraint system made on first use by one caller while the
/// others wait, then shared (a circuit kind's, in a daemon).
pub struct CompiledOnce {
    cell: std::sync::Mutex<Option<Arc<CompiledCircuit>>>,
}

impl Default for CompiledOnce {
    fn default() -> Self {
        Self::new()
    }
}

impl CompiledOnce {
    pub fn new() -> Self {
        CompiledOnce {
            cell: std::sync::Mutex::new(None),
        }
    }
    /// The compiled system, made by `make` if this is the first call.
    pub fn get_or_compile(
        &self,
        make: impl FnOnce() -> Result<CompiledCircuit>,
    ) -> Result<Arc<CompiledCircuit>> {
        let mut g = self.cell.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = &*g {
            return Ok(c.clone());
        }
        let c = Arc::new(make()?);
        *g = Some(c.clone());
        Ok(c)
    }
    /// The compiled system if it has been made.
    pub fn get(&self) -> Option<Arc<CompiledCircuit>> {
        self.cell.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
