//! Every daemon proof can be checked: `cuzk daemon` writes the verifying
//! key beside the parameters it generates and serves it (`cuzk vk`),
//! `cuzk prove --out` writes the proof and its public inputs, and `cuzk
//! verify` accepts them with the served key (from a file, or fetched with
//! `--kind`) and refuses a changed statement. Also: `prove --out` into a
//! missing directory is refused before anything is submitted.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod daemon_process;
use daemon_process::{write_config, Reap};

const BIN: &str = env!("CARGO_BIN_EXE_cuzk");

fn cuzk(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_daemon_proof_verifies_with_the_served_key() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("cuzk.sock");
    let params = dir.path().join("params");
    let cfg = dir.path().join("cuzk.toml");
    write_config(&cfg, &sock, &params, "");
    let mut reap = Reap(
        Command::new(BIN)
            .args(["daemon", "--config", p(&cfg)])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    reap.wait_for_socket(&sock, Duration::from_secs(120));
    let target = format!("unix:{}", sock.display());

    // An output path that cannot be written is refused before the proof.
    let o = cuzk(&[
        "prove",
        "--kind",
        "porep-like-6",
        "--out",
        "/nonexistent/x.bin",
        "--daemon",
        &target,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("/nonexistent does not exist"),
        "{}",
        text(&o.stderr)
    );
    let o = cuzk(&["status", "--json", "--daemon", &target]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let st: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(st["counters"]["submitted"], 0, "{st}");

    // A proof of two partitions, with its inputs beside it.
    let proof = dir.path().join("proof.bin");
    let o = cuzk(&[
        "prove",
        "--kind",
        "porep-like-6",
        "--seed",
        "5",
        "--partitions",
        "2",
        "--out",
        p(&proof),
        "--daemon",
        &target,
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["state"], "completed", "{v}");
    let inputs = dir.path().join("proof.bin.inputs");
    assert_eq!(v["inputs_file"], p(&inputs), "{v}");
    assert!(v["timings_ms"]["prove"].as_f64().is_some(), "{v}");

    // The key beside the generated parameters, and the served one, agree.
    let served = dir.path().join("served.vk");
    let o = cuzk(&[
        "vk",
        "--kind",
        "porep-like-6",
        "-o",
        p(&served),
        "--daemon",
        &target,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let id = cuzk_core::circuits::porep_like::params_id(6);
    let beside = std::fs::read(params.join(format!("{id}.vk"))).unwrap();
    assert_eq!(std::fs::read(&served).unwrap(), beside);
    // The generated file was recorded as checked: its load skipped the
    // point checks.
    assert!(params.join(format!("{id}.params.checked")).exists());

    let verify = |extra: &[&str], inputs: &Path| {
        let mut a = vec!["verify", "--proof", p(&proof), "--inputs", p(inputs)];
        a.extend_from_slice(extra);
        cuzk(&a)
    };
    let o = verify(&["--vk", p(&served)], &inputs);
    daemon_process::assert_exit(&o, 0);
    assert!(
        text(&o.stdout).contains("2 proof(s): verified"),
        "{}",
        text(&o.stdout)
    );
    let o = verify(&["--kind", "porep-like-6", "--daemon", &target], &inputs);
    daemon_process::assert_exit(&o, 0);

    // A changed statement does not verify (exit 1).
    let text_inputs = std::fs::read_to_string(&inputs).unwrap();
    let mut lines: Vec<&str> = text_inputs.lines().collect();
    lines[0] = "0x01";
    let wrong = dir.path().join("wrong.inputs");
    std::fs::write(&wrong, lines.join("\n")).unwrap();
    let o = verify(&["--kind", "porep-like-6", "--daemon", &target], &wrong);
    daemon_process::assert_exit(&o, 1);

    // An unknown kind is refused with the kinds there are.
    let o = verify(&["--kind", "porep-like-7", "--daemon", &target], &inputs);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("porep-like-6"),
        "{}",
        text(&o.stderr)
    );

    reap.terminate();
}
