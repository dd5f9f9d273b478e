//! The daemon and its clients agree on where the socket and the parameters
//! are without a configuration (the conventional paths,
//! `config::DefaultPaths`): a daemon started from an empty configuration in
//! a temporary HOME and XDG_RUNTIME_DIR, a client that finds it with no
//! `--daemon`, and one looking elsewhere that is told the address it tried.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod daemon_process;
use daemon_process::Reap;

const BIN: &str = env!("CARGO_BIN_EXE_cuzk");

/// `cuzk-daemon ARGS` with HOME and the XDG directories under `root`
/// (`runtime` as XDG_RUNTIME_DIR).
fn cuzk(root: &Path, runtime: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("HOME", root.join("home"))
        .env("XDG_RUNTIME_DIR", runtime)
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env("RUST_LOG", "warn");
    c
}

fn run(c: &mut Command) -> Output {
    c.stdin(Stdio::null()).output().unwrap()
}

#[test]
fn daemon_and_clients_share_the_default_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let runtime = root.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    let cfg = root.join("cuzk.toml");
    // An empty configuration apart from the kinds (fewer to register).
    std::fs::write(&cfg, "[kinds]\nporep_like_log_sizes = [6]\n").unwrap();

    let mut reap = Reap(
        cuzk(root, &runtime)
            .args(["daemon", "--config"])
            .arg(&cfg)
            // Its start-up line is at info: it must go to stderr.
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let sock = runtime.join("cuzk/cuzk.sock");
    reap.wait_for_socket(&sock, Duration::from_secs(60));
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(runtime.join("cuzk"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "socket directory mode {mode:o}");
    }
    assert!(root.join("data/cuzk/params").is_dir());

    // A client with the same environment finds it without --daemon.
    let out = run(cuzk(root, &runtime).args(["status", "--json"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The configured kind, beside every Filecoin kind `cuzk daemon` serves.
    let kinds = v["kinds"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert!(kinds.iter().any(|k| k == "porep-like-6"), "{v}");
    assert!(kinds.iter().any(|k| k == "porep-32g"), "{v}");

    // One whose runtime directory is elsewhere is told what it tried and
    // how to give another address.
    let elsewhere = root.join("elsewhere");
    let out = run(cuzk(root, &elsewhere).args(["status"]));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let tried = format!("unix:{}", elsewhere.join("cuzk/cuzk.sock").display());
    assert!(err.contains(&tried), "{err}");
    assert!(err.contains("No such file or directory"), "{err}");
    assert!(err.contains("--daemon unix:PATH"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // The daemon logs on stderr: its stdout stays empty.
    reap.terminate();
    let mut stdout = String::new();
    use std::io::Read;
    reap.0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(stdout, "", "the daemon wrote to stdout");
    let mut stderr = String::new();
    reap.0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("INFO"), "no log lines on stderr: {stderr}");
    assert!(!sock.exists(), "socket left behind");
}
