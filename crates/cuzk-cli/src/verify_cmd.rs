//! `cuzk verify`: check bellperson-format proofs against a `.vk` file.
//!
//! Files:
//! - proof file: one or more 192-byte proofs, concatenated (as Filecoin
//!   stores the proofs of several partitions);
//! - inputs file: text, one field element per line, decimal or `0x`
//!   big-endian hex; a blank line separates the inputs of consecutive
//!   proofs; `#` starts a comment line.

use anyhow::{bail, Context, Result};
use blstrs::Scalar;
use clap::Args;
use cuzk_core::params::VerifyingKey;
use cuzk_core::proof::{Proof, PROOF_BYTES};
use cuzk_core::verifier::{prepare_verifying_key, verify_proof, verify_proofs_batch};
use ff::PrimeField;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Verifying key (bellperson `.vk` format).
    #[arg(long, required_unless_present = "kind", conflicts_with = "kind")]
    pub vk: Option<PathBuf>,
    /// Verify against the daemon's key of this circuit kind instead
    /// (fetched with its KeyService, as `cuzk vk` does).
    #[arg(long)]
    pub kind: Option<String>,
    /// The daemon to ask for --kind's key: unix:PATH, a socket path,
    /// http://HOST:PORT or https://HOST:PORT [default: the daemon's default
    /// socket].
    #[arg(long, requires = "kind")]
    pub daemon: Option<String>,
    /// File holding the bearer token, for a TCP daemon that requires one.
    #[arg(long, requires = "kind")]
    pub token_file: Option<PathBuf>,
    /// Proof file: concatenated 192-byte proofs.
    #[arg(long)]
    pub proof: PathBuf,
    /// Public inputs: one element per line, blank line between proofs.
    #[arg(long)]
    pub inputs: PathBuf,
    /// Check the verifying key's points for subgroup membership.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub checked: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The key `--vk` names, or the daemon's for `--kind`; and how to name it
/// in messages.
fn verifying_key(args: &VerifyArgs) -> Result<(VerifyingKey, String)> {
    if let Some(path) = &args.vk {
        return Ok((
            VerifyingKey::read_file(path, args.checked)?,
            path.display().to_string(),
        ));
    }
    let kind = args.kind.as_deref().context("--vk or --kind is required")?;
    let conn = crate::daemon_cli::ConnectArgs {
        daemon: args
            .daemon
            .clone()
            .unwrap_or_else(|| cuzk_daemon::config::DefaultPaths::current().daemon_target()),
        token_file: args.token_file.clone(),
        tls_ca: None,
        tls_domain: None,
        json: args.json,
    };
    let r = crate::daemon_cli::fetch_verifying_key_blocking(&conn, kind)?;
    let name = format!("the daemon's key of {kind} ({}.vk)", r.params_id);
    let (vk, _) = VerifyingKey::read_bytes(&r.vk, Path::new(&name), args.checked)
        .with_context(|| format!("decoding {name}"))?;
    Ok((vk, name))
}

