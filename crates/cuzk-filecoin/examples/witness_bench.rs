//! The PoRep C2 witness alone: how long compiled-mode synthesis (the
//! witness of each partition, challenges in parallel, checked against the
//! compiled system's shape) takes per partition and per constraint and
//! core, on a synthetic C1 output (no sealed sector, no parameters).
//!
//! ```text
//! cargo build --release -p cuzk-filecoin --example witness_bench
//! RAYON_NUM_THREADS=1 target/release/examples/witness_bench \
//!     [--sector-size 2KiB|8MiB|512MiB|32GiB] [--seed S] [--partitions K]
//!     [--repeat N] [--check] [--compiled-dir DIR] [--json FILE]
//! ```
//! `--compiled-dir DIR` reads the compiled system from its file in DIR
//! (`cuzk-<circuit id>.r1cs`, as the daemon and `porep_c2_bench` keep it
//! beside the parameters), or compiles and writes it there.
//! `--partitions K` synthesizes partitions 0..K in one call (as the daemon
//! batches them; default 1). The first call compiles the circuit and is not
//! timed. `--check` compares the compiled mode's assignment (witness, then
//! a/b/c) with full synthesis's, element by element, before timing.
//! The per-core rate is wall time × rayon threads / constraints, so with
//! one thread (`RAYON_NUM_THREADS=1`) it is the cost of the code itself.

use cuzk_core::prover::Synthesized;
use cuzk_filecoin::partitions::{synthesize_partition_parts_in, synthesize_partitions};
use cuzk_filecoin::synth_c1::{self, SynthSpec};
use cuzk_filecoin::{ProofRequest, SynthesisMode};
use std::time::{Duration, Instant};

struct Args {
    sector_size: u64,
    seed: u64,
    partitions: usize,
    repeat: usize,
    check: bool,
    compiled_dir: Option<std::path::PathBuf>,
    json: Option<std::path::PathBuf>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        sector_size: 2048,
        seed: 1,
        partitions: 1,
        repeat: 3,
        check: false,
        compiled_dir: None,
        json: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String, f: &str| v.parse::<u64>().map_err(|e| format!("{f}: {e}"));
        match flag.as_str() {
            "--sector-size" => {
                a.sector_size = cuzk_filecoin::circuits::parse_sector_size(&value()?)
                    .map_err(|e| format!("--sector-size: {e}"))?
            }
            "--seed" => a.seed = num(value()?, "--seed")?,
            "--partitions" => a.partitions = num(value()?, "--partitions")?.max(1) as usize,
            "--repeat" => a.repeat = num(value()?, "--repeat")?.max(1) as usize,
            "--check" => a.check = true,
            "--json" => a.json = Some(value()?.into()),
            "--compiled-dir" => a.compiled_dir = Some(value()?.into()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = args()?;
    let rp = cuzk_filecoin::porep::current_seal_proof(a.sector_size)?;
    let t = Instant::now();
    let c1 = synth_c1::synthesize(&SynthSpec::new(rp, a.seed))?;
    eprintln!("synthetic C1 for {rp:?} in {:.2?}", t.elapsed());
    let req = ProofRequest::PoRepC2(Box::new(c1.output));
    let total = cuzk_filecoin::partitions::partition_count(&req)?;
    let k = a.partitions.min(total);
    let parts: Vec<(&ProofRequest, usize)> = (0..k).map(|i| (&req, i)).collect();

    if a.check {
        let t = Instant::now();
        for &(r, i) in &parts {
            let full = synthesize_partitions(&[(r, i)], SynthesisMode::Full)?;
            let comp = synthesize_partitions(&[(r, i)], SynthesisMode::Compiled)?;
            let (f, c) = (&full[0], &comp[0]);
            let same = f.input_assignment == c.input_assignment
                && f.aux_assignment == c.aux_assignment
                && f.a == c.a
                && f.b == c.b
                && f.c == c.c;
            if !same {
                return Err(format!("partition {i}: compiled differs from full synthesis").into());
            }
        }
        eprintln!(
            "check: partitions 0..{k} equal to full synthesis ({:.2?})",
            t.elapsed()
        );
    }

    let t = Instant::now();
    let dir = a.compiled_dir.as_deref();
    let first = synthesize_partition_parts_in(&parts, SynthesisMode::Compiled, dir)?;
    eprintln!(
        "first call ({} the circuit): {:.2?}",
        match dir {
            Some(d) => format!("compiles, or maps from {},", d.display()),
            None => "compiles".into(),
        },
        t.elapsed()
    );
    let Some(Synthesized::Witness { compiled, .. }) = first.first() else {
        return Err("compiled mode did not give a witness".into());
    };
    let constraints = compiled.num_constraints();
    let (aux, inputs) = (compiled.num_aux(), compiled.num_inputs());
    drop(first);

    let mut times = Vec::with_capacity(a.repeat);
    for _ in 0..a.repeat {
        let t = Instant::now();
        let out = synthesize_partition_parts_in(&parts, SynthesisMode::Compiled, dir)?;
        times.push(t.elapsed());
        drop(out);
    }
    times.sort();
    let med: Duration = times[times.len() / 2];
    let threads = rayon::current_num_threads();
    let per_partition = med.as_secs_f64() / k as f64;
    let us_per_constraint_core =
        med.as_secs_f64() * 1e6 * threads as f64 / (constraints as f64 * k as f64);
    println!(
        "{rp:?}: {k} of {total} partitions, {constraints} constraints, {aux} aux, {inputs} inputs \
         each; {threads} threads; median {:.1} ms ({:?}); {:.1} ms per partition; \
         {us_per_constraint_core:.3} us per constraint per core",
        med.as_secs_f64() * 1e3,
        times
            .iter()
            .map(|d| d.as_secs_f64() * 1e3)
            .collect::<Vec<_>>(),
        per_partition * 1e3
    );
    let json = serde_json::json!({
        "registered_proof": format!("{rp:?}"),
        "partitions": k,
        "constraints_per_partition": constraints,
        "aux_per_partition": aux,
        "threads": threads,
        "median_ms": med.as_secs_f64() * 1e3,
        "times_ms": times.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>(),
        "us_per_constraint_per_core": us_per_constraint_core,
    });
    println!("{json}");
    if let Some(path) = a.json {
        std::fs::write(path, format!("{json}\n"))?;
    }
    Ok(())
}
