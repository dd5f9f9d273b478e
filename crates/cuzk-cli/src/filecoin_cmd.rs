//! The Filecoin side of the `cuzk` command: `cuzk prove --filecoin KIND`
//! without a daemon, and the daemon with the Filecoin circuit kinds and
//! Curio's `cuzk.v1.ProvingEngine` service registered.

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

/// The daemon with every Filecoin kind (parameters read from the daemon's
/// parameter directory, never generated) and Curio's service beside cuzk's;
/// in a `cuda` build on a machine with GPUs, proving on the GPUs (opened by
/// the daemon itself, `cuzk_daemon::devices::open_devices`).
pub fn run_daemon(args: cuzk_daemon::cli::DaemonArgs) -> Result<()> {
    cuzk_daemon::cli::run_daemon_with(args, |builder| {
        let dir = builder.config().params.dir.clone();
        let synthesis = match builder.config().kinds.synthesis {
            cuzk_daemon::config::SynthesisSetting::Compiled => {
                cuzk_filecoin::SynthesisMode::Compiled
            }
            cuzk_daemon::config::SynthesisSetting::Full => cuzk_filecoin::SynthesisMode::Full,
        };
        let max_message = builder.config().server.max_message_bytes.0 as usize;
        let mut builder = builder.add_service(cuzk_daemon::curio::service_hook(max_message));
        for kind in cuzk_daemon::filecoin::FilecoinKind::all_with(
            &cuzk_filecoin::circuits::REGISTERED_SECTOR_SIZES,
            false,
            &dir,
            synthesis,
        )
        .with_context(|| format!("registering the Filecoin kinds over {}", dir.display()))?
        {
            builder = builder.register_kind(kind);
        }
        Ok(builder)
    })
}
