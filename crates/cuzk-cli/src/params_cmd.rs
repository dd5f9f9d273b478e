//! `cuzk params gen|info`: bellperson-format parameter files.

use crate::common::{self, ms};
use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::params::{MappedParameters, Section};
use cuzk_core::subgroup::SubgroupChecker;
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
    /// The built-in circuit to generate parameters for.
    #[arg(long, value_enum, default_value_t = CircuitKind::PorepLike)]
    pub circuit: CircuitKind,
    /// log2 of the circuit's domain size.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(4..=28))]
    pub log_size: u32,
    /// Seed of the circuit's witness, which the parameters do not depend on
    /// (the structure depends on --log-size alone; the parameters'
    /// randomness is fresh every time). Kept for old scripts.
    #[arg(long, default_value_t = 0, hide = true)]
    pub seed: u64,
    /// Output `.params` file.
    #[arg(long, required_unless_present = "filecoin")]
    pub out: Option<PathBuf>,
    /// Also write the verifying key here (`.vk` format).
    #[arg(long)]
    pub vk: Option<PathBuf>,
    /// Generate a Filecoin circuit's parameters instead, under
    /// filecoin-proofs' production file names (.params, .vk, .meta) in
    /// --param-cache; needs --sector-size.
    #[arg(long, value_enum, conflicts_with_all = ["out", "vk"], requires = "sector_size")]
    pub filecoin: Option<cuzk_filecoin::ProofKind>,
    /// Sector size for --filecoin (2KiB, 8MiB, 512MiB, 32GiB, 64GiB).
    #[arg(long, value_parser = sector_size_arg, requires = "filecoin")]
    pub sector_size: Option<u64>,
    /// Parameter directory for --filecoin [default: $FIL_PROOFS_PARAMETER_CACHE,
    /// else /var/tmp/filecoin-proof-parameters/].
    #[arg(long, requires = "filecoin")]
    pub param_cache: Option<PathBuf>,
    /// With --filecoin: replace files that are already there.
    #[arg(long, requires = "filecoin")]
    pub force: bool,
    /// Where the constraints come from: `compiled` (the circuit's compiled
    /// system: mapped from its `.r1cs` file beside the parameters, else
    /// compiled once and kept there, where proofs map it) or `full` (a
    /// synthesis of the circuit, as bellperson does). The parameters are
    /// the same either way.
    #[arg(long, value_enum, default_value_t = common::SynthesisArg::Compiled)]
    pub synthesis: common::SynthesisArg,
    /// Where the fixed-base multiplications (nearly all of the work) run:
    /// the GPU where one is usable (auto), or as asked. The parameters are
    /// the same either way.
    #[arg(long, value_enum, default_value_t = common::BackendArg::Auto)]
    pub backend: common::BackendArg,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn sector_size_arg(s: &str) -> std::result::Result<u64, String> {
    cuzk_filecoin::circuits::parse_sector_size(s).map_err(|e| e.to_string())
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The `.params` file.
    pub file: PathBuf,
    /// Decode every point and check curve and subgroup membership.
    #[arg(long)]
    pub check: bool,
    /// Where --check's subgroup checks run (the points are decoded and
    /// checked to lie on the curve on every core either way): the GPU
    /// where one is usable (auto), or as asked.
    #[arg(long, value_enum, default_value_t = common::BackendArg::Auto)]
    pub backend: common::BackendArg,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: ParamsCommand) -> Result<()> {
    match cmd {
        ParamsCommand::Gen(a) => gen(a),
        ParamsCommand::Info(a) => info(a),
    }
}

