//! The `cuzk` binary end to end, at small sizes: demo, verify (including
//! tampered proofs and wrong inputs), params gen/info and bad files.

use std::path::Path;
use std::process::{Command, Output};

fn cuzk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(args)
        .output()
        .expect("cuzk runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn demo(dir: &Path) -> serde_json::Value {
    let cache = dir.join("cache");
    let out = dir.join("out");
    let o = cuzk(&[
        "demo",
        "--log-size",
        "9",
        "--seed",
        "7",
        "--json",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "demo failed: {}", stderr(&o));
    serde_json::from_str(stdout(&o).trim()).expect("demo --json prints one JSON object")
}

#[test]
fn demo_proves_and_verify_accepts_only_the_right_statement() {
    let dir = tempfile::tempdir().unwrap();
    let v = demo(dir.path());
    assert_eq!(v["verified"], serde_json::json!(true));
    assert_eq!(v["log_size"], serde_json::json!(9));
    // One total (the run's), and where --out wrote.
    assert!(v["timings_ms"].get("total").is_none(), "{v}");
    assert!(v["total_ms"].as_f64().is_some(), "{v}");
    assert!(
        v["out"]["proof"]
            .as_str()
            .unwrap()
            .ends_with("out/proof.bin"),
        "{v}"
    );
    // The cache holds the daemon's names (with the shape's version), the
    // key beside the parameters.
    let id = cuzk_core::circuits::porep_like::params_id(9);
    for ext in ["params", "vk", "r1cs"] {
        let f = format!("{id}.{ext}");
        assert!(dir.path().join("cache").join(&f).exists(), "{f}");
    }
    for phase in [
        "synthesis",
        "h_ntt",
        "msm_a",
        "msm_b_g1",
        "msm_b_g2",
        "msm_l",
        "msm_h",
    ] {
        assert!(
            v["timings_ms"][phase].as_f64().is_some(),
            "missing phase {phase}: {v}"
        );
    }

    let out = dir.path().join("out");
    let (vk, proof, inputs) = (
        out.join("demo.vk"),
        out.join("proof.bin"),
        out.join("inputs.txt"),
    );
    let verify = |proof: &Path, inputs: &Path| {
        cuzk(&[
            "verify",
            "--vk",
            vk.to_str().unwrap(),
            "--proof",
            proof.to_str().unwrap(),
            "--inputs",
            inputs.to_str().unwrap(),
            "--json",
        ])
    };
    let o = verify(&proof, &inputs);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"verified\":true"));

    // A wrong public input: exit 1, not verified.
    let text = std::fs::read_to_string(&inputs).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[0] = "12345".into();
    let wrong = dir.path().join("wrong.txt");
    std::fs::write(&wrong, lines.join("\n")).unwrap();
    assert_eq!(verify(&proof, &wrong).status.code(), Some(1));

    // Too few inputs is an error (2), not a silent "false".
    let short = dir.path().join("short.txt");
    std::fs::write(&short, lines[1..].join("\n")).unwrap();
    let o = verify(&proof, &short);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // The error names the files involved.
    for f in ["short.txt", "proof.bin", "demo.vk"] {
        assert!(stderr(&o).contains(f), "{f}: {}", stderr(&o));
    }

    // A second, independent proof of the same statement swapped in part by
    // part fails; a flipped byte is either rejected as malformed (2) or does
    // not verify (1), never accepted.
    let bytes = std::fs::read(&proof).unwrap();
    for pos in [0usize, 50, 100, 150, 191] {
        let mut t = bytes.clone();
        t[pos] ^= 0x01;
        let tp = dir.path().join(format!("tampered{pos}.bin"));
        std::fs::write(&tp, &t).unwrap();
        let code = verify(&tp, &inputs).status.code();
        assert!(
            matches!(code, Some(1) | Some(2)),
            "tampered byte {pos} gave {code:?}"
        );
    }
}

