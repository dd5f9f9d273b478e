//! Circuit synthesis: a `bellpepper_core` circuit becomes the a/b/c
//! evaluation vectors and the assignments, in a form every backend takes.
//!
//! Layout follows bellperson exactly, because the parameters' query vectors
//! are laid out to match: after the circuit's own constraints, one constraint
//! `input_i * 0 = 0` is added per public input (so every input occurs in A),
//! and the densities say which aux variables (and, for B, inputs) occur in
//! the A and B columns; parameters hold query points only for those.

use bellpepper_core::{Circuit, ConstraintSystem};
use blstrs::Scalar;

/// A bit per variable: does it occur (with any coefficient) in a column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    bits: Vec<bool>,
}

impl Density {
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
        todo!()
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
}

/// Synthesize one circuit.
pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> crate::Result<ProvingAssignment> {
    let _ = circuit;
    todo!()
}

/// Synthesize several circuits of one shape in parallel (rayon).
pub fn synthesize_batch<C: Circuit<Scalar> + Send>(
    circuits: Vec<C>,
) -> crate::Result<Vec<ProvingAssignment>> {
    let _ = circuits;
    todo!()
}

#[allow(unused)]
fn _assert_cs<CS: ConstraintSystem<Scalar>>() {}
