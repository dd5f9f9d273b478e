//! The `cuzk` command. Thin: every subcommand parses its arguments and calls
//! into the library crates; exit status 0 on success, 1 when a proof does not
//! verify, 2 on an error.

mod bench;
mod bench_kernels;
mod common;
mod daemon_cmd;
mod demo;
mod filecoin_cmd;
#[cfg(feature = "cuda")]
mod gpu_devices;
mod params_cmd;
mod verify_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "cuzk",
    version,
    about = "GPU-resident Groth16 proving engine for BLS12-381"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Prove and verify the built-in porep-like circuit (default 2^16) and
    /// print a per-phase timing table.
    Demo(demo::DemoArgs),
    /// Benchmark the prover, optionally side by side with bellperson
    /// (`cuzk bench batch` measures a running daemon's throughput).
    Bench(BenchCommand),
    /// Benchmark the CUDA kernels (MSM, 0/1 path, NTT) against their floors.
    BenchKernels(bench_kernels::BenchKernelsArgs),
    /// Verify proofs against a verifying key.
    Verify(verify_cmd::VerifyArgs),
    /// Generate or inspect parameter files.
    #[command(subcommand)]
    Params(params_cmd::ParamsCommand),
    #[command(flatten)]
    Daemon(daemon_cmd::DaemonCommands),
}

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
struct BenchCommand {
    #[command(subcommand)]
    sub: Option<BenchSub>,
    #[command(flatten)]
    args: bench::BenchArgs,
}

#[derive(Subcommand, Debug)]
enum BenchSub {
    /// Throughput of a running daemon: N proofs from J concurrent clients.
    Batch(daemon_cmd::BenchBatchArgs),
}

fn main() -> ExitCode {
    // `cuzk prove --filecoin KIND ...` proves locally; plain `cuzk prove`
    // talks to a daemon. The two take different flags, so the Filecoin form
    // has its own parser.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if filecoin_cmd::is_local_prove(&argv) {
        return finish(
            filecoin_cmd::run_prove(filecoin_cmd::ProveCli::parse_from(
                filecoin_cmd::prove_argv(&argv),
            ))
            .map(|()| ExitCode::SUCCESS),
        );
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => demo::run(a).map(verdict),
        Command::Bench(BenchCommand {
            sub: Some(BenchSub::Batch(a)),
            ..
        }) => daemon_cmd::run_bench_batch(a).map(|()| ExitCode::SUCCESS),
        Command::Bench(BenchCommand { sub: None, args }) => {
            bench::run(args).map(|()| ExitCode::SUCCESS)
        }
        Command::Daemon(daemon_cmd::DaemonCommands::Daemon(a)) => {
            filecoin_cmd::run_daemon(a).map(|()| ExitCode::SUCCESS)
        }
        Command::Daemon(c) => daemon_cmd::run(c).map(|()| ExitCode::SUCCESS),
        Command::BenchKernels(a) => bench_kernels::run(a).map(|()| ExitCode::SUCCESS),
        Command::Verify(a) => verify_cmd::run(a).map(verdict),
        Command::Params(c) => params_cmd::run(c).map(|()| ExitCode::SUCCESS),
    };
    finish(result)
}

fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", report(&e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line. Most of our error types already
/// print their cause in their own message (and also expose it as their
/// `source`), so a cause whose text is already on the line is not repeated.
fn report(e: &anyhow::Error) -> String {
    let mut line = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

fn verdict(verified: bool) -> ExitCode {
    if verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use super::report;
    use anyhow::Context;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let core = cuzk_core::Error::Io {
            path: "x.params".into(),
            source: io,
        };
        let e = anyhow::Error::new(core);
        assert_eq!(report(&e), "x.params: no such file");

        // A context adds its own text; a cause not yet shown is appended.
        let e: std::result::Result<(), std::io::Error> = Err(std::io::Error::other("disk full"));
        let e = e.context("writing proof.bin").unwrap_err();
        assert_eq!(report(&e), "writing proof.bin: disk full");
    }
}