pub fn run(args: VerifyArgs) -> Result<bool> {
    let (vk, vk_name) = verifying_key(&args)?;
    let bytes =
        std::fs::read(&args.proof).with_context(|| format!("reading {}", args.proof.display()))?;
    if bytes.is_empty() || bytes.len() % PROOF_BYTES != 0 {
        bail!(
            "{}: {} bytes is not a whole number of {PROOF_BYTES}-byte proofs",
            args.proof.display(),
            bytes.len()
        );
    }
    let proofs = bytes
        .chunks(PROOF_BYTES)
        .enumerate()
        .map(|(i, c)| {
            Proof::from_bytes(c).with_context(|| format!("{}: proof {i}", args.proof.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let inputs = read_inputs(&args.inputs)?;
    if inputs.len() != proofs.len() {
        bail!(
            "{} holds {} proofs but {} holds inputs for {}",
            args.proof.display(),
            proofs.len(),
            args.inputs.display(),
            inputs.len()
        );
    }
    let start = Instant::now();
    let pvk = prepare_verifying_key(&vk);
    let ok = if proofs.len() == 1 {
        verify_proof(&pvk, &proofs[0], &inputs[0])
    } else {
        verify_proofs_batch(&pvk, &proofs, &inputs, &mut rand::rngs::OsRng)
    }
    .with_context(|| {
        format!(
            "verifying {} against {} with the inputs of {}",
            args.proof.display(),
            vk_name,
            args.inputs.display()
        )
    })?;
    let elapsed = start.elapsed();
    if args.json {
        println!(
            "{}",
            serde_json::json!({"verified": ok, "proofs": proofs.len(), "verify_ms": crate::common::ms(elapsed)})
        );
    } else {
        println!(
            "{} proof(s): {}",
            proofs.len(),
            if ok { "verified" } else { "NOT verified" }
        );
    }
    Ok(ok)
}

pub fn parse_scalar(s: &str) -> Option<Scalar> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let padded = format!("{hex:0>64}");
        let mut le = [0u8; 32];
        for i in 0..32 {
            le[31 - i] = u8::from_str_radix(&padded[2 * i..2 * i + 2], 16).ok()?;
        }
        Option::from(Scalar::from_repr(le))
    } else {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Scalar::from_str_vartime(s)
    }
}

pub fn format_scalar(x: &Scalar) -> String {
    let le = x.to_repr();
    let mut s = String::from("0x");
    for b in le.as_ref().iter().rev() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

pub fn read_inputs(path: &Path) -> Result<Vec<Vec<Scalar>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut groups = vec![Vec::new()];
    for (no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            if !groups.last().is_none_or(Vec::is_empty) {
                groups.push(Vec::new());
            }
            continue;
        }
        let x = parse_scalar(line).with_context(|| {
            format!(
                "{}:{}: not a field element (decimal or 0x hex below the modulus): {line:?}",
                path.display(),
                no + 1
            )
        })?;
        groups.last_mut().expect("never empty").push(x);
    }
    if groups.len() > 1 && groups.last().is_some_and(Vec::is_empty) {
        groups.pop();
    }
    Ok(groups)
}

/// The files [`write_demo_outputs`] wrote.
pub struct DemoOutputs {
    pub vk: PathBuf,
    pub proof: PathBuf,
    pub inputs: PathBuf,
}

/// Write what `cuzk verify` reads: demo.vk, proof.bin, inputs.txt.
pub fn write_demo_outputs(
    dir: &Path,
    vk: &VerifyingKey,
    proofs: &[Proof],
    inputs: &[Vec<Scalar>],
) -> Result<DemoOutputs> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let vk_path = dir.join("demo.vk");
    vk.write_file(&vk_path)?;
    let mut bytes = Vec::with_capacity(proofs.len() * PROOF_BYTES);
    for p in proofs {
        bytes.extend_from_slice(&p.to_bytes());
    }
    let proof_path = dir.join("proof.bin");
    std::fs::write(&proof_path, bytes)
        .with_context(|| format!("writing {}", proof_path.display()))?;
    let text = inputs
        .iter()
        .map(|g| {
            g.iter()
                .map(|x| format_scalar(x) + "\n")
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let inputs_path = dir.join("inputs.txt");
    std::fs::write(&inputs_path, text)
        .with_context(|| format!("writing {}", inputs_path.display()))?;
    Ok(DemoOutputs {
        vk: vk_path,
        proof: proof_path,
        inputs: inputs_path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;

    #[test]
    fn scalar_text_roundtrip() {
        for x in [
            Scalar::ZERO,
            Scalar::ONE,
            Scalar::from(123456789u64),
            -Scalar::ONE,
        ] {
            assert_eq!(parse_scalar(&format_scalar(&x)), Some(x));
        }
        assert_eq!(parse_scalar("42"), Some(Scalar::from(42u64)));
        assert_eq!(parse_scalar("0x2a"), Some(Scalar::from(42u64)));
        // The modulus itself and junk are rejected.
        assert_eq!(
            parse_scalar("0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"),
            None
        );
        assert_eq!(parse_scalar("12a"), None);
        assert_eq!(parse_scalar("0x"), None);
    }
}
