//! Circuit synthesis: a `bellpepper_core` circuit becomes the a/b/c
//! evaluation vectors and the assignments, in a form every backend takes.
//!
//! Layout follows bellperson exactly, because the parameters' query vectors
//! are laid out to match: after the circuit's own constraints, one constraint
//! `input_i * 0 = 0` is added per public input (so every input occurs in A),
//! and the densities say which aux variables (and, for B, inputs) occur in
//! the A and B columns; parameters hold query points only for those.
//!
//! A variable "occurs" in a column when some constraint gives it a nonzero
//! coefficient there (bellperson's `eval_with_trackers` rule).

use crate::{Error, Result};
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

/// A bit per variable: does it occur (with any coefficient) in a column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    bits: Vec<bool>,
}

impl Density {
    pub fn from_bits(bits: Vec<bool>) -> Self {
        Self { bits }
    }
    pub fn len(&self) -> usize {
        self.bits.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }
    pub fn get(&self, i: usize) -> bool {
        self.bits[i]
    }
    pub fn as_slice(&self) -> &[bool] {
        &self.bits
    }
    /// Number of set bits: the length of the matching query vector.
    pub fn count(&self) -> usize {
        self.bits.iter().filter(|b| **b).count()
    }
    /// The values whose bit is set, in order: the scalars that pair with
    /// the query vector of this density.
    pub fn select<'a, T: Copy>(&'a self, values: &'a [T]) -> impl Iterator<Item = T> + 'a {
        values
            .iter()
            .zip(&self.bits)
            .filter_map(|(v, b)| b.then_some(*v))
    }
    /// [`Density::select`] appended to `out`, on every core: runs of
    /// values are counted, then each run fills its own part of the output,
    /// written once into the vector's spare capacity (filling it with
    /// defaults first cost a third of the time: 52 → 31 ms for 3.7 M
    /// scalars on two cores, `cuzk-gpu`'s `host_prep_bench` at 2^22).
    pub fn select_into<T: Copy + Send + Sync>(&self, values: &[T], out: &mut Vec<T>) {
        use rayon::prelude::*;
        const RUN: usize = 1 << 14;
        let n = values.len().min(self.bits.len());
        let (values, bits) = (&values[..n], &self.bits[..n]);
        let counts: Vec<usize> = bits
            .par_chunks(RUN)
            .map(|c| c.iter().filter(|b| **b).count())
            .collect();
        let start = out.len();
        let total: usize = counts.iter().sum();
        out.reserve(total);
        let mut rest = &mut out.spare_capacity_mut()[..total];
        let mut parts = Vec::with_capacity(counts.len());
        for c in counts {
            let (part, tail) = rest.split_at_mut(c);
            parts.push(part);
            rest = tail;
        }
        parts
            .into_par_iter()
            .zip(values.par_chunks(RUN).zip(bits.par_chunks(RUN)))
            .for_each(|(dst, (vals, bits))| {
                let mut k = 0;
                for (v, b) in vals.iter().zip(bits) {
                    if *b {
                        dst[k].write(*v);
                        k += 1;
                    }
                }
                assert_eq!(k, dst.len(), "a run's count and its selection agree");
            });
        #[allow(unsafe_code)]
        // SAFETY: the `total` slots after `start` were split into one part
        // per run, each exactly as long as the run's selected values
        // (counted above from the same bits), and every part was written
        // in full (asserted); T is Copy, so nothing needs dropping.
        unsafe {
            out.set_len(start + total)
        };
    }
    fn push(&mut self) {
        self.bits.push(false);
    }
    fn set(&mut self, i: usize) {
        self.bits[i] = true;
    }
}

/// One synthesized circuit.
#[derive(Clone, Debug)]
pub struct ProvingAssignment {
    /// Evaluations of the A, B and C linear combinations at each constraint
    /// (input constraints included); all three have the same length.
    pub a: Vec<Scalar>,
    pub b: Vec<Scalar>,
    pub c: Vec<Scalar>,
    /// Input 0 is the constant one.
    pub input_assignment: Vec<Scalar>,
    pub aux_assignment: Vec<Scalar>,
    pub a_aux_density: Density,
    pub b_input_density: Density,
    pub b_aux_density: Density,
}

