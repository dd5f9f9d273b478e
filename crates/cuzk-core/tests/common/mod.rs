//! Test circuits shared by the integration tests. They implement
//! bellpepper_core's `Circuit`, which bellperson re-exports, so one value
//! works with both libraries.

#![allow(dead_code)]

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A small circuit that exercises every layout rule:
/// - `num_inputs` public inputs, each used in B (`a_i · x_i = p_i`), so
///   the B input density is not just the constant one;
/// - one input used only in C;
/// - aux variables that occur only in C (never in A or B);
/// - linear combinations with random full-width coefficients, and a chain
///   of `extra` multiplications to make the circuit longer.
#[derive(Clone, Debug)]
pub struct MixedCircuit {
    /// Structure (coefficients) comes from `seed`, values from `witness`:
    /// circuits with one seed and different witnesses share parameters.
    pub seed: u64,
    pub witness: u64,
    pub num_inputs: usize,
    pub extra: usize,
}

impl MixedCircuit {
    pub fn new(seed: u64, num_inputs: usize, extra: usize) -> Self {
        Self::with_witness(seed, seed, num_inputs, extra)
    }
    pub fn with_witness(seed: u64, witness: u64, num_inputs: usize, extra: usize) -> Self {
        assert!(num_inputs >= 2);
        Self {
            seed,
            witness,
            num_inputs,
            extra,
        }
    }

    /// Values of the public inputs, in order. The last one is the product
    /// the circuit proves; the others are free.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        self.compute().0
    }

    /// (public inputs, aux values) computed outside any constraint system.
    fn compute(&self) -> (Vec<Scalar>, Vec<Scalar>) {
        let mut rng = ChaCha8Rng::seed_from_u64(self.witness);
        let free: Vec<Scalar> = (0..self.num_inputs - 1)
            .map(|_| Scalar::random(&mut rng))
            .collect();
        let a: Vec<Scalar> = (0..self.num_inputs - 1)
            .map(|_| Scalar::random(&mut rng))
            .collect();
        let mut product = Scalar::ONE;
        for (x, a) in free.iter().zip(&a) {
            product *= *x * a;
        }
        let mut inputs = free;
        inputs.push(product);
        (inputs, a)
    }
}

impl Circuit<Scalar> for MixedCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let (inputs, a_vals) = self.compute();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ 0xabcdef);
        let mut wrng = ChaCha8Rng::seed_from_u64(self.witness ^ 0x123456);
        let xs = inputs
            .iter()
            .enumerate()
            .map(|(i, v)| cs.alloc_input(|| format!("x{i}"), || Ok(*v)))
            .collect::<Result<Vec<_>, _>>()?;

        // p_i = a_i · x_i, x_i in B; then the running product in C only.
        let mut acc_val = Scalar::ONE;
        let mut acc = None;
        for (i, (x, a_val)) in xs.iter().zip(&a_vals).enumerate() {
            let a = cs.alloc(|| format!("a{i}"), || Ok(*a_val))?;
            let p_val = *a_val * inputs[i];
            let p = cs.alloc(|| format!("p{i}"), || Ok(p_val))?;
            cs.enforce(|| "a*x", |l| l + a, |l| l + *x, |l| l + p);
            let next_val = acc_val * p_val;
            let next = cs.alloc(|| format!("acc{i}"), || Ok(next_val))?;
            match acc {
                None => cs.enforce(|| "acc", |l| l + CS::one(), |l| l + p, |l| l + next),
                Some(prev) => cs.enforce(|| "acc", |l| l + prev, |l| l + p, |l| l + next),
            }
            acc = Some(next);
            acc_val = next_val;
        }
        // The last input is only in C: acc · 1 = x_last.
        let last = *xs.last().expect("at least two inputs");
        let acc = acc.expect("at least one product");
        cs.enforce(|| "out", |l| l + acc, |l| l + CS::one(), |l| l + last);

        // Aux only in C: c = w·w, where c is never used again.
        let lone_vals: Vec<Scalar> = (0..3).map(|_| Scalar::random(&mut wrng)).collect();
        for (k, v) in lone_vals.iter().enumerate() {
            let w = cs.alloc(|| format!("w{k}"), || Ok(*v))?;
            let c_val = v.square();
            let c = cs.alloc(|| format!("c_only{k}"), || Ok(c_val))?;
            cs.enforce(|| "sq", |l| l + w, |l| l + w, |l| l + c);
        }

        // A chain with random full-width coefficients.
        if self.extra == 0 {
            return Ok(());
        }
        let mut y_val = Scalar::random(&mut wrng);
        let mut y = cs.alloc(|| "y0", || Ok(y_val))?;
        for k in 0..self.extra {
            let c1 = Scalar::random(&mut rng);
            let c2 = Scalar::random(&mut rng);
            let bit = wrng.gen::<bool>();
            let b_val = if bit { Scalar::ONE } else { Scalar::ZERO };
            let b = cs.alloc(|| format!("b{k}"), || Ok(b_val))?;
            cs.enforce(|| "bool", |l| l + b, |l| l + CS::one() - b, |l| l);
            // z = (c1·y + b) · (c2 + y)
            let z_val = (c1 * y_val + b_val) * (c2 + y_val);
            let z = cs.alloc(|| format!("z{k}"), || Ok(z_val))?;
            cs.enforce(
                || "mix",
                |_| LinearCombination::zero() + (c1, y) + b,
                |l| l + (c2, CS::one()) + y,
                |l| l + z,
            );
            y = z;
            y_val = z_val;
        }
        Ok(())
    }
}

/// A directory of this process under the system's temporary one, removed
/// when dropped; `tag` names it, so that tests running at once do not
/// share one.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("cuzk-core-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }

    /// Write `bytes` to `name` in it; the file's path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
