//! Parameter generation from a compiled constraint system
//! (`generate_parameters_compiled_*`) against generation from a synthesis
//! of the circuit: for the same toxic waste, the `.params` bytes are the
//! same, at several porep-like sizes (the serial and the parallel column
//! sums), for circuits with many inputs or none used, cancelling terms and
//! variables absent from A or B, from a system in memory and from one
//! mapped from its file; and the same errors where there are no
//! parameters to make.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use common::MixedCircuit;
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::compiled::{self, CompiledCircuit};
use cuzk_core::generator::{self, CpuFixedBase, GenerationEvent, ToxicWaste};
use cuzk_core::params::ParamsFileSink;
use cuzk_core::Error;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// The `.params` bytes of both generators for `circuit` (compiled from
/// `shape`, a circuit of the same shape) and the same toxic waste.
fn both<C: Circuit<Scalar>>(circuit: C, shape: C, waste: &ToxicWaste) -> (Vec<u8>, Vec<u8>) {
    let bytes = |p: cuzk_core::Parameters| {
        let mut v = Vec::new();
        p.write(&mut v).unwrap();
        v
    };
    let (full, _) = generator::generate_parameters_with(circuit, waste, &CpuFixedBase).unwrap();
    let cc = compiled::compile(shape, "test").unwrap();
    let (comp, _) =
        generator::generate_parameters_compiled_with(&cc, waste, &CpuFixedBase).unwrap();
    (bytes(full), bytes(comp))
}

fn waste(seed: u64) -> ToxicWaste {
    ToxicWaste::random(&mut ChaCha20Rng::seed_from_u64(seed))
}

#[test]
fn porep_like_parameters_from_the_compiled_system_are_byte_identical() {
    let seed: u64 = rand::random();
    // 2^12 and below take the serial column sums, 2^14 and 2^15 the
    // parallel ones (more than 2^14 entries a matrix).
    for log in [2u32, 3, 6, 9, 12, 14, 15] {
        let w = waste(seed ^ u64::from(log));
        // Compiled from another seed's circuit: the shape is the size's.
        let (full, comp) = both(
            PorepLikeCircuit::new(log, 0),
            PorepLikeCircuit::new(log, 5),
            &w,
        );
        assert!(
            full == comp,
            "porep-like 2^{log}, toxic-waste seed {seed}: the parameters differ"
        );
    }
}

/// From the file (mapped, as `params gen` uses one written by a proof or
/// an earlier run), streamed to a `.params` sink: the same bytes, and the
/// progress says the matrices came from a compiled system.
#[test]
fn parameters_from_a_mapped_compiled_file_stream_the_same_bytes() {
    let log = 14;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("porep-like-14.r1cs");
    compiled::compile(PorepLikeCircuit::new(log, 0), "porep-like-14")
        .unwrap()
        .write_file(&path)
        .unwrap();
    let cc = CompiledCircuit::open(&path, Some("porep-like-14")).unwrap();
    let w = waste(rand::random());
    let (full, _) =
        generator::generate_parameters_with(PorepLikeCircuit::new(log, 0), &w, &CpuFixedBase)
            .unwrap();
    let mut want = Vec::new();
    full.write(&mut want).unwrap();
    let mut sink = ParamsFileSink::new(Vec::new());
    let compiled_seen = std::cell::Cell::new(None);
    generator::generate_parameters_compiled_into(&cc, &w, &CpuFixedBase, &mut sink, &|e| {
        if let GenerationEvent::Synthesized {
            compiled,
            constraints,
            ..
        } = e
        {
            compiled_seen.set(Some((*compiled, *constraints)));
        }
    })
    .unwrap();
    let got = sink.finish().unwrap();
    assert!(got == want, "the streamed parameters differ");
    assert_eq!(compiled_seen.get(), Some((true, 1 << log)));
    cc.check_params(&full).unwrap();
}

