//! `params gen` compiles the circuit parameters are made from
//! (filecoin-proofs' blank circuit) and keeps it as the file proofs map;
//! proofs compile a partition's circuit when the file is absent. Both must
//! be the same system: here the 2 KiB PoRep's, compiled both ways, has the
//! same counts, densities, matrices and coefficient table, and assigns a
//! real partition's witness exactly as full synthesis does.
//!
//! A test binary of its own: compiled systems are cached per process and
//! per circuit, so the partition's must be compiled here, not found.

use cuzk_core::compiled::CompiledCircuit;
use cuzk_core::prover::Synthesized;
use cuzk_filecoin::filecoin_proofs_api::RegisteredSealProof;
use cuzk_filecoin::partitions::{synthesize_partition_parts_in, synthesize_partitions};
use cuzk_filecoin::synth_c1::{self, SynthSpec};
use cuzk_filecoin::{ProofRequest, SynthesisMode};

fn same_system(a: &CompiledCircuit, b: &CompiledCircuit) {
    assert_eq!(a.circuit_id, b.circuit_id);
    assert_eq!(a.shape(), b.shape());
    assert_eq!(a.a_aux_density(), b.a_aux_density());
    assert_eq!(a.b_input_density(), b.b_input_density());
    assert_eq!(a.b_aux_density(), b.b_aux_density());
    assert!(
        a.coefficients() == b.coefficients(),
        "coefficient tables differ"
    );
    for (name, x, y) in [("A", &a.a, &b.a), ("B", &a.b, &b.b), ("C", &a.c, &b.c)] {
        assert!(x.row_start() == y.row_start(), "{name}: rows differ");
        assert!(x.cols() == y.cols(), "{name}: columns differ");
        assert!(x.coefs() == y.coefs(), "{name}: coefficients differ");
    }
}

#[test]
fn porep_blank_circuit_compiles_to_the_partitions_system() {
    let c1 =
        synth_c1::synthesize(&SynthSpec::new(RegisteredSealProof::StackedDrg2KiBV1_1, 9)).unwrap();
    let req = ProofRequest::PoRepC2(Box::new(c1.output));
    let circuit = req.circuit();
    // The partition's circuit, compiled by the proving path.
    let mut parts =
        synthesize_partition_parts_in(&[(&req, 0)], SynthesisMode::Compiled, None).unwrap();
    let Some(Synthesized::Witness { compiled, witness }) = parts.pop() else {
        panic!("compiled mode gave no witness");
    };
    // The blank circuit, compiled as `params gen` does.
    let blank = circuit.compile_blank().unwrap();
    same_system(&blank, &compiled);
    // The blank's system assigns the partition's witness as full synthesis
    // does.
    let assigned = blank.assign(witness).unwrap();
    let full = synthesize_partitions(&[(&req, 0)], SynthesisMode::Full).unwrap();
    assert!(assigned.a == full[0].a && assigned.b == full[0].b && assigned.c == full[0].c);
    assert_eq!(assigned.input_assignment, full[0].input_assignment);
}
