//! `cuzk params gen|info`: bellperson-format parameter files.

use crate::common::{self, ms};
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::params::{MappedParameters, Section};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum ParamsCommand {
    /// Generate random (INSECURE, development-only) parameters for a circuit.
    Gen(GenArgs),
    /// Describe a `.params` file: verifying key, vector lengths, layout.
    Info(InfoArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum CircuitKind {
    PorepLike,
}

#[derive(Args, Debug)]
pub struct GenArgs {
    #[arg(long, value_enum, default_value_t = CircuitKind::PorepLike)]
    pub circuit: CircuitKind,
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=28))]
    pub log_size: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output `.params` file.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write the verifying key here (`.vk` format).
    #[arg(long)]
    pub vk: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    pub file: PathBuf,
    /// Decode every point and check curve and subgroup membership.
    #[arg(long)]
    pub check: bool,
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: ParamsCommand) -> Result<()> {
    match cmd {
        ParamsCommand::Gen(a) => gen(a),
        ParamsCommand::Info(a) => info(a),
    }
}

fn gen(args: GenArgs) -> Result<()> {
    let CircuitKind::PorepLike = args.circuit;
    if !args.json {
        eprintln!(
            "generating random parameters for porep-like 2^{} (seed {}) ...",
            args.log_size, args.seed
        );
    }
    let start = Instant::now();
    let circuit = PorepLikeCircuit::new(args.log_size, args.seed);
    let params = cuzk_core::generator::generate_random_parameters(circuit, &mut rand::rngs::OsRng)
        .context("generating parameters")?;
    let generate = start.elapsed();
    let t = Instant::now();
    common::write_atomically(&args.out, |p| params.write_file(p).map_err(Into::into))?;
    if let Some(vk) = &args.vk {
        common::write_atomically(vk, |p| params.vk.write_file(p).map_err(Into::into))?;
    }
    let write = t.elapsed();
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "file": args.out, "vk": args.vk, "log_size": args.log_size, "seed": args.seed,
                "generate_ms": ms(generate), "write_ms": ms(write),
                "h": params.h.len(), "l": params.l.len(), "a": params.a.len(),
                "b_g1": params.b_g1.len(), "b_g2": params.b_g2.len(), "public_inputs": params.vk.ic.len() - 1,
            })
        );
    } else {
        println!(
            "wrote {} in {:.2} s (generation {:.2} s, write {:.2} s)",
            args.out.display(),
            (generate + write).as_secs_f64(),
            generate.as_secs_f64(),
            write.as_secs_f64()
        );
    }
    Ok(())
}

fn info(args: InfoArgs) -> Result<()> {
    let start = Instant::now();
    let mapped = MappedParameters::open(&args.file)?;
    let open = start.elapsed();
    let check = if args.check {
        let t = Instant::now();
        mapped.load(true)?;
        Some(t.elapsed())
    } else {
        None
    };
    let sections = [
        ("h", Section::H),
        ("l", Section::L),
        ("a", Section::A),
        ("b_g1", Section::BG1),
        ("b_g2", Section::BG2),
    ];
    let inputs = mapped.vk.ic.len().saturating_sub(1);
    if args.json {
        let mut obj = serde_json::json!({
            "file": args.file,
            "file_bytes": mapped.layout.file_len,
            "public_inputs": inputs,
            "open_ms": ms(open),
        });
        for (name, s) in sections {
            obj[name] = serde_json::json!(mapped.len(s));
        }
        if let Some(c) = check {
            obj["checked"] = serde_json::json!(true);
            obj["check_ms"] = serde_json::json!(ms(c));
        }
        println!("{obj}");
    } else {
        println!("{}", args.file.display());
        println!("  file size       {} bytes", mapped.layout.file_len);
        println!(
            "  public inputs   {inputs} (ic has {} points)",
            mapped.vk.ic.len()
        );
        for (name, s) in sections {
            println!("  {:<15} {} points", name, mapped.len(s));
        }
        println!(
            "  domain          2^{} (h has n-1 points)",
            (mapped.len(Section::H) + 1)
                .next_power_of_two()
                .trailing_zeros()
        );
        match check {
            Some(c) => println!(
                "  all points on the curve and in the subgroup (checked in {:.2} s)",
                c.as_secs_f64()
            ),
            None => println!("  points not checked (use --check)"),
        }
    }
    Ok(())
}
