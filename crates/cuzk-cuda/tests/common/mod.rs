//! What the emulation tests share: building an emulator driver of emu/
//! (the kernels' CUDA source compiled as C++ against emu/cuda_emu.h) and
//! running it on an input. Needs a C++20 compiler (`$CXX`, else `c++`).

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// emu/`source` compiled with the macros `defines`, once per test binary
/// and build; the executable is named `name` in Cargo's test scratch
/// directory.
pub fn emu_binary(source: &str, name: &str, defines: &[&str]) -> PathBuf {
    static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get_or_insert_with(HashMap::new).get(name) {
        return p.clone();
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let mut cmd = Command::new(&cxx);
    cmd.args(["-std=c++20", "-O2", "-pthread"]);
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    let status = cmd
        .arg("-o")
        .arg(&out)
        .arg(dir.join("emu").join(source))
        .status()
        .unwrap_or_else(|e| panic!("running {cxx} (set CXX to a C++20 compiler): {e}"));
    assert!(status.success(), "{cxx} failed to compile emu/{source}");
    built
        .as_mut()
        .unwrap()
        .insert(name.to_string(), out.clone());
    out
}

/// Runs the emulator `bin` with `input` on stdin and returns its stdout;
/// panics, naming it, if it fails (its stderr says why).
pub fn run_emu(bin: &PathBuf, input: &[u8]) -> Vec<u8> {
    let what = bin.file_name().unwrap_or_default().to_string_lossy();
    let mut child = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .unwrap_or_else(|e| panic!("writing to {what}: {e}"));
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{what}'s output: {e}"));
    assert!(out.status.success(), "{what} failed");
    out.stdout
}
