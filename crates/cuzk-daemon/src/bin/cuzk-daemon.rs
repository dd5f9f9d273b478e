//! The daemon subcommands of `cuzk` as a standalone program, declared once
//! in [`cuzk_daemon::commands`]: `cargo run -p cuzk-daemon --bin
//! cuzk-daemon -- status`. Its daemon has the built-in kinds (`cuzk daemon`
//! adds the Filecoin kinds and Curio's service). The integration tests
//! drive it as a child process (SIGTERM, client commands).

use cuzk_daemon::commands as daemon_cmd;

use clap::Parser;

#[derive(clap::Parser)]
#[command(name = "cuzk")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand)]
enum Cmd {
    #[command(flatten)]
    Daemon(daemon_cmd::DaemonCommands),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(Bench),
}

#[derive(clap::Subcommand)]
enum Bench {
    /// Throughput against a running daemon.
    Batch(daemon_cmd::BenchBatchArgs),
}

fn main() -> std::process::ExitCode {
    let result = match Cli::parse().cmd {
        Cmd::Daemon(c) => daemon_cmd::run(c),
        Cmd::Bench(Bench::Batch(a)) => daemon_cmd::run_bench_batch(a),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // As `cuzk` does: one line, exit status 2.
        Err(e) => {
            eprintln!("error: {}", cuzk_daemon::cli::error_line(&e));
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_tree_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