fn gen_filecoin(args: &GenArgs, kind: cuzk_filecoin::ProofKind, sector_size: u64) -> Result<()> {
    let fargs = crate::filecoin_args::FilecoinParamsGenArgs {
        kind,
        sector_size,
        param_cache: args.param_cache.clone(),
        seed: None,
        force: args.force,
        synthesis: match args.synthesis {
            common::SynthesisArg::Full => cuzk_filecoin::SynthesisMode::Full,
            common::SynthesisArg::Compiled => cuzk_filecoin::SynthesisMode::Compiled,
        },
    };
    // A bad size is refused before anything is announced or started.
    cuzk_filecoin::CircuitId::current(kind, sector_size)
        .with_context(|| format!("generating {kind} parameters"))?;
    let engine = common::select_fixed_base(args.backend, args.json)?;
    if !args.json {
        eprintln!(
            "generating random (INSECURE, test-only) parameters for {kind} at {sector_size} bytes on {} ...",
            engine.name()
        );
    }
    let generated = crate::filecoin_args::params_gen_on(&fargs, engine.as_ref())
        .with_context(|| format!("generating {kind} parameters"))?;
    match (generated, args.json) {
        (None, true) => println!(
            "{}",
            serde_json::json!({"kind": kind.to_string(), "generated": false})
        ),
        (None, false) => println!("parameters already present (use --force to replace them)"),
        (Some(g), true) => println!(
            "{}",
            serde_json::json!({
                "kind": kind.to_string(), "generated": true, "engine": engine.name(),
                "params": g.files.params, "vk": g.files.vk,
                "domain_size": g.domain_size, "public_inputs": g.public_inputs,
                "params_bytes": g.params_bytes, "generate_ms": ms(g.generation),
                "synthesis": args.synthesis.name(),
                "compiled": g.compiled.as_ref().map(|c| serde_json::json!({
                    "file": c.path,
                    "made": c.origin == cuzk_filecoin::compiled::CompiledOrigin::Compiled,
                    "ms": ms(c.elapsed), "bytes": c.bytes,
                })),
            })
        ),
        (Some(g), false) => {
            let constraints = match &g.compiled {
                Some(c) => format!(
                    "; constraints {} {} in {:.2} s",
                    match c.origin {
                        cuzk_filecoin::compiled::CompiledOrigin::Compiled => "compiled into",
                        cuzk_filecoin::compiled::CompiledOrigin::File => "mapped from",
                        cuzk_filecoin::compiled::CompiledOrigin::Memory => "in memory, kept as",
                    },
                    c.path.display(),
                    c.elapsed.as_secs_f64()
                ),
                None => "; constraints synthesized".into(),
            };
            println!(
                "wrote {} ({} bytes, domain {}, {} public inputs) in {:.2} s{constraints}",
                g.files.params.display(),
                g.params_bytes,
                g.domain_size,
                g.public_inputs,
                g.generation.as_secs_f64()
            )
        }
    }
    Ok(())
}

fn gen(args: GenArgs) -> Result<()> {
    if let (Some(kind), Some(size)) = (args.filecoin, args.sector_size) {
        return gen_filecoin(&args, kind, size);
    }
    let out = args.out.clone().context("--out is required")?;
    // Generation can take minutes: a path that cannot be written is refused
    // before it starts, not after.
    common::check_output_dir(&out)?;
    if let Some(vk) = &args.vk {
        common::check_output_dir(vk)?;
    }
    let CircuitKind::PorepLike = args.circuit;
    if !args.json {
        eprintln!(
            "generating random parameters for porep-like 2^{} (seed {}) ...",
            args.log_size, args.seed
        );
    }
    let engine = common::select_fixed_base(args.backend, args.json)?;
    let start = Instant::now();
    let circuit = PorepLikeCircuit::new(args.log_size, args.seed);
    let waste = cuzk_core::generator::ToxicWaste::random(&mut rand::rngs::OsRng);
    let (params, timings, compiled) = match args.synthesis {
        common::SynthesisArg::Full => {
            let (p, t) =
                cuzk_core::generator::generate_parameters_with(circuit, &waste, engine.as_ref())
                    .context("generating parameters")?;
            (p, t, None)
        }
        common::SynthesisArg::Compiled => {
            let used = compiled_beside(&out, args.log_size, args.json)?;
            let (p, t) = cuzk_core::generator::generate_parameters_compiled_with(
                &used.compiled,
                &waste,
                engine.as_ref(),
            )
            .context("generating parameters from the compiled system")?;
            (p, t, Some(used))
        }
    };
    let generate = start.elapsed();
    let t = Instant::now();
    // Both written through a temporary sibling and renamed (cuzk-core).
    params.write_file(&out)?;
    if let Some(vk) = &args.vk {
        params.vk.write_file(vk)?;
    }
    let write = t.elapsed();
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "file": out, "vk": args.vk, "log_size": args.log_size, "seed": args.seed,
                "generate_ms": ms(generate), "write_ms": ms(write),
                "engine": timings.engine,
                "synthesis": args.synthesis.name(),
                "compiled": compiled.as_ref().map(|c| serde_json::json!({
                    "file": c.path, "made": c.made, "ms": ms(c.elapsed),
                    "bytes": c.compiled.matrix_bytes(),
                })),
                "phases_ms": {
                    "compiled": compiled.as_ref().map(|c| ms(c.elapsed)),
                    "synthesis": ms(timings.synthesis), "scalars": ms(timings.scalars),
                    "g1": ms(timings.g1), "g2": ms(timings.g2),
                },
                "h": params.h.len(), "l": params.l.len(), "a": params.a.len(),
                "b_g1": params.b_g1.len(), "b_g2": params.b_g2.len(), "public_inputs": params.vk.ic.len() - 1,
            })
        );
    } else {
        let constraints = match &compiled {
            Some(c) => format!(
                "constraints {} {} in {:.2}",
                if c.made {
                    "compiled into"
                } else {
                    "mapped from"
                },
                c.path.display(),
                c.elapsed.as_secs_f64()
            ),
            None => format!("synthesis {:.2}", timings.synthesis.as_secs_f64()),
        };
        println!(
            "wrote {} in {:.2} s (generation {:.2} s on {}: {constraints}, scalars {:.2}, G1 {:.2}, G2 {:.2}; write {:.2} s)",
            out.display(),
            (generate + write).as_secs_f64(),
            generate.as_secs_f64(),
            timings.engine,
            timings.scalars.as_secs_f64(),
            timings.g1.as_secs_f64(),
            timings.g2.as_secs_f64(),
            write.as_secs_f64()
        );
    }
    Ok(())
}