impl ProvingAssignment {
    pub fn num_constraints(&self) -> usize {
        self.a.len()
    }
    /// Public inputs as the verifier sees them (without the leading one).
    pub fn public_inputs(&self) -> &[Scalar] {
        &self.input_assignment[1..]
    }
    /// The scalars of the A query, in the order of the parameters' `a`
    /// vector: every input, then the aux variables that occur in A.
    pub fn a_query_scalars(&self) -> Vec<Scalar> {
        let mut out = Vec::new();
        self.a_query_scalars_into(&mut out);
        out
    }
    /// [`Self::a_query_scalars`] into `out` (cleared first), whose memory
    /// a caller may reuse across partitions: at 2^27 the vector is 3.7 GB,
    /// and writing freshly mapped memory runs several times slower than
    /// writing memory already in place (page faults).
    pub fn a_query_scalars_into(&self, out: &mut Vec<Scalar>) {
        out.clear();
        out.reserve(self.input_assignment.len() + self.aux_assignment.len());
        out.extend_from_slice(&self.input_assignment);
        self.a_aux_density.select_into(&self.aux_assignment, out);
    }
    /// The scalars of the B queries (b_g1 and b_g2), in the parameters'
    /// order: the inputs that occur in B, then the aux variables that do.
    pub fn b_query_scalars(&self) -> Vec<Scalar> {
        let mut out = Vec::new();
        self.b_query_scalars_into(&mut out);
        out
    }
    /// [`Self::b_query_scalars`] into `out` (cleared first), as
    /// [`Self::a_query_scalars_into`].
    pub fn b_query_scalars_into(&self, out: &mut Vec<Scalar>) {
        out.clear();
        out.reserve(self.input_assignment.len() + self.aux_assignment.len());
        out.extend(self.b_input_density.select(&self.input_assignment));
        self.b_aux_density.select_into(&self.aux_assignment, out);
    }
}

/// The constraint system the prover synthesizes into.
struct Synthesizer {
    pa: ProvingAssignment,
    /// First malformation seen (enforce cannot return an error).
    error: Option<String>,
}

impl Synthesizer {
    fn empty() -> Self {
        Synthesizer {
            pa: ProvingAssignment {
                a: Vec::new(),
                b: Vec::new(),
                c: Vec::new(),
                input_assignment: Vec::new(),
                aux_assignment: Vec::new(),
                a_aux_density: Density::default(),
                b_input_density: Density::default(),
                b_aux_density: Density::default(),
            },
            error: None,
        }
    }

    /// Evaluate a linear combination, marking the densities of the
    /// variables it uses with a nonzero coefficient.
    fn eval(
        &mut self,
        lc: &LinearCombination<Scalar>,
        mut input_density: Option<&mut Density>,
        mut aux_density: Option<&mut Density>,
    ) -> Scalar {
        let mut acc = Scalar::ZERO;
        let inputs = &self.pa.input_assignment;
        let aux = &self.pa.aux_assignment;
        for (&i, coeff) in lc.iter_inputs() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let Some(v) = inputs.get(i) else {
                self.error.get_or_insert_with(|| {
                    format!(
                        "constraint {} uses input {i}, which was never allocated",
                        self.pa.a.len()
                    )
                });
                continue;
            };
            acc += if *coeff == Scalar::ONE {
                *v
            } else {
                *v * coeff
            };
            if let Some(d) = input_density.as_deref_mut() {
                d.set(i);
            }
        }
        for (&i, coeff) in lc.iter_aux() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let Some(v) = aux.get(i) else {
                self.error.get_or_insert_with(|| {
                    format!(
                        "constraint {} uses aux variable {i}, which was never allocated",
                        self.pa.a.len()
                    )
                });
                continue;
            };
            acc += if *coeff == Scalar::ONE {
                *v
            } else {
                *v * coeff
            };
            if let Some(d) = aux_density.as_deref_mut() {
                d.set(i);
            }
        }
        acc
    }
}

impl ConstraintSystem<Scalar> for Synthesizer {
    type Root = Self;

