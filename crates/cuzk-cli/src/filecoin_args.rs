//! The arguments of `cuzk prove --filecoin KIND ...` (no daemon needed) and
//! `cuzk params gen --filecoin KIND --sector-size SIZE`, and what they ask
//! of cuzk-filecoin: the proof request the flags and files describe, input
//! errors named by the file they came from, parameters generated into the
//! cache directory.

use cuzk_core::ProverBackend;
use cuzk_filecoin::circuits::{parse_sector_size, CircuitId, ProofKind};
use cuzk_filecoin::ids::{parse_hex32, prover_id_from_miner};
use cuzk_filecoin::paramcache::{Generated, ParamCache};
use cuzk_filecoin::progress::ProgressPrinter;
use cuzk_filecoin::prover::{FilecoinProver, ProofOutput, ProofRequest};
use cuzk_filecoin::{porep, post, snap, Error, Fact, InputPart, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn sector_size_arg(s: &str) -> std::result::Result<u64, String> {
    parse_sector_size(s).map_err(|e| e.to_string())
}

/// `--filecoin KIND`: the names cuzk-filecoin gives its proof kinds (`porep`,
/// `winning-post`, `window-post`, `snap-deals`), listed in `--help`.
fn proof_kind_arg() -> impl clap::builder::TypedValueParser<Value = ProofKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(ProofKind::ALL.map(ProofKind::name))
        .try_map(|s| s.parse::<ProofKind>())
}

/// `--synthesis full|compiled`.
fn synthesis_arg() -> impl clap::builder::TypedValueParser<Value = cuzk_filecoin::SynthesisMode> {
    use clap::builder::TypedValueParser;
    use cuzk_filecoin::SynthesisMode;
    clap::builder::PossibleValuesParser::new(SynthesisMode::ALL.map(SynthesisMode::name))
        .try_map(|s| s.parse::<SynthesisMode>())
}

/// `cuzk c1 synth --sector-size SIZE --seed S -o FILE`.
#[derive(Clone, Debug, clap::Args)]
pub struct C1SynthArgs {
    /// Sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB).
    #[arg(long, value_parser = sector_size_arg, value_name = "SIZE")]
    pub sector_size: u64,

    /// Registered seal proof number (interactive PoRep only); default: the
    /// current one for the sector size.
    #[arg(long, value_name = "N")]
    pub registered_proof: Option<u64>,

    /// Every random choice derives from it (same seed, same file).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// The miner's actor ID (the prover id is its ID-address payload).
    #[arg(long, default_value_t = 1000)]
    pub miner_id: u64,

    #[arg(long, default_value_t = 1)]
    pub sector_id: u64,

    /// Where to write the C1 output (filecoin-proofs-api JSON, as Lotus
    /// hands it to filecoin-ffi).
    #[arg(long, short, value_name = "FILE")]
    pub out: PathBuf,

    /// Skip storage-proofs' vanilla verifier on the result.
    #[arg(long)]
    pub no_check: bool,
}

impl C1SynthArgs {
    pub fn request(self) -> cuzk_filecoin::synth_c1::C1SynthRequest {
        cuzk_filecoin::synth_c1::C1SynthRequest {
            sector_size: self.sector_size,
            registered_proof: self.registered_proof,
            seed: self.seed,
            miner_id: self.miner_id,
            sector_id: self.sector_id,
            out: self.out,
            no_check: self.no_check,
        }
    }
}

/// `cuzk prove --filecoin KIND`: prove one Filecoin proof from files.
#[derive(Clone, Debug, clap::Args)]
pub struct FilecoinProveArgs {
    /// The proof to make.
    #[arg(long = "filecoin", value_parser = proof_kind_arg())]
    pub kind: ProofKind,

    /// PoRep: the commit-phase-1 output (filecoin-proofs-api JSON as Lotus
    /// writes it, Curio's {"SectorNum","Phase1Out","SectorSize"} file, or
    /// filecoin-proofs' own JSON together with --registered-proof).
    #[arg(long, value_name = "FILE")]
    pub c1: Option<PathBuf>,

