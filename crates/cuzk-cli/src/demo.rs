//! `cuzk demo`: prove and verify the built-in porep-like circuit, printing a
//! per-phase timing table (or one JSON object with `--json`).

use crate::common::{self, ms};
use anyhow::Result;
use clap::Args;
use cuzk_core::circuits::porep_like::{PorepLikeCircuit, DEFAULT_LOG_SIZE};
use cuzk_core::verifier::{prepare_verifying_key, verify_proof};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// log2 of the circuit's domain size.
    #[arg(long, default_value_t = DEFAULT_LOG_SIZE, value_parser = clap::value_parser!(u32).range(4..=28))]
    pub log_size: u32,
    /// Seed of the circuit's witness (and so of its public inputs); the
    /// circuit's structure, and so its parameters, depend on --log-size
    /// alone. The same seed as a daemon's porep-like job (`cuzk prove
    /// --kind porep-like-N --seed S`) proves the same statement.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where generated parameters are cached, as porep-like-N-vV.params with
    /// its .vk and .r1cs beside it (the daemon's names) [default:
    /// $CUZK_CACHE_DIR, else $XDG_CACHE_HOME/cuzk, else ~/.cache/cuzk].
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Also write the proof (proof.bin), public inputs (inputs.txt) and
    /// verifying key (demo.vk) into this directory, for `cuzk verify`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Prover backend.
    #[arg(long, value_enum, default_value_t = common::BackendArg::Auto)]
    pub backend: common::BackendArg,
    /// Synthesis: `compiled` (constraints recorded once per size in a
    /// `.r1cs` file beside the parameters, then witness only) or `full`.
    #[arg(long, value_enum, default_value_t = common::SynthesisArg::Compiled)]
    pub synthesis: common::SynthesisArg,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DemoArgs) -> Result<bool> {
    let cache = common::cache_dir(args.cache_dir.as_deref())?;
    let selection = common::select_backend(args.backend, args.json)?;
    let backend = selection.backend.as_ref();
    let total = Instant::now();
    let cached = common::porep_like_params(&cache, args.log_size, args.seed, args.json)?;

    let compiled = match args.synthesis {
        common::SynthesisArg::Compiled => Some(common::porep_like_compiled(
            &cache,
            args.log_size,
            &cached.params,
            args.json,
        )?),
        common::SynthesisArg::Full => None,
    };

    let circuit = PorepLikeCircuit::new(args.log_size, args.seed);
    let inputs = circuit.public_inputs();
    let t = Instant::now();
    let common::Proved {
        proofs,
        timings,
        constraints,
        aux,
    } = common::prove_porep_like(
        backend,
        &cached.params,
        compiled.as_ref().map(|c| &c.compiled),
        vec![circuit],
    )?;
    let prove = t.elapsed().saturating_sub(timings.synthesis);
    let synthesis = timings.synthesis;

    let t = Instant::now();
    let pvk = prepare_verifying_key(&cached.params.vk);
    let verified = verify_proof(&pvk, &proofs[0], &inputs)?;
    let verify = t.elapsed();
    let total = total.elapsed();

    let written = match &args.out {
        Some(dir) => Some(crate::verify_cmd::write_demo_outputs(
            dir,
            &cached.params.vk,
            &proofs,
            std::slice::from_ref(&inputs),
        )?),
        None => None,
    };

    let params_label = if cached.generated {
        "params_generate"
    } else {
        "params_load"
    };
    if args.json {
        let mut phases = serde_json::to_value(&timings)?;
        // One total in the object: the run's, `total_ms` (the prover's own
        // total would be a second, smaller one).
        if let Some(p) = phases.as_object_mut() {
            p.remove("total");
        }
        phases["prove_total"] = serde_json::json!(ms(prove));
        phases["verify"] = serde_json::json!(ms(verify));
        phases[params_label] = serde_json::json!(ms(cached.elapsed));
        if let Some(c) = &compiled {
            let label = if c.made { "compile" } else { "compiled_load" };
            phases[label] = serde_json::json!(ms(c.elapsed));
        }
        let obj = serde_json::json!({
            "circuit": "porep-like",
            "log_size": args.log_size,
            "seed": args.seed,
            "constraints": constraints,
            "aux_variables": aux,
            "public_inputs": inputs.len(),
            "backend": backend.name(),
            "partitions": selection.reports.as_ref().map(|r| r.take_reports_json()),
            "params_file": cached.path,
            "synthesis": args.synthesis.name(),
            "compiled_file": compiled.as_ref().map(|c| &c.path),
            "timings_ms": phases,
            "total_ms": ms(total),
            "verified": verified,
            "out": written.as_ref().map(|w| serde_json::json!({
                "vk": w.vk, "proof": w.proof, "inputs": w.inputs,
            })),
        });
        println!("{}", serde_json::to_string(&obj)?);
    } else {
        println!(
            "porep-like 2^{} (seed {}): {} constraints, {} aux variables, {} public inputs, backend {}",
            args.log_size, args.seed, constraints, aux, inputs.len(), backend.name()
        );
        let mut rows = vec![(params_label.to_string(), ms(cached.elapsed))];
        if let Some(c) = &compiled {
            let label = if c.made {
                "compile (once)"
            } else {
                "compiled_load"
            };
            rows.push((label.to_string(), ms(c.elapsed)));
        }
        rows.push((
            format!("synthesis ({})", args.synthesis.name()),
            ms(synthesis),
        ));
        for (name, d) in timings.phases() {
            if matches!(name, "synthesis" | "upload" | "readback" | "total") {
                continue;
            }
            rows.push((name.to_string(), ms(d)));
        }
        rows.push(("prove (H + MSMs + assembly)".into(), ms(prove)));
        rows.push(("verify".into(), ms(verify)));
        rows.push(("total".into(), ms(total)));
        common::print_table("", &rows);
        println!("verified: {verified}");
        if let Some(w) = &written {
            println!(
                "wrote {}, {} and {} (check with: cuzk verify --vk {} --proof {} --inputs {})",
                w.vk.display(),
                w.proof.display(),
                w.inputs.display(),
                w.vk.display(),
                w.proof.display(),
                w.inputs.display()
            );
        }
    }
    Ok(verified)
}
