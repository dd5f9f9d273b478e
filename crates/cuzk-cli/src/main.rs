//! The `cuzk` command. Thin: every subcommand parses its arguments and calls
//! into the library crates; exit status 0 on success, 1 when a proof does not
//! verify, 2 on an error.

mod bench;
mod bench_kernels;
mod common;
mod daemon_cli;
mod daemon_commands;
mod demo;
mod filecoin_args;
mod filecoin_cmd;
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
    /// Commit-phase-1 (C1) outputs: `cuzk c1 synth` builds a valid one
    /// for any sector size without sealing.
    #[command(subcommand)]
    C1(C1Command),
    #[command(flatten)]
    Daemon(daemon_commands::DaemonCommands),
}

#[derive(Subcommand, Debug)]
enum C1Command {
    /// A synthetic C1 output (filecoin-proofs-api JSON) for a sector size,
    /// checked by storage-proofs' vanilla verifier; prints what
    /// `verify_seal` needs as JSON.
    Synth(filecoin_args::C1SynthArgs),
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
    Batch(daemon_commands::BenchBatchArgs),
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
        }) => daemon_commands::run_bench_batch(a).map(|()| ExitCode::SUCCESS),
        Command::Bench(BenchCommand { sub: None, args }) => {
            bench::run(args).map(|()| ExitCode::SUCCESS)
        }
        Command::Daemon(c) => daemon_commands::run(c).map(|()| ExitCode::SUCCESS),
        Command::BenchKernels(a) => bench_kernels::run(a).map(|()| ExitCode::SUCCESS),
        Command::Verify(a) => verify_cmd::run(a).map(verdict),
        Command::Params(c) => params_cmd::run(c).map(|()| ExitCode::SUCCESS),
        Command::C1(C1Command::Synth(a)) => run_c1_synth(a).map(|()| ExitCode::SUCCESS),
    };
    finish(result)
}

fn run_c1_synth(args: filecoin_args::C1SynthArgs) -> anyhow::Result<()> {
    let report = cuzk_filecoin::synth_c1::c1_synth(&args.request())?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", daemon_cli::error_line(&e));
            ExitCode::from(2)
        }
    }
}

fn verdict(verified: bool) -> ExitCode {
    if verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
