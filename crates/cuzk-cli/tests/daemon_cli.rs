//! The `cuzk` daemon subcommands as a real process: serve from a config
//! file, drive it with the client commands, stop it with SIGTERM.

use cuzk_core::circuits::PorepLikeCircuit;
use cuzk_core::params::MappedParameters;
use cuzk_core::proof::Proof;
use cuzk_core::verifier::{prepare_verifying_key, verify_proof};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

mod daemon_process;
use daemon_process::{write_config, Reap};

const BIN: &str = env!("CARGO_BIN_EXE_cuzk");

fn cuzk(sock: &Path, args: &[&str]) -> (bool, String) {
    let target = format!("unix:{}", sock.display());
    let mut full: Vec<&str> = args.to_vec();
    // Client options go after the subcommand path.
    full.extend(["--daemon", &target]);
    let out = Command::new(BIN)
        .args(&full)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn json(sock: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (ok, out) = cuzk(sock, &a);
    assert!(ok, "cuzk {args:?} failed: {out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("cuzk {args:?}: {e}: {out}"))
}

#[test]
fn daemon_process_serves_client_commands_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("cuzk.sock");
    let params = dir.path().join("params");
    let cfg = dir.path().join("cuzk.toml");
    write_config(&cfg, &sock, &params, "max_batch_wait_ms = 10\n");
    let mut reap = Reap(
        Command::new(BIN)
            .args(["daemon", "--config"])
            .arg(&cfg)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    reap.wait_for_socket(&sock, Duration::from_secs(60));

    // prove, with the proof written to a file and checked here.
    let proof_file = dir.path().join("proof.bin");
    let v = json(
        &sock,
        &[
            "prove",
            "--kind",
            "porep-like-6",
            "--seed",
            "7",
            "--out",
            proof_file.to_str().unwrap(),
        ],
    );
    assert_eq!(v["state"], "completed", "{v}");
    let bytes = std::fs::read(&proof_file).unwrap();
    let vk = MappedParameters::open(&params.join(format!(
        "{}.params",
        cuzk_core::circuits::porep_like::params_id(6)
    )))
    .unwrap()
    .vk;
    let pvk = prepare_verifying_key(&vk);
    let proof = Proof::from_bytes(&bytes).unwrap();
    let inputs = PorepLikeCircuit::new(6, 7).public_inputs();
    assert!(verify_proof(&pvk, &proof, &inputs).unwrap());
    // ...and not for another seed's inputs.
    assert!(!verify_proof(&pvk, &proof, &PorepLikeCircuit::new(6, 8).public_inputs()).unwrap());

    // A refusal is one readable line: the call, the code, the daemon's words.
    let out = Command::new(BIN)
        .args(["submit", "--kind", "nosuch-kind", "--daemon"])
        .arg(format!("unix:{}", sock.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // `cuzk daemon` serves every Filecoin kind beside the configured ones,
    // listed in name order.
    let (line, served) = err
        .trim()
        .split_once("; this daemon serves ")
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(
        line,
        "error: SubmitProof failed (InvalidArgument): unknown circuit kind \"nosuch-kind\""
    );
    let served: Vec<&str> = served.split(", ").collect();
    for kind in [
        "porep-like-6",
        "porep-2k",
        "winning-32g",
        "wpost-64g",
        "snap-512m",
    ] {
        assert!(served.contains(&kind), "{kind} not in {served:?}");
    }
    assert_eq!(served.len(), 21, "{served:?}");
    assert!(!err.trim().contains('\n'), "one line: {err}");

    // submit / await / cancel.
    let s = json(
        &sock,
        &[
            "submit",
            "--kind",
            "porep-like-6",
            "--seed",
            "9",
            "--priority",
            "high",
            "--request-id",
            "r9",
        ],
    );
    let id = s["job_id"].as_u64().unwrap();
    let again = json(
        &sock,
        &[
            "submit",
            "--kind",
            "porep-like-6",
            "--seed",
            "9",
            "--request-id",
            "r9",
        ],
    );
    assert_eq!(
        (again["job_id"].as_u64(), again["deduplicated"].as_bool()),
        (Some(id), Some(true))
    );
    let a = json(&sock, &["await", &id.to_string()]);
    assert_eq!(a["state"], "completed");
    assert_eq!(a["proof_hex"].as_str().unwrap().len(), 2 * 192);
    let c = json(&sock, &["cancel", &id.to_string()]);
    assert_eq!(
        (c["cancelled"].as_bool(), c["state"].as_str()),
        (Some(false), Some("completed"))
    );
    // A malformed request is an error exit, and the daemon keeps serving.
    let (ok, _) = cuzk(
        &sock,
        &["submit", "--kind", "porep-like-6", "--input-hex", "0102"],
    );
    assert!(!ok);

    // preload / evict / status.
    let e = json(&sock, &["evict", "porep-like-6"]);
    assert_eq!(
        e["evicted"][0],
        cuzk_core::circuits::porep_like::params_id(6).as_str()
    );
    let p = json(&sock, &["preload", "porep-like-6"]);
    assert_eq!(p["loaded"][0]["tier"], "pinned");
    let st = json(&sock, &["status"]);
    assert_eq!(st["counters"]["completed"], 2);
    // The unknown kind and the malformed input.
    assert_eq!(st["counters"]["rejected"], 2);
    assert_eq!(st["gpu_backend_present"], false);
    assert_eq!(st["busy"]["workers"].as_array().unwrap().len(), 1, "{st}");
    assert!(
        st["busy"]["workers"][0]["busy_fraction"].as_f64().unwrap() > 0.0,
        "{st}"
    );
    assert_eq!(st["counters"]["proofs_verified"], 2, "{st}");
    let (ok, text) = cuzk(&sock, &["status"]);
    // A table for people: units, "unlimited", no raw u64::MAX.
    assert!(ok && text.contains("backend   cpu"), "{text}");
    assert!(
        text.contains("unlimited") && !text.contains("18446744073709551615"),
        "{text}"
    );

    // bench batch: every proof verified by the daemon, the run's timeline
    // written as a Chrome trace.
    let trace = dir.path().join("bench-trace.json");
    let trace_arg = trace.display().to_string();
    let b = json(
        &sock,
        &[
            "bench",
            "batch",
            "--count",
            "12",
            "--concurrency",
            "3",
            "--kind",
            "porep-like-6",
            "--partitions",
            "2",
            "--trace",
            &trace_arg,
        ],
    );
    assert_eq!(
        (b["completed"].as_u64(), b["failed"].as_u64()),
        (Some(12), Some(0)),
        "{b}"
    );
    assert_eq!(b["ok"], true, "{b}");
    assert_eq!(b["proofs"], 24, "{b}");
    assert_eq!(b["proofs_verified"], 24, "{b}");
    assert_eq!(b["proofs_not_verified"], 0, "{b}");
    assert!(b["proofs_per_minute"].as_f64().unwrap() > 0.0);
    let busy = b["gpu_busy_fraction"].as_f64().unwrap();
    assert!(busy > 0.0 && busy <= 1.0, "{b}");
    let cpu = b["cpu_busy_fraction"].as_f64().unwrap();
    assert!(cpu > 0.0 && cpu <= 1.0, "{b}");
    assert!(b["median_ms"]["total"].as_f64().unwrap() > 0.0);
    let t: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let synth = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "synthesis")
        .count();
    assert!(synth >= 24, "{synth} synthesis events for 24 partitions");
    // cuzk trace.
    let out = dir.path().join("trace.json");
    let out_arg = out.display().to_string();
    let tr = json(&sock, &["trace", "--seconds", "600", "-o", &out_arg]);
    assert!(tr["bytes"].as_u64().unwrap() > 0, "{tr}");
    let t: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(t["traceEvents"].as_array().unwrap().len() > 24);
    // A bench batch that cannot pass exits non-zero: an unknown kind.
    let (ok, _) = cuzk(
        &sock,
        &["bench", "batch", "--count", "1", "--kind", "no-such-kind"],
    );
    assert!(!ok, "bench batch with failed jobs must fail");

    // SIGTERM: clean exit, socket removed.
    let status = reap.terminate();
    assert!(status.success(), "daemon exited with {status}");
    assert!(!sock.exists());
}