    /// Registered proof number, in the chain's numbering for the kind (seal,
    /// PoSt or update proof). Default: the current one for --sector-size.
    #[arg(long, value_name = "N")]
    pub registered_proof: Option<u64>,

    /// Sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB), when no registered
    /// proof is named.
    #[arg(long, value_parser = sector_size_arg, value_name = "SIZE")]
    pub sector_size: Option<u64>,

    /// PoSt and SnapDeals: vanilla proof files in bincode, as
    /// filecoin-proofs-api makes them (one per sector for PoSt, one per
    /// partition for SnapDeals), in order.
    #[arg(long = "vanilla", value_name = "FILE", num_args = 1..)]
    pub vanilla: Vec<PathBuf>,

    /// PoSt: the challenge randomness, 32 bytes in hex.
    #[arg(long, value_name = "HEX")]
    pub randomness: Option<String>,

    /// PoSt: the miner's actor ID (the prover id is its ID-address payload).
    #[arg(long, value_name = "ID", conflicts_with = "prover_id")]
    pub miner_id: Option<u64>,

    /// PoSt: the prover id, 32 bytes in hex.
    #[arg(long, value_name = "HEX")]
    pub prover_id: Option<String>,

    /// WindowPoSt: prove only this partition (the vanilla proofs are its
    /// sectors), as Curio does.
    #[arg(long, value_name = "K")]
    pub partition: Option<usize>,

    /// SnapDeals: the sector's old replica commitment, 32 bytes in hex.
    #[arg(long, value_name = "HEX")]
    pub comm_r_old: Option<String>,
    /// SnapDeals: the new replica commitment, 32 bytes in hex.
    #[arg(long, value_name = "HEX")]
    pub comm_r_new: Option<String>,
    /// SnapDeals: the new data commitment, 32 bytes in hex.
    #[arg(long, value_name = "HEX")]
    pub comm_d_new: Option<String>,

    /// Where to write the proof (raw bytes, as filecoin-proofs returns them).
    #[arg(long, short, value_name = "FILE")]
    pub out: PathBuf,

    /// Parameter directory [default: $FIL_PROOFS_PARAMETER_CACHE, else
    /// /var/tmp/filecoin-proof-parameters/].
    #[arg(long, value_name = "DIR")]
    pub param_cache: Option<PathBuf>,

    /// Do not verify the proof before writing it.
    #[arg(long)]
    pub no_self_check: bool,

    /// Synthesis: `compiled` (each circuit's constraints compiled once and
    /// kept as `cuzk-<identifier>.r1cs` in the parameter directory, then
    /// witness only, PoRep's challenges in parallel) or `full`.
    #[arg(long, value_parser = synthesis_arg(), default_value = "compiled")]
    pub synthesis: cuzk_filecoin::SynthesisMode,
}

/// `cuzk params gen --filecoin KIND --sector-size SIZE`.
#[derive(Clone, Debug, clap::Args)]
pub struct FilecoinParamsGenArgs {
    /// The circuit.
    #[arg(long = "filecoin", value_parser = proof_kind_arg())]
    pub kind: ProofKind,

    #[arg(long, value_parser = sector_size_arg, value_name = "SIZE")]
    pub sector_size: u64,

    /// Parameter directory [default: $FIL_PROOFS_PARAMETER_CACHE, else
    /// /var/tmp/filecoin-proof-parameters/].
    #[arg(long, value_name = "DIR")]
    pub param_cache: Option<PathBuf>,

    /// Seed the generator (reproducible files); default: OS randomness.
    #[arg(long)]
    pub seed: Option<u64>,

    /// Replace files that are already there.
    #[arg(long)]
    pub force: bool,

    /// Where the constraints come from: `compiled` (the circuit's compiled
    /// system, mapped from `cuzk-<identifier>.r1cs` in the parameter
    /// directory, else compiled once and kept there for proofs to map) or
    /// `full` (a synthesis of the circuit, as bellperson does). The same
    /// parameters either way.
    #[arg(long, value_parser = synthesis_arg(), default_value = "compiled")]
    pub synthesis: cuzk_filecoin::SynthesisMode,
}

