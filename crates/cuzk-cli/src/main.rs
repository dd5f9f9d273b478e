//! The `cuzk` command. Thin: every subcommand parses its arguments and calls
//! into the library crates; exit status 0 on success, 1 when a proof does not
//! verify, 2 on an error.

mod bench;
mod common;
mod demo;
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
    /// Benchmark the prover, optionally side by side with bellperson.
    Bench(bench::BenchArgs),
    /// Verify proofs against a verifying key.
    Verify(verify_cmd::VerifyArgs),
    /// Generate or inspect parameter files.
    #[command(subcommand)]
    Params(params_cmd::ParamsCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => demo::run(a).map(verdict),
        Command::Bench(a) => bench::run(a).map(|()| ExitCode::SUCCESS),
        Command::Verify(a) => verify_cmd::run(a).map(verdict),
        Command::Params(c) => params_cmd::run(c).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
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