#[test]
fn mixed_circuits_give_byte_identical_parameters() {
    let seed: u64 = rand::random();
    for (inputs, extra) in [(2usize, 0usize), (3, 1), (7, 40), (30, 300), (5, 6000)] {
        let (full, comp) = both(
            MixedCircuit::new(seed, inputs, extra),
            MixedCircuit::with_witness(seed, seed ^ 1, inputs, extra),
            &waste(seed),
        );
        assert!(
            full == comp,
            "mixed {inputs}/{extra}, seed {seed}: the parameters differ"
        );
    }
}

/// Corner cases for the QAP's evaluation: inputs that occur only in their
/// own input constraint (or nowhere else at all, with no constraints of
/// the circuit's own), more inputs than the per-task input sums take
/// (they go through the shared ranges), terms that cancel (an aux whose A
/// evaluation is zero, so it drops out of the A query), a variable
/// repeated in one combination, aux variables only in B or only in C,
/// full-width coefficients.
#[derive(Clone)]
struct Corners {
    inputs: usize,
    /// Rows of the circuit's own (0: inputs only).
    rows: usize,
}

impl Circuit<Scalar> for Corners {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let xs = (0..self.inputs)
            .map(|i| cs.alloc_input(|| format!("x{i}"), || Ok(Scalar::from(i as u64 + 2))))
            .collect::<Result<Vec<_>, _>>()?;
        if self.rows == 0 {
            return Ok(());
        }
        let k = Scalar::from(0x1234_5678_9abc_def0u64).square();
        for r in 0..self.rows {
            // Every third input is left to its own input constraint.
            let x = xs[(3 * r + 1) % xs.len()];
            let y = xs[(3 * r + 2) % xs.len()];
            let p = cs.alloc(|| "p", || Ok(Scalar::ONE))?;
            let q = cs.alloc(|| "q", || Ok(Scalar::ONE))?;
            // q cancels in A (q + q − 2q) and sits in C: its A evaluation
            // is zero. p is only in B and C.
            cs.enforce(
                || "cancel",
                |l| l + x + q + q - (Scalar::from(2u64), q) + (k, x),
                |l| l + p + y,
                |l| l + q - p,
            );
            // A variable repeated in one combination; p only in B again.
            cs.enforce(
                || "repeat",
                |l| l + CS::one() + CS::one(),
                |l| l + p + p - (k, y),
                |l| l + (k, q),
            );
        }
        Ok(())
    }
}

#[test]
fn corner_circuits_give_byte_identical_parameters() {
    let seed: u64 = rand::random();
    for (inputs, rows) in [(1usize, 0usize), (4, 0), (3, 1), (6, 40), (5000, 4000)] {
        let c = Corners { inputs, rows };
        let (full, comp) = both(c.clone(), c, &waste(seed));
        assert!(
            full == comp,
            "corners {inputs} inputs, {rows} rows, seed {seed}: the parameters differ"
        );
    }
}

/// An aux variable in no constraint has no l point: both generators
/// refuse the circuit with the same error.
#[test]
fn an_unconstrained_variable_is_refused_by_both() {
    struct Lonely;
    impl Circuit<Scalar> for Lonely {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let x = cs.alloc(|| "x", || Ok(Scalar::ONE))?;
            cs.enforce(|| "x", |l| l + x, |l| l + x, |l| l + x);
            cs.alloc(|| "unused", || Ok(Scalar::ONE))?;
            Ok(())
        }
    }
    let w = waste(3);
    let unconstrained = |r: Result<(cuzk_core::Parameters, _), Error>| {
        matches!(
            r,
            Err(Error::Synthesis {
                source: SynthesisError::UnconstrainedVariable,
                ..
            })
        )
    };
    assert!(unconstrained(generator::generate_parameters_with(
        Lonely,
        &w,
        &CpuFixedBase
    )));
    let cc = compiled::compile(Lonely, "lonely").unwrap();
    assert!(unconstrained(generator::generate_parameters_compiled_with(
        &cc,
        &w,
        &CpuFixedBase
    )));
    // A degenerate delta is refused before anything is computed.
    let mut bad = w;
    bad.delta = Scalar::ZERO;
    let cc = compiled::compile(PorepLikeCircuit::new(4, 0), "porep-like-4").unwrap();
    assert!(generator::generate_parameters_compiled_with(&cc, &bad, &CpuFixedBase).is_err());
}