fn cache_of(dir: &Option<PathBuf>) -> ParamCache {
    match dir {
        Some(d) => ParamCache::new(d),
        None => ParamCache::from_env(),
    }
}

/// Generate the circuit's parameters (random, insecure: for tests) under the
/// production file names, with the fixed-base multiplications on `engine`.
/// Returns `None` when they exist and `force` is off.
pub fn params_gen_on(
    args: &FilecoinParamsGenArgs,
    engine: &dyn cuzk_core::generator::FixedBaseEngine,
) -> Result<Option<Generated>> {
    let cache = cache_of(&args.param_cache);
    let circuit = CircuitId::current(args.kind, args.sector_size)?;
    cache.generate_unless_present(
        circuit,
        args.force,
        args.seed,
        args.synthesis,
        engine,
        &ProgressPrinter::new(),
    )
}

/// Prove from files and write the proof to `args.out`.
pub fn prove(args: &FilecoinProveArgs, backend: Arc<dyn ProverBackend>) -> Result<ProofOutput> {
    let request = request_from_args(args).map_err(|e| name_input_file(e, args))?;
    let prover = FilecoinProver::new(cache_of(&args.param_cache), backend)
        .with_self_check(!args.no_self_check)
        .with_synthesis(args.synthesis);
    let out = prover
        .prove(&request)
        .map_err(|e| name_input_file(e, args))?;
    std::fs::write(&args.out, &out.proof).map_err(|e| Error::io(&args.out, e))?;
    Ok(out)
}

/// An input error with the file it came from: the C1 file, or the k-th
/// `--vanilla` file for vanilla proof k (one proof per file).
fn name_input_file(e: Error, args: &FilecoinProveArgs) -> Error {
    let file = match e.input_part() {
        Some(InputPart::C1Output) => args.c1.clone(),
        Some(InputPart::VanillaProof(k)) => args.vanilla.get(k).cloned(),
        Some(InputPart::JobInput) | None => None,
    };
    match file {
        Some(f) => e.in_file(f),
        None => e,
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

fn need<'a, T>(v: &'a Option<T>, flag: &str, kind: ProofKind) -> Result<&'a T> {
    v.as_ref().ok_or_else(|| Error::Missing {
        needed_by: format!("--filecoin {kind}"),
        what: flag.into(),
    })
}

