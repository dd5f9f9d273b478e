//! `cuzk prove --filecoin KIND`: a Filecoin proof proved here, without a
//! daemon (`cuzk daemon` serves the Filecoin kinds and Curio's service
//! through cuzk_daemon::filecoin::add_filecoin).

use crate::filecoin_args::FilecoinProveArgs;
use anyhow::{Context, Result};
use clap::Parser;
use std::ffi::OsString;

/// `cuzk prove --filecoin KIND ...`: prove a Filecoin proof here, without a
/// daemon, and write it in filecoin-proofs' format.
#[derive(Parser, Debug)]
#[command(
    name = "cuzk prove",
    about = "Prove a Filecoin proof locally (no daemon) and write it as filecoin-proofs does"
)]
pub struct ProveCli {
    #[command(flatten)]
    pub args: FilecoinProveArgs,
    /// Prover backend.
    #[arg(long, value_enum, default_value_t = crate::common::BackendArg::Auto)]
    pub backend: crate::common::BackendArg,
    /// Print one JSON object with the timings.
    #[arg(long)]
    pub json: bool,
}

/// `cuzk prove ... --filecoin ...` (the daemon client's `prove` has no
/// `--filecoin`).
pub fn is_local_prove(argv: &[OsString]) -> bool {
    argv.get(1).is_some_and(|a| a == "prove")
        && argv[2..]
            .iter()
            .any(|a| a == "--filecoin" || a.to_string_lossy().starts_with("--filecoin="))
}

/// The arguments after `prove`, behind the name usage lines show.
pub fn prove_argv(argv: &[OsString]) -> Vec<OsString> {
    std::iter::once(OsString::from("cuzk prove"))
        .chain(argv.iter().skip(2).cloned())
        .collect()
}

pub fn run_prove(cli: ProveCli) -> Result<()> {
    let backend = crate::common::select_backend(cli.backend, cli.json)?.backend;
    let name = backend.name();
    let out = crate::filecoin_args::prove(&cli.args, backend)
        .with_context(|| format!("proving {}", cli.args.kind))?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    if cli.json {
        println!(
            "{}",
            serde_json::json!({
                "circuit": format!("{:?}", out.circuit),
                "out": cli.args.out,
                "proof_bytes": out.proof.len(),
                "partitions": out.partitions,
                "backend": name,
                "circuit_build_ms": ms(out.circuit_build),
                "param_load_ms": ms(out.param_load),
                "self_check_ms": ms(out.self_check),
                "timings_ms": out.timings,
            })
        );
    } else {
        println!(
            "wrote {} ({} bytes, {} partition(s)): circuits {:.1} ms, parameters {:.1} ms, proving {:.1} ms, self-check {:.1} ms",
            cli.args.out.display(),
            out.proof.len(),
            out.partitions,
            ms(out.circuit_build),
            ms(out.param_load),
            ms(out.timings.total),
            ms(out.self_check)
        );
    }
    Ok(())
}
