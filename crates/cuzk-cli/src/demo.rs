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
    /// Seed of the circuit's structure and witness.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where generated parameters are cached [default: $CUZK_CACHE_DIR, else
    /// $XDG_CACHE_HOME/cuzk, else ~/.cache/cuzk].
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

    if let Some(dir) = &args.out {
        crate::verify_cmd::write_demo_outputs(
            dir,
            &cached.params.vk,
            &proofs,
            std::slice::from_ref(&inputs),
        )?;
    }

    let params_label = if cached.generated {
        "params_generate"
    } else {
        "params_load"
    };
    if args.json {
        let mut phases = serde_json::to_value(&timings)?;
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
    }
    Ok(verified)
}
