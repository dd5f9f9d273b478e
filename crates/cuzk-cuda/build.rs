//! Compiles kernels/cuzk.cu into the fatbin embedded in the crate, and
//! kernels/tests.cu (the arithmetic kernels of the GPU checks and the
//! benchmarks) into a second one, only when the `cuda` feature is on.
//!
//! nvcc is taken from `$NVCC`, else from `PATH`, else from the repository's
//! `.cuda/` virtual environment that scripts/install-nvcc.sh creates. The
//! fatbin holds SASS for sm_80, sm_86, sm_89, sm_90 and sm_120 and PTX for
//! compute_80, which the driver compiles for any newer GPU (sm_100 included).
//! `CUZK_CUDA_ARCHS=90` (a comma list) narrows the SASS list for quick local
//! builds; the default is the full list. `CUZK_NVCC_DEFINES` (a comma list
//! of macro names) builds the kernels with those defined, for measuring a
//! kernel option side by side (`CUZK_FP64_MIX_FQ`, `CUZK_FP64_MIX_FR`: field.cuh's
//! `mul_fp64`).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_ARCHS: &str = "80,86,89,90,120";
const PTX_ARCH: &str = "80";

fn find_nvcc(manifest_dir: &Path) -> Option<PathBuf> {
    if let Ok(p) = env::var("NVCC") {
        return Some(PathBuf::from(p));
    }
    if let Ok(path) = env::var("PATH") {
        for dir in env::split_paths(&path) {
            let cand = dir.join("nvcc");
            if cand.is_file() {
                return Some(cand);
            }
        }
    }
    let lib = manifest_dir.join("../../.cuda/lib");
    let entries = std::fs::read_dir(&lib).ok()?;
    for e in entries.flatten() {
        let cand = e.path().join("site-packages/nvidia/cu13/bin/nvcc");
        if cand.is_file() {
            return Some(cand);
        }
    }
    None
}

fn main() {
    println!("cargo:rerun-if-changed=kernels");
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=CUZK_CUDA_ARCHS");
    println!("cargo:rerun-if-env-changed=CUZK_NVCC_DEFINES");
    if env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let manifest_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let nvcc = find_nvcc(&manifest_dir).unwrap_or_else(|| {
        panic!(
            "the `cuda` feature needs nvcc: none in $NVCC, PATH or .cuda/ \
             (run scripts/install-nvcc.sh, which installs the pinned CUDA 13.0 nvcc from PyPI)"
        )
    });
    let archs = env::var("CUZK_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string());
    // Kernel build options for measurements side by side, e.g.
    // CUZK_NVCC_DEFINES=CUZK_FP64_MIX_FQ,CUZK_FP64_MIX_FR (macro names).
    let defines = env::var("CUZK_NVCC_DEFINES").unwrap_or_default();
    // The crate reports them (`KERNEL_DEFINES`), so that a benchmark's log
    // says which build it measured.
    println!("cargo:rustc-env=CUZK_KERNEL_DEFINES={defines}");
    // The production kernels, and apart from them the arithmetic kernels
    // that only the GPU checks and the benchmarks load.
    for (source, fatbin) in [
        ("cuzk.cu", "cuzk.fatbin"),
        ("tests.cu", "cuzk_tests.fatbin"),
    ] {
        compile(
            &nvcc,
            &manifest_dir.join("kernels").join(source),
            &out_dir.join(fatbin),
            &archs,
            &defines,
        );
    }
}

fn compile(nvcc: &Path, source: &Path, fatbin: &Path, archs: &str, defines: &str) {
    let mut cmd = Command::new(nvcc);
    cmd.arg("--fatbin")
        .arg("-O3")
        .arg("-std=c++17")
        // Compile the targets in parallel (nvcc's own threads).
        .arg("--threads")
        .arg("0")
        .arg("-o")
        .arg(fatbin)
        .arg(source);
    for d in defines.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        cmd.arg(format!("-D{d}"));
    }
    for a in archs.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        cmd.arg(format!("-gencode=arch=compute_{a},code=sm_{a}"));
    }
    cmd.arg(format!(
        "-gencode=arch=compute_{PTX_ARCH},code=compute_{PTX_ARCH}"
    ));
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", nvcc.display()));
    if !status.success() {
        panic!(
            "nvcc failed ({status}) compiling {} for archs {archs}",
            source.display()
        );
    }
}
