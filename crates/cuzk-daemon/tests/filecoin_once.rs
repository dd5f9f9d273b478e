//! A Filecoin job's input is decoded, and each of its partitions' circuits
//! built, once: at submission (where a malformed request is refused),
//! however many times and on whichever threads its partitions are then
//! synthesized. Driven through the kind as the engine drives it: one
//! `decode_input` per job, one synthesis call per partition, and a
//! partition synthesized again as after a lost GPU.
//!
//! Alone in its test binary: it reads cuzk-filecoin's process-wide counts
//! of C1 decodes and circuit builds, which no other test here moves.

use cuzk_daemon::filecoin::FilecoinKind;
use cuzk_daemon::kinds::{CircuitKind, JobInput};
use cuzk_filecoin::filecoin_proofs_api::RegisteredSealProof;
use cuzk_filecoin::porep::c1_decodes;
use cuzk_filecoin::prover::partition_circuits_built;
use cuzk_filecoin::synth_c1::{self, SynthSpec};
use cuzk_filecoin::{CircuitId, SynthesisMode};

/// A C1 output of a 2 KiB sector (one partition), as a job's input bytes.
fn c1_bytes(seed: u64) -> Vec<u8> {
    let c1 = synth_c1::synthesize(&SynthSpec::new(
        RegisteredSealProof::StackedDrg2KiBV1_1,
        seed,
    ))
    .expect("a synthetic C1 output");
    serde_json::to_vec(&c1.output).unwrap()
}

/// Synthesize partition `k` of `input` and check what came out: every
/// constraint holds, and the public inputs are those the kind's verifier
/// derives for that partition of that input (and not another job's).
fn synthesize_and_check(kind: &dyn CircuitKind, input: &JobInput, other: &JobInput, k: usize) {
    let mut out = kind
        .synthesize(&[(input.clone(), k)])
        .expect("partition synthesized");
    assert_eq!(out.len(), 1);
    let pa = out.pop().unwrap();
    assert!(pa.num_constraints() > 0);
    let unsatisfied = (0..pa.num_constraints())
        .filter(|&i| pa.a[i] * pa.b[i] != pa.c[i])
        .count();
    assert_eq!(unsatisfied, 0, "{}: partition {k}", kind.name());
    let expected = kind.verifier_inputs(input, k).expect("Filecoin inputs");
    assert_eq!(pa.public_inputs(), &expected[..], "partition {k}");
    let others = kind.verifier_inputs(other, k).expect("Filecoin inputs");
    assert_ne!(pa.public_inputs(), &others[..], "another job's partition");
}

#[test]
fn a_porep_job_is_decoded_and_its_circuits_built_once() {
    let circuit = CircuitId::PoRep(RegisteredSealProof::StackedDrg2KiBV1_1);
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (c1_bytes(1), c1_bytes(2));
    for mode in [SynthesisMode::Full, SynthesisMode::Compiled] {
        let kind = FilecoinKind::new(circuit, false)
            .unwrap()
            .with_synthesis(mode)
            .with_compiled_dir(dir.path());
        let (decodes, built) = (c1_decodes(), partition_circuits_built());

        // Two jobs held at once, as the engine holds its queue.
        let (input, partitions) = kind.decode_input(&a).expect("job A accepted");
        let (other, _) = kind.decode_input(&b).expect("job B accepted");
        assert_eq!(partitions, 1);
        assert_eq!(c1_decodes() - decodes, 2, "{mode:?}: one decode per job");
        assert_eq!(
            partition_circuits_built() - built,
            2 * partitions as u64,
            "{mode:?}: each job's circuits built at submission"
        );

        // Each partition as the engine synthesizes it, then again (a
        // retry after a lost GPU), on other threads than the decode's.
        for round in 0..2 {
            std::thread::scope(|s| {
                for k in 0..partitions {
                    let (kind, input, other) = (&kind, &input, &other);
                    s.spawn(move || synthesize_and_check(kind, input, other, k));
                }
            });
            assert_eq!(
                partition_circuits_built() - built,
                2 * partitions as u64,
                "{mode:?}, round {round}: synthesis built circuits again"
            );
        }
        assert_eq!(c1_decodes() - decodes, 2, "{mode:?}: decoded again");
    }

    // A malformed input is still refused at submission, before any
    // circuit of it is built.
    let kind = FilecoinKind::new(circuit, false).unwrap();
    let built = partition_circuits_built();
    let mut bad: serde_json::Value = serde_json::from_slice(&a).unwrap();
    bad["seed"] = serde_json::json!([0u8; 32].to_vec());
    let refused = kind.decode_input(&serde_json::to_vec(&bad).unwrap());
    assert!(
        matches!(
            refused,
            Err(cuzk_daemon::kinds::KindError::MalformedInput { .. })
        ),
        "an all-zero seed accepted"
    );
    assert_eq!(partition_circuits_built(), built);
}