#[test]
fn params_gen_info_and_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("p.params");
    let vk = dir.path().join("p.vk");
    let o = cuzk(&[
        "params",
        "gen",
        "--log-size",
        "8",
        "--out",
        params.to_str().unwrap(),
        "--vk",
        vk.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let gen: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(gen["h"], serde_json::json!(255));
    // auto: the GPU where usable, else the CPU; the report names which.
    let engine = gen["engine"].as_str().unwrap().to_string();
    assert!(engine == "cpu" || engine.starts_with("cuda:"), "{engine}");

    // --backend cuda without a usable GPU (or CUDA in the build): a clear
    // error, exit 2, and no file written.
    let gpu_out = dir.path().join("gpu.params");
    let o = cuzk(&[
        "params",
        "gen",
        "--log-size",
        "6",
        "--backend",
        "cuda",
        "--out",
        gpu_out.to_str().unwrap(),
    ]);
    if engine == "cpu" {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("GPU"), "{}", stderr(&o));
        assert!(!gpu_out.exists());
    } else {
        assert!(o.status.success(), "{}", stderr(&o));
    }

    let o = cuzk(&[
        "params",
        "info",
        params.to_str().unwrap(),
        "--check",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    for k in ["h", "l", "a", "b_g1", "b_g2", "public_inputs"] {
        assert_eq!(info[k], gen[k], "{k}");
    }
    assert_eq!(
        info["file_bytes"].as_u64(),
        Some(std::fs::metadata(&params).unwrap().len())
    );

    // Truncated: an error naming the file, exit 2.
    // As text, the check reports its progress on stderr, section by
    // section.
    let o = cuzk(&["params", "info", params.to_str().unwrap(), "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for section in ["h", "l", "a", "b_g1", "b_g2"] {
        assert!(
            stderr(&o).contains(&format!(" points of {section} (")),
            "{section}: {}",
            stderr(&o)
        );
    }
    assert!(
        stdout(&o).contains("all points on the curve"),
        "{}",
        stdout(&o)
    );

    let bytes = std::fs::read(&params).unwrap();
    let trunc = dir.path().join("truncated.params");
    std::fs::write(&trunc, &bytes[..bytes.len() - 10]).unwrap();
    let o = cuzk(&["params", "info", trunc.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("truncated.params"), "{}", stderr(&o));

    // Missing file.
    let o = cuzk(&[
        "params",
        "info",
        dir.path().join("nope.params").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nope.params"), "{}", stderr(&o));
    // The OS's reason once, not once per layer of the error.
    let e = stderr(&o);
    assert_eq!(e.matches("os error 2").count(), 1, "{e}");

    // An output directory that does not exist: refused before generating.
    let nowhere = dir.path().join("no-such-dir").join("x.params");
    let o = cuzk(&[
        "params",
        "gen",
        "--log-size",
        "6",
        "--out",
        nowhere.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("generating"), "{}", stderr(&o));
}

/// `params gen` reads the constraints from the compiled system by
/// default and keeps it beside the parameters (`X.r1cs`): a second run
/// maps it, a run for another size replaces it, `--synthesis full` needs
/// none, and the demo then proves with the parameters and the compiled
/// system from its cache without compiling.
#[test]
fn params_gen_keeps_the_compiled_system_for_proofs() {
    let dir = tempfile::tempdir().unwrap();
    // The demo's cache names, so that the demo finds both.
    let id = cuzk_core::circuits::porep_like::params_id(8);
    let params = dir.path().join(format!("{id}.params"));
    let r1cs = dir.path().join(format!("{id}.r1cs"));
    let gen = |log: &str, extra: &[&str]| {
        let mut args = vec![
            "params",
            "gen",
            "--log-size",
            log,
            "--out",
            params.to_str().unwrap(),
            "--backend",
            "cpu",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = cuzk(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(stdout(&o).trim()).unwrap()
    };
    let made = |v: &serde_json::Value| v["compiled"]["made"].as_bool();
    // Another size's system first, then this size's replaces it.
    let v = gen("7", &[]);
    assert_eq!(v["synthesis"], serde_json::json!("compiled"));
    assert_eq!(made(&v), Some(true), "{v}");
    assert_eq!(v["compiled"]["file"].as_str(), r1cs.to_str(), "{v}");
    let v = gen("8", &[]);
    assert_eq!(
        made(&v),
        Some(true),
        "another size's system is replaced: {v}"
    );
    let v = gen("8", &[]);
    assert_eq!(made(&v), Some(false), "the kept system is mapped: {v}");
    assert_eq!(v["h"], serde_json::json!(255));
    let v = gen("8", &["--synthesis", "full"]);
    assert_eq!(v["synthesis"], serde_json::json!("full"));
    assert!(v["compiled"].is_null(), "{v}");

    let o = cuzk(&[
        "demo",
        "--log-size",
        "8",
        "--backend",
        "cpu",
        "--cache-dir",
        dir.path().to_str().unwrap(),
    ]);
    // Exit 0: proved and verified (1 would be a proof that did not verify).
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("loading parameters"), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("compiling"),
        "the demo compiled again: {}",
        stderr(&o)
    );
}

#[test]
fn corrupt_cached_params_are_reported_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let bad = cache.join(format!(
        "{}.params",
        cuzk_core::circuits::porep_like::params_id(9)
    ));
    std::fs::write(&bad, b"not a parameter file").unwrap();
    let o = cuzk(&[
        "demo",
        "--log-size",
        "9",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let name = bad.file_name().unwrap().to_str().unwrap();
    assert!(stderr(&o).contains(name), "{}", stderr(&o));
}

#[test]
fn filecoin_params_gen_and_local_prove_dispatch() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("fil");
    let gen = |extra: &[&str]| {
        let mut args = vec![
            "params",
            "gen",
            "--filecoin",
            "window-post",
            "--sector-size",
            "2KiB",
            "--param-cache",
            cache.to_str().unwrap(),
            "--json",
        ];
        args.extend_from_slice(extra);
        cuzk(&args)
    };
    let o = gen(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["generated"], serde_json::json!(true));
    let params = std::path::PathBuf::from(v["params"].as_str().unwrap());
    assert!(params
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("v28-proof-of-spacetime-fallback-"));
    // The file is a well-formed parameter file that `params info` reads.
    let o = cuzk(&["params", "info", params.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The constraints came from the compiled system, kept beside the
    // parameters under the name proofs map.
    assert_eq!(v["synthesis"], serde_json::json!("compiled"));
    let r1cs = std::path::PathBuf::from(v["compiled"]["file"].as_str().unwrap());
    assert_eq!(r1cs.parent(), Some(cache.as_path()));
    assert!(r1cs.is_file(), "{}", r1cs.display());
    assert!(r1cs
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("cuzk-proof-of-spacetime-fallback-"));
    // A second run keeps the files.
    let v: serde_json::Value = serde_json::from_str(stdout(&gen(&[])).trim()).unwrap();
    assert_eq!(v["generated"], serde_json::json!(false));
    // --filecoin and --out exclude each other.
    let o = gen(&["--out", "x.params"]);
    assert_eq!(o.status.code(), Some(2));

    // `cuzk prove --filecoin` proves locally: a missing input is named.
    let o = cuzk(&[
        "prove",
        "--filecoin",
        "porep",
        "--sector-size",
        "2KiB",
        "-o",
        dir.path().join("p.bin").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--c1"), "{}", stderr(&o));
    // Without --filecoin, `cuzk prove` is the daemon client.
    let o = cuzk(&["prove", "--help"]);
    assert!(stdout(&o).contains("--kind"), "{}", stdout(&o));
}

#[test]
fn bench_takes_gpu_budget_flags_and_refuses_bad_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // On the CPU backend the GPU flags are accepted and change nothing.
    let o = cuzk(&[
        "bench",
        "--log-size",
        "6",
        "--repeat",
        "1",
        "--backend",
        "cpu",
        "--vram-limit",
        "16GiB",
        "--gpu-workers",
        "3",
        "--cache-dir",
        d,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["cuzk"]["backend"], "cpu");
    for bad in [
        &["--vram-limit", "lots"][..],
        &["--vram-limit", "3XB"][..],
        &["--gpu-workers", "0"][..],
        &["--gpu-workers", "17"][..],
    ] {
        let mut args = vec![
            "bench",
            "--log-size",
            "6",
            "--backend",
            "cpu",
            "--cache-dir",
            d,
        ];
        args.extend_from_slice(bad);
        let o = cuzk(&args);
        assert!(!o.status.success(), "{bad:?} accepted");
        assert!(stderr(&o).contains(bad[0]), "{bad:?}: {}", stderr(&o));
    }
}
