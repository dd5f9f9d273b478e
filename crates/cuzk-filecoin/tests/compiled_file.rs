//! The daemon's Filecoin kinds keep a circuit's compiled constraint system
//! as a file in the parameter directory (`cuzk-<circuit id>.r1cs`), so a
//! restarted daemon maps it instead of compiling again (issue 12 item 1).
//!
//! A test binary of its own: the compiled systems are cached per process
//! and per circuit, so in a binary where another test compiled the 2 KiB
//! PoRep circuit first, nothing would be written.

use cuzk_core::compiled::CompiledCircuit;
use cuzk_core::prover::Synthesized;
use cuzk_filecoin::compiled::compiled_path;
use cuzk_filecoin::filecoin_proofs_api::RegisteredSealProof;
use cuzk_filecoin::partitions::{synthesize_partition_parts_in, synthesize_partitions};
use cuzk_filecoin::synth_c1::{self, SynthSpec};
use cuzk_filecoin::{ProofRequest, SynthesisMode};

#[test]
fn the_compiled_system_is_written_beside_the_parameters_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let c1 =
        synth_c1::synthesize(&SynthSpec::new(RegisteredSealProof::StackedDrg2KiBV1_1, 5)).unwrap();
    let req = ProofRequest::PoRepC2(Box::new(c1.output));
    let circuit = req.circuit();
    let path = compiled_path(dir.path(), circuit).unwrap();
    assert!(!path.exists());

    let mut parts =
        synthesize_partition_parts_in(&[(&req, 0)], SynthesisMode::Compiled, Some(dir.path()))
            .unwrap();
    let Some(Synthesized::Witness { compiled, witness }) = parts.pop() else {
        panic!("compiled mode gave no witness");
    };
    assert!(path.is_file(), "{} was not written", path.display());

    // The file is the system the witness was made for: it opens under the
    // circuit's id, refuses another id, and assigns the witness exactly as
    // full synthesis does.
    let id = circuit.cache_identifier().unwrap();
    let opened = CompiledCircuit::open(&path, Some(&id)).unwrap();
    assert_eq!(opened.shape(), compiled.shape());
    let Err(err) = CompiledCircuit::open(&path, Some("another-circuit")) else {
        panic!("a file for another circuit must be refused");
    };
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
    let assigned = opened.assign(witness).unwrap();
    let full = synthesize_partitions(&[(&req, 0)], SynthesisMode::Full).unwrap();
    assert_eq!(assigned.input_assignment, full[0].input_assignment);
    assert!(
        assigned.aux_assignment == full[0].aux_assignment,
        "aux differs"
    );
    assert!(assigned.a == full[0].a && assigned.b == full[0].b && assigned.c == full[0].c);

    // A truncated file is refused by name, not proved from.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let Err(err) = CompiledCircuit::open(&path, Some(&id)) else {
        panic!("a truncated file must be refused");
    };
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}