/// The compiled system parameter generation read the constraints from.
struct CompiledBeside {
    compiled: cuzk_core::compiled::CompiledCircuit,
    path: PathBuf,
    /// Compiled now (else mapped from the file).
    made: bool,
    elapsed: std::time::Duration,
}

/// The porep-like circuit's compiled system beside the parameters
/// (`X.params` → `X.r1cs`, the demo cache's and the daemon's naming):
/// mapped when the file is there and was made for this size, else
/// compiled and written there (replacing a file of another size or a
/// damaged one, as the parameters beside it are being replaced), so that a
/// later proof maps it. A file that cannot be written costs the next proof
/// a compile, and is said, not fatal.
fn compiled_beside(out: &std::path::Path, log_size: u32, quiet: bool) -> Result<CompiledBeside> {
    use cuzk_core::compiled::{self, CompiledCircuit};
    let start = Instant::now();
    let path = out.with_extension("r1cs");
    let id = common::porep_like_id(log_size);
    if path.exists() {
        match CompiledCircuit::open(&path, Some(&id)) {
            Ok(compiled) => {
                return Ok(CompiledBeside {
                    compiled,
                    path,
                    made: false,
                    elapsed: start.elapsed(),
                })
            }
            Err(e) if !quiet => eprintln!("{e}: compiling the circuit again"),
            Err(_) => {}
        }
    }
    if !quiet {
        eprintln!(
            "compiling porep-like 2^{log_size}'s constraints once (kept in {}) ...",
            path.display()
        );
    }
    let compiled = compiled::compile(PorepLikeCircuit::new(log_size, 0), &id)
        .context("compiling the circuit")?;
    if let Err(e) = compiled.write_file(&path) {
        if !quiet {
            eprintln!("could not keep the compiled circuit ({e}); a proof will compile it again");
        }
    }
    Ok(CompiledBeside {
        compiled,
        path,
        made: true,
        elapsed: start.elapsed(),
    })
}

/// Points decoded and checked per step of `params info --check`: a few
/// hundred MB of points, so that progress moves every second or so and
/// memory stays bounded whatever the file's size.
const CHECK_STEP: usize = 1 << 20;

/// Every point of the file on the curve (decoded on every core, a step at
/// a time) and in the subgroup (by `checker`), with progress on stderr
/// unless quiet.
fn check_points(
    mapped: &MappedParameters,
    checker: &dyn SubgroupChecker,
    progress: bool,
) -> Result<()> {
    use std::io::{IsTerminal, Write};
    let sections = [
        Section::H,
        Section::L,
        Section::A,
        Section::BG1,
        Section::BG2,
    ];
    let total: usize = sections.iter().map(|&s| mapped.len(s)).sum();
    let tty = std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut done = 0usize;
    for s in sections {
        let len = mapped.len(s);
        let mut at = 0;
        while at < len {
            let end = (at + CHECK_STEP).min(len);
            if s == Section::BG2 {
                mapped.g2_with(at..end, Some(checker))?;
            } else {
                mapped.g1_with(s, at..end, Some(checker))?;
            }
            done += end - at;
            at = end;
            if progress && tty {
                eprint!(
                    "\rchecking points: {} {:>3}% of {total} ({:.1} s)",
                    s.name(),
                    done * 100 / total.max(1),
                    start.elapsed().as_secs_f64()
                );
                let _ = std::io::stderr().flush();
            }
        }
        if progress && !tty {
            eprintln!(
                "checked {len} points of {} ({done} of {total}, {:.1} s)",
                s.name(),
                start.elapsed().as_secs_f64()
            );
        }
    }
    if progress && tty {
        eprintln!();
    }
    Ok(())
}

fn info(args: InfoArgs) -> Result<()> {
    let start = Instant::now();
    let mapped = MappedParameters::open(&args.file)?;
    let open = start.elapsed();
    let check = if args.check {
        let checker = common::select_subgroup_checker(args.backend, args.json)?;
        let t = Instant::now();
        check_points(&mapped, checker.as_ref(), !args.json)?;
        Some((t.elapsed(), checker.name()))
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
        if let Some((c, by)) = &check {
            obj["checked"] = serde_json::json!(true);
            obj["check_ms"] = serde_json::json!(ms(*c));
            obj["checked_by"] = serde_json::json!(by);
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
            Some((c, by)) => println!(
                "  all points on the curve and in the subgroup (checked in {:.2} s, subgroup by {by})",
                c.as_secs_f64()
            ),
            None => println!("  points not checked (use --check)"),
        }
    }
    Ok(())
}