    fn new() -> Self {
        Self::empty()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.pa.aux_assignment.push(f()?);
        self.pa.a_aux_density.push();
        self.pa.b_aux_density.push();
        Ok(Variable(Index::Aux(self.pa.aux_assignment.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.pa.input_assignment.push(f()?);
        self.pa.b_input_density.push();
        Ok(Variable(Index::Input(self.pa.input_assignment.len() - 1)))
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
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());

        // Densities are moved out while evaluating so that `eval` can borrow
        // the assignments; inputs need no A density (the input constraints
        // put every input in A).
        let mut a_aux = std::mem::take(&mut self.pa.a_aux_density);
        let a_val = self.eval(&a, None, Some(&mut a_aux));
        self.pa.a_aux_density = a_aux;

        let mut b_in = std::mem::take(&mut self.pa.b_input_density);
        let mut b_aux = std::mem::take(&mut self.pa.b_aux_density);
        let b_val = self.eval(&b, Some(&mut b_in), Some(&mut b_aux));
        self.pa.b_input_density = b_in;
        self.pa.b_aux_density = b_aux;

        let c_val = self.eval(&c, None, None);

        self.pa.a.push(a_val);
        self.pa.b.push(b_val);
        self.pa.c.push(c_val);
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

    // Filecoin's circuits synthesize independent parts in parallel into
    // fresh systems and splice them in with `extend`, as bellperson allows.
    fn is_extensible() -> bool {
        true
    }

    /// Append `other`, synthesized separately; its input 0 is its own copy
    /// of the constant one and merges with ours (bellperson's rule).
    fn extend(&mut self, other: &Self) {
        if self.error.is_none() {
            self.error = other.error.clone();
        }
        let o = &other.pa;
        let s = &mut self.pa;
        s.a_aux_density
            .bits
            .extend_from_slice(&o.a_aux_density.bits);
        s.b_aux_density
            .bits
            .extend_from_slice(&o.b_aux_density.bits);
        if s.b_input_density.bits.is_empty() {
            s.b_input_density = o.b_input_density.clone();
        } else if let Some((first, rest)) = o.b_input_density.bits.split_first() {
            s.b_input_density.bits[0] |= *first;
            s.b_input_density.bits.extend_from_slice(rest);
        }
        s.a.extend_from_slice(&o.a);
        s.b.extend_from_slice(&o.b);
        s.c.extend_from_slice(&o.c);
        s.input_assignment
            .extend_from_slice(o.input_assignment.get(1..).unwrap_or(&[]));
        s.aux_assignment.extend_from_slice(&o.aux_assignment);
    }
}

fn synthesize_indexed<C: Circuit<Scalar>>(circuit: C, index: usize) -> Result<ProvingAssignment> {
    let mut cs = Synthesizer::empty();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))
        .map_err(|source| Error::Synthesis { index, source })?;
    circuit
        .synthesize(&mut cs)
        .map_err(|source| Error::Synthesis { index, source })?;
    if let Some(what) = cs.error.take() {
        return Err(Error::InvalidCircuit { index, what });
    }
    // The input constraints `input_i * 0 = 0`: A holds the input's value,
    // B and C are zero.
    let pa = &mut cs.pa;
    pa.a.extend_from_slice(&pa.input_assignment);
    pa.b.resize(pa.a.len(), Scalar::ZERO);
    pa.c.resize(pa.a.len(), Scalar::ZERO);
    Ok(cs.pa)
}

/// Synthesize one circuit.
pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> crate::Result<ProvingAssignment> {
    synthesize_indexed(circuit, 0)
}

/// Synthesize several circuits of one shape in parallel (rayon).
pub fn synthesize_batch<C: Circuit<Scalar> + Send>(
    circuits: Vec<C>,
) -> crate::Result<Vec<ProvingAssignment>> {
    circuits
        .into_par_iter()
        .enumerate()
        .map(|(i, c)| synthesize_indexed(c, i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn parallel_selection_equals_the_serial_one() {
        let seed: u64 = rand::random();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        for n in [0usize, 1, 5, (1 << 14) - 1, 1 << 14, (2 << 14) + 3] {
            let values: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            let d = Density::from_bits((0..n).map(|_| rng.gen_bool(0.7)).collect());
            let head = vec![Scalar::ONE, Scalar::from(9u64)];
            let mut want = head.clone();
            want.extend(d.select(&values));
            let mut got = head;
            d.select_into(&values, &mut got);
            assert_eq!(got, want, "n={n} seed={seed}");
            // Into a vector with room left from a larger selection.
            let mut reused = vec![Scalar::ZERO; 3 * n + 5];
            reused.truncate(2);
            reused.copy_from_slice(&[Scalar::ONE, Scalar::from(9u64)]);
            d.select_into(&values, &mut reused);
            assert_eq!(reused, want, "reused, n={n} seed={seed}");
        }
    }
}