/// The proof request the arguments describe.
pub fn request_from_args(args: &FilecoinProveArgs) -> Result<ProofRequest> {
    let kind = args.kind;
    let size_default = |k: ProofKind| -> Result<CircuitId> {
        let size = need(
            &args.sector_size,
            "--sector-size or --registered-proof",
            kind,
        )?;
        CircuitId::current(k, *size)
    };
    match kind {
        ProofKind::Porep => {
            let c1 = read(need(&args.c1, "--c1 FILE", kind)?)?;
            let rp = match (args.registered_proof, args.sector_size) {
                (Some(n), _) => Some(porep::seal_proof_from_u64(n)?),
                (None, Some(size)) => Some(porep::current_seal_proof(size)?),
                (None, None) => None,
            };
            // A registered proof derived from --sector-size only fills in
            // for filecoin-proofs' untagged form; a tagged C1 output names
            // its own.
            let decoded = match porep::decode_c1(&c1, rp) {
                Err(Error::Disagree {
                    fact: Fact::RegisteredProof | Fact::SectorSize,
                    ..
                }) if args.registered_proof.is_none() => porep::decode_c1(&c1, None)?,
                r => r?,
            };
            if let Some(size) = args.sector_size {
                let got = u64::from(decoded.output.registered_proof.sector_size());
                if got != size {
                    return Err(Error::disagree(
                        Fact::SectorSize,
                        "--sector-size",
                        size,
                        "the C1 output",
                        got,
                    ));
                }
            }
            Ok(ProofRequest::PoRepC2(Box::new(decoded.output)))
        }
        ProofKind::WinningPost | ProofKind::WindowPost => {
            let registered_proof = match args.registered_proof {
                Some(n) => post::post_proof_from_u64(n)?,
                None => match size_default(kind)? {
                    CircuitId::PoSt(p) => p,
                    other => {
                        return Err(Error::WrongProofKind {
                            given: other.to_string(),
                            expected: vec![kind],
                        })
                    }
                },
            };
            let randomness = parse_hex32(
                need(&args.randomness, "--randomness", kind)?,
                "--randomness",
            )?;
            let prover_id = match (&args.prover_id, args.miner_id) {
                (Some(hex), _) => parse_hex32(hex, "--prover-id")?,
                (None, Some(id)) => prover_id_from_miner(id),
                (None, None) => {
                    return Err(Error::Missing {
                        needed_by: format!("--filecoin {kind}"),
                        what: "--miner-id or --prover-id".into(),
                    })
                }
            };
            if args.vanilla.is_empty() {
                return Err(Error::Missing {
                    needed_by: format!("--filecoin {kind}"),
                    what: "--vanilla FILE..".into(),
                });
            }
            let vanilla_proofs = args
                .vanilla
                .iter()
                .map(|p| read(p))
                .collect::<Result<_>>()?;
            ProofRequest::post(
                kind,
                registered_proof,
                randomness,
                prover_id,
                vanilla_proofs,
                args.partition,
            )
        }
        ProofKind::SnapDeals => {
            let registered_proof = match args.registered_proof {
                Some(n) => snap::update_proof_from_u64(n)?,
                None => match size_default(kind)? {
                    CircuitId::SnapDeals(p) => p,
                    other => {
                        return Err(Error::WrongProofKind {
                            given: other.to_string(),
                            expected: vec![kind],
                        })
                    }
                },
            };
            let hex = |v: &Option<String>, flag: &str| parse_hex32(need(v, flag, kind)?, flag);
            if args.vanilla.is_empty() {
                return Err(Error::Missing {
                    needed_by: format!("--filecoin {kind}"),
                    what: "--vanilla FILE..".into(),
                });
            }
            Ok(ProofRequest::SnapDeals {
                registered_proof,
                vanilla_proofs: args
                    .vanilla
                    .iter()
                    .map(|p| read(p))
                    .collect::<Result<_>>()?,
                comm_r_old: hex(&args.comm_r_old, "--comm-r-old")?,
                comm_r_new: hex(&args.comm_r_new, "--comm-r-new")?,
                comm_d_new: hex(&args.comm_d_new, "--comm-d-new")?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    #[allow(clippy::large_enum_variant)] // parsed once in a test
    enum Cmd {
        Prove(FilecoinProveArgs),
        Gen(FilecoinParamsGenArgs),
    }

    #[test]
    fn input_errors_name_their_file() {
        let Cmd::Prove(a) = Cmd::try_parse_from([
            "t",
            "prove",
            "--filecoin",
            "window-post",
            "--vanilla",
            "v0.bin",
            "v1.bin",
            "-o",
            "p",
        ])
        .unwrap() else {
            panic!("not prove")
        };
        let decode = |part: InputPart, form: &str| Error::decode(part, form, "eof".to_string());
        let named = |e: Error| name_input_file(e, &a);
        let e = named(decode(
            InputPart::VanillaProof(1),
            "bincode FallbackPoStSectorProof",
        ));
        assert!(
            matches!(&e, Error::Decode { part: InputPart::VanillaProof(1), file: Some(f), .. }
                if f == Path::new("v1.bin")),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "cannot decode vanilla proof 1 (bincode FallbackPoStSectorProof) in v1.bin: eof"
        );
        let e = named(Error::InvalidPart {
            part: InputPart::VanillaProof(0),
            file: None,
            reason: "proves no sector".into(),
        });
        assert_eq!(
            e.to_string(),
            "invalid vanilla proof 0 in v0.bin: proves no sector"
        );
        // No such file (index past the list, no C1 given): unchanged.
        let e = named(decode(InputPart::VanillaProof(2), "x"));
        assert!(matches!(&e, Error::Decode { file: None, .. }), "{e:?}");
        assert_eq!(e.to_string(), "cannot decode vanilla proof 2 (x): eof");
        assert_eq!(
            named(decode(InputPart::C1Output, "JSON")).to_string(),
            "cannot decode C1 output (JSON): eof"
        );
        // Other errors pass through as they are.
        assert!(matches!(
            named(Error::AllZero { field: "seed" }),
            Error::AllZero { .. }
        ));
    }

    #[test]
    fn a_bad_vanilla_file_is_named_by_prove() {
        // Through the real path: the vanilla proofs are decoded before any
        // parameters are needed, so an empty cache does.
        let dir = tempfile::tempdir().unwrap();
        let (v0, v1) = (dir.path().join("v0.bin"), dir.path().join("v1.bin"));
        std::fs::write(&v0, b"not bincode").unwrap();
        std::fs::write(&v1, b"").unwrap();
        let zeros = "00".repeat(32);
        let (v0s, v1s) = (v0.to_str().unwrap(), v1.to_str().unwrap());
        let cache = dir.path().join("params");
        let out = dir.path().join("proof");
        let Cmd::Prove(a) = Cmd::try_parse_from([
            "t",
            "prove",
            "--filecoin",
            "window-post",
            "--sector-size",
            "2KiB",
            "--vanilla",
            v0s,
            v1s,
            "--randomness",
            &zeros,
            "--miner-id",
            "1",
            "--param-cache",
            cache.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .unwrap() else {
            panic!("not prove")
        };
        let e = prove(&a, Arc::new(cuzk_core::CpuBackend)).unwrap_err();
        let shown = e.to_string();
        assert!(shown.contains("vanilla proof 0"), "{shown}");
        assert!(shown.contains(v0s), "{shown}");
        assert!(!out.exists());
    }

    #[test]
    fn arguments_parse() {
        let Cmd::Prove(a) = Cmd::try_parse_from([
            "t",
            "prove",
            "--filecoin",
            "porep",
            "--c1",
            "c1.json",
            "-o",
            "p",
        ])
        .unwrap() else {
            panic!("not prove")
        };
        assert_eq!(a.kind, ProofKind::Porep);
        assert_eq!(a.c1.as_deref(), Some(Path::new("c1.json")));
        let Cmd::Gen(g) = Cmd::try_parse_from([
            "t",
            "gen",
            "--filecoin",
            "window-post",
            "--sector-size",
            "32GiB",
            "--seed",
            "3",
        ])
        .unwrap() else {
            panic!("not gen")
        };
        assert_eq!(
            (g.kind, g.sector_size, g.seed),
            (ProofKind::WindowPost, 32 << 30, Some(3))
        );
        assert!(
            Cmd::try_parse_from(["t", "gen", "--filecoin", "porep", "--sector-size", "3XB"])
                .is_err()
        );
        assert!(
            Cmd::try_parse_from(["t", "gen", "--filecoin", "pore", "--sector-size", "2KiB"])
                .is_err()
        );
    }

    #[test]
    fn missing_inputs_are_named() {
        let Cmd::Prove(a) = Cmd::try_parse_from([
            "t",
            "prove",
            "--filecoin",
            "winning-post",
            "--sector-size",
            "2KiB",
            "-o",
            "p",
        ])
        .unwrap() else {
            panic!()
        };
        match request_from_args(&a) {
            Err(Error::Missing { what, .. }) => assert_eq!(what, "--randomness"),
            other => panic!("{other:?}"),
        }
        let Cmd::Prove(a) =
            Cmd::try_parse_from(["t", "prove", "--filecoin", "porep", "-o", "p"]).unwrap()
        else {
            panic!()
        };
        assert!(
            matches!(request_from_args(&a), Err(Error::Missing { what, .. }) if what.starts_with("--c1"))
        );
    }
}
